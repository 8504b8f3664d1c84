import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { TraceReader } from '@rho/core';
import type { RawTraceRecord, TraceVisitor, UsageTotals } from '@rho/core';
import { addRecordUsage, emptyUsage } from '@rho/core/internal';

/** Usage of one model on one UTC day, within one session. */
export interface ModelDayTally {
  model: string;
  day: string;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  unpricedCalls: number;
}

/** Tool figures of one tool within one session. */
export interface ToolTally {
  calls: number;
  failures: number;
  blocked: number;
  durations: number[];
}

/**
 * What the dashboard needs from one trace, kept up to date incrementally: the bytes already read
 * are never read again (the reader resumes at `offset`), and only the record types counted here
 * are parsed (core's reader passes over the others, messages included, without parsing them).
 *
 * The session's total (tokens, cost, unpriced calls) is core's: each `llm_end` and `usage` record
 * is folded by `addRecordUsage`, the fold `State` applies, so a running session's figures here
 * are those `State.fromJsonl` (and so `rho ps`) gives for the same trace, without replaying it.
 */
export class TraceTally {
  /** The session's usage so far, as State counts it (a child's rolled-up usage included). */
  private usage: UsageTotals = emptyUsage();
  /** Model calls counted (`llm_end` records, a child's rolled-up one included). */
  calls = 0;
  readonly byModelDay = new Map<string, ModelDayTally>();
  readonly tools = new Map<string, ToolTally>();
  /** The durations of the session's own model calls, by model (a child's are in its own trace). */
  readonly modelDurations = new Map<string, number[]>();
  private reader = new TraceReader({ ignoreTypes: IGNORED });
  private offset = 0;
  private identity = '';

  constructor(readonly path: string) {}

  get inputTokens(): number {
    return this.usage.input_tokens;
  }

  get outputTokens(): number {
    return this.usage.output_tokens;
  }

  /** The cost of the priced calls. */
  get costUsd(): number {
    return this.usage.cost_usd;
  }

  /** Calls without a price (a child's included). */
  get unpricedCalls(): number {
    return this.usage.unpriced_calls ?? 0;
  }

  /** Reads whatever was appended since the last call (everything after a truncation or replacement). */
  update(): void {
    // One stat when nothing changed (the common case for a finished session).
    const before = statSync(this.path, { throwIfNoEntry: false });
    if (before === undefined || (`${before.dev}:${before.ino}` === this.identity && before.size === this.offset))
      return;
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return;
    }
    try {
      const info = fstatSync(fd);
      if (!info.isFile()) return;
      const identity = `${info.dev}:${info.ino}`;
      if (identity !== this.identity || info.size < this.offset) this.reset(identity);
      if (info.size === this.offset) return;
      const buffer = Buffer.alloc(Math.min(info.size - this.offset, 1 << 20));
      const visitor: TraceVisitor = { record: (record) => this.count(record) };
      while (this.offset < info.size) {
        const read = readSync(fd, buffer, 0, Math.min(buffer.length, info.size - this.offset), this.offset);
        if (read === 0) break;
        this.offset += read;
        this.reader.push(buffer.subarray(0, read), visitor);
      }
    } finally {
      closeSync(fd);
    }
  }

  private reset(identity: string): void {
    this.identity = identity;
    this.offset = 0;
    this.reader = new TraceReader({ ignoreTypes: IGNORED });
    this.usage = emptyUsage();
    this.calls = 0;
    this.byModelDay.clear();
    this.tools.clear();
    this.modelDurations.clear();
  }

  private count(record: RawTraceRecord): void {
    addRecordUsage(this.usage, record);
    switch (record.type) {
      case 'llm_end': {
        const input = numberOr(record.input_tokens);
        const output = numberOr(record.output_tokens);
        this.calls += 1;
        // A child session's usage rolled up into its parent: the child's own trace counts its calls.
        if (record.purpose === 'child_session') return;
        const model = typeof record.model === 'string' ? record.model : 'unknown';
        const day = typeof record.ts === 'string' ? record.ts.slice(0, 10) : 'unknown';
        const key = `${model}\u0000${day}`;
        let tally = this.byModelDay.get(key);
        if (tally === undefined) {
          tally = { model, day, calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, unpricedCalls: 0 };
          this.byModelDay.set(key, tally);
        }
        tally.calls += 1;
        tally.inputTokens += input;
        tally.outputTokens += output;
        let durations = this.modelDurations.get(model);
        if (durations === undefined) this.modelDurations.set(model, (durations = []));
        durations.push(numberOr(record.duration_ms));
        if (typeof record.cost_usd === 'number') tally.costUsd += record.cost_usd;
        else tally.unpricedCalls += 1;
        return;
      }
      case 'tool_end':
      case 'tool_blocked': {
        const name = typeof record.tool_name === 'string' ? record.tool_name : 'unknown';
        let tally = this.tools.get(name);
        if (tally === undefined) {
          tally = { calls: 0, failures: 0, blocked: 0, durations: [] };
          this.tools.set(name, tally);
        }
        if (record.type === 'tool_blocked') {
          tally.blocked += 1;
          return;
        }
        tally.calls += 1;
        if (record.success === false) tally.failures += 1;
        tally.durations.push(numberOr(record.duration_ms));
        return;
      }
      default:
        return;
    }
  }
}

/**
 * Record types the tally has no use for: core's reader skips their lines unparsed. `usage` (a
 * snapshot of the totals) is read: `addRecordUsage` takes it, as State does.
 */
const IGNORED = [
  'message',
  'run_start',
  'llm_start',
  'tool_start',
  'compact',
  'status',
  'retry',
  'refusal',
  'directive',
  'error',
  'run_end',
];

function numberOr(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}
