import type { SecretRedactor, TraceRecord } from '@rho/core';
import type { Sql } from 'postgres';
import type { UsageRow } from './pg-trace-mirror.js';

/** One session's batch, as a mirror hands it over. */
export interface MirrorBatch {
  sessionId: string;
  /** The writing process's claim on the session: rows are written only while the registry holds it. */
  runToken?: string;
  records: { seq: number; record: TraceRecord }[];
  /** The status as of the batch's last record, if one of them set it. */
  status: string | undefined;
  usage: UsageRow;
}

/** A batch that can never be written (the database refuses its data): the mirror skips it. */
export class PermanentWriteError extends Error {}

const MAX_ROWS = 2_000;
const MAX_NOTIFY_BYTES = 7_000;

/**
 * Writes the batches of every session attached through one `Fleet` in shared transactions: the
 * records of all of them in one INSERT, their registry rows in one UPDATE, and one NOTIFY listing
 * `<session> <last seq>` pairs. With a thousand sessions each sending a record now and then, that
 * is a few transactions a second instead of hundreds (each NOTIFYing transaction takes a global
 * lock at commit). When a shared transaction fails on the data (not the connection), each batch
 * is tried alone, so one session's bad record cannot hold up the others.
 */
export class MirrorWriter {
  private pending: { batch: MirrorBatch; resolve: () => void; reject: (error: unknown) => void }[] = [];
  private scheduled = false;

  constructor(
    private readonly sql: Sql,
    private readonly channel: string,
    /** Every record is written through it: what the trace holds, with the secrets removed. */
    private readonly redact: SecretRedactor,
  ) {}

  /** Resolves when the batch is committed; rejects (PermanentWriteError for bad data) when not. */
  write(batch: MirrorBatch): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ batch, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    while (this.pending.length > 0) {
      const taken: typeof this.pending = [];
      let rows = 0;
      while (
        this.pending.length > 0 &&
        (taken.length === 0 || rows + this.pending[0]!.batch.records.length <= MAX_ROWS)
      ) {
        const next = this.pending.shift()!;
        rows += next.batch.records.length;
        taken.push(next);
      }
      try {
        await this.commit(taken.map((item) => item.batch));
        for (const item of taken) item.resolve();
      } catch (error) {
        if (taken.length > 1 && isDataError(error)) {
          // Find the bad batch: each alone.
          for (const item of taken) {
            try {
              await this.commit([item.batch]);
              item.resolve();
            } catch (single) {
              item.reject(isDataError(single) ? new PermanentWriteError(String(single)) : single);
            }
          }
        } else {
          for (const item of taken) item.reject(isDataError(error) ? new PermanentWriteError(String(error)) : error);
        }
      }
    }
  }

  private async commit(batches: MirrorBatch[]): Promise<void> {
    const sessions: string[] = [];
    const seqs: string[] = [];
    const types: string[] = [];
    const times: (string | null)[] = [];
    const bodies: string[] = [];
    for (const batch of batches)
      for (const { seq, record } of batch.records) {
        sessions.push(batch.sessionId);
        seqs.push(String(seq));
        types.push(String(record.type));
        times.push(validTime(record.ts));
        bodies.push(jsonForPostgres(this.redact(record)));
      }
    const tokens: (string | null)[] = [];
    for (const batch of batches)
      for (let index = 0; index < batch.records.length; index += 1) tokens.push(batch.runToken ?? null);
    const ids = batches.map((batch) => batch.sessionId);
    const idTokens = batches.map((batch) => batch.runToken ?? null);
    const lasts = batches.map((batch) => String(batch.records[batch.records.length - 1]!.seq));
    const statuses = batches.map((batch) => batch.status ?? null);
    const usage = (key: keyof UsageRow) => batches.map((batch) => String(batch.usage[key]));
    const notices = noticePayloads(batches.map((batch, index) => `${batch.sessionId} ${lasts[index]}`));
    await this.sql.begin(async (tx) => {
      // Fenced: only the process whose run token the registry row holds writes a session's records
      // (a process that lost the row after its heartbeat stopped writes nothing into the new run's).
      await tx`insert into trace_records (session_id, seq, type, ts, record)
        select u.session_id, u.seq, u.type, u.ts::timestamptz, u.record::jsonb
        from unnest(${sessions}::text[], ${seqs}::bigint[], ${types}::text[], ${times}::text[], ${bodies}::text[],
          ${tokens}::text[]) as u(session_id, seq, type, ts, record, token)
        where u.token is null or exists (select 1 from agent_registry r
          where r.session_id = u.session_id and r.run_token = u.token)
        on conflict do nothing`;
      await tx`update agent_registry r set records = greatest(r.records, u.last),
          status = coalesce(u.status, r.status),
          input_tokens = u.input_tokens, output_tokens = u.output_tokens, cached_tokens = u.cached_tokens,
          reasoning_tokens = u.reasoning_tokens, cost_usd = u.cost_usd, unpriced_calls = u.unpriced_calls,
          updated_at = now()
        from unnest(${ids}::text[], ${lasts}::bigint[], ${statuses}::text[], ${usage('input_tokens')}::bigint[],
          ${usage('output_tokens')}::bigint[], ${usage('cached_tokens')}::bigint[], ${usage('reasoning_tokens')}::bigint[],
          ${usage('cost_usd')}::float8[], ${usage('unpriced_calls')}::bigint[], ${idTokens}::text[])
          as u(session_id, last, status, input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd,
            unpriced_calls, token)
        where r.session_id = u.session_id and (u.token is null or r.run_token = u.token)`;
      for (const payload of notices) await tx`select pg_notify(${this.channel}, ${payload})`;
    });
  }
}

/** `<id> <seq>` pairs joined with commas, in payloads that fit NOTIFY's 8,000-byte limit. */
function noticePayloads(pairs: string[]): string[] {
  const payloads: string[] = [];
  let current = '';
  for (const pair of pairs) {
    if (current !== '' && current.length + pair.length + 1 > MAX_NOTIFY_BYTES) {
      payloads.push(current);
      current = '';
    }
    current = current === '' ? pair : `${current},${pair}`;
  }
  if (current !== '') payloads.push(current);
  return payloads;
}

/** The record's `ts` when PostgreSQL can read it as a time, else null (the record keeps it). */
function validTime(ts: unknown): string | null {
  return typeof ts === 'string' && Number.isFinite(Date.parse(ts)) ? ts : null;
}

/**
 * The record as JSON that `jsonb` accepts: PostgreSQL cannot store the NUL character, so
 * `\u0000` escapes (a NUL in a tool's output) become U+FFFD; everything else is as in the trace.
 */
export function jsonForPostgres(record: TraceRecord): string {
  const json = JSON.stringify(record);
  return json.includes('\\u0000') ? json.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\ufffd') : json;
}

/** A failure caused by the data (SQLSTATE classes 22 and 23), which sending again cannot fix. */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code);
}
