import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A tool call a scripted step makes. */
export interface LoopbackToolCall {
  /** The call id; `call_<request>_<position>` when omitted. */
  id?: string;
  /** The tool name. */
  name: string;
  /** The raw argument text, sent as is (it may be malformed JSON on purpose). */
  arguments: string;
}

/** Token usage a scripted step reports, in OpenAI's wire units. */
export interface LoopbackUsage {
  /** Input tokens. */
  prompt_tokens: number;
  /** Output tokens (reasoning included, as OpenAI counts them). */
  completion_tokens: number;
  /** Input tokens served from the prompt cache (`prompt_tokens_details.cached_tokens`). */
  cached_tokens?: number;
  /** Reasoning tokens (`completion_tokens_details.reasoning_tokens`). */
  reasoning_tokens?: number;
}

/** A model answer: text, reasoning and tool calls, streamed as real `chat.completion.chunk`s. */
export interface LoopbackResponseStep {
  /** Discriminant. */
  type: 'response';
  /** Assistant text. */
  text?: string;
  /** Reasoning text, sent as `delta.reasoning_content` before the answer (as DeepSeek and vLLM do). */
  reasoning?: string;
  /** Tool calls, streamed as split deltas. */
  toolCalls?: LoopbackToolCall[];
  /**
   * Usage to report. `null` sends no usage chunk at all; `undefined` reports a default derived from
   * the request and answer sizes (about four characters a token). A usage chunk is only streamed
   * when the request asked for it with `stream_options.include_usage`, as OpenAI does.
   */
  usage?: LoopbackUsage | null;
  /** Split text, reasoning and tool-call arguments into pieces of this many characters (default 7). */
  chunkSize?: number;
  /** Pause between two chunks, in milliseconds (default 0: no artificial latency). */
  delayMs?: number;
  /** The model name reported in chunks (default: the model of the request). */
  model?: string;
  /** The finish reason (default `tool_calls` when there are tool calls, else `stop`). */
  finishReason?: string;
  /** Never send a finish reason (a client treats such a stream as unfinished). */
  noFinishReason?: boolean;
  /**
   * How parallel tool calls are streamed: `sequential` (default, as OpenAI does: each call's header
   * then its argument fragments, one call after another) or `interleaved` (round-robin: every
   * call's header first, then one argument fragment of each call in turn).
   */
  toolCallOrder?: 'sequential' | 'interleaved';
  /**
   * `late` sends each tool call's first argument fragment before its id and name, which arrive in a
   * later delta, as some providers do. Default `first`: the first delta carries index, id, type and
   * name with empty arguments, as OpenAI does.
   */
  toolCallHeader?: 'first' | 'late';
}

/** An HTTP error answer, as a provider sends for rate limits, outages and bad requests. */
export interface LoopbackHttpErrorStep {
  /** Discriminant. */
  type: 'http_error';
  /** HTTP status code. */
  status: number;
  /** The provider's error message, in the body's `error.message`. */
  message?: string;
  /** Value of the `Retry-After` header (seconds, or an HTTP date). */
  retryAfter?: string | number;
  /** Extra response headers, for example `retry-after-ms`. */
  headers?: Record<string, string>;
}

/** Accept the request and never answer, until the client aborts or the server closes. */
export interface LoopbackHangStep {
  /** Discriminant. */
  type: 'hang';
}

/** Stream some output, then destroy the socket: a connection dropped mid-response. */
export interface LoopbackDropStep {
  /** Discriminant. */
  type: 'drop';
  /**
   * Where the connection drops: right after the response headers; after streaming `text`; or after
   * streaming `text` and `toolCalls` complete with their finish reason (so a client has emitted
   * the tool calls) but before the usage chunk and `[DONE]`.
   */
  after: 'headers' | 'text' | 'tool_call';
  /** Text streamed before the drop. */
  text?: string;
  /** Tool calls streamed before the drop (with `after: 'tool_call'`). */
  toolCalls?: LoopbackToolCall[];
}

