/**
 * Where a discovered context window was read: the OpenAI-compatible model list (vLLM,
 * OpenRouter, LM Studio, Groq), llama.cpp's `/props`, Ollama's `/api/show`, LM Studio's
 * `/api/v0/models/<id>`, or `in-process` for a
 * client that runs the model itself (the context it allocated).
 */
import { readJsonResponse } from './read-json.js';

export type ContextWindowEndpoint = '/v1/models' | '/props' | '/api/show' | '/api/v0/models' | 'in-process';

/** A context window the server reported. */
export interface DiscoveredContextWindow {
  /** The window in tokens. */
  tokens: number;
  /** Which endpoint told it. */
  endpoint: ContextWindowEndpoint;
  /** The field that carried it, for example `max_model_len` or `default_generation_settings.n_ctx`. */
  field: string;
}

/** Options of {@link discoverContextWindow}. */
export interface DiscoverContextWindowOptions {
  /** The OpenAI-compatible base URL, usually ending in `/v1`. */
  baseURL: string;
  /** The model whose window is wanted, as sent in requests. */
  model: string;
  /** Sent as a bearer token to the model list, as the server expects for completions. */
  apiKey?: string;
  /** Upper bound of the whole discovery (every endpoint tried), in milliseconds. Default 2 000. */
  timeoutMs?: number;
  /** A `fetch` implementation to use instead of the global one. */
  fetch?: typeof globalThis.fetch;
  /** Aborting it ends discovery early with no answer. */
  signal?: AbortSignal;
  /** Ask the server again even when an answer for this base URL and model is cached. */
  refresh?: boolean;
}

/** Default bound of a discovery: long enough for a local server, short enough not to be noticed. */
export const DISCOVERY_TIMEOUT_MS = 2_000;

const cache = new Map<string, Promise<DiscoveredContextWindow | undefined>>();

/**
 * Asks the server behind `baseURL` how large `model`'s context window is. First the model list
 * (`GET <base>/models`: an entry's `max_model_len`, `context_length`, `max_context_length`,
 * `context_window` or `top_provider.context_length`); when it does not tell, the servers' own
 * endpoints together, taken in this order: llama.cpp's `GET <origin>/props`
 * (`default_generation_settings.n_ctx`, else `n_ctx`), Ollama's `POST <origin>/api/show` (the
 * `num_ctx` parameter when set, else `model_info`'s `<architecture>.context_length`) and LM
 * Studio's `GET <origin>/api/v0/models/<model>` (`loaded_context_length`, else
 * `max_context_length`). `<origin>` is the base URL without a trailing `/v1`.
 *
 * Never throws: an unreachable server, an error status, unexpected JSON or the timeout all give
 * `undefined`. Answers (including "no answer") are cached per base URL and model for the life of
 * the process, so a session asks once.
 */
export function discoverContextWindow(
  options: DiscoverContextWindowOptions,
): Promise<DiscoveredContextWindow | undefined> {
  const key = `${options.baseURL.replace(/\/+$/, '')}\u0000${options.model}`;
  const cached = options.refresh === true ? undefined : cache.get(key);
  if (cached !== undefined) return cached;
  const pending = discover(options).catch(() => undefined);
  cache.set(key, pending);
  // An aborted discovery says nothing about the server: it must not be remembered.
  void pending.then(() => {
    if (options.signal?.aborted === true && cache.get(key) === pending) cache.delete(key);
  });
  return pending;
}

/** Forgets every cached discovery (for tests, or after a server was reconfigured). */
export function clearContextWindowCache(): void {
  cache.clear();
}

