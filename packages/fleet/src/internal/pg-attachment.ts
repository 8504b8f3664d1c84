import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { SecretRedactor, SessionStatus } from '@rho/core';
import type { Sql } from 'postgres';
import { FleetSessionTakenError } from '../errors.js';
import { LIVE_STATUS_SQL, LIVE_STATUSES } from '../migrations.js';
import type { AttachOptions, FleetWarning, SessionAttachment, SessionRegistration } from '../types.js';
import type { MirrorWriter } from './mirror-writer.js';
import type { NotificationHub } from './notifications.js';
import { PgControlChannel } from './pg-control-channel.js';
import type { UsageRow } from './pg-trace-mirror.js';
import { countTraceLines, PgTraceMirror } from './pg-trace-mirror.js';

interface RegisteredRow extends UsageRow {
  records: string;
}

/** What the fleet gives an attachment. */
export interface AttachmentContext {
  sql: Sql;
  signals: NotificationHub;
  writer: MirrorWriter;
  /** What is registered goes through it (first prompt, labels, working directory). */
  redact: SecretRedactor;
  warn: (warning: FleetWarning) => void;
  detach: (attachment: PgAttachment) => void;
}

/**
 * One session attached to the fleet: its registry row, its control channel (kept fresh by the
 * signal notifications and the fleet's poll) and its trace mirror.
 */
export class PgAttachment implements SessionAttachment {
  readonly control: PgControlChannel;
  private mirrorInstance: PgTraceMirror | undefined;
  private readonly unsubscribe: () => void;
  private closed = false;
  /** Resolves once the session is registered. */
  registered: Promise<void> = Promise.resolve();
  /** This process's claim on the session's registry row: the fencing token of every write. */
  readonly runToken = randomUUID();

  constructor(
    private readonly context: AttachmentContext,
    readonly info: SessionRegistration & { host: string; pid: number },
    private readonly options: AttachOptions,
  ) {
    this.control = new PgControlChannel(context.sql, info.id, this.runToken);
    this.control.onLost = () =>
      context.warn({
        code: 'session_lost',
        message: `session ${info.id} was registered by another process after this one's heartbeat stopped (it was paused or cut off from the database): this run stops, and what it writes no longer reaches the fleet.`,
        sessionId: info.id,
      });
    this.unsubscribe = context.signals.subscribe(info.id, (payload) => this.control.notified(payload));
  }

  get id(): string {
    return this.info.id;
  }

  get mirror(): PgTraceMirror {
    // A background attachment mirrors before its registration answered: it starts from the trace file's length.
    this.mirrorInstance ??= this.createMirror(undefined);
    return this.mirrorInstance;
  }

  /** Registers (upsert) and starts the mirror from what the fleet holds. Throws when the database does not answer. */
  async register(): Promise<void> {
    const { sql, redact } = this.context;
    const info = {
      ...this.info,
      ...redact({ cwd: this.info.cwd, labels: this.info.labels, firstPrompt: this.info.firstPrompt }),
    };
    const token = this.runToken;
    const row = await sql.begin(async (tx) => {
      // The row is taken over only when it is not live (finished, or its agent dead) or is this
      // process's own (its token, or the same host and pid: a session attached again in one
      // process): a live row of another process is left alone, and nothing is returned.
      const [registered] = await tx<RegisteredRow[]>`
        insert into agent_registry as r (session_id, parent_id, host, pid, cwd, model, profile, status, labels,
          first_prompt, started_at, run_token)
        values (${info.id}, ${info.parentId ?? null}, ${info.host}, ${info.pid}, ${info.cwd ?? null},
          ${info.model ?? null}, ${info.profile ?? null}, ${info.status ?? 'running'}, ${tx.json(info.labels ?? {})},
          ${info.firstPrompt ?? null}, ${info.startedAt ?? new Date().toISOString()}, ${token})
        on conflict (session_id) do update set
          parent_id = coalesce(excluded.parent_id, r.parent_id),
          host = excluded.host, pid = excluded.pid, cwd = coalesce(excluded.cwd, r.cwd),
          model = coalesce(excluded.model, r.model),
          profile = coalesce(excluded.profile, r.profile),
          status = excluded.status, labels = r.labels || excluded.labels,
          first_prompt = coalesce(r.first_prompt, excluded.first_prompt),
          heartbeat_at = now(), updated_at = now(), gone = false, cancel_requested = false,
          run_token = excluded.run_token
        where r.run_token is not distinct from excluded.run_token
          or (r.host = excluded.host and r.pid is not distinct from excluded.pid)
          or (${tx.unsafe(LIVE_STATUS_SQL)}) not in ${tx(LIVE_STATUSES)}
        returning records, input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd, unpriced_calls`;
      if (registered === undefined) {
        const [owner] = await tx<{ host: string; pid: number | null; age: number }[]>`
          select host, pid, extract(epoch from now() - heartbeat_at)::float8 as age
          from agent_registry where session_id = ${info.id}`;
        throw new FleetSessionTakenError({
          sessionId: info.id,
          host: owner?.host ?? 'another node',
          pid: owner?.pid ?? undefined,
          heartbeatAgeSeconds: owner?.age ?? 0,
        });
      }
      // A cancel left by an earlier process that died mid-run must not stop this one.
      await tx`update signal_queue set acked_at = now()
        where session_id = ${info.id} and kind = 'cancel' and acked_at is null`;
      return registered;
    });
    this.control.markClaimed();
    this.mirrorInstance ??= this.createMirror(row);
    this.mirrorInstance.start();
    await this.control.sync();
  }

