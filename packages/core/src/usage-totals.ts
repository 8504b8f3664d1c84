import type { TraceRecord, UsageTotals } from './events.js';
import type { RawTraceRecord } from './trace-reader.js';

/** Usage totals of a session that made no model call yet. */
export function emptyUsage(): UsageTotals {
  return { input_tokens: 0, output_tokens: 0, cached_tokens: 0, reasoning_tokens: 0, cost_usd: 0, unpriced_calls: 0 };
}

function toNumber(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/**
 * Folds one trace record into a session's usage totals, in place: the one definition of what a
 * session used and cost. {@link State} applies every record through it (live and on replay), and
 * a reader that goes through a trace record by record (an export, a dashboard following a growing
 * trace) gets the same figures without replaying the rest of the session.
 *
 * An `llm_end` adds its tokens and its cost; one without a price (`cost_usd` not a number) counts
 * as an unpriced call, and a child session's rolled-up record adds the child's unpriced calls too.
 * A cancelled call that reported no usage has `cost_usd: 0`: it adds nothing and is not unpriced.
 * A `usage` record (the snapshot {@link State.toJsonl} writes) replaces the totals. Any other
 * record changes nothing. Takes a record as read ({@link RawTraceRecord}) as well as a typed one:
 * its fields are checked here, so a reader that never narrowed its records folds them the same.
 */
export function addRecordUsage(usage: UsageTotals, typed: TraceRecord | RawTraceRecord): void {
  const record = typed as RawTraceRecord;
  switch (record.type) {
    case 'llm_end':
      usage.input_tokens += toNumber(record.input_tokens);
      usage.output_tokens += toNumber(record.output_tokens);
      usage.cached_tokens += toNumber(record.cache_read_tokens);
      usage.reasoning_tokens += toNumber(record.reasoning_tokens);
      if (typeof record.cost_usd === 'number') usage.cost_usd += record.cost_usd;
      else usage.unpriced_calls = (usage.unpriced_calls ?? 0) + 1;
      // A child's calls that had no price are unpriced calls of this session too.
      if (record.purpose === 'child_session')
        usage.unpriced_calls = (usage.unpriced_calls ?? 0) + toNumber(record.unpriced_calls);
      break;
    case 'usage':
      usage.input_tokens = toNumber(record.input_tokens);
      usage.output_tokens = toNumber(record.output_tokens);
      usage.cached_tokens = toNumber(record.cached_tokens);
      usage.reasoning_tokens = toNumber(record.reasoning_tokens);
      usage.cost_usd = toNumber(record.cost_usd);
      usage.unpriced_calls = toNumber(record.unpriced_calls);
      break;
    default:
      break;
  }
}
