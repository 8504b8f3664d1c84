import { hostname } from 'node:os';
import type { OperatorChannel, SecretRedactor, SessionStatus, TraceRecord } from '@rho/core';
import type { ContentSearch, ContentSearchOptions } from '@rho/monitor';
import { ConfigError, createSecretRedactor, SessionNotFoundError } from '@rho/core';
import type { Sql } from 'postgres';
import { FleetUnavailableError, isTransientDatabaseError } from '../errors.js';
import type { FleetConfig } from '../fleet-config.js';
import { redactUrl } from '../fleet-config.js';
import { LATEST_SCHEMA_VERSION, LIVE_STATUS_SQL, LIVE_STATUSES, MIGRATIONS } from '../migrations.js';
import type {
  AttachOptions,
  ConnectFleetOptions,
  Fleet,
  FleetListOptions,
  FleetSession,
  FleetStatsOptions,
  FleetStatsRow,
  FleetStatsView,
  FleetStatus,
  FleetWarning,
  FollowOptions,
  MigrateResult,
  MirroredRecord,
  SessionAttachment,
  SessionRegistration,
} from '../types.js';
import { FLEET_STATS_VIEWS } from '../types.js';
import { MirrorWriter } from './mirror-writer.js';
import { NotificationHub } from './notifications.js';
import { searchMirroredContent } from './pg-content-search.js';
import { PgAttachment, withDefaults } from './pg-attachment.js';
import type { ControlRow } from './pg-control-channel.js';
import { PgOperatorChannel } from './pg-operator-channel.js';

interface RegistryRow {
  session_id: string;
  parent_id: string | null;
  /** `parent_id` when that session has the same owner (login role), else null: see {@link toFleetSession}. */
  own_parent_id: string | null;
  host: string;
  pid: number | null;
  cwd: string | null;
  model: string | null;
  profile: string | null;
  status: string;
  live_status: string;
  labels: Record<string, string>;
  first_prompt: string | null;
  started_at: Date;
  updated_at: Date;
  heartbeat_at: Date | null;
  input_tokens: string;
  output_tokens: string;
  cost_usd: number;
  unpriced_calls: string;
  records: string;
}

/** Longest wait for a lock on the fleet's tables, per statement (see ConnectFleetOptions). */
const DEFAULT_LOCK_TIMEOUT_MS = 5_000;
/** Longest time one statement of the fleet may run. */
const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

/** The PostgreSQL fleet (see {@link Fleet}); made by `connectFleet`. */
export class PgFleet implements Fleet {
  private readonly attachments = new Set<PgAttachment>();
  private readonly signals: NotificationHub;
  private readonly records: NotificationHub;
  private readonly writer: MirrorWriter;
  private readonly redact: SecretRedactor;
  private timer: NodeJS.Timeout | undefined;
  private lastHeartbeat = 0;
  private schemaChecked = false;
  private closed = false;

  private constructor(
    readonly config: FleetConfig,
    private readonly sql: Sql,
    private readonly options: ConnectFleetOptions & { syncIntervalMs: number },
  ) {
    this.signals = new NotificationHub(sql, channelName(config.schema, 'signals'));
    this.records = new NotificationHub(sql, channelName(config.schema, 'records'));
    // The fleet url's own password joins the secrets kept out of the tables (named ones keep their names).
    this.redact = createSecretRedactor([
      ...(options.redactor?.named ?? options.redactor?.secrets ?? []),
      urlPassword(config.url),
    ]);
    this.writer = new MirrorWriter(sql, this.records.channel, this.redact);
  }

  static async connect(config: FleetConfig, options: ConnectFleetOptions): Promise<Fleet> {
    // postgres.js is CommonJS-shaped in its types and ESM at run time: take the default export either way.
    const module = (await import('postgres')) as unknown as { default?: typeof import('postgres') };
    const postgres = module.default ?? (module as unknown as typeof import('postgres'));
    const sql = postgres(config.url, {
      max: options.maxConnections ?? 5,
      connect_timeout: options.connectTimeoutSeconds ?? 10,
      idle_timeout: 60,
      onnotice: () => undefined,
      ...(config.ssl === undefined ? {} : { ssl: config.ssl as never }),
      connection: {
        application_name: 'rho-fleet',
        // Every wait is bounded: a lock held on the fleet's tables (a migration elsewhere, a stuck
        // transaction) fails a command after seconds, saying so, instead of holding it forever.
        lock_timeout: Math.max(1, Math.round(options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS)),
        statement_timeout: Math.max(1, Math.round(options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS)),
        search_path: config.schema,
        'rho_fleet.dead_after_ms': String(Math.round(config.deadAfterMs)),
      },
    });
    try {
      await sql`select 1`;
    } catch (error) {
      await sql.end({ timeout: 0 }).catch(() => undefined);
      throw new FleetUnavailableError({
        message: `The fleet database at ${redactUrl(config.url)} does not answer: ${(error as Error).message}. Check the url (--fleet, RHO_FLEET_URL or fleet.url), the server and the credentials.`,
        cause: error,
      });
    }
    return new PgFleet(config, sql, { ...options, syncIntervalMs: options.syncIntervalMs ?? 2_000 });
  }