  /** Registers in the background, retrying while the database is away (for child sessions). */
  registerInBackground(): void {
    let delay = 250;
    const attempt = (): void => {
      if (this.closed) return;
      this.register().then(
        () => undefined,
        (error: unknown) => {
          // Another process owns the session: retrying would not change that.
          if (FleetSessionTakenError.isInstance(error)) {
            this.context.warn({ code: 'session_taken', message: error.message, sessionId: this.info.id });
            return;
          }
          delay = Math.min(delay * 2, 5_000);
          setTimeout(attempt, delay).unref();
        },
      );
    };
    attempt();
  }

  async close(options: { status?: SessionStatus; timeoutMs?: number } = {}): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    this.control.detach();
    try {
      await this.mirrorInstance?.flush(options.timeoutMs ?? 5_000);
    } finally {
      this.mirrorInstance?.stop();
      this.context.detach(this);
    }
    if (options.status !== undefined) {
      await this.context
        .sql`update agent_registry set status = ${options.status}, updated_at = now(), heartbeat_at = now()
        where session_id = ${this.info.id} and run_token = ${this.runToken}`.catch(() => undefined);
    }
  }

  private createMirror(row: RegisteredRow | undefined): PgTraceMirror {
    const { tracePath } = this.options;
    const mirrored = row === undefined ? 0 : Number(row.records);
    const recordsBefore =
      this.options.recordsBefore ?? (tracePath === undefined ? mirrored : countTraceLines(tracePath));
    return new PgTraceMirror({
      writer: this.context.writer,
      sessionId: this.info.id,
      runToken: this.runToken,
      recordsBefore,
      mirroredBefore: mirrored,
      usage: {
        input_tokens: Number(row?.input_tokens ?? 0),
        output_tokens: Number(row?.output_tokens ?? 0),
        cached_tokens: Number(row?.cached_tokens ?? 0),
        reasoning_tokens: Number(row?.reasoning_tokens ?? 0),
        cost_usd: Number(row?.cost_usd ?? 0),
        unpriced_calls: Number(row?.unpriced_calls ?? 0),
      },
      tracePath,
      bufferLimit: this.options.bufferLimit ?? 10_000,
      batchSize: this.options.batchSize ?? 200,
      warn: (warning) => {
        const full = { ...warning, sessionId: this.info.id };
        if (this.options.onWarning !== undefined) this.options.onWarning(full);
        else this.context.warn(full);
      },
    });
  }
}

/** The registration with host and pid filled in. */
export function withDefaults(info: SessionRegistration): SessionRegistration & { host: string; pid: number } {
  return { ...info, host: info.host ?? hostname(), pid: info.pid ?? process.pid };
}
