import { contentParts } from './dialects/mistral.js';
import type { ToolCallDelta } from './tool-call-assembler.js';

/**
 * One streamed chunk, reduced to what rho uses, whatever the provider's dialect: the typed schema
 * every provider quirk is mapped onto (as vercel/ai's `openai-compatible` provider does with its
 * chunk schema). Fields a provider did not send are empty strings, an empty array or `null`.
 */
export interface ChunkChoice {
  /** Answer text of this chunk. */
  text: string;
  /** Reasoning text of this chunk. */
  reasoning: string;
  /** Refusal text of this chunk (OpenAI `delta.refusal`). */
  refusal: string;
  /** Tool-call fragments, as sent. */
  toolCalls: readonly ToolCallDelta[];
  /** The finish reason, once the choice is finished. */
  finishReason: string | null;
}

const NO_CALLS: readonly ToolCallDelta[] = [];

/** Reads the delta of a chunk's choice (OpenAI shape plus every known dialect). */
export function readChoice(choice: { delta?: unknown; finish_reason?: unknown }): ChunkChoice {
  const delta = (choice.delta ?? {}) as Record<string, unknown>;
  let text = '';
  let reasoning = reasoningField(delta);
  const content = delta['content'];
  if (typeof content === 'string') {
    text = content;
  } else if (Array.isArray(content)) {
    const parts = contentParts(content);
    text = parts.text;
    reasoning += parts.reasoning;
  }
  const refusal = typeof delta['refusal'] === 'string' ? delta['refusal'] : '';
  const calls = delta['tool_calls'];
  const finish = choice.finish_reason;
  return {
    text,
    reasoning,
    refusal,
    toolCalls: Array.isArray(calls) ? (calls as ToolCallDelta[]) : NO_CALLS,
    finishReason: typeof finish === 'string' && finish !== '' ? finish : null,
  };
}

/** Reasoning text as providers send it: `reasoning_content` (DeepSeek, vLLM, xAI) or `reasoning` (OpenRouter, Ollama, Groq). */
export function reasoningField(source: Record<string, unknown> | undefined): string {
  if (source === undefined) return '';
  const content = source['reasoning_content'];
  if (typeof content === 'string' && content !== '') return content;
  const reasoning = source['reasoning'];
  return typeof reasoning === 'string' ? reasoning : '';
}
