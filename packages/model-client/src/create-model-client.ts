import type OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsBase,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { discoverContextWindow } from './discover-context-window.js';
import type { DiscoveredContextWindow } from './discover-context-window.js';
import { ModelApiError, ModelResponseError } from './errors.js';
import { AttemptController } from './internal/attempt-controller.js';
import { classifyFailure, retryReason, toModelApiError } from './internal/failure.js';
import type { Failure, FailureContext } from './internal/failure.js';
import { backoffDelayMs, sleep } from './internal/retry-policy.js';
import { readChoice, reasoningField } from './internal/chunk.js';
import { choiceUsageOf, topLevelCachedTokens } from './internal/dialects/moonshot.js';
import { outputTokensOf } from './internal/dialects/xai.js';
import { ToolCallAssembler } from './internal/tool-call-assembler.js';
import { costOf, DEFAULT_PRICE_TABLE } from './pricing.js';
import type { PriceTable } from './pricing.js';
import type {
  ChatMessage,
  ModelClient,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
  RetryNotice,
  Usage,
} from './types.js';

/** How {@link createModelClient} talks to the provider. */
export type StreamingMode = 'auto' | 'always' | 'never';

/** Options of {@link createModelClient}. */
export interface ModelClientOptions {
  /** The model to call, for example `gpt-5-mini`. A request may override it. */
  model: string;
  /** OpenAI-compatible base URL. Default: `OPENAI_BASE_URL`, else `https://api.openai.com/v1`. */
  baseURL?: string;
  /** API key. Default: `OPENAI_API_KEY`; when neither is set, every call fails with a message saying so. */
  apiKey?: string;
  /**
   * Default of both timeouts below, in milliseconds. Default 60 000, or 900 000 when
   * `serviceTier` is `flex` (flex requests queue).
   */
  timeoutMs?: number;
  /**
   * Longest wait from sending a request to the first chunk of its answer (headers and first
   * token; for a plain request, the whole answer), in milliseconds. Default `timeoutMs`. A
   * CPU-hosted model may need minutes for its first token.
   */
  firstByteTimeoutMs?: number;
  /** Longest wait between two chunks of a streamed answer, in milliseconds. Default `timeoutMs`. */
  idleTimeoutMs?: number;
  /**
   * Longest time one streamed answer may take, from the request to its last chunk, however
   * steadily it arrives (a server that sends one character a second never trips the idle
   * timeout), in milliseconds. Default 20 minutes (60 with `serviceTier: 'flex'`). Past it the
   * call fails with a {@link ModelResponseError} of kind `answer_too_long`, not retried.
   */
  maxAnswerMs?: number;
  /**
   * Largest streamed answer, in UTF-16 code units of text, reasoning, refusal and tool-call
   * arguments together (about bytes for ASCII). Default 4 Mi (4,194,304): a model's largest
   * output is well under 1 Mi. Past it the request is aborted (nothing more is downloaded) and
   * the call fails with a {@link ModelResponseError} of kind `answer_too_large`, not retried.
   */
  maxAnswerBytes?: number;
  /** Retries after the first attempt (so up to `maxRetries + 1` requests). Default 8. */
  maxRetries?: number;
  /**
   * Called before each retry's wait, for calls made with `complete()` that bring no `onRetry` of
   * their own (streamed calls report their retries as `retry` events instead).
   */
  onRetry?: (notice: RetryNotice) => void;
  /** Backoff ceiling of the first retry, doubled on each further retry. Default 500 ms. */
  retryBaseDelayMs?: number;
  /** Largest backoff ceiling, whatever the retry number. Default 20 000 ms. */
  retryMaxDelayMs?: number;
  /** OpenAI `service_tier` (`auto`, `default`, `flex`, `scale`, `priority`). Sent only when set. */
  serviceTier?: ChatCompletionCreateParamsBase['service_tier'];
  /**
   * `reasoning_effort` for reasoning models (`minimal`, `low`, `medium`, `high`, ...). When set,
   * `temperature` is not sent: reasoning models reject it.
   */
  reasoningEffort?: NonNullable<ChatCompletionCreateParamsBase['reasoning_effort']> | (string & {});
  /** Sampling temperature; ignored when `reasoningEffort` is set. */
  temperature?: number;
  /** OpenAI `response_format` (`{ type: 'json_object' }`, a JSON schema, ...). Sent only when set. */
  responseFormat?: ChatCompletionCreateParamsBase['response_format'];
  /**
   * `always` streams, `never` makes plain requests, `auto` (default) streams except for
   * providers known not to stream tool calls (a base URL containing `cerebras`) when the request
   * offers tools.
   */
  streaming?: StreamingMode;
  /** A `fetch` implementation to use instead of the global one (proxies, instrumentation). */
  fetch?: typeof globalThis.fetch;
  /** Prices merged over the built-in table (keys: model names without snapshot dates). */
  priceTable?: PriceTable;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const FLEX_TIMEOUT_MS = 900_000;
const DEFAULT_MAX_ANSWER_MS = 20 * 60_000;
const FLEX_MAX_ANSWER_MS = 60 * 60_000;
/** The default bound on one streamed answer (text, reasoning and tool arguments together). */
export const DEFAULT_MAX_ANSWER_BYTES = 4 * 1024 * 1024;
const DEFAULT_MAX_RETRIES = 8;
const DEFAULT_RETRY_BASE_DELAY_MS = 500;
const DEFAULT_RETRY_MAX_DELAY_MS = 20_000;
const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** Base-URL fragments of providers that do not stream tool calls (they get plain requests in `auto`). */
const NON_STREAMING_TOOL_PROVIDERS = ['cerebras'];

let openAIModule: Promise<typeof import('openai')> | undefined;

/** The `openai` package, imported once: by a preload or the first request, whichever comes first. */
function loadOpenAI(): Promise<typeof import('openai')> {
  openAIModule ??= import('openai');
  return openAIModule;
}

/**
 * Starts loading the `openai` SDK that {@link createModelClient}'s clients use, before any client
 * exists: a program that knows it will call a model (a CLI about to set up a run) overlaps the
 * load with its own set-up. Importing this package never loads it. Resolves once loaded; never
 * rejects (a failure to load shows again on the first call).
 */
export function preloadOpenAI(): Promise<void> {
  return loadOpenAI().then(
    () => undefined,
    () => undefined,
  );
}

/**
 * Whether a request is streamed: `always`/`never` decide alone; `auto` streams unless the request
 * offers tools to a provider known not to stream tool calls.
 */
export function shouldStream(mode: StreamingMode, baseURL: string, hasTools: boolean): boolean {
  if (mode === 'always') return true;
  if (mode === 'never') return false;
  const url = baseURL.toLowerCase();
  return !(hasTools && NON_STREAMING_TOOL_PROVIDERS.some((fragment) => url.includes(fragment)));
}

/**
 * Creates a {@link ModelClient} for any OpenAI-compatible chat-completions endpoint, on the
 * `openai` package.
 *
 * Retries: 408, 409, 429, 5xx, timeouts and dropped connections are retried up to `maxRetries`
 * times with exponential backoff and full jitter, waiting at least what `Retry-After` /
 * `retry-after-ms` asks (capped at 60 s). A stream is retried only while nothing of it was
 * yielded: once a text, reasoning or tool-call event went out, a failure becomes an `error` event,
 * because the caller may already have acted on it. Connection refused and unknown hosts are not
 * retried: they fail at once with a message saying what to set.
 *
 * Cancellation: aborting the `signal` aborts the HTTP request. `stream()` then ends without an
 * `error` and without a `done` event (the caller knows it aborted); `complete()` rejects with
 * the signal's `reason` (an `AbortError` `DOMException` unless the caller gave another reason).
 */
export function createModelClient(options: ModelClientOptions): ModelClient {
  const baseURL = options.baseURL ?? process.env['OPENAI_BASE_URL'] ?? DEFAULT_BASE_URL;
  const apiKey = options.apiKey ?? process.env['OPENAI_API_KEY'];
  const timeoutMs = Math.ceil(
    options.timeoutMs ?? (options.serviceTier === 'flex' ? FLEX_TIMEOUT_MS : DEFAULT_TIMEOUT_MS),
  );
  const firstByteTimeoutMs = Math.ceil(options.firstByteTimeoutMs ?? timeoutMs);
  const idleTimeoutMs = Math.ceil(options.idleTimeoutMs ?? timeoutMs);
  const maxAnswerMs = Math.ceil(
    options.maxAnswerMs ?? (options.serviceTier === 'flex' ? FLEX_MAX_ANSWER_MS : DEFAULT_MAX_ANSWER_MS),
  );
  const maxAnswerBytes = Math.max(1, Math.floor(options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES));
  const maxRetries = Math.max(0, options.maxRetries ?? DEFAULT_MAX_RETRIES);
  const retryBaseDelayMs = options.retryBaseDelayMs ?? DEFAULT_RETRY_BASE_DELAY_MS;
  const retryMaxDelayMs = options.retryMaxDelayMs ?? DEFAULT_RETRY_MAX_DELAY_MS;
  const streamingMode = options.streaming ?? 'auto';
  const priceTable: PriceTable =
    options.priceTable === undefined ? DEFAULT_PRICE_TABLE : { ...DEFAULT_PRICE_TABLE, ...options.priceTable };

  const hasKey = apiKey !== undefined && apiKey !== '';
  // The SDK is loaded on the first request, so importing this package (and @rho/core) stays cheap.
  let sdkInstance: OpenAI | undefined;
  async function sdk(): Promise<OpenAI> {
    if (sdkInstance === undefined) {
      const { default: OpenAIClient } = await loadOpenAI();
      sdkInstance = new OpenAIClient({
        apiKey: apiKey!,
        baseURL,
        maxRetries: 0,
        // The SDK's own timeout only backs up the watchdogs of AttemptController.
        timeout: Math.max(firstByteTimeoutMs, idleTimeoutMs) + 1_000,
        logLevel: 'off',
        ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      });
    }
    return sdkInstance;
  }

  function contextFor(request: ModelRequest): FailureContext {
    return { baseURL, model: request.model ?? options.model };
  }

  function missingKeyError(): ModelApiError {
    return new ModelApiError({
      message: 'no API key: set OPENAI_API_KEY (any non-empty value for servers that need none)',
      isRetryable: false,
      attempts: 0,
    });
  }

  function requestBody(request: ModelRequest): ChatCompletionCreateParamsBase {
    const body: ChatCompletionCreateParamsBase = {
      model: request.model ?? options.model,
      messages: request.messages.map(toWireMessage),
    };
    if (request.tools !== undefined && request.tools.length > 0) body.tools = request.tools;
    if (options.reasoningEffort !== undefined) {
      body.reasoning_effort = options.reasoningEffort as ChatCompletionCreateParamsBase['reasoning_effort'];
    } else if (options.temperature !== undefined) {
      body.temperature = options.temperature;
    }
    if (options.serviceTier !== undefined) body.service_tier = options.serviceTier;
    if (options.responseFormat !== undefined) body.response_format = options.responseFormat;
    return body;
  }

  function usageOf(raw: ChatCompletion['usage'] | null | undefined, model: string, requestModel: string): Usage | null {
    if (raw === undefined || raw === null) return null;
    const inputTokens = raw.prompt_tokens ?? 0;
    const cachedTokens =
      raw.prompt_tokens_details?.cached_tokens ?? topLevelCachedTokens(raw as unknown as Record<string, unknown>) ?? 0;
    const reasoningTokens = raw.completion_tokens_details?.reasoning_tokens ?? 0;
    const outputTokens = outputTokensOf(inputTokens, raw.completion_tokens ?? 0, reasoningTokens, raw.total_tokens);
    const counts = { inputTokens, outputTokens, cachedTokens };
    // The provider's model name is usually a dated snapshot of the requested one; either may be priced.
    const costUsd = costOf(model, counts, priceTable) ?? costOf(requestModel, counts, priceTable);
    return { inputTokens, outputTokens, cachedTokens, reasoningTokens, costUsd };
  }

  function retryDelay(failure: Failure, retryIndex: number): number {
    const backoff = backoffDelayMs(retryIndex, retryBaseDelayMs, retryMaxDelayMs);
    return failure.retryAfterMs === undefined ? backoff : Math.max(failure.retryAfterMs, backoff);
  }

  function retryNotice(failure: Failure, attempt: number, delayMs: number): RetryNotice {
    return {
      attempt: attempt + 1,
      maxAttempts: maxRetries + 1,
      delayMs,
      reason: retryReason(failure),
      ...(failure.statusCode === undefined ? {} : { statusCode: failure.statusCode }),
    };
  }

  /** One plain request with retries; throws ModelApiError, or the abort reason. */
  async function completeWithRetries(
    request: ModelRequest,
    signal: AbortSignal | undefined,
    onRetry: ((notice: RetryNotice) => void) | undefined,
  ): Promise<ChatCompletion> {
    if (!hasKey) throw missingKeyError();
    const client = await sdk();
    const errors = await loadOpenAI();
    const context = contextFor(request);
    const body = { ...requestBody(request), stream: false as const };
    for (let attempt = 1; ; attempt += 1) {
      throwIfAborted(signal);
      const controller = new AttemptController(firstByteTimeoutMs, idleTimeoutMs, signal);
      try {
        const completion = await client.chat.completions.create(body, { signal: controller.signal, maxRetries: 0 });
        if (!Array.isArray(completion.choices) || completion.choices.length === 0) {
          throw new ModelResponseError({
            kind: 'no_choices',
            received: `a ${typeof completion === 'object' && completion !== null ? 'JSON object' : typeof completion} without choices: ${preview(JSON.stringify(completion) ?? String(completion))}`,
            message: `${baseURL} answered with no choices (no answer at all): ${preview(JSON.stringify(completion) ?? String(completion))}`,
            isRetryable: true,
          });
        }
        return completion;
      } catch (error) {
        throwIfAborted(signal);
        const failure = classifyFailure(error, controller.timedOut, controller.timeoutMs, context, errors);
        if (!failure.retryable || attempt > maxRetries) throw toModelApiError(failure, attempt, context, false);
        controller.dispose();
        const delayMs = retryDelay(failure, attempt - 1);
        onRetry?.(retryNotice(failure, attempt, delayMs));
        await sleep(delayMs, signal);
      } finally {
        controller.dispose();
      }
    }
  }

  function responseOf(completion: ChatCompletion, requestModel: string): ModelResponse {
    const choice = completion.choices[0];
    const model = completion.model || requestModel;
    // A plain answer goes through the same assembler as a stream, so every dialect is read alike.
    const assembler = new ToolCallAssembler();
    assembler.addAll(
      (choice?.message.tool_calls ?? []).filter((call) => call.type === 'function' || call.type === undefined),
    );
    const toolCalls = assembler.flush(choice?.finish_reason ?? null);
    const message = (choice?.message ?? {}) as Record<string, unknown>;
    const content = readChoice({ delta: { content: message['content'] } });
    const refusal =
      typeof message['refusal'] === 'string' && message['refusal'] !== '' ? message['refusal'] : undefined;
    return {
      text: content.text,
      ...(refusal === undefined ? {} : { refusal }),
      toolCalls,
      usage: usageOf(completion.usage, model, requestModel),
      finishReason: choice?.finish_reason ?? null,
      model,
      ...(typeof completion.id === 'string' && completion.id !== '' ? { responseId: completion.id } : {}),
    };
  }

  async function* streamEvents(
    request: ModelRequest,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<ModelStreamEvent> {
    if (!hasKey) {
      yield { type: 'error', error: missingKeyError() };
      return;
    }
    const context = contextFor(request);
    const requestModel = request.model ?? options.model;

    if (!shouldStream(streamingMode, baseURL, (request.tools?.length ?? 0) > 0)) {
      // The plain request runs on its own; its retries are handed out as events while it waits.
      const notices: RetryNotice[] = [];
      let wake: (() => void) | undefined;
      let settled = false;
      const outcome = completeWithRetries(request, signal, (notice) => {
        notices.push(notice);
        wake?.();
      }).then(
        (completion) => ({ ok: true as const, completion }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      void outcome.finally(() => {
        settled = true;
        wake?.();
      });
      for (;;) {
        while (notices.length > 0) yield { type: 'retry', ...notices.shift()! };
        if (settled) break;
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (notices.length > 0 || settled) resolve();
        });
      }
      const result = await outcome;
      if (!result.ok) {
        if (signal?.aborted) return;
        yield { type: 'error', error: asModelApiError(result.error) };
        return;
      }
      const completion = result.completion;
      const message = completion.choices[0]?.message as
        (ChatCompletion.Choice['message'] & Record<string, unknown>) | undefined;
      const reasoning = reasoningField(message) + readChoice({ delta: { content: message?.content } }).reasoning;
      if (reasoning !== '') yield { type: 'reasoning', text: reasoning };
      const response = responseOf(completion, requestModel);
      if (response.refusal !== undefined) yield { type: 'refusal', text: response.refusal };
      if (response.text !== '') yield { type: 'text', text: response.text };
      for (const toolCall of response.toolCalls) yield { type: 'tool_call', toolCall };
      yield {
        type: 'done',
        usage: response.usage,
        finishReason: response.finishReason,
        model: response.model,
        ...(response.responseId === undefined ? {} : { responseId: response.responseId }),
      };
      return;
    }

    const client = await sdk();
    const errors = await loadOpenAI();
    const body = { ...requestBody(request), stream: true as const, stream_options: { include_usage: true } };
    let outputStarted = false;
    for (let attempt = 1; ; attempt += 1) {
      if (signal?.aborted) return;
      const controller = new AttemptController(firstByteTimeoutMs, idleTimeoutMs, signal, maxAnswerMs);
      let delayMs: number;
      let notice: RetryNotice | undefined;
      try {
        const { data: stream, response: httpResponse } = await client.chat.completions
          .create(body, { signal: controller.signal, maxRetries: 0 })
          .withResponse();
        await refuseNonStream(httpResponse, controller);
        const assembler = new ToolCallAssembler();
        let finishReason: string | null = null;
        let model = '';
        let responseId = '';
        let rawUsage: ChatCompletionChunk['usage'] | undefined;
        // Usage sent inside a choice (Moonshot), used when no chunk carries its own.
        let choiceUsage: ChatCompletionChunk['usage'] | undefined;
        // What arrived, to say so when the stream ends before the answer is finished.
        let chunkCount = 0;
        let choiceCount = 0;
        let textCharacters = 0;
        let toolCallsSeen = 0;
        // Text, reasoning, refusal and tool arguments so far, against maxAnswerBytes.
        let answerSize = 0;
        // The first-byte watchdog armed with the request keeps running until the first chunk.
        for await (const chunk of stream) {
          // A chunk arrived: from now on (and from now) the idle timeout applies.
          controller.answered();
          controller.arm();
          chunkCount += 1;
          if (chunk.model) model = chunk.model;
          if (typeof chunk.id === 'string' && chunk.id !== '' && responseId === '') responseId = chunk.id;
          if (chunk.usage) rawUsage = chunk.usage;
          const events: ModelStreamEvent[] = [];
          const choice = chunk.choices?.find((candidate) => candidate.index === 0) ?? chunk.choices?.[0];
          if (choice !== undefined) {
            choiceCount += 1;
            if (rawUsage === undefined)
              choiceUsage = (choiceUsageOf(choice) as ChatCompletionChunk['usage'] | undefined) ?? choiceUsage;
            const delta = readChoice(choice);
            answerSize += delta.reasoning.length + delta.refusal.length + delta.text.length;
            for (const call of delta.toolCalls) {
              const args = (call as { function?: { arguments?: unknown } }).function?.arguments;
              if (typeof args === 'string') answerSize += args.length;
            }
            if (answerSize > maxAnswerBytes) {
              const received = `more than ${maxAnswerBytes} characters of text, reasoning and tool arguments in ${chunkCount} chunk${chunkCount === 1 ? '' : 's'}`;
              controller.abort(new Error('the answer grew past its size limit'));
              throw new ModelResponseError({
                kind: 'answer_too_large',
                received,
                message: `the answer from ${baseURL} grew past its size limit (${received}; raise it with --max-answer-size or RHO_MAX_ANSWER_SIZE)`,
                isRetryable: false,
              });
            }
            if (delta.reasoning !== '') events.push({ type: 'reasoning', text: delta.reasoning });
            if (delta.refusal !== '') events.push({ type: 'refusal', text: delta.refusal });
            if (delta.text !== '') {
              textCharacters += delta.text.length;
              events.push({ type: 'text', text: delta.text });
            }
            if (delta.toolCalls.length > 0) assembler.addAll(delta.toolCalls);
            if (delta.finishReason !== null) {
              finishReason = delta.finishReason;
              const calls = assembler.flush(finishReason);
              toolCallsSeen += calls.length;
              for (const toolCall of calls) events.push({ type: 'tool_call', toolCall });
            }
          }
          for (const event of events) {
            outputStarted = true;
            controller.pause();
            yield event;
            controller.arm();
          }
        }
        // The SDK ends the iteration silently when the request is aborted: find out why it ended.
        if (controller.timedOut !== undefined) throw new Error('stream timed out');
        if (signal?.aborted) return;
        controller.pause();
        if (finishReason === null) {
          // The stream ended without saying the answer was finished: whatever arrived is not an
          // answer (a proxy closed the connection, the server died between two chunks, ...).
          const unfinished = assembler.pendingNames();
          const parts = [`${chunkCount} chunk${chunkCount === 1 ? '' : 's'}`];
          if (choiceCount === 0) {
            const received = chunkCount === 0 ? 'no chunk at all' : `${parts[0]}, none with a choice`;
            throw new ModelResponseError({
              kind: 'no_choices',
              received,
              message: `the stream from ${baseURL} ended with no answer at all (${received})`,
              isRetryable: true,
            });
          }
          parts.push(`${textCharacters} character${textCharacters === 1 ? '' : 's'} of text`);
          if (toolCallsSeen > 0) parts.push(`${toolCallsSeen} finished tool call${toolCallsSeen === 1 ? '' : 's'}`);
          if (unfinished.length > 0)
            parts.push(`an unfinished tool call${unfinished.length === 1 ? '' : 's'} to ${unfinished.join(', ')}`);
          const received = parts.join(', ');
          throw new ModelResponseError({
            kind: 'incomplete_stream',
            received,
            message: `the stream from ${baseURL} ended before the answer was finished (no finish_reason; received ${received})`,
            isRetryable: true,
          });
        }
        for (const toolCall of assembler.flush(finishReason)) {
          outputStarted = true;
          yield { type: 'tool_call', toolCall };
        }
        const reportedModel = model || requestModel;
        yield {
          type: 'done',
          usage: usageOf(rawUsage ?? choiceUsage, reportedModel, requestModel),
          finishReason,
          model: reportedModel,
          ...(responseId === '' ? {} : { responseId }),
        };
        return;
      } catch (error) {
        if (signal?.aborted) return;
        const failure = classifyFailure(error, controller.timedOut, controller.timeoutMs, context, errors);
        if (outputStarted || !failure.retryable || attempt > maxRetries) {
          yield { type: 'error', error: toModelApiError(failure, attempt, context, outputStarted) };
          return;
        }
        delayMs = retryDelay(failure, attempt - 1);
        notice = retryNotice(failure, attempt, delayMs);
      } finally {
        controller.dispose();
      }
      if (notice !== undefined) yield { type: 'retry', ...notice };
      await sleep(delayMs, signal);
    }
  }

  /**
   * A streaming request answered with something that is not an event stream (an HTML error page
   * of a proxy, a JSON document): read the start of it and fail with what it was.
   */
  async function refuseNonStream(response: Response, controller: AttemptController): Promise<void> {
    const type = (response.headers.get('content-type') ?? '').toLowerCase();
    if (!/html|json|xml/.test(type)) return;
    let text = '';
    try {
      controller.arm();
      text = await response.text();
    } catch {
      // Whatever could be read is reported below.
    } finally {
      controller.pause();
    }
    const what = type.split(';')[0]!.trim();
    const received = `status ${response.status}, ${what}: ${preview(text)}`;
    throw new ModelResponseError({
      kind: 'not_a_stream',
      received,
      message: `${baseURL} answered a streaming request with a ${what} body instead of an event stream (${received}): check OPENAI_BASE_URL or --base-url`,
      statusCode: response.status,
      isRetryable: false,
    });
  }

  return {
    model: options.model,
    baseURL,
    stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<ModelStreamEvent> {
      return streamEvents(request, signal);
    },
    async complete(
      request: ModelRequest,
      signal?: AbortSignal,
      callOptions: { onRetry?: (notice: RetryNotice) => void } = {},
    ): Promise<ModelResponse> {
      const onRetry = callOptions.onRetry ?? options.onRetry;
      const completion = await completeWithRetries(request, signal, onRetry);
      return responseOf(completion, request.model ?? options.model);
    },
    preload(): Promise<void> {
      // Without a key there is no SDK instance to build: the first call fails before using one.
      return hasKey
        ? sdk().then(
            () => undefined,
            () => undefined,
          )
        : preloadOpenAI();
    },
    discoverContextWindow(signal?: AbortSignal): Promise<DiscoveredContextWindow | undefined> {
      return discoverContextWindow({
        baseURL,
        model: options.model,
        ...(hasKey ? { apiKey: apiKey! } : {}),
        ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
        ...(signal === undefined ? {} : { signal }),
      });
    },
  };
}

function toWireMessage(message: ChatMessage): ChatCompletionMessageParam {
  if (message.role !== 'assistant') return message;
  const hasToolCalls = message.tool_calls !== undefined && message.tool_calls.length > 0;
  const wire: ChatCompletionMessageParam = { role: 'assistant' };
  // A null content is only valid next to tool calls; an empty answer is sent as ''.
  if (message.content !== null) wire.content = message.content;
  else if (!hasToolCalls) wire.content = '';
  if (hasToolCalls) wire.tool_calls = message.tool_calls;
  return wire;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}

/** The start of a body, on one line, at most 200 characters. */
function preview(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  if (line === '') return '(empty)';
  return line.length > 200 ? `${JSON.stringify(line.slice(0, 200))}...` : JSON.stringify(line);
}

function asModelApiError(error: unknown): ModelApiError {
  if (ModelApiError.isInstance(error)) return error;
  return new ModelApiError({ message: `model request failed: ${String(error)}`, cause: error, isRetryable: false });
}
