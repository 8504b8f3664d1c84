import type { DiscoveredContextWindow } from './discover-context-window.js';

/**
 * Context windows (input + output tokens) of common models, used to decide when to compact a
 * conversation. Models not listed get a discovered window or {@link DEFAULT_CONTEXT_WINDOW}.
 */
export const DEFAULT_CONTEXT_WINDOWS: Readonly<Record<string, number>> = Object.freeze({
  'gpt-5': 400_000,
  'gpt-5-mini': 400_000,
  'gpt-5-nano': 400_000,
  'gpt-5-chat-latest': 128_000,
  'gpt-4.1': 1_047_576,
  'gpt-4.1-mini': 1_047_576,
  'gpt-4.1-nano': 1_047_576,
  'gpt-4o': 128_000,
  'gpt-4o-mini': 128_000,
  o1: 200_000,
  o3: 200_000,
  'o3-mini': 200_000,
  'o4-mini': 200_000,
  'gpt-4-turbo': 128_000,
  'gpt-3.5-turbo': 16_385,
  'claude-opus-4': 200_000,
  'claude-sonnet-4': 200_000,
  'claude-3-7-sonnet': 200_000,
  'claude-3-5-haiku': 200_000,
});

const SNAPSHOT_SUFFIX = /-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$/;

/**
 * The context window of `model` in tokens, or `undefined` when unknown. Dated snapshots and a
 * gateway's provider prefix (`openai/gpt-4o`) are matched to their family.
 */
export function contextWindowFor(
  model: string,
  table: Readonly<Record<string, number>> = DEFAULT_CONTEXT_WINDOWS,
): number | undefined {
  const bare = model.trim().toLowerCase();
  const withoutProvider = bare.includes('/') ? bare.slice(bare.lastIndexOf('/') + 1) : bare;
  for (const candidate of [bare, withoutProvider, withoutProvider.replace(SNAPSHOT_SUFFIX, '')]) {
    if (Object.hasOwn(table, candidate)) return table[candidate];
  }
  return undefined;
}

/**
 * The window assumed when nothing else is known: 32,768 tokens. It is the smallest window of the
 * open-weight families commonly served today (Qwen 2.5/3, Mistral, Llama 3.x, Gemma 3 all have at
 * least 32k), so compaction (at 70%, about 22,900 tokens) runs before such a model overflows;
 * servers running a smaller window (llama.cpp's and Ollama's small defaults) say so and are
 * discovered. A model with a larger window only compacts earlier than it had to.
 */
export const DEFAULT_CONTEXT_WINDOW = 32_768;

/**
 * Where a context window came from: a command-line flag, an environment variable, a
 * configuration (agent config, per-model map or an SDK option), the server, the table of known
 * models, or {@link DEFAULT_CONTEXT_WINDOW}.
 */
export type ContextWindowSource = 'flag' | 'env' | 'config' | 'discovered' | 'table' | 'default';

/** A context window and where it came from. */
export interface ContextWindowInfo {
  /** The window in tokens. */
  tokens: number;
  /** Where it came from. */
  source: ContextWindowSource;
  /** For `discovered`: the endpoint and field that told it, for example `/props default_generation_settings.n_ctx`. */
  detail?: string;
}

/** Inputs of {@link resolveContextWindow}, by precedence. */
export interface ResolveContextWindowOptions {
  /** The model in use. */
  model: string;
  /** A window set by the user, with where it was set (flag, env or config): wins over everything. */
  explicit?: { tokens: number; source: 'flag' | 'env' | 'config' };
  /** Windows per model name set by the user (matched like the table: snapshots, provider prefixes). */
  perModel?: Readonly<Record<string, number>>;
  /** Asks the server; called only when neither `explicit`, `perModel` nor the table answers. */
  discover?: () => Promise<DiscoveredContextWindow | undefined>;
  /** The table of known models. Default {@link DEFAULT_CONTEXT_WINDOWS}. */
  table?: Readonly<Record<string, number>>;
  /** The last resort. Default {@link DEFAULT_CONTEXT_WINDOW}. */
  fallback?: number;
}

/**
 * The context window of a model, by precedence: the explicit setting, the per-model setting, the
 * table of known models, the server's answer (asked only for models the table does not know), the default. Never throws and always answers, so
 * compaction runs for every model.
 */
export async function resolveContextWindow(options: ResolveContextWindowOptions): Promise<ContextWindowInfo> {
  if (options.explicit !== undefined) return { tokens: options.explicit.tokens, source: options.explicit.source };
  const perModel =
    options.perModel === undefined ? undefined : contextWindowFor(options.model, lowerCaseKeys(options.perModel));
  if (perModel !== undefined) return { tokens: perModel, source: 'config' };
  // A model the table knows (the hosted ones) is not asked about: asking costs round trips before
  // the first request, and hosted APIs do not report a window. Servers of unknown models are asked.
  const known = contextWindowFor(options.model, options.table);
  if (known !== undefined) return { tokens: known, source: 'table' };
  const discovered = options.discover === undefined ? undefined : await options.discover().catch(() => undefined);
  if (discovered !== undefined)
    return { tokens: discovered.tokens, source: 'discovered', detail: `${discovered.endpoint} ${discovered.field}` };
  return { tokens: options.fallback ?? DEFAULT_CONTEXT_WINDOW, source: 'default' };
}

function lowerCaseKeys(table: Readonly<Record<string, number>>): Record<string, number> {
  return Object.fromEntries(Object.entries(table).map(([key, value]) => [key.trim().toLowerCase(), value]));
}
