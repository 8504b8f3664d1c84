import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { TraceReader } from '@rho/core';
import type { RawTraceRecord, TraceVisitor } from '@rho/core';

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
 */
export class TraceTally {
  inputTokens = 0;
  outputTokens = 0;
  /** Model calls counted, their cost (priced calls) and the calls without a price. */
  calls = 0;
  costUsd = 0;
  unpricedCalls = 0;
  readonly byModelDay = new Map<string, ModelDayTally>();
  readonly tools = new Map<string, ToolTally>();
  /** The durations of the session's own model calls, by model (a child's are in its own trace). */
  readonly modelDurations = new Map<string, number[]>();
  private reader = new TraceReader({ ignoreTypes: IGNORED });
  private offset = 0;
  private identity = '';

  constructor(readonly path: string) {}

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
    this.inputTokens = 0;
    this.outputTokens = 0;
    this.calls = 0;
    this.costUsd = 0;
    this.unpricedCalls = 0;
    this.byModelDay.clear();
    this.tools.clear();
    this.modelDurations.clear();
  }

  private count(record: RawTraceRecord): void {
    switch (record.type) {
      case 'llm_end': {
        const input = numberOr(record.input_tokens);
        const output = numberOr(record.output_tokens);
        this.inputTokens += input;
        this.outputTokens += output;
        // The session's total (a child's rolled-up usage included, as in `rho ps`).
        this.calls += 1;
        if (typeof record.cost_usd === 'number') this.costUsd += record.cost_usd;
        else this.unpricedCalls += 1;
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

/** Record types the tally has no use for: core's reader skips their lines unparsed. */
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
  'usage',
  'run_end',
];

function numberOr(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}
