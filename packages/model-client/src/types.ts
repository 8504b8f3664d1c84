import type { DiscoveredContextWindow } from './discover-context-window.js';

/** A tool call as it is stored in chat history (OpenAI wire shape). */
export interface ChatToolCall {
  /** The call's id; the matching tool message carries it as `tool_call_id`. */
  id: string;
  /** Always `function`. */
  type: 'function';
  /** The function called. */
  function: {
    /** The tool name, as the model wrote it (possibly not a registered tool). */
    name: string;
    /** The arguments exactly as the model produced them: a JSON string, possibly malformed. */
    arguments: string;
  };
  /**
   * Provider data that must be sent back with the call in the next request, for example
   * Gemini's `{ google: { thought_signature } }` (its OpenAI-compatible endpoint answers 400
   * without it). Kept as the provider sent it.
   */
  extra_content?: Record<string, unknown>;
}

/** One chat message (OpenAI wire shape, as stored in `trace.jsonl`). */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; content: string; tool_call_id: string };

/** A tool offered to the model (OpenAI wire shape). */
export interface ToolSpec {
  /** Always `function`. */
  type: 'function';
  /** The function offered. */
  function: {
    /** The tool name the model calls. */
    name: string;
    /** What the tool does, written for the model. */
    description: string;
    /** JSON Schema of the arguments. */
    parameters: Record<string, unknown>;
  };
}

/** Token usage and cost of one model call. */
export interface Usage {
  /** All input tokens (`prompt_tokens`), cached ones included. */
  inputTokens: number;
  /** Output tokens (`completion_tokens`), reasoning tokens included. */
  outputTokens: number;
  /** Input tokens served from the provider's prompt cache. */
  cachedTokens: number;
  /** Output tokens spent on hidden reasoning (`completion_tokens_details.reasoning_tokens`). */
  reasoningTokens: number;
  /** Cost in USD, or `null` when the model is not in the price table. */
  costUsd: number | null;
}

/** One request to the model. */
export interface ModelRequest {
  /** The whole conversation, system prompt first. */
  messages: ChatMessage[];
  /** Tools the model may call. */
  tools?: ToolSpec[];
  /** Overrides the client's model for this request. */
  model?: string;
}

/** A tool call the model made, assembled from the stream. */
export interface ModelToolCall {
  /** The call's id (invented by the client when the provider sent none). */
  id: string;
  /** The tool name, as the model wrote it. */
  name: string;
  /** Raw argument text; the caller parses it and reports malformed JSON to the model. */
  arguments: string;
  /**
   * Provider data to send back with the call (the `extra_content` of {@link ChatToolCall}), for
   * example Gemini's thought signature. Absent when the provider sent none.
   */
  extraContent?: Record<string, unknown>;
  /**
   * `true` when the answer stopped at the output limit (`finish_reason: length`) while this
   * call's arguments were not yet a complete JSON value: the call was cut, not malformed.
   */
  truncated?: true;
}

/** A failed attempt that will be repeated: what failed, and when the next attempt starts. */
export interface RetryNotice {
  /** The attempt about to be made (2 for the first retry). */
  attempt: number;
  /** Attempts allowed in all (`maxRetries + 1`). */
  maxAttempts: number;
  /** The wait before that attempt, in milliseconds. */
  delayMs: number;
  /** Why, for people: `rate limited (429)`, `server error 503`, `no response from ... within 5 s`. */
  reason: string;
  /** The HTTP status of the failed attempt, when there was one. */
  statusCode?: number;
}

/**
 * Events yielded by {@link ModelClient.stream}: `retry` when an attempt failed before any output
 * and is repeated (before the wait), `text` and `reasoning` deltas as they arrive, each
 * `refusal` deltas when the model declines, each
 * `tool_call` once complete (when the choice finishes), then exactly one `done` or one `error`
 * last. `done` always carries the provider's finish reason: a stream that ends without one is an
 * `error` ({@link ModelResponseError}), never an answer. An aborted stream ends with neither.
 */
export type ModelStreamEvent =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  /** The model declined to answer (OpenAI's `refusal`, with structured outputs): the refusal's text. */
  | { type: 'refusal'; text: string }
  | { type: 'tool_call'; toolCall: ModelToolCall }
  | ({ type: 'retry' } & RetryNotice)
  | {
      type: 'done';
      /** Usage of the call, or `null` when the provider sent none. */
      usage: Usage | null;
      /**
       * The provider's finish reason (`stop`, `tool_calls`, `length`, ...). Streamed answers
       * always have one; a plain (non-streamed) answer may report `null`.
       */
      finishReason: string | null;
      /** The model that answered, as reported by the provider. */
      model: string;
      /** The provider's id of the response (`chatcmpl-...`), when it sent one. */
      responseId?: string;
    }
  | { type: 'error'; error: import('./errors.js').ModelApiError };

/** The complete answer of a non-streamed call. */
export interface ModelResponse {
  /** The answer's text ('' when there is none). */
  text: string;
  /** The tool calls, in order. */
  toolCalls: ModelToolCall[];
  /** The model's refusal (OpenAI's `message.refusal`), when it declined to answer. */
  refusal?: string;
  /** Usage of the call, or `null` when the provider sent none. */
  usage: Usage | null;
  /** The provider's finish reason, if any. */
  finishReason: string | null;
  /** The model that answered, as reported by the provider. */
  model: string;
  /** The provider's id of the response (`chatcmpl-...`), when it sent one. */
  responseId?: string;
}

/** Anything that can answer a model request: the OpenAI-compatible client or a scripted fake. */
export interface ModelClient {
  /** The default model of this client. */
  readonly model: string;
  /**
   * The endpoint the client calls, when it calls one over HTTP (optional: in-process clients
   * leave it out). Telemetry reports its host and port as the model server.
   */
  readonly baseURL?: string;
  /**
   * Streams one model call. Never throws for API failures: they arrive as an `error` event,
   * after retries were exhausted. Aborting `signal` aborts the HTTP request and ends the
   * iteration without an `error` and without a `done` event: the caller knows it cancelled.
   */
  stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<ModelStreamEvent>;
  /**
   * One non-streamed call; throws {@link ModelApiError} on failure, or the signal's reason (an
   * `AbortError`) when `signal` aborts. `onRetry` is told of each retry before its wait.
   */
  complete(
    request: ModelRequest,
    signal?: AbortSignal,
    options?: { onRetry?: (notice: RetryNotice) => void },
  ): Promise<ModelResponse>;
  /**
   * Asks the server how large this client's model's context window is (optional: clients that
   * cannot tell leave it out). Resolves to `undefined` when the server does not say; never rejects.
   */
  discoverContextWindow?(signal?: AbortSignal): Promise<DiscoveredContextWindow | undefined>;
  /**
   * Starts loading what the first call needs (the HTTP SDK), so that a caller can overlap it with
   * its own set-up instead of paying for it in the first request (optional: clients with nothing
   * to load leave it out). Resolves once loaded; never rejects: a failure to load shows again on
   * the first call.
   */
  preload?(): Promise<void>;
}