/**
 * Stream some output, then end the response cleanly (the HTTP body ends normally) without a
 * finish reason and without `data: [DONE]`: a server or proxy that closed the stream early.
 */
export interface LoopbackCloseStep {
  /** Discriminant. */
  type: 'close';
  /** Text streamed before the close. */
  text?: string;
  /**
   * Tool calls streamed before the close. With `partial`, the last call's arguments are cut in
   * the middle, as when a server stops mid-tool-call.
   */
  toolCalls?: LoopbackToolCall[];
  /** Cut the last tool call's arguments in half. */
  partial?: boolean;
}

/** Any body with any status and content type, for example an HTML page served with 200. */
export interface LoopbackBodyStep {
  /** Discriminant. */
  type: 'body';
  /** HTTP status (default 200). */
  status?: number;
  /** The `content-type` header (default `text/html; charset=utf-8`). */
  contentType?: string;
  /** The body, sent as is. */
  body: string;
}

/**
 * Raw SSE payloads, for cases the other steps do not cover: each entry is sent as one
 * `data: <entry>` event (objects are JSON-encoded, strings sent verbatim), then `data: [DONE]`.
 */
export interface LoopbackChunksStep {
  /** Discriminant. */
  type: 'chunks';
  /** The payloads, in order. */
  chunks: (Record<string, unknown> | string)[];
  /** Pause between two chunks, in milliseconds. */
  delayMs?: number;
}

/** One scripted answer of the loopback server. */
export type LoopbackStep =
  | LoopbackResponseStep
  | LoopbackHttpErrorStep
  | LoopbackHangStep
  | LoopbackDropStep
  | LoopbackCloseStep
  | LoopbackBodyStep
  | LoopbackChunksStep;

/** A request the loopback server received. */
export interface RecordedRequest {
  /** The parsed JSON body (`undefined` when the body was not JSON). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any JSON a client sent: tests read its fields directly
  body: any;
  /** The request headers, as node:http reports them (lower-case names). */
  headers: Record<string, string | string[] | undefined>;
  /** The request path, for example `/v1/chat/completions`. */
  path: string;
  /** When the request arrived (`Date.now()`). */
  receivedAt: number;
}

/**
 * An entry of the model list (`GET <base>/models`), as vLLM, OpenRouter or LM Studio describe a
 * model: `id` plus any fields, for example `max_model_len` or `context_length`.
 */
export interface LoopbackModel {
  /** The model id, as sent in requests. */
  id: string;
  /** Any further fields of the entry. */
  [field: string]: unknown;
}

/** A discovery endpoint's answer: a JSON body, or `'hang'` to never answer (a server that stalls). */
export type LoopbackDiscoveryAnswer<T> = T | 'hang';

/** A running loopback server. */
export interface LoopbackServer {
  /** Base URL to pass as `baseURL`, ending in `/v1`. */
  readonly url: string;
  /**
   * Every chat-completion request (and every request to a path the server does not serve)
   * received, in order, including the ones that got an error.
   */
  readonly requests: RecordedRequest[];
  /** Requests to the discovery endpoints (`…/models`, `/props`, `/api/show`, `/api/v0/models/<id>`), in order. */
  readonly discoveryRequests: RecordedRequest[];
  /** Appends steps to the queue. */
  push(...steps: LoopbackStep[]): void;
  /** Steps not yet consumed. */
  pending(): number;
  /** Stops listening and destroys every open connection (hanging requests included). */
  close(): Promise<void>;
}

