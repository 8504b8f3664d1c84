import type { ChatMessage, ChatToolCall } from '@rho/model-client';
import type { PendingApproval } from '../approvals.js';

/** Text of the synthetic result given to a tool call that was interrupted by a crash. */
export const INTERRUPTED_TOOL_RESULT =
  'Error: this tool call was interrupted (the agent process stopped before it finished). Its effects, if any, are unknown; check before repeating it.';

/**
 * The calls a resumed run must carry out first: when the last message is the model's response
 * (or its results so far) and one of its unanswered calls waits for approval, that call and every
 * unanswered call after it (they never started: calls run in order, and the wait came first).
 */
export function parkedToolCalls(
  messages: ChatMessage[],
  pending: ReadonlyMap<string, PendingApproval>,
): ChatToolCall[] {
  if (pending.size === 0) return [];
  let index = messages.length - 1;
  while (index >= 0 && messages[index]!.role === 'tool') index -= 1;
  const response = messages[index];
  if (response?.role !== 'assistant' || response.tool_calls === undefined) return [];
  const answered = new Set(
    messages.slice(index + 1).map((message) => (message.role === 'tool' ? message.tool_call_id : '')),
  );
  const open = response.tool_calls.filter((call) => !answered.has(call.id));
  const first = open.findIndex((call) => pending.has(call.id));
  return first === -1 ? [] : open.slice(first);
}

/**
 * Inserts a synthetic result right after the results of any assistant tool call that has none,
 * so every tool call in history has exactly one result. Returns the calls it answered.
 */
export function answerDanglingToolCalls(
  messages: ChatMessage[],
  parked: ReadonlySet<string> = new Set(),
): { id: string; name: string }[] {
  const answered = new Set<string>(parked);
  for (const message of messages) if (message.role === 'tool') answered.add(message.tool_call_id);
  const interrupted: { id: string; name: string }[] = [];
  for (let index = 0; index < messages.length; index += 1) {
    const message = messages[index]!;
    if (message.role !== 'assistant' || message.tool_calls === undefined) continue;
    const missing = message.tool_calls.filter((call) => !answered.has(call.id));
    if (missing.length === 0) continue;
    let insertAt = index + 1;
    while (insertAt < messages.length && messages[insertAt]!.role === 'tool') insertAt += 1;
    messages.splice(
      insertAt,
      0,
      ...missing.map((call): ChatMessage => ({
        role: 'tool',
        tool_call_id: call.id,
        content: INTERRUPTED_TOOL_RESULT,
      })),
    );
    for (const call of missing) {
      answered.add(call.id);
      interrupted.push({ id: call.id, name: call.function.name });
    }
  }
  return interrupted;
}