  async migrate(): Promise<MigrateResult> {
    const schema = this.config.schema;
    const result = await this.sql.begin(async (tx) => {
      // A migration may wait for sessions to release the tables, and may take long on a big fleet.
      await tx`set local lock_timeout = 0`;
      await tx`set local statement_timeout = 0`;
      // Two nodes migrating at once take turns; the second finds the work done.
      await tx`select pg_advisory_xact_lock(hashtext(${`rho_fleet.migrate.${schema}`}))`;
      await tx.unsafe(`create schema if not exists "${schema}"`);
      await tx.unsafe(`create table if not exists "${schema}".schema_migrations (
        version integer primary key, description text not null, applied_at timestamptz not null default now())`);
      const [row] = await tx<
        { version: number }[]
      >`select coalesce(max(version), 0)::int as version from schema_migrations`;
      const from = row!.version;
      for (const migration of MIGRATIONS) {
        if (migration.version <= from) continue;
        for (const statement of migration.statements) await tx.unsafe(statement);
        await tx`insert into schema_migrations (version, description) values (${migration.version}, ${migration.description})`;
      }
      return { from, to: Math.max(from, LATEST_SCHEMA_VERSION) };
    });
    this.schemaChecked = result.to >= LATEST_SCHEMA_VERSION;
    return result;
  }

  async status(): Promise<FleetStatus> {
    const [server] = await this.sql<{ version: string }[]>`select version() as version`;
    const version = await this.schemaVersion();
    const status: FleetStatus = {
      url: redactUrl(this.config.url),
      schema: this.config.schema,
      serverVersion: server!.version,
      schemaVersion: version,
      latestVersion: LATEST_SCHEMA_VERSION,
      byStatus: {},
      byHost: [],
    };
    if (version === 0) return status;
    for (const row of await this.sql<
      { status: string; sessions: string }[]
    >`select status, sessions from sessions_by_status`)
      status.byStatus[row.status] = Number(row.sessions);
    const hosts = await this.sql<{ host: string; sessions: string; live: string; last: Date | null }[]>`
      select host, count(*) as sessions,
        count(*) filter (where live_status in ${this.sql(LIVE_STATUSES)}) as live, max(heartbeat_at) as last
      from (select r.host, r.heartbeat_at, ${this.sql.unsafe(LIVE_STATUS_SQL)} as live_status from agent_registry r) s
      group by host order by host`;
    status.byHost = hosts.map((row) => ({
      host: row.host,
      sessions: Number(row.sessions),
      live: Number(row.live),
      lastHeartbeatAt: row.last?.toISOString(),
    }));
    return status;
  }

  async attachSession(info: SessionRegistration, options: AttachOptions = {}): Promise<SessionAttachment> {
    await this.requireSchema();
    const attachment = this.newAttachment(info, options);
    try {
      await attachment.register();
    } catch (error) {
      await attachment.close({ timeoutMs: 0 });
      throw new FleetUnavailableError({
        message: `Session ${info.id} could not register in the fleet at ${redactUrl(this.config.url)}: ${(error as Error).message}.`,
        cause: error,
      });
    }
    return attachment;
  }

  attachSessionInBackground(info: SessionRegistration, options: AttachOptions = {}): SessionAttachment {
    const attachment = this.newAttachment(info, options);
    attachment.registerInBackground();
    return attachment;
  }

  operator(sessionId: string): OperatorChannel {
    return new PgOperatorChannel(this.sql, sessionId, this.signals.channel);
  }

