import type { ChatToolCall } from '@rho/model-client';
import type { RunStatus } from '../../events.js';
import type { State } from '../../state.js';
import type { RunScope } from './run-scope.js';
import { runToolCalls } from './tool-calls.js';

/**
 * A run resumed while a call of its last response waited for approval (parked, then stopped or
 * killed) goes on at that call: its answer, given while the process was gone or awaited now,
 * applies before anything else. Returns the run's status when it cannot go on (parked again,
 * cancelled), undefined when the calls are done and the loop continues.
 */
export async function resumeParkedCalls(scope: RunScope): Promise<RunStatus | undefined> {
  const { state } = scope;
  if (state.parkedToolCalls.length === 0) return undefined;
  const calls = state.parkedToolCalls.map((call) => ({
    id: call.id,
    name: call.function.name,
    arguments: call.function.arguments,
  }));
  state.parkedToolCalls = [];
  const outcome = await runToolCalls(scope, calls);
  if (outcome === 'parked') {
    state.parkedToolCalls = parkedCallsOf(
      state,
      calls.map((call) => call.id),
    );
    return 'waiting_approval';
  }
  return outcome === 'cancelled' ? 'cancelled' : undefined;
}

/** The calls among `ids` that the last response left open (no result yet), for the next run. */
export function parkedCallsOf(state: State, ids: readonly string[]): ChatToolCall[] {
  const answered = new Set<string>();
  for (const message of state.messages) if (message.role === 'tool') answered.add(message.tool_call_id);
  const open = new Set(ids.filter((id) => !answered.has(id)));
  for (let index = state.messages.length - 1; index >= 0; index -= 1) {
    const message = state.messages[index]!;
    if (message.role === 'assistant' && message.tool_calls !== undefined)
      return message.tool_calls.filter((call) => open.has(call.id));
  }
  return [];
}
