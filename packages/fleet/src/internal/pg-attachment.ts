import { hostname } from 'node:os';
import type { SecretRedactor, SessionStatus } from '@rho/core';
import type { Sql } from 'postgres';
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

  constructor(
    private readonly context: AttachmentContext,
    readonly info: SessionRegistration & { host: string; pid: number },
    private readonly options: AttachOptions,
  ) {
    this.control = new PgControlChannel(context.sql, info.id);
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
    const row = await sql.begin(async (tx) => {
      const [registered] = await tx<RegisteredRow[]>`
        insert into agent_registry (session_id, parent_id, host, pid, cwd, model, profile, status, labels,
          first_prompt, started_at)
        values (${info.id}, ${info.parentId ?? null}, ${info.host}, ${info.pid}, ${info.cwd ?? null},
          ${info.model ?? null}, ${info.profile ?? null}, ${info.status ?? 'running'}, ${tx.json(info.labels ?? {})},
          ${info.firstPrompt ?? null}, ${info.startedAt ?? new Date().toISOString()})
        on conflict (session_id) do update set
          parent_id = coalesce(excluded.parent_id, agent_registry.parent_id),
          host = excluded.host, pid = excluded.pid, cwd = coalesce(excluded.cwd, agent_registry.cwd),
          model = coalesce(excluded.model, agent_registry.model),
          profile = coalesce(excluded.profile, agent_registry.profile),
          status = excluded.status, labels = agent_registry.labels || excluded.labels,
          first_prompt = coalesce(agent_registry.first_prompt, excluded.first_prompt),
          heartbeat_at = now(), updated_at = now(), gone = false, cancel_requested = false
        returning records, input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd`;
      // A cancel left by an earlier process that died mid-run must not stop this one.
      await tx`update signal_queue set acked_at = now()
        where session_id = ${info.id} and kind = 'cancel' and acked_at is null`;
      return registered!;
    });
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
        () => {
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
        where session_id = ${this.info.id}`.catch(() => undefined);
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
      recordsBefore,
      mirroredBefore: mirrored,
      usage: {
        input_tokens: Number(row?.input_tokens ?? 0),
        output_tokens: Number(row?.output_tokens ?? 0),
        cached_tokens: Number(row?.cached_tokens ?? 0),
        reasoning_tokens: Number(row?.reasoning_tokens ?? 0),
        cost_usd: Number(row?.cost_usd ?? 0),
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
