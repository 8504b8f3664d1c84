import type { ChatToolCall, ModelRequest, ModelToolCall, Usage } from '@rho/model-client';
import { ModelApiError, RhoError } from '@rho/model-client';
import { timestamp } from '../../events.js';
import type { RunScope } from './run-scope.js';
import { emit, modelSystemPrompt } from './run-scope.js';

/** How one model call ended. */
export type TurnOutcome =
  | { kind: 'ok'; text: string; toolCalls: ModelToolCall[]; finishReason: string | null }
  | { kind: 'cancelled' }
  | { kind: 'error'; error: RhoError };

/**
 * One model call over the whole history: streams text and reasoning to the listeners, records
 * `llm_start`/`llm_end` (usage, even when the call failed) and the assistant message.
 */
export async function modelTurn(scope: RunScope, withTools: boolean): Promise<TurnOutcome> {
  const { agent, state, client, controller, listeners } = scope;
  // The history is redacted as it is appended (State); the system prompt here, once per prompt.
  const redactor = state.secretRedactor;
  const request: ModelRequest = {
    messages: [{ role: 'system', content: modelSystemPrompt(agent.systemPrompt, redactor) }, ...state.messages],
    ...(withTools && agent.registry.size > 0 ? { tools: agent.registry.specs() } : {}),
  };
  const model = client.model;
  state.append({
    type: 'llm_start',
    model,
    context_size: state.lastInputTokens ?? state.estimateTokens(agent.systemPrompt),
    ...scope.window.traceFields(),
  });
  const started = performance.now();
  let text = '';
  let refusal = '';
  const toolCalls: ModelToolCall[] = [];
  let usage: Usage | null = null;
  let finishReason: string | null = null;
  let reportedModel = model;
  let responseId: string | undefined;
  let error: RhoError | undefined;
  try {
    for await (const event of client.stream(request, controller.signal)) {
      switch (event.type) {
        case 'text':
          text += event.text;
          if (listeners.length > 0)
            emit(listeners, { type: 'text', ts: timestamp(), text: redactor?.text(event.text) ?? event.text });
          break;
        case 'reasoning':
          if (listeners.length > 0)
            emit(listeners, { type: 'reasoning', ts: timestamp(), text: redactor?.text(event.text) ?? event.text });
          break;
        case 'refusal':
          refusal += event.text;
          break;
        case 'tool_call':
          toolCalls.push(event.toolCall);
          break;
        case 'done':
          usage = event.usage;
          finishReason = event.finishReason;
          reportedModel = event.model || model;
          responseId = event.responseId;
          break;
        case 'error':
          error = event.error;
          break;
        case 'retry':
          // The failed attempt produced nothing; the record makes the wait visible (replay ignores it).
          state.append({
            type: 'retry',
            attempt: event.attempt,
            max_attempts: event.maxAttempts,
            delay_ms: event.delayMs,
            reason: event.reason,
            ...(event.statusCode === undefined ? {} : { status_code: event.statusCode }),
          });
          break;
        default: {
          const unknown: never = event;
          void unknown;
        }
      }
      if (controller.signal.aborted) break;
    }
  } catch (thrown) {
    if (!controller.signal.aborted) {
      error = RhoError.isInstance(thrown)
        ? thrown
        : new ModelApiError({
            message: `The model call failed: ${thrown instanceof Error ? thrown.message : String(thrown)}`,
            isRetryable: false,
            cause: thrown,
          });
    }
  }
  state.append({
    type: 'llm_end',
    model: reportedModel,
    input_tokens: usage?.inputTokens ?? 0,
    output_tokens: usage?.outputTokens ?? 0,
    cache_read_tokens: usage?.cachedTokens ?? 0,
    reasoning_tokens: usage?.reasoningTokens ?? 0,
    // A call cancelled before the provider reported usage counts as free, not as unpriced: one
    // stopped call would otherwise make the session's whole cost unknown (usage_reported says so).
    cost_usd: usage === null ? (controller.signal.aborted ? 0 : null) : usage.costUsd,
    duration_ms: Math.round(performance.now() - started),
    finish_reason: finishReason,
    ...(usage === null ? { usage_reported: false } : {}),
    ...(responseId === undefined ? {} : { response_id: responseId }),
  });
  // The answer as a whole (a secret split across two deltas included) is what the run returns.
  if (redactor !== undefined && text !== '') text = redactor.text(text);
  // A refusal is recorded whatever happens next: it is what the model said instead of an answer.
  if (refusal !== '') state.append({ type: 'refusal', content: refusal });
  if (controller.signal.aborted) {
    // Keep what the model already said; drop tool calls that were never acted on.
    if (text !== '') state.addMessage({ role: 'assistant', content: text });
    return { kind: 'cancelled' };
  }
  if (error !== undefined) {
    // Text already streamed to the user is kept with the error (it is not an answer, so it does
    // not enter the history).
    state.append({
      type: 'error',
      content: error.message,
      code: error.code,
      ...(text === '' ? {} : { partial_text: text }),
    });
    return { kind: 'error', error };
  }
  if (toolCalls.length > 0) {
    // extra_content (Gemini's thought signature) stays on the call: the provider needs it back.
    const calls: ChatToolCall[] = toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
      ...(call.extraContent === undefined ? {} : { extra_content: call.extraContent }),
    }));
    // Text streamed alongside tool calls is part of the answer: keep it in history.
    state.addMessage({ role: 'assistant', content: text === '' ? null : text, tool_calls: calls });
  } else {
    state.addMessage({ role: 'assistant', content: text });
  }
  return { kind: 'ok', text, toolCalls, finishReason };
}