async function discover(options: DiscoverContextWindowOptions): Promise<DiscoveredContextWindow | undefined> {
  const timeout = AbortSignal.timeout(Math.max(1, options.timeoutMs ?? DISCOVERY_TIMEOUT_MS));
  const signal = options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
  const fetchImplementation = options.fetch ?? globalThis.fetch;
  const base = options.baseURL.replace(/\/+$/, '');
  const origin = base.replace(/\/v1$/, '');
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.apiKey !== undefined && options.apiKey !== '') headers['authorization'] = `Bearer ${options.apiKey}`;

  const getJson = async (url: string, init: RequestInit = {}): Promise<unknown> => {
    if (signal.aborted) return undefined;
    try {
      const response = await fetchImplementation(url, {
        ...init,
        headers: { ...headers, ...(init.headers as Record<string, string> | undefined) },
        signal,
      });
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        return undefined;
      }
      return await readJsonResponse(response);
    } catch {
      return undefined;
    }
  };

  const list = await getJson(`${base}/models`);
  const fromList = fromModelList(list, options.model);
  if (fromList !== undefined) return fromList;

  // The servers' own endpoints are asked together (one round trip more, not three), and the
  // first that tells, in this order, wins.
  const [props, ollama, lmStudio] = await Promise.all([
    getJson(`${origin}/props`).then(fromProps),
    getJson(`${origin}/api/show`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: options.model }),
    }).then(fromOllamaShow),
    getJson(`${origin}/api/v0/models/${encodeURIComponent(options.model)}`).then(fromLmStudio),
  ]);
  return props ?? ollama ?? lmStudio;
}

/** LM Studio's `/api/v0/models/<id>`: the context the model was loaded with, else its maximum. */
export function fromLmStudio(document: unknown): DiscoveredContextWindow | undefined {
  if (!isRecord(document)) return undefined;
  for (const field of ['loaded_context_length', 'max_context_length'] as const) {
    const tokens = positiveInteger(document[field]);
    if (tokens !== undefined) return { tokens, endpoint: '/api/v0/models', field };
  }
  return undefined;
}

const LIST_FIELDS = ['max_model_len', 'context_length', 'max_context_length', 'context_window'] as const;

/** An entry of an OpenAI-style model list that names the window (vLLM, OpenRouter, LM Studio, Groq). */
export function fromModelList(document: unknown, model: string): DiscoveredContextWindow | undefined {
  const entries =
    isRecord(document) && Array.isArray(document['data'])
      ? document['data']
      : Array.isArray(document)
        ? document
        : undefined;
  if (entries === undefined) return undefined;
  const wanted = model.trim().toLowerCase();
  const entry = entries.find(
    (item): item is Record<string, unknown> =>
      isRecord(item) && typeof item['id'] === 'string' && item['id'].toLowerCase() === wanted,
  );
  if (entry === undefined) return undefined;
  for (const field of LIST_FIELDS) {
    const tokens = positiveInteger(entry[field]);
    if (tokens !== undefined) return { tokens, endpoint: '/v1/models', field };
  }
  const provider = entry['top_provider'];
  const tokens = isRecord(provider) ? positiveInteger(provider['context_length']) : undefined;
  return tokens === undefined ? undefined : { tokens, endpoint: '/v1/models', field: 'top_provider.context_length' };
}

/** llama.cpp server's `/props`: the slots' runtime context size. */
export function fromProps(document: unknown): DiscoveredContextWindow | undefined {
  if (!isRecord(document)) return undefined;
  const settings = document['default_generation_settings'];
  const perSlot = isRecord(settings) ? positiveInteger(settings['n_ctx']) : undefined;
  if (perSlot !== undefined) return { tokens: perSlot, endpoint: '/props', field: 'default_generation_settings.n_ctx' };
  const total = positiveInteger(document['n_ctx']);
  return total === undefined ? undefined : { tokens: total, endpoint: '/props', field: 'n_ctx' };
}

/**
 * Ollama's `/api/show`: the `num_ctx` parameter (what the server actually runs with) wins over
 * the model's trained `context_length`, which Ollama does not allocate unless asked.
 */
export function fromOllamaShow(document: unknown): DiscoveredContextWindow | undefined {
  if (!isRecord(document)) return undefined;
  const parameters = document['parameters'];
  if (typeof parameters === 'string') {
    const match = /^\s*num_ctx\s+(\d+)\s*$/m.exec(parameters);
    const tokens = match === null ? undefined : positiveInteger(Number(match[1]));
    if (tokens !== undefined) return { tokens, endpoint: '/api/show', field: 'parameters.num_ctx' };
  }
  const info = document['model_info'];
  if (!isRecord(info)) return undefined;
  for (const [field, value] of Object.entries(info)) {
    if (!field.endsWith('.context_length')) continue;
    const tokens = positiveInteger(value);
    if (tokens !== undefined) return { tokens, endpoint: '/api/show', field: `model_info.${field}` };
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function positiveInteger(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}