  async listSessions(options: FleetListOptions = {}): Promise<FleetSession[]> {
    await this.requireSchema();
    const sql = this.sql;
    const statuses =
      options.status === undefined ? undefined : Array.isArray(options.status) ? options.status : [options.status];
    const label = options.label === undefined ? undefined : splitLabel(options.label);
    const rows = await sql<RegistryRow[]>`
      select * from (
        select r.*, ${sql.unsafe(LIVE_STATUS_SQL)} as live_status,
          (select p.session_id from agent_registry p
            where p.session_id = r.parent_id and p.owner_role = r.owner_role) as own_parent_id
        from agent_registry r
        where true
          ${options.host === undefined ? sql`` : sql`and r.host = ${options.host}`}
          ${options.idPrefix === undefined ? sql`` : sql`and r.session_id like ${`${escapeLike(options.idPrefix)}%`}`}
          ${options.ids === undefined ? sql`` : sql`and r.session_id = any(${[...options.ids]}::text[])`}
          ${label === undefined ? sql`` : label.value === undefined ? sql`and r.labels ? ${label.key}` : sql`and r.labels @> ${sql.json({ [label.key]: label.value })}`}
      ) s
      ${statuses === undefined ? sql`` : sql`where s.live_status in ${sql(statuses)}`}
      order by s.started_at desc, s.session_id
      limit ${options.limit ?? 1_000}`;
    return rows.map(toFleetSession);
  }

  async resolveSession(prefix: string): Promise<FleetSession> {
    const matches = await this.listSessions({ idPrefix: prefix, limit: 20 });
    const exact = matches.find((session) => session.id === prefix);
    if (exact !== undefined) return exact;
    if (matches.length === 1) return matches[0]!;
    if (matches.length === 0)
      throw new SessionNotFoundError({
        message: `No session in the fleet matches '${prefix}'; list them with rho ps.`,
      });
    throw new SessionNotFoundError({
      message: `'${prefix}' matches ${matches.length === 20 ? 'at least 20' : matches.length} sessions in the fleet (${matches
        .slice(0, 5)
        .map((session) => session.id)
        .join(', ')}${matches.length > 5 ? ', ...' : ''}); give more of the id.`,
      candidates: matches.map((session) => session.id),
    });
  }

  async readRecords(sessionId: string, afterSeq = 0, limit = 1_000): Promise<MirroredRecord[]> {
    await this.requireSchema();
    const rows = await this.sql<{ seq: string; record: TraceRecord }[]>`
      select seq, record from trace_records where session_id = ${sessionId} and seq > ${afterSeq}
      order by seq limit ${limit}`;
    return rows.map((row) => ({ sessionId, seq: Number(row.seq), record: row.record }));
  }

