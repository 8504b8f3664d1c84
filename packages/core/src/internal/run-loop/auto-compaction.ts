import type { ModelClient, ModelRequest } from '@rho/model-client';
import { ModelApiError } from '@rho/model-client';
import type { Agent } from '../../agent.js';
import type { CompactResult } from '../../compaction.js';
import { AUTO_COMPACT_THRESHOLD, COMPACTION_PROMPT, messagesToKeep, SUMMARY_PREFIX } from '../../compaction.js';
import type { ContextWindowResolver } from '../../context-window-resolver.js';
import { SessionWriteError } from '../../errors.js';
import { State } from '../../state.js';
import { modelSystemPrompt, safeAppend } from './run-scope.js';

/** What compaction works on: the conversation, and the agent and client that continue it. */
export interface CompactionScope {
  readonly agent: Agent;
  readonly state: State;
  readonly client: ModelClient;
  /** The session's context window: set, discovered from the server, known, or the default. */
  readonly window: ContextWindowResolver;
}

/**
 * Whether the context has passed the compaction threshold of the window. The window is resolved
 * once per session (setting, server, table, default), so compaction runs for every model.
 */
export async function compactionDue(scope: CompactionScope, signal?: AbortSignal): Promise<boolean> {
  const { auto = true, threshold = AUTO_COMPACT_THRESHOLD } = scope.agent.compaction;
  // Resolved before the first model call even when compaction is off, so every llm_start says which window applies.
  const window = (await scope.window.resolve(signal)).tokens;
  if (!auto || scope.state.messages.length < 2) return false;
  const current = scope.state.lastInputTokens ?? scope.state.estimateTokens(scope.agent.systemPrompt);
  return current > Math.floor(window * threshold);
}

/**
 * Replaces history with a summary written by the model, keeping the original task and the latest
 * user messages verbatim, and records it (`compact`), so a resumed session continues from it. A
 * failed summary leaves history untouched and is reported; only a trace that cannot be written throws.
 */
export async function compactHistory(
  scope: CompactionScope,
  options: { trigger: 'auto' | 'manual'; instructions?: string; signal?: AbortSignal },
): Promise<CompactResult> {
  const { agent, state, client, window } = scope;
  const { trigger } = options;
  const tokensBefore = state.lastInputTokens ?? state.estimateTokens(agent.systemPrompt);
  const guidance =
    options.instructions !== undefined && options.instructions.trim() !== ''
      ? `\n\nUser guidance: ${options.instructions.trim()}`
      : '';
  // Same system prompt and tools as the conversation, so the provider's prompt cache is reused.
  const request: ModelRequest = {
    messages: [
      { role: 'system', content: modelSystemPrompt(agent.systemPrompt, state.secretRedactor) },
      ...state.messages,
      { role: 'user', content: `${COMPACTION_PROMPT}${guidance}` },
    ],
    ...(agent.registry.size > 0 ? { tools: agent.registry.specs() } : {}),
  };
  state.append({
    type: 'llm_start',
    model: client.model,
    context_size: tokensBefore,
    ...window.traceFields(),
    purpose: 'compaction',
  });
  const started = performance.now();
  let summary: string;
  let ended = false;
  try {
    const response = await client.complete(request, options.signal, {
      onRetry: (notice) =>
        state.append({
          type: 'retry',
          attempt: notice.attempt,
          max_attempts: notice.maxAttempts,
          delay_ms: notice.delayMs,
          reason: notice.reason,
          ...(notice.statusCode === undefined ? {} : { status_code: notice.statusCode }),
          purpose: 'compaction',
        }),
    });
    ended = true;
    state.append({
      type: 'llm_end',
      model: response.model || client.model,
      input_tokens: response.usage?.inputTokens ?? 0,
      output_tokens: response.usage?.outputTokens ?? 0,
      cache_read_tokens: response.usage?.cachedTokens ?? 0,
      reasoning_tokens: response.usage?.reasoningTokens ?? 0,
      cost_usd: response.usage === null ? null : response.usage.costUsd,
      duration_ms: Math.round(performance.now() - started),
      finish_reason: response.finishReason,
      purpose: 'compaction',
      ...(response.usage === null ? { usage_reported: false } : {}),
    });
    summary = response.text.trim();
    if (summary === '')
      throw new ModelApiError({ message: 'The model returned an empty summary.', isRetryable: false });
  } catch (error) {
    if (SessionWriteError.isInstance(error)) throw error;
    if (!ended) {
      // The call failed: it still ends, so every llm_start has its llm_end.
      state.append({
        type: 'llm_end',
        model: client.model,
        input_tokens: 0,
        output_tokens: 0,
        cache_read_tokens: 0,
        reasoning_tokens: 0,
        cost_usd: null,
        duration_ms: Math.round(performance.now() - started),
        finish_reason: null,
        purpose: 'compaction',
        usage_reported: false,
      });
    }
    const message = `Compaction failed, history left unchanged: ${error instanceof Error ? error.message : String(error)}`;
    safeAppend(state, { type: 'error', content: message, code: 'compaction_failed' });
    return { ok: false, error: message, trigger };
  }
  const kept = messagesToKeep(state.messages);
  const content = `${SUMMARY_PREFIX}\n\n${summary}`;
  const after = new State();
  after.messages = [...kept, { role: 'user', content }];
  const tokensAfter = after.estimateTokens(agent.systemPrompt);
  state.append({
    type: 'compact',
    trigger,
    tokens_before: tokensBefore,
    tokens_after: tokensAfter,
    summary: content,
    kept,
  });
  return { ok: true, summary, tokensBefore, tokensAfter, trigger };
}
