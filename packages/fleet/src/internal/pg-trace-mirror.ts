import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import type { StateObserver, TraceRecord } from '@rho/core';
import type { MirrorWriter } from './mirror-writer.js';
import { PermanentWriteError } from './mirror-writer.js';
import type { FleetWarning, MirrorStats, TraceMirror } from '../types.js';
import { withDeadline } from './pg-control-channel.js';

/** Cumulative usage as the registry holds it. */
export interface UsageRow {
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  cost_usd: number;
  /** Model calls without a known price (their cost is not in `cost_usd`). */
  unpriced_calls: number;
}

/** What a {@link PgTraceMirror} needs. */
export interface PgTraceMirrorOptions {
  /** Writes the batches of every session of the fleet in shared transactions. */
  writer: MirrorWriter;
  sessionId: string;
  /** The attachment's run token (fencing of every write). */
  runToken?: string;
  /** Records already in the trace (the next one observed is `recordsBefore + 1`). */
  recordsBefore: number;
  /** The highest sequence number the fleet holds for the session. */
  mirroredBefore: number;
  /** The registry's usage so far (a resumed session goes on from it). */
  usage: UsageRow;
  tracePath: string | undefined;
  bufferLimit: number;
  batchSize: number;
  warn: (warning: Omit<FleetWarning, 'sessionId'>) => void;
}

const WRITE_DEADLINE_MS = 15_000;
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;

/**
 * Mirrors one session's trace records to `trace_records`, in order, batched, each with its
 * position in the trace file as `seq` (unique per session; a batch sent again after a lost reply
 * is absorbed by ON CONFLICT DO NOTHING). {@link observe} never waits: records go to a bounded
 * buffer that a background loop drains. When the buffer overflows (the database is away or slow)
 * the mirror drops the buffer, says it fell behind, and once the database answers again reads the
 * missing records back from the local trace file (the source of truth), in order, until it has
 * caught up; then it buffers again. Without a trace file, dropped records stay missing.
 */