  async *followRecords(sessionId: string, options: FollowOptions = {}): AsyncGenerator<MirroredRecord> {
    let cursor = options.afterSeq ?? 0;
    const untilFinished = options.untilFinished ?? true;
    const pollMs = options.pollIntervalMs ?? 1_000;
    let wake: (() => void) | undefined;
    let woken: boolean;
    const unsubscribe = this.records.subscribe(sessionId, () => {
      woken = true;
      wake?.();
    });
    const onAbort = () => wake?.();
    options.signal?.addEventListener('abort', onAbort);
    // A database that goes away mid-follow (a restart) is waited for, within reconnectForMs: every
    // query below is retried from the same cursor, so no record is repeated or lost.
    const reconnectForMs = options.reconnectForMs ?? 300_000;
    let lostAt: number | undefined;
    let backoff = 250;
    const retrying = async <T>(query: () => Promise<T>): Promise<T> => {
      for (;;) {
        try {
          const value = await query();
          if (lostAt !== undefined) {
            lostAt = undefined;
            backoff = 250;
            options.onConnectionLost?.(undefined);
          }
          return value;
        } catch (error) {
          if (!isTransientDatabaseError(error) || isAborted(options.signal)) throw error;
          const now = Date.now();
          if (lostAt === undefined) {
            lostAt = now;
            options.onConnectionLost?.(error);
          }
          if (now - lostAt > reconnectForMs) throw error;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(done, backoff);
            function done() {
              clearTimeout(timer);
              wake = undefined;
              resolve();
            }
            wake = done;
          });
          if (isAborted(options.signal)) throw error;
          backoff = Math.min(backoff * 2, 5_000);
        }
      }
    };
    try {
      await this.records.ready();
      while (options.signal?.aborted !== true) {
        woken = false;
        const batch = await retrying(() => this.readRecords(sessionId, cursor));
        for (const item of batch) {
          cursor = item.seq;
          yield item;
          if (isAborted(options.signal)) return;
        }
        if (batch.length > 0) continue;
        if (untilFinished) {
          const [row] = await retrying(
            () => this.sql<{ live_status: string; records: string }[]>`
            select ${this.sql.unsafe(LIVE_STATUS_SQL)} as live_status, r.records
            from agent_registry r where r.session_id = ${sessionId}`,
          );
          const live = row !== undefined && (LIVE_STATUSES as readonly string[]).includes(row.live_status);
          if (!live && (row === undefined || Number(row.records) <= cursor)) {
            // One more read: records may have landed between the two queries.
            const rest = await retrying(() => this.readRecords(sessionId, cursor));
            for (const item of rest) yield item;
            return;
          }
        }
        if (woken) continue;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, pollMs);
          function done() {
            clearTimeout(timer);
            wake = undefined;
            resolve();
          }
          wake = done;
        });
      }
    } finally {
      unsubscribe();
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  async searchContent(options: ContentSearchOptions): Promise<ContentSearch> {
    await this.requireSchema();
    return searchMirroredContent(this.sql, options);
  }

  async reconcile(options: { host?: string } = {}): Promise<string[]> {
    await this.requireSchema();
    const host = options.host ?? hostname();
    const attached = new Set([...this.attachments].map((attachment) => attachment.id));
    const local = await this.sql<{ session_id: string; pid: number | null }[]>`
      select session_id, pid from agent_registry
      where host = ${host} and status in ${this.sql(LIVE_STATUSES)} and not gone`;
    const gone = local
      .filter((row) => !attached.has(row.session_id) && (row.pid === null || !processAlive(row.pid)))
      .map((row) => row.session_id);
    const marked = await this.sql<{ session_id: string }[]>`
      update agent_registry r set gone = true, updated_at = now()
      where not r.gone and r.status in ${this.sql(LIVE_STATUSES)}
        and (r.session_id in ${this.sql(gone.length > 0 ? gone : [''])}
          or r.heartbeat_at < now() - make_interval(secs => ${this.config.deadAfterMs / 1000}))
      returning r.session_id`;
    return marked.map((row) => row.session_id).sort();
  }

  async stats(view: FleetStatsView, options: FleetStatsOptions = {}): Promise<FleetStatsRow[]> {
    if (!FLEET_STATS_VIEWS.includes(view))
      throw new ConfigError({
        message: `Unknown fleet statistics view '${String(view)}'; the views are ${FLEET_STATS_VIEWS.join(', ')}.`,
        code: 'fleet_stats_view',
      });
    await this.requireSchema();
    const result = await this.sql`select * from ${this.sql(view)} limit ${options.limit ?? 100}`;
    const int8 = new Set(result.columns.filter((column) => column.type === 20).map((column) => column.name));
    return result.map((row) => {
      const out: FleetStatsRow = {};
      for (const [key, value] of Object.entries(row))
        out[key] = int8.has(key) && value !== null ? Number(value) : (value as string | number | null);
      return out;
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    await Promise.all([...this.attachments].map((attachment) => attachment.close({ timeoutMs: 2_000 })));
    await this.signals.close();
    await this.records.close();
    await this.sql.end({ timeout: 5 }).catch(() => undefined);
  }

  private newAttachment(info: SessionRegistration, options: AttachOptions): PgAttachment {
    if (!/^[^\s,]{1,200}$/.test(info.id))
      throw new ConfigError({
        message: `A fleet session id must be 1 to 200 characters without spaces or commas (got ${JSON.stringify(info.id)}).`,
        code: 'fleet_session_id',
      });
    const attachment = new PgAttachment(
      {
        sql: this.sql,
        signals: this.signals,
        writer: this.writer,
        redact: this.redact,
        warn: (warning: FleetWarning) => this.options.onWarning?.(warning),
        detach: (item) => this.attachments.delete(item),
      },
      withDefaults(info),
      options,
    );
    this.attachments.add(attachment);
    this.startTimer();
    return attachment;
  }

  /**
   * One query per tick for every attached session: a heartbeat when due (returning the control
   * flags), else a read of the flags. It is the safety net under the notifications: a signal whose
   * NOTIFY was lost (the listener was reconnecting) is applied here.
   */
  private startTimer(): void {
    if (this.timer !== undefined) return;
    const tick = this.options.syncIntervalMs;
    this.timer = setInterval(() => void this.poll(), Math.min(tick, this.config.heartbeatIntervalMs));
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    const attachments = [...this.attachments];
    if (attachments.length === 0) return;
    const ids = attachments.map((attachment) => attachment.id);
    const generations = new Map(attachments.map((attachment) => [attachment.id, attachment.control.currentGeneration]));
    const beat = Date.now() - this.lastHeartbeat >= this.config.heartbeatIntervalMs - 50;
    const tokens = attachments.map((attachment) => attachment.runToken);
    try {
      // One round trip. The heartbeat is fenced: only rows that still hold this process's run
      // token are touched. The flags are read for every attached session with the token the row
      // holds, so a session another process took over learns it here.
      const rows = beat
        ? await this.sql<(ControlRow & { session_id: string })[]>`
            with beat as (
              update agent_registry r set heartbeat_at = now()
              from unnest(${ids}::text[], ${tokens}::text[]) as u(session_id, token)
              where r.session_id = u.session_id and r.run_token = u.token
              returning r.session_id)
            select session_id, cancel_requested, pause_requested, signal_seq, run_token from agent_registry
            where session_id in ${this.sql(ids)}`
        : await this.sql<(ControlRow & { session_id: string })[]>`
            select session_id, cancel_requested, pause_requested, signal_seq, run_token from agent_registry
            where session_id in ${this.sql(ids)}`;
      if (beat) this.lastHeartbeat = Date.now();
      const byId = new Map(attachments.map((attachment) => [attachment.id, attachment]));
      await Promise.all(
        rows.map((row) => byId.get(row.session_id)?.control.apply(row, generations.get(row.session_id)!)),
      );
    } catch {
      // The database is away; the next tick tries again.
    }
  }

  async schemaVersion(): Promise<number> {
    const [found] = await this.sql<{ name: string | null }[]>`
      select to_regclass(${`"${this.config.schema}".schema_migrations`})::text as name`;
    if (found?.name === null || found === undefined) return 0;
    const [row] = await this.sql<
      { version: number }[]
    >`select coalesce(max(version), 0)::int as version from schema_migrations`;
    return row!.version;
  }

  private async requireSchema(): Promise<void> {
    if (this.schemaChecked) return;
    const version = await this.schemaVersion();
    if (version < LATEST_SCHEMA_VERSION)
      throw new FleetUnavailableError({
        code: 'fleet_schema_outdated',
        message: `The fleet schema '${this.config.schema}' at ${redactUrl(this.config.url)} is at version ${version}, this rho needs ${LATEST_SCHEMA_VERSION}: run rho fleet migrate.`,
      });
    this.schemaChecked = true;
  }
}

/** The password of a connection url, if it has one. */
function urlPassword(url: string): string | undefined {
  try {
    const password = new URL(url).password;
    return password === '' ? undefined : decodeURIComponent(password);
  } catch {
    return undefined;
  }
}

function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function channelName(schema: string, kind: string): string {
  return `${schema}.${kind}`.slice(0, 63);
}

function splitLabel(label: string): { key: string; value: string | undefined } {
  const index = label.indexOf('=');
  return index === -1
    ? { key: label, value: undefined }
    : { key: label.slice(0, index), value: label.slice(index + 1) };
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (match) => `\\${match}`);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function toFleetSession(row: RegistryRow): FleetSession {
  return {
    id: row.session_id,
    // A parent is believed only when it was registered by the same login role: an agent role can
    // write any parent_id into its own rows, and would otherwise pass its sessions (and their
    // records) off as children of another role's session in rho watch, ps and the dashboard.
    ...(row.own_parent_id === null ? {} : { parentId: row.own_parent_id }),
    host: row.host,
    ...(row.pid === null ? {} : { pid: row.pid }),
    ...(row.cwd === null ? {} : { cwd: row.cwd }),
    ...(row.model === null ? {} : { model: row.model }),
    ...(row.profile === null ? {} : { profile: row.profile }),
    status: row.live_status as FleetSession['status'],
    recordedStatus: row.status as SessionStatus,
    labels: row.labels,
    ...(row.first_prompt === null ? {} : { firstPrompt: row.first_prompt }),
    startedAt: row.started_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    ...(row.heartbeat_at === null ? {} : { heartbeatAt: row.heartbeat_at.toISOString() }),
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    costUsd: Number(row.cost_usd),
    unpricedCalls: Number(row.unpriced_calls ?? 0),
    records: Number(row.records),
  };
}
