import type {
  ModelClient,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
  ModelToolCall,
  RetryNotice,
  Usage,
} from '@rho/model-client';
import { costOf, ModelApiError } from '@rho/model-client';
import { InternalError } from '../errors.js';

/** One scripted model answer. */
export type ScriptedStep =
  | {
      /** Text of the answer, streamed in `chunkSize` pieces. */
      text?: string;
      /** Reasoning text streamed before the answer. */
      reasoning?: string;
      /** Tool calls of the answer. Arguments may be given as an object or as raw (even malformed) JSON text. */
      toolCalls?: { id?: string; name: string; arguments: string | Record<string, unknown> }[];
      /** Usage reported; `null` reports none. Defaults to small counts, priced by the model's price. */
      usage?: Partial<Usage> | null;
      /** Pause before answering, in milliseconds (aborting the signal ends it). */
      delayMs?: number;
      /** Size of text pieces. Default: the whole text at once. */
      chunkSize?: number;
      /** The finish reason reported (`length` for an answer cut off). Default `tool_calls` or `stop`. */
      finishReason?: string;
      /** Retry notices yielded before the answer, as the real client does before each retry's wait. */
      retries?: RetryNotice[];
    }
  | { error: { message: string; statusCode?: number; isRetryable?: boolean } }
  | { hang: true };

/** A step, or a function that computes one from the request. */
export type ScriptedStepSource = ScriptedStep | ((request: ModelRequest, index: number) => ScriptedStep);

/** A model client that answers from a script; see {@link createScriptedModelClient}. */
export interface ScriptedModelClient extends ModelClient {
  /** Every request received, in order (deep copies). */
  readonly requests: ModelRequest[];
  /** Adds steps to the end of the script. */
  push(...steps: ScriptedStepSource[]): void;
  /** Number of steps not yet used. */
  pending(): number;
  /**
   * Throws when a step function threw (an `expect` inside a step: the loop only sees a failed
   * model call, so the error is kept and rethrown here, the first one as it was thrown), when
   * steps were left unused, or when a call came with no step left.
   */
  assertDone(): void;
  /** What step functions threw, in order. */
  readonly stepErrors: unknown[];
}

/**
 * A model client that plays a queue of steps: text, tool calls, errors, hangs. It records every
 * request, fails loudly on a call with no step left (the run ends with an error naming it) and
 * `assertDone()` fails when steps were never used. For testing agents and tools without a network.
 */
export function createScriptedModelClient(
  options: { steps?: ScriptedStepSource[]; model?: string } = {},
): ScriptedModelClient {
  const queue: ScriptedStepSource[] = [...(options.steps ?? [])];
  const requests: ModelRequest[] = [];
  const model = options.model ?? 'scripted-model';
  const stepErrors: unknown[] = [];
  let unexpected = 0;
  let callCount = 0;

  function next(request: ModelRequest): ScriptedStep {
    const index = callCount;
    callCount += 1;
    requests.push(structuredClone(request));
    const source = queue.shift();
    if (source === undefined) {
      unexpected += 1;
      throw new InternalError({
        message: `Scripted model client: unexpected model call #${index + 1}; the script has no step left. Add a step or check why the agent called the model again.`,
      });
    }
    if (typeof source !== 'function') return source;
    try {
      return source(request, index);
    } catch (error) {
      // The loop turns this into a failed model call; assertDone() rethrows it so the test fails.
      stepErrors.push(error);
      throw error;
    }
  }

  function usageOf(step: Extract<ScriptedStep, { text?: string }>): Usage | null {
    if (step.usage === null) return null;
    const base = { inputTokens: 100, outputTokens: 20, cachedTokens: 0, reasoningTokens: 0, ...step.usage };
    return { ...base, costUsd: step.usage?.costUsd !== undefined ? step.usage.costUsd : costOf(model, base) };
  }

  function toolCallsOf(step: Extract<ScriptedStep, { text?: string }>): ModelToolCall[] {
    return (step.toolCalls ?? []).map((call, index) => ({
      id: call.id ?? `call_${callCount}_${index}`,
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
    }));
  }

  return {
    model,
    requests,
    stepErrors,
    push(...steps) {
      queue.push(...steps);
    },
    pending() {
      return queue.length;
    },
    assertDone() {
      if (stepErrors.length > 0) throw stepErrors[0];
      if (unexpected > 0)
        throw new InternalError({
          message: `Scripted model client: ${unexpected} model call(s) came with no step left.`,
        });
      if (queue.length > 0)
        throw new InternalError({ message: `Scripted model client: ${queue.length} step(s) were never used.` });
    },
    async *stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<ModelStreamEvent> {
      const step = next(request);
      if ('hang' in step) {
        await sleep(Number.POSITIVE_INFINITY, signal);
        return;
      }
      if ('error' in step) {
        yield {
          type: 'error',
          error: new ModelApiError({
            message: step.error.message,
            isRetryable: step.error.isRetryable ?? false,
            ...(step.error.statusCode === undefined ? {} : { statusCode: step.error.statusCode }),
          }),
        };
        return;
      }
      for (const notice of step.retries ?? []) yield { type: 'retry', ...notice };
      if (step.delayMs !== undefined) await sleep(step.delayMs, signal);
      if (signal?.aborted) return;
      if (step.reasoning !== undefined) yield { type: 'reasoning', text: step.reasoning };
      const text = step.text ?? '';
      const size = step.chunkSize ?? Math.max(1, text.length);
      for (let offset = 0; offset < text.length; offset += size) {
        if (signal?.aborted) return;
        yield { type: 'text', text: text.slice(offset, offset + size) };
      }
      const toolCalls = toolCallsOf(step);
      for (const toolCall of toolCalls) yield { type: 'tool_call', toolCall };
      yield {
        type: 'done',
        usage: usageOf(step),
        finishReason: step.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
        model: request.model ?? model,
      };
    },
    async complete(
      request: ModelRequest,
      signal?: AbortSignal,
      options: { onRetry?: (notice: RetryNotice) => void } = {},
    ): Promise<ModelResponse> {
      const step = next(request);
      if (!('hang' in step) && !('error' in step)) for (const notice of step.retries ?? []) options.onRetry?.(notice);
      if ('hang' in step) {
        await sleep(Number.POSITIVE_INFINITY, signal);
        throw new ModelApiError({ message: 'The request was aborted.', isRetryable: false });
      }
      if ('error' in step)
        throw new ModelApiError({
          message: step.error.message,
          isRetryable: step.error.isRetryable ?? false,
          ...(step.error.statusCode === undefined ? {} : { statusCode: step.error.statusCode }),
        });
      if (step.delayMs !== undefined) await sleep(step.delayMs, signal);
      const toolCalls = toolCallsOf(step);
      return {
        text: step.text ?? '',
        toolCalls,
        usage: usageOf(step),
        finishReason: step.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
        model: request.model ?? model,
      };
    },
  };
}

function sleep(milliseconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = Number.isFinite(milliseconds) ? setTimeout(finish, milliseconds) : undefined;
    function finish() {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', finish);
      resolve();
    }
    signal?.addEventListener('abort', finish, { once: true });
  });
}