export class PgTraceMirror implements TraceMirror {
  private observed: number;
  private mirrored: number;
  private buffer: { seq: number; record: TraceRecord }[] = [];
  /** Behind: the next sequence number to read from the trace file (buffering is off meanwhile). */
  private resumeFrom: number | undefined;
  private lost = 0;
  private running: Promise<void> | undefined;
  private failures = 0;
  private stopped = false;
  private readonly usage: UsageRow;
  private fileReader: LineReader | undefined;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: PgTraceMirrorOptions) {
    this.observed = options.recordsBefore;
    this.mirrored = Math.min(options.mirroredBefore, options.recordsBefore);
    this.usage = { ...options.usage };
    // The previous process stopped before mirroring all it wrote: catch up from the file.
    if (this.mirrored < this.observed) this.resumeFrom = this.mirrored + 1;
  }

  readonly observe: StateObserver = (record) => {
    if (this.stopped) return;
    this.observed += 1;
    this.track(record);
    if (this.resumeFrom === undefined) {
      if (this.buffer.length < this.options.bufferLimit) {
        this.buffer.push({ seq: this.observed, record });
      } else {
        this.fallBehind();
      }
    }
    this.kick();
  };

  stats(): MirrorStats {
    const behind = this.resumeFrom !== undefined;
    return {
      observed: this.observed,
      mirrored: this.mirrored,
      pending: this.buffer.length,
      dropped: behind ? this.observed - this.mirrored - this.buffer.length : 0,
      behind,
      ...(this.lost > 0 ? { lost: this.lost } : {}),
    };
  }

  async flush(timeoutMs = 5_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.mirrored < this.observed && Date.now() < deadline) {
      this.kick(true);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return this.mirrored >= this.observed;
  }

  /** Starts the catch-up from the trace file when the fleet lacks records of an earlier process. */
  start(): void {
    if (this.resumeFrom !== undefined) this.kick();
  }

  /** Stops mirroring (after a flush). */
  stop(): void {
    this.stopped = true;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.fileReader?.close();
  }

  private fallBehind(): void {
    const first = this.buffer[0]?.seq ?? this.observed;
    this.buffer = [];
    if (this.options.tracePath === undefined) {
      // Nothing to read them back from: they are lost to the fleet (the trace file still has them).
      this.lost += this.observed - first + 1;
      this.mirrored = this.observed;
      this.options.warn({
        code: 'mirror_behind',
        message: `The fleet mirror fell behind (the database is slow or away) and dropped ${this.observed - first + 1} trace records; without a trace file they stay missing in the fleet (the local trace has them).`,
      });
      return;
    }
    this.resumeFrom = first;
    this.options.warn({
      code: 'mirror_behind',
      message: `The fleet mirror fell behind (the database is slow or away; more than ${this.options.bufferLimit} records waiting): it will catch up from the local trace when the database answers.`,
    });
  }

  private kick(now = false): void {
    if (this.running !== undefined || this.stopped) return;
    if (this.retryTimer !== undefined) {
      if (!now) return;
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
    }
    this.running = this.drain().finally(() => {
      this.running = undefined;
    });
  }

  private async drain(): Promise<void> {
    // Let a burst of records gather into one batch.
    await new Promise((resolve) => setImmediate(resolve));
    while (!this.stopped) {
      const wasBehind = this.resumeFrom !== undefined;
      let batch: { seq: number; record: TraceRecord }[];
      let through = 0;
      if (this.resumeFrom !== undefined) {
        const read = this.readBack(
          this.resumeFrom,
          Math.min(this.observed, this.resumeFrom + this.options.batchSize - 1),
        );
        batch = read.records;
        through = read.through;
      } else {
        batch = this.buffer.slice(0, this.options.batchSize);
      }
      if (batch.length === 0 && !wasBehind) return;
      try {
        if (batch.length > 0) {
          // A write that hangs (a server that died without closing the connection) counts as failed;
          // sending the batch again is harmless (ON CONFLICT DO NOTHING).
          const written = await withDeadline(
            this.write(batch).then(
              () => true,
              (error: unknown) => (error instanceof PermanentWriteError ? 'refused' : false),
            ),
            WRITE_DEADLINE_MS,
          );
          if (written === 'refused') {
            // The database refuses this data (the trace keeps it): skip it rather than retry forever.
            this.lost += batch.length;
            this.options.warn({
              code: 'mirror_behind',
              message: `The fleet database refused ${batch.length} trace records (seq ${batch[0]!.seq}-${batch[batch.length - 1]!.seq}); they stay in the local trace only.`,
            });
          } else if (written !== true) throw new Error('the batch was not written');
        }
      } catch {
        this.failures += 1;
        if (this.failures === 1)
          this.options.warn({
            code: 'database_unreachable',
            message:
              'The fleet database does not answer; trace records are kept in memory (bounded) and sent when it does.',
          });
        const wait = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** Math.min(this.failures, 10));
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined;
          this.kick();
        }, wait);
        this.retryTimer.unref();
        return;
      }
      if (this.failures > 0) {
        this.failures = 0;
        this.options.warn({ code: 'database_reconnected', message: 'The fleet database answers again.' });
      }
      const last = batch.length === 0 ? undefined : batch[batch.length - 1]!.seq;
      if (wasBehind) {
        if (through < this.resumeFrom!) {
          // The file ends before what was observed (it was cut or replaced): the rest is lost to the fleet.
          this.lost += this.observed - this.resumeFrom! + 1;
          through = this.observed;
        }
        this.mirrored = Math.max(this.mirrored, through);
        this.resumeFrom = through + 1;
        if (this.resumeFrom > this.observed) {
          // Caught up (checked synchronously after the await: no record slipped in between).
          this.resumeFrom = undefined;
          this.mirrored = this.observed;
          this.fileReader?.close();
          this.fileReader = undefined;
          this.options.warn({ code: 'mirror_caught_up', message: 'The fleet mirror caught up from the local trace.' });
        }
      } else {
        this.buffer.splice(0, batch.length);
        this.mirrored = Math.max(this.mirrored, last!);
      }
    }
  }

  private write(batch: { seq: number; record: TraceRecord }[]): Promise<void> {
    // The status as of this batch's last record, so that a reader never sees a session finished
    // before its last records are there (usage may run ahead: it only grows).
    return this.options.writer.write({
      sessionId: this.options.sessionId,
      ...(this.options.runToken === undefined ? {} : { runToken: this.options.runToken }),
      records: batch,
      status: batchStatus(batch.map((item) => item.record)),
      usage: { ...this.usage },
    });
  }

  /** Records `from`..`to` from the trace file (line n is record n), and the last line read; torn lines are skipped. */
  private readBack(from: number, to: number): { records: { seq: number; record: TraceRecord }[]; through: number } {
    if (to < from) return { records: [], through: from - 1 };
    this.fileReader ??= new LineReader(this.options.tracePath!);
    const records: { seq: number; record: TraceRecord }[] = [];
    let through = from - 1;
    try {
      for (const [seq, line] of this.fileReader.lines(from, to)) {
        through = seq;
        try {
          const record = JSON.parse(line) as TraceRecord;
          if (typeof record === 'object' && record !== null && typeof record.type === 'string')
            records.push({ seq, record });
        } catch {
          // A torn line left by a crash: the trace holds no record there either.
        }
      }
    } catch {
      // The trace file cannot be read: what is missing stays missing.
    }
    return { records, through };
  }

  /** Follows the records in order: usage for the registry. */
  private track(record: TraceRecord): void {
    const value = record as unknown as Record<string, unknown>;
    const number = (key: string, source: Record<string, unknown> = value): number =>
      typeof source[key] === 'number' && Number.isFinite(source[key]) ? (source[key] as number) : 0;
    switch (record.type) {
      case 'llm_end':
        this.usage.input_tokens += number('input_tokens');
        this.usage.output_tokens += number('output_tokens');
        this.usage.cached_tokens += number('cache_read_tokens');
        this.usage.reasoning_tokens += number('reasoning_tokens');
        this.usage.cost_usd += number('cost_usd');
        if (typeof value.cost_usd !== 'number') this.usage.unpriced_calls += 1;
        break;
      case 'run_end': {
        const usage = value.usage;
        if (typeof usage === 'object' && usage !== null) {
          const totals = usage as Record<string, unknown>;
          this.usage.input_tokens = number('input_tokens', totals);
          this.usage.output_tokens = number('output_tokens', totals);
          this.usage.cached_tokens = number('cached_tokens', totals);
          this.usage.reasoning_tokens = number('reasoning_tokens', totals);
          this.usage.cost_usd = number('cost_usd', totals);
          this.usage.unpriced_calls = number('unpriced_calls', totals);
        }
        break;
      }
      default:
        break;
    }
  }
}

