import type { UsageTotals } from '../../events.js';
import type { State } from '../../state.js';

/** Usage between two snapshots of a session's totals: what one run spent. */
export function usageDifference(after: UsageTotals, before: UsageTotals): UsageTotals {
  return {
    input_tokens: after.input_tokens - before.input_tokens,
    output_tokens: after.output_tokens - before.output_tokens,
    cached_tokens: after.cached_tokens - before.cached_tokens,
    reasoning_tokens: after.reasoning_tokens - before.reasoning_tokens,
    cost_usd: after.cost_usd - before.cost_usd,
    unpriced_calls: (after.unpriced_calls ?? 0) - (before.unpriced_calls ?? 0),
  };
}

/**
 * Adds a child session's usage to `state` as an `llm_end` with purpose `child_session`: totals
 * and replay include it, but it never sets the context size of the conversation.
 */
export function recordChildUsage(state: State, childSessionId: string, usage: UsageTotals, model: string): void {
  state.append({
    type: 'llm_end',
    model,
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    cache_read_tokens: usage.cached_tokens,
    reasoning_tokens: usage.reasoning_tokens,
    cost_usd: usage.cost_usd,
    duration_ms: 0,
    purpose: 'child_session',
    ...((usage.unpriced_calls ?? 0) > 0 ? { unpriced_calls: usage.unpriced_calls } : {}),
    child_session_id: childSessionId,
  });
}