/** Options of {@link startLoopbackServer}. */
export interface LoopbackServerOptions {
  /** The initial queue of steps, consumed one per chat-completion request. */
  steps?: LoopbackStep[];
  /**
   * Answers requests once the queue is empty. `index` is the zero-based number of the request
   * among all chat-completion requests this server received.
   */
  respond?: (request: RecordedRequest, index: number) => LoopbackStep | Promise<LoopbackStep>;
  /**
   * The model list served at `GET <base>/models` (`{object: 'list', data: [...]}`), as vLLM,
   * OpenRouter and LM Studio serve it. Without it the path answers 404.
   */
  models?: LoopbackDiscoveryAnswer<LoopbackModel[]>;
  /** llama.cpp's `GET /props` body, for example `{default_generation_settings: {n_ctx: 8192}}`. Without it, 404. */
  props?: LoopbackDiscoveryAnswer<Record<string, unknown>>;
  /**
   * Ollama's `POST /api/show` body (`{parameters: 'num_ctx 8192', model_info: {...}}`), or a
   * function of the requested model. Without it, 404.
   */
  ollamaShow?: LoopbackDiscoveryAnswer<
    Record<string, unknown> | ((model: string) => Record<string, unknown> | undefined)
  >;
  /** LM Studio's `GET /api/v0/models/<id>` entries (`max_context_length`, `loaded_context_length`), by id. Unknown ids get 404. */
  lmStudioModels?: LoopbackModel[];
}

const DEFAULT_CHUNK_SIZE = 7;

/**
 * Starts an OpenAI-compatible HTTP server on 127.0.0.1 (random port) that answers
 * `POST …/chat/completions` from a script, streaming real SSE `chat.completion.chunk`s (or a
 * `chat.completion` object when the request is not streamed). Any path ending in
 * `/chat/completions` is served, so a base URL may carry a path prefix (`<origin>/cerebras/v1`).
 *
 * It also serves the endpoints servers use to describe their models, when given: the model list
 * (`GET …/models`), llama.cpp's `GET /props`, Ollama's `POST /api/show` and LM Studio's
 * `GET /api/v0/models/<id>`; those requests are
 * recorded in `discoveryRequests`, not `requests`.
 *
 * A request with no step left gets HTTP 500 with an error saying so, so a test fails loudly.
 * The server also serves child processes, and adds no latency unless a step asks for it.
 */