/** The status the last status-bearing record of `records` sets (`run_start`, `status`, `run_end`), if any. */
function batchStatus(records: readonly TraceRecord[]): string | undefined {
  for (let index = records.length - 1; index >= 0; index -= 1) {
    const record = records[index] as unknown as Record<string, unknown>;
    if (record.type === 'run_start') return 'running';
    if ((record.type === 'status' || record.type === 'run_end') && typeof record.status === 'string')
      return record.status;
  }
  return undefined;
}

/** Reads whole lines of a growing file by line number, remembering where it stopped. */
class LineReader {
  private fd: number | undefined;
  private offset = 0;
  private line = 0;
  private pending = '';
  private decoder = new StringDecoder('utf8');

  constructor(private readonly path: string) {}

  /** Lines `from`..`to` (1-based) that are complete in the file now. */
  *lines(from: number, to: number): Generator<[number, string]> {
    if (from <= this.line) {
      // Asked to go back (never happens in order): start over.
      this.offset = 0;
      this.line = 0;
      this.pending = '';
      this.decoder = new StringDecoder('utf8');
    }
    this.fd ??= openSync(this.path, 'r');
    const chunk = Buffer.alloc(1 << 16);
    while (this.line < to) {
      const newline = this.pending.indexOf('\n');
      if (newline !== -1) {
        const text = this.pending.slice(0, newline);
        this.pending = this.pending.slice(newline + 1);
        this.line += 1;
        if (this.line >= from) yield [this.line, text];
        continue;
      }
      const count = readSync(this.fd, chunk, 0, chunk.length, this.offset);
      if (count === 0) return;
      this.offset += count;
      this.pending += this.decoder.write(chunk.subarray(0, count));
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/** The number of records in a trace file: its lines, counting a torn last line. 0 when missing. */
export function countTraceLines(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return 0;
  }
  try {
    const chunk = Buffer.alloc(1 << 16);
    let lines = 0;
    let offset = 0;
    let last = 0x0a;
    for (;;) {
      const count = readSync(fd, chunk, 0, chunk.length, offset);
      if (count === 0) break;
      for (let index = 0; index < count; index += 1) if (chunk[index] === 0x0a) lines += 1;
      last = chunk[count - 1]!;
      offset += count;
    }
    return last === 0x0a ? lines : lines + 1;
  } finally {
    closeSync(fd);
  }
}
