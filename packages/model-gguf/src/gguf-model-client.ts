import { existsSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { ModelApiError } from '@rho/model-client';
import type {
  ChatMessage,
  DiscoveredContextWindow,
  ModelClient,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
  ModelToolCall,
  Usage,
} from '@rho/model-client';
import type { ChatHistoryItem, Llama, LlamaChat, LlamaContext, LlamaModel } from 'node-llama-cpp';
import { answerSchemaOf } from './tool-grammar.js';

/**
 * When tools are offered, how the model may answer:
 * - `auto` (default): every answer is constrained to JSON, either a call of one of the tools or
 *   `{"answer": "..."}` (sent on as text);
 * - `required`: the first answer after a user message must be a tool call (the grammar allows
 *   nothing else); answers after tool results are free text. Small models that cannot choose
 *   tools on their own still produce well-formed calls this way;
 * - `none`: tools are ignored, answers are free text.
 */
export type GgufToolChoice = 'auto' | 'required' | 'none';

/** Options of {@link createGgufModelClient}. */
export interface GgufModelClientOptions {
  /** Path of the `.gguf` file. */
  modelPath: string;
  /** Context size in tokens. Default: the model's training context, at most 8192. */
  contextSize?: number;
  /** Most tokens of one answer. Default 1024. */
  maxTokens?: number;
  /** Sampling temperature. Default 0 (greedy: the same prompt gives the same answer). */
  temperature?: number;
  /** Seed of the sampler, when `temperature` is above 0. */
  seed?: number;
  /** See {@link GgufToolChoice}. Default `auto`. */
  toolChoice?: GgufToolChoice;
  /**
   * CPU threads for inference. Default: half the available cores (at least 1). llama.cpp's own
   * default (every core) slows to a crawl when other processes want the CPU too: its threads
   * spin-wait for each other (measured on a loaded 2-core machine: 256 tokens in 0.9 s with one
   * thread, no answer within minutes with two).
   */
  threads?: number;
  /** Use the GPU when node-llama-cpp finds one. Default `false` (CPU only, same result everywhere). */
  gpu?: boolean;
}

interface Loaded {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
  chat: LlamaChat;
}

const DEFAULT_MAX_TOKENS = 1024;
const MAX_DEFAULT_CONTEXT = 8192;

/** A {@link ModelClient} that also frees the model's memory. */
export interface GgufModelClient extends ModelClient {
  /** Unloads the model and its context; a later request loads it again. */
  close(): Promise<void>;
  /** The context size this client allocates (`contextSize`), loading the model as the first request would. */
  discoverContextWindow(): Promise<DiscoveredContextWindow | undefined>;
}

/**
 * A {@link ModelClient} that runs a GGUF model in this process through `node-llama-cpp` (its
 * prebuilt llama.cpp binaries; nothing is downloaded or built). The model is loaded on the first
 * request; requests run one at a time. Usage counts the tokens the model evaluated and generated
 * (`costUsd` 0). Tool calls are constrained by a grammar built from the tools' schemas (see
 * {@link GgufToolChoice}).
 */
export function createGgufModelClient(options: GgufModelClientOptions): GgufModelClient {
  const modelPath = resolve(options.modelPath);
  const modelName = `gguf:${basename(modelPath)}`;
  const maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
  const temperature = options.temperature ?? 0;
  const toolChoice = options.toolChoice ?? 'auto';
  let loading: Promise<Loaded> | undefined;
  let queue: Promise<unknown> = Promise.resolve();

  function load(): Promise<Loaded> {
    loading ??= (async () => {
      if (!existsSync(modelPath) || !statSync(modelPath).isFile()) {
        throw new ModelApiError({
          message: `GGUF model not found: ${modelPath}. Pass the path of a .gguf file to --model gguf:PATH.`,
          isRetryable: false,
          attempts: 0,
        });
      }
      const { getLlama, LlamaChat: Chat, LlamaLogLevel } = await import('node-llama-cpp');
      // Prebuilt binaries only: never download or compile llama.cpp at run time.
      const llama = await getLlama({
        gpu: options.gpu === true ? 'auto' : false,
        build: 'never',
        progressLogs: false,
        logLevel: LlamaLogLevel.error,
        logger: () => {},
      });
      let model: LlamaModel;
      try {
        model = await llama.loadModel({ modelPath });
      } catch (error) {
        throw new ModelApiError({
          message: `Cannot load the GGUF model ${modelPath}: ${error instanceof Error ? error.message : String(error)}. Is it a GGUF file llama.cpp can read?`,
          isRetryable: false,
          attempts: 0,
          cause: error,
        });
      }
      const contextSize = options.contextSize ?? Math.min(model.trainContextSize, MAX_DEFAULT_CONTEXT);
      const threads = options.threads ?? Math.max(1, Math.floor(availableParallelism() / 2));
      const context = await model.createContext({ contextSize, threads });
      const chat = new Chat({ contextSequence: context.getSequence() });
      return { llama, model, context, chat };
    })();
    // A failed load is not cached: the next request tries again (the file may have appeared).
    loading.catch(() => {
      loading = undefined;
    });
    return loading;
  }

  async function* generate(request: ModelRequest, signal: AbortSignal | undefined): AsyncGenerator<ModelStreamEvent> {
    let loaded: Loaded;
    try {
      loaded = await load();
    } catch (error) {
      yield { type: 'error', error: asApiError(error) };
      return;
    }
    if (signal?.aborted) return;
    const tools = toolChoice === 'none' ? [] : (request.tools ?? []);
    const lastRole = request.messages.at(-1)?.role;
    const constrained = tools.length > 0 && (toolChoice === 'auto' || lastRole === 'user');
    const grammar = constrained
      ? await loaded.llama.createGrammarForJsonSchema(answerSchemaOf(tools, toolChoice === 'required') as never)
      : undefined;
    const history = historyOf(request.messages, tools.length > 0 ? tools.map((tool) => tool.function.name) : []);

    // Text chunks are handed from the generation callback to this generator through a queue.
    const pending: string[] = [];
    let wake: (() => void) | undefined;
    const sequence = loaded.chat.sequence;
    const before = sequence.tokenMeter.getState();
    const outcome = loaded.chat
      .generateResponse(history, {
        maxTokens,
        temperature,
        ...(options.seed === undefined ? {} : { seed: options.seed }),
        ...(grammar === undefined ? {} : { grammar }),
        ...(signal === undefined ? {} : { signal, stopOnAbortSignal: true }),
        onTextChunk:
          grammar === undefined
            ? (text) => {
                pending.push(text);
                wake?.();
              }
            : undefined,
      })
      .then(
        (response) => ({ ok: true as const, response }),
        (error: unknown) => ({ ok: false as const, error }),
      );
    let settled = false;
    void outcome.finally(() => {
      settled = true;
      wake?.();
    });
    for (;;) {
      while (pending.length > 0) yield { type: 'text', text: pending.shift()! };
      if (settled) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        if (pending.length > 0 || settled) resolve();
      });
    }
    while (pending.length > 0) yield { type: 'text', text: pending.shift()! };
    const result = await outcome;
    if (signal?.aborted) return;
    if (!result.ok) {
      yield { type: 'error', error: asApiError(result.error) };
      return;
    }
    const after = sequence.tokenMeter.getState();
    const usage: Usage = {
      inputTokens: after.usedInputTokens - before.usedInputTokens,
      outputTokens: after.usedOutputTokens - before.usedOutputTokens,
      cachedTokens: 0,
      reasoningTokens: 0,
      costUsd: 0,
    };
    const stopReason = result.response.metadata.stopReason;
    let finishReason = stopReason === 'maxTokens' ? 'length' : 'stop';
    if (grammar !== undefined) {
      const answer = parseAnswer(result.response.response);
      if (answer.kind === 'call') {
        finishReason = stopReason === 'maxTokens' ? 'length' : 'tool_calls';
        const toolCall: ModelToolCall = {
          id: `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
          name: answer.name,
          arguments: answer.arguments,
        };
        if (stopReason === 'maxTokens') toolCall.truncated = true;
        yield { type: 'tool_call', toolCall };
      } else if (answer.text !== '') {
        yield { type: 'text', text: answer.text };
      }
    }
    yield { type: 'done', usage, finishReason, model: modelName };
  }

  function serialized(request: ModelRequest, signal: AbortSignal | undefined): AsyncIterable<ModelStreamEvent> {
    return {
      async *[Symbol.asyncIterator]() {
        // One context sequence: requests wait for the one before them.
        let release!: () => void;
        const previous = queue;
        queue = new Promise<void>((resolve) => {
          release = resolve;
        });
        await previous;
        try {
          yield* generate(request, signal);
        } finally {
          release();
        }
      },
    };
  }

  return {
    model: modelName,
    stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<ModelStreamEvent> {
      return serialized(request, signal);
    },
    async complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse> {
      let text = '';
      const toolCalls: ModelToolCall[] = [];
      for await (const event of serialized(request, signal)) {
        if (event.type === 'text') text += event.text;
        else if (event.type === 'tool_call') toolCalls.push(event.toolCall);
        else if (event.type === 'error') throw event.error;
        else if (event.type === 'done')
          return { text, toolCalls, usage: event.usage, finishReason: event.finishReason, model: event.model };
      }
      throw signal?.reason ?? new DOMException('The operation was aborted.', 'AbortError');
    },
    async discoverContextWindow(): Promise<DiscoveredContextWindow | undefined> {
      try {
        return { tokens: (await load()).context.contextSize, endpoint: 'in-process', field: 'contextSize' };
      } catch {
        return undefined;
      }
    },
    async close(): Promise<void> {
      const current = loading;
      loading = undefined;
      if (current === undefined) return;
      const loaded = await current.catch(() => undefined);
      if (loaded === undefined) return;
      await loaded.context.dispose();
      await loaded.model.dispose();
      await loaded.llama.dispose();
    },
  };
}

/** The chat history node-llama-cpp's chat wrappers render with the model's own template. */
function historyOf(messages: readonly ChatMessage[], toolNames: readonly string[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system': {
        const tools =
          toolNames.length === 0
            ? ''
            : `\n\nTools: ${toolNames.join(', ')}. To call one, answer with {"name": ..., "arguments": {...}}.`;
        history.push({ type: 'system', text: message.content + tools });
        break;
      }
      case 'user':
        history.push({ type: 'user', text: message.content });
        break;
      case 'assistant': {
        const calls = (message.tool_calls ?? []).map((call) =>
          JSON.stringify({ name: call.function.name, arguments: safeParse(call.function.arguments) }),
        );
        history.push({
          type: 'model',
          response: [[message.content ?? '', ...calls].filter((part) => part !== '').join('\n')],
        });
        break;
      }
      case 'tool':
        history.push({ type: 'user', text: `Result of call ${message.tool_call_id}:\n${message.content}` });
        break;
    }
  }
  if (history.at(-1)?.type !== 'model') history.push({ type: 'model', response: [] });
  return history;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

type Answer = { kind: 'call'; name: string; arguments: string } | { kind: 'text'; text: string };

/** The grammar-constrained answer: a tool call or an answer text. */
function parseAnswer(text: string): Answer {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Cut at maxTokens: a call whose name is readable is still a (truncated) call.
    const name = /"name"\s*:\s*"([^"]+)"/.exec(text)?.[1];
    const args = /"arguments"\s*:\s*([\s\S]*)$/.exec(text)?.[1];
    return name === undefined ? { kind: 'text', text } : { kind: 'call', name, arguments: args ?? '' };
  }
  const record = (value ?? {}) as Record<string, unknown>;
  if (typeof record['name'] === 'string')
    return { kind: 'call', name: record['name'], arguments: JSON.stringify(record['arguments'] ?? {}) };
  return { kind: 'text', text: typeof record['answer'] === 'string' ? record['answer'] : text };
}

function asApiError(error: unknown): ModelApiError {
  if (ModelApiError.isInstance(error)) return error as ModelApiError;
  return new ModelApiError({
    message: `The local GGUF model failed: ${error instanceof Error ? error.message : String(error)}`,
    isRetryable: false,
    attempts: 1,
    cause: error,
  });
}