export async function startLoopbackServer(options: LoopbackServerOptions = {}): Promise<LoopbackServer> {
  const queue: LoopbackStep[] = [...(options.steps ?? [])];
  const requests: RecordedRequest[] = [];
  const discoveryRequests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let completionCount = 0;
  let closed = false;

  const server = createServer({ noDelay: true, keepAlive: true }, (request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) {
        sendJson(response, 500, { error: { message: `loopback server: ${String(error)}`, type: 'server_error' } });
      } else {
        response.destroy();
      }
    });
  });
  server.keepAliveTimeout = 5_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const raw = await readBody(request);
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    let body: unknown;
    try {
      body = raw.length > 0 ? JSON.parse(raw) : undefined;
    } catch {
      body = undefined;
    }
    const recorded: RecordedRequest = { body, headers: { ...request.headers }, path, receivedAt: Date.now() };
    if (discover(request.method ?? 'GET', path, recorded, response)) return;
    requests.push(recorded);

    if (request.method !== 'POST' || !path.endsWith('/chat/completions')) {
      sendJson(response, 404, {
        error: {
          message: `loopback server: no route for ${request.method ?? '?'} ${path}`,
          type: 'invalid_request_error',
        },
      });
      return;
    }
    const index = completionCount;
    completionCount += 1;
    let step = queue.shift();
    if (step === undefined && options.respond !== undefined) step = await options.respond(recorded, index);
    if (step === undefined) {
      sendJson(response, 500, {
        error: {
          message: `loopback server: no scripted step left for request ${index + 1}`,
          type: 'loopback_script_exhausted',
        },
      });
      return;
    }
    const requestBody = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    await answer(step, requestBody, index, response);
  }

  /** Serves the discovery endpoints; false when the request is not one of them. */
  function discover(method: string, path: string, recorded: RecordedRequest, response: ServerResponse): boolean {
    let answer: LoopbackDiscoveryAnswer<unknown> | undefined;
    if (method === 'GET' && path.endsWith('/models')) {
      answer =
        options.models === undefined || options.models === 'hang'
          ? options.models
          : {
              object: 'list',
              data: options.models.map((model) => ({ object: 'model', created: 0, owned_by: 'loopback', ...model })),
            };
    } else if (method === 'GET' && path === '/props') {
      answer = options.props;
    } else if (method === 'GET' && path.startsWith('/api/v0/models/')) {
      const id = decodeURIComponent(path.slice('/api/v0/models/'.length));
      answer = options.lmStudioModels?.find((model) => model.id === id);
    } else if (method === 'POST' && path === '/api/show') {
      const show = options.ollamaShow;
      const requested =
        typeof recorded.body === 'object' && recorded.body !== null
          ? (recorded.body as Record<string, unknown>)['model']
          : undefined;
      answer = typeof show === 'function' ? show(typeof requested === 'string' ? requested : '') : show;
    } else {
      return false;
    }
    discoveryRequests.push(recorded);
    // A hanging answer keeps the request open until the client gives up or close() runs.
    if (answer === 'hang') return true;
    if (answer === undefined) sendJson(response, 404, { error: `loopback server: ${method} ${path} is not served` });
    else sendJson(response, 200, answer);
    return true;
  }

  async function answer(
    step: LoopbackStep,
    requestBody: Record<string, unknown>,
    index: number,
    response: ServerResponse,
  ): Promise<void> {
    const streaming = requestBody['stream'] === true;
    const includeUsage =
      typeof requestBody['stream_options'] === 'object' &&
      requestBody['stream_options'] !== null &&
      (requestBody['stream_options'] as Record<string, unknown>)['include_usage'] === true;
    const requestModel = typeof requestBody['model'] === 'string' ? requestBody['model'] : 'loopback-model';
    const completionId = `chatcmpl-loopback-${index + 1}`;

    switch (step.type) {
      case 'http_error': {
        const headers: Record<string, string> = { ...step.headers };
        if (step.retryAfter !== undefined) headers['retry-after'] = String(step.retryAfter);
        sendJson(
          response,
          step.status,
          {
            error: {
              message: step.message ?? `loopback server: scripted HTTP ${step.status}`,
              type: step.status >= 500 ? 'server_error' : 'invalid_request_error',
              code: null,
              param: null,
            },
          },
          headers,
        );
        return;
      }
      case 'hang':
        // Keep the request open; the client's abort (or close()) destroys the socket.
        return;
      case 'drop': {
        if (!streaming) {
          response.socket?.destroy();
          return;
        }
        const writer = new SseWriter(response, completionId, requestModel, 0);
        writer.start();
        if (step.after === 'headers') {
          await writer.flushed();
          response.socket?.destroy();
          return;
        }
        writer.roleChunk();
        await writer.text('content', step.text ?? '', DEFAULT_CHUNK_SIZE);
        if (step.after === 'tool_call') {
          const calls = normalizeToolCalls(step.toolCalls ?? [], index);
          await writer.toolCalls(calls, DEFAULT_CHUNK_SIZE, 'sequential', 'first');
          writer.finish(calls.length > 0 ? 'tool_calls' : 'stop');
        }
        await writer.flushed();
        response.socket?.destroy();
        return;
      }
      case 'close': {
        if (!streaming) {
          response.socket?.destroy();
          return;
        }
        const writer = new SseWriter(response, completionId, requestModel, 0);
        writer.start();
        writer.roleChunk();
        await writer.text('content', step.text ?? '', DEFAULT_CHUNK_SIZE);
        const calls = normalizeToolCalls(step.toolCalls ?? [], index);
        const last = calls.at(-1);
        if (step.partial === true && last !== undefined)
          last.arguments = last.arguments.slice(0, Math.floor(last.arguments.length / 2));
        await writer.toolCalls(calls, DEFAULT_CHUNK_SIZE, 'sequential', 'first');
        await writer.flushed();
        response.end();
        return;
      }
      case 'body': {
        const text = step.body;
        response.writeHead(step.status ?? 200, {
          'content-type': step.contentType ?? 'text/html; charset=utf-8',
          'content-length': Buffer.byteLength(text),
        });
        response.end(text);
        return;
      }
      case 'chunks': {
        const writer = new SseWriter(response, completionId, requestModel, step.delayMs ?? 0);
        writer.start();
        for (const chunk of step.chunks) {
          await writer.raw(typeof chunk === 'string' ? chunk : JSON.stringify(chunk));
        }
        writer.end();
        return;
      }
      case 'response': {
        const model = step.model ?? requestModel;
        const calls = normalizeToolCalls(step.toolCalls ?? [], index);
        const text = step.text ?? '';
        const finishReason = step.noFinishReason
          ? null
          : (step.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop'));
        const usage = step.usage === undefined ? defaultUsage(requestBody, step, calls) : step.usage;
        if (!streaming) {
          sendJson(
            response,
            200,
            completionObject(completionId, model, text, step.reasoning, calls, finishReason, usage),
          );
          return;
        }
        const chunkSize = Math.max(1, step.chunkSize ?? DEFAULT_CHUNK_SIZE);
        const writer = new SseWriter(response, completionId, model, step.delayMs ?? 0);
        writer.start();
        writer.roleChunk();
        await writer.text('reasoning_content', step.reasoning ?? '', chunkSize);
        await writer.text('content', text, chunkSize);
        await writer.toolCalls(calls, chunkSize, step.toolCallOrder ?? 'sequential', step.toolCallHeader ?? 'first');
        if (finishReason !== null) writer.finish(finishReason);
        if (includeUsage && usage !== null) writer.usage(wireUsage(usage));
        writer.end();
        return;
      }
      default: {
        const unknownStep: never = step;
        throw new Error(`unknown loopback step ${JSON.stringify(unknownStep)}`);
      }
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    discoveryRequests,
    push(...steps: LoopbackStep[]) {
      queue.push(...steps);
    },
    pending() {
      return queue.length;
    },
    async close() {
      if (closed) return;
      closed = true;
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      await stopped;
    },
  };
}

/** Writes SSE `chat.completion.chunk`s for one completion. */
class SseWriter {
  private readonly created = Math.floor(Date.now() / 1000);
  private lastWrite: Promise<void> = Promise.resolve();
  private paused = false;

  constructor(
    private readonly response: ServerResponse,
    private readonly id: string,
    private readonly model: string,
    private readonly delayMs: number,
  ) {}

  start(): void {
    this.response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    this.response.flushHeaders();
  }

  roleChunk(): void {
    this.write(this.chunk({ role: 'assistant', content: '' }, null));
  }

  async text(field: 'content' | 'reasoning_content', text: string, chunkSize: number): Promise<void> {
    for (const piece of split(text, chunkSize)) {
      await this.pause();
      this.write(this.chunk({ [field]: piece }, null));
    }
  }

  async toolCalls(
    calls: Required<LoopbackToolCall>[],
    chunkSize: number,
    order: 'sequential' | 'interleaved',
    header: 'first' | 'late',
  ): Promise<void> {
    // Each call becomes a list of deltas; then the lists are sent one after another or round-robin.
    const perCall = calls.map((call, index) => {
      const fragments = split(call.arguments, chunkSize);
      const head = { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } };
      if (header === 'late') {
        const [first, ...rest] = fragments;
        return [
          { index, function: { arguments: first ?? '' } },
          { ...head, function: { name: call.name, arguments: '' } },
          ...rest.map((fragment) => ({ index, function: { arguments: fragment } })),
        ];
      }
      return [head, ...fragments.map((fragment) => ({ index, function: { arguments: fragment } }))];
    });
    const deltas: unknown[] = [];
    if (order === 'sequential') {
      for (const list of perCall) deltas.push(...list);
    } else {
      const longest = Math.max(0, ...perCall.map((list) => list.length));
      for (let position = 0; position < longest; position += 1) {
        for (const list of perCall) {
          const delta = list[position];
          if (delta !== undefined) deltas.push(delta);
        }
      }
    }
    for (const delta of deltas) {
      await this.pause();
      this.write(this.chunk({ tool_calls: [delta] }, null));
    }
  }

  finish(reason: string): void {
    this.write(this.chunk({}, reason));
  }

  usage(usage: Record<string, unknown>): void {
    this.write({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      system_fingerprint: null,
      choices: [],
      usage,
    });
  }

  async raw(data: string): Promise<void> {
    await this.pause();
    this.writeLine(`data: ${data}\n\n`);
  }

  end(): void {
    this.response.end('data: [DONE]\n\n');
  }

  /** Resolves once everything written so far was handed to the socket. */
  flushed(): Promise<void> {
    return this.lastWrite;
  }

  private chunk(delta: Record<string, unknown>, finishReason: string | null): Record<string, unknown> {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      system_fingerprint: null,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    };
  }

  private write(payload: Record<string, unknown>): void {
    this.writeLine(`data: ${JSON.stringify(payload)}\n\n`);
  }

  private writeLine(line: string): void {
    this.lastWrite = new Promise<void>((resolve) => {
      this.response.write(line, () => resolve());
    });
  }

  // Pauses go between chunks: the first piece of output is sent at once.
  private async pause(): Promise<void> {
    if (!this.paused) {
      this.paused = true;
      return;
    }
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
  }
}

