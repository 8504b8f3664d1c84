import type { UsageTotals } from '../../events.js';
import type { Budgets } from '../../session-options.js';
import { modelTurn } from './model-turn.js';
import type { RunScope } from './run-scope.js';

const BUDGET_KEYS = ['maxTurns', 'maxTokens', 'maxCostUsd', 'maxDurationMs'] as const;

/** The budget a run has reached before its next model call (`max_turns`, ...), if any. */
export function reachedLimit(
  budgets: Budgets,
  turns: number,
  usage: UsageTotals,
  startedAt: number,
): string | undefined {
  if (budgets.maxTurns !== undefined && turns >= budgets.maxTurns) return 'max_turns';
  if (budgets.maxTokens !== undefined && usage.input_tokens + usage.output_tokens >= budgets.maxTokens)
    return 'max_tokens';
  if (budgets.maxCostUsd !== undefined && usage.cost_usd >= budgets.maxCostUsd) return 'max_cost_usd';
  if (budgets.maxDurationMs !== undefined && Date.now() - startedAt >= budgets.maxDurationMs) return 'max_duration_ms';
  return undefined;
}

/**
 * What is left of `budgets` after `usage` and `elapsedMs` of the current run: tokens and cost
 * are per session, time per run, and the turn limit stays as it is (it is per run).
 */
export function remainingBudgets(budgets: Budgets, usage: UsageTotals, elapsedMs: number): Budgets {
  const { maxTurns, maxTokens, maxCostUsd, maxDurationMs } = budgets;
  const remaining: Budgets = {};
  if (maxTurns !== undefined) remaining.maxTurns = maxTurns;
  if (maxTokens !== undefined) remaining.maxTokens = Math.max(0, maxTokens - usage.input_tokens - usage.output_tokens);
  if (maxCostUsd !== undefined) remaining.maxCostUsd = Math.max(0, maxCostUsd - usage.cost_usd);
  if (maxDurationMs !== undefined) remaining.maxDurationMs = Math.max(0, maxDurationMs - elapsedMs);
  return remaining;
}

/** Per limit, the smaller of the two; a limit only one of them sets is kept. */
export function tighterBudgets(first: Budgets, second: Budgets): Budgets {
  const result: Budgets = {};
  for (const key of BUDGET_KEYS) {
    const values = [first[key], second[key]].filter((value): value is number => value !== undefined);
    if (values.length > 0) result[key] = Math.min(...values);
  }
  return result;
}

/** The limit in words, for the model and for the `tool_blocked` reason. */
export function describeLimit(limit: string): string {
  switch (limit) {
    case 'max_turns':
      return 'turn limit';
    case 'max_tokens':
      return 'token budget';
    case 'max_cost_usd':
      return 'cost budget';
    case 'max_duration_ms':
      return 'time limit';
    default:
      return `limit (${limit})`;
  }
}

/** A budget was reached: one last model call without tools to summarise, then stop. Returns its text. */
export async function finalTurnAtLimit(scope: RunScope, limit: string): Promise<string> {
  const { state } = scope;
  state.addMessage({
    role: 'user',
    content: `[rho] The run has reached its ${describeLimit(limit)} and must stop now. Do not call tools. Reply with a short summary of what you did, what you found, and what remains to be done.`,
  });
  const outcome = await modelTurn(scope, false);
  if (outcome.kind !== 'ok') return '';
  // Offered no tools, the model may still call some: answer each (not run), so every call in
  // history has its result and a resumed session does not report them as interrupted.
  for (const call of outcome.toolCalls) {
    const reason = `the run reached its ${describeLimit(limit)}`;
    state.append({
      type: 'tool_blocked',
      tool_call_id: call.id,
      tool_name: call.name,
      tool_args: parseArguments(call.arguments),
      reason,
    });
    state.addMessage({
      role: 'tool',
      tool_call_id: call.id,
      content: `Not run: ${reason}. No more tools can be called in this run.`,
    });
  }
  return outcome.text;
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