function split(text: string, size: number): string[] {
  const pieces: string[] = [];
  // Split by code points so a piece never holds half a surrogate pair.
  const characters = Array.from(text);
  for (let start = 0; start < characters.length; start += size) {
    pieces.push(characters.slice(start, start + size).join(''));
  }
  return pieces;
}

function normalizeToolCalls(calls: LoopbackToolCall[], requestIndex: number): Required<LoopbackToolCall>[] {
  return calls.map((call, position) => ({
    id: call.id ?? `call_${requestIndex + 1}_${position + 1}`,
    name: call.name,
    arguments: call.arguments,
  }));
}

function defaultUsage(
  requestBody: Record<string, unknown>,
  step: LoopbackResponseStep,
  calls: Required<LoopbackToolCall>[],
): LoopbackUsage {
  const promptCharacters = JSON.stringify(requestBody['messages'] ?? []).length;
  const answerCharacters =
    (step.text ?? '').length +
    (step.reasoning ?? '').length +
    calls.reduce((sum, call) => sum + call.name.length + call.arguments.length, 0);
  return {
    prompt_tokens: Math.max(1, Math.ceil(promptCharacters / 4)),
    completion_tokens: Math.max(1, Math.ceil(answerCharacters / 4)),
  };
}

function wireUsage(usage: LoopbackUsage): Record<string, unknown> {
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
    prompt_tokens_details: { cached_tokens: usage.cached_tokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 },
  };
}

function completionObject(
  id: string,
  model: string,
  text: string,
  reasoning: string | undefined,
  calls: Required<LoopbackToolCall>[],
  finishReason: string | null,
  usage: LoopbackUsage | null,
): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content: text.length > 0 ? text : null, refusal: null };
  if (reasoning !== undefined && reasoning.length > 0) message['reasoning_content'] = reasoning;
  if (calls.length > 0) {
    message['tool_calls'] = calls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  const completion: Record<string, unknown> = {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    system_fingerprint: null,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
  };
  if (usage !== null) completion['usage'] = wireUsage(usage);
  return completion;
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    request.on('error', reject);
  });
}
