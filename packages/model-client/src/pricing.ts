/** Prices of one model, in USD per million tokens. */
export interface ModelPrice {
  /** Uncached input tokens. */
  inputPerMillion: number;
  /** Input tokens served from the prompt cache; the input price when the provider has no discount. */
  cachedInputPerMillion?: number;
  /** Output tokens (reasoning tokens included: providers bill them as output). */
  outputPerMillion: number;
}

/** Model name (family, without snapshot date) to its prices. */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** Token counts {@link costOf} needs. */
export interface TokenCounts {
  /** All input tokens, cached ones included (OpenAI's `prompt_tokens`). */
  inputTokens: number;
  /** Input tokens served from the cache (a part of `inputTokens`). */
  cachedTokens: number;
  /** Output tokens (OpenAI's `completion_tokens`, reasoning included). */
  outputTokens: number;
}

function price(
  inputPerMillion: number,
  cachedInputPerMillion: number | undefined,
  outputPerMillion: number,
): ModelPrice {
  return cachedInputPerMillion === undefined
    ? { inputPerMillion, outputPerMillion }
    : { inputPerMillion, cachedInputPerMillion, outputPerMillion };
}

/**
 * Standard (non-batch, default service tier) list prices in USD per million tokens, as the
 * providers published them in mid-2025 (OpenAI after the June 2025 o3 price cut; Anthropic's
 * cache-read price as the cached rate). Prices change: pass `priceTable` to `createModelClient`
 * to override or extend them.
 */
export const DEFAULT_PRICE_TABLE: PriceTable = Object.freeze({
  // OpenAI
  'gpt-5': price(1.25, 0.125, 10),
  'gpt-5-mini': price(0.25, 0.025, 2),
  'gpt-5-nano': price(0.05, 0.005, 0.4),
  'gpt-5-chat-latest': price(1.25, 0.125, 10),
  'gpt-4.1': price(2, 0.5, 8),
  'gpt-4.1-mini': price(0.4, 0.1, 1.6),
  'gpt-4.1-nano': price(0.1, 0.025, 0.4),
  'gpt-4o': price(2.5, 1.25, 10),
  'gpt-4o-mini': price(0.15, 0.075, 0.6),
  o1: price(15, 7.5, 60),
  o3: price(2, 0.5, 8),
  'o3-mini': price(1.1, 0.55, 4.4),
  'o4-mini': price(1.1, 0.275, 4.4),
  'gpt-4-turbo': price(10, undefined, 30),
  'gpt-3.5-turbo': price(0.5, undefined, 1.5),
  // Anthropic (through an OpenAI-compatible gateway)
  'claude-opus-4': price(15, 1.5, 75),
  'claude-sonnet-4': price(3, 0.3, 15),
  'claude-3-7-sonnet': price(3, 0.3, 15),
  'claude-3-5-haiku': price(0.8, 0.08, 4),
});

// Dated snapshots: `-2024-08-06` (OpenAI), `-20250514` (Anthropic), `-0613` (older OpenAI).
const SNAPSHOT_SUFFIX = /-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$/;

/**
 * The price of `model`, or `undefined` when it is not known. A dated snapshot
 * (`gpt-4o-2024-08-06`, `claude-sonnet-4-20250514`) is priced as its family, and a gateway's
 * provider prefix (`openai/gpt-4o`) is ignored. Names are matched exactly otherwise, so
 * `gpt-4o-audio-preview` is unknown rather than mispriced as `gpt-4o`.
 */
export function priceFor(model: string, table: PriceTable = DEFAULT_PRICE_TABLE): ModelPrice | undefined {
  const bare = model.trim().toLowerCase();
  const withoutPrefix = bare.slice(bare.lastIndexOf('/') + 1);
  for (const candidate of [bare, withoutPrefix, withoutPrefix.replace(SNAPSHOT_SUFFIX, '')]) {
    const found = Object.hasOwn(table, candidate) ? table[candidate] : undefined;
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Cost in USD of one call, or `null` when the model is not in the table (never 0 for an unknown
 * model: a missing price must not look free). Cached tokens are billed at the cached rate, the
 * rest of the input at the input rate.
 */
export function costOf(model: string, usage: TokenCounts, table: PriceTable = DEFAULT_PRICE_TABLE): number | null {
  const modelPrice = priceFor(model, table);
  if (modelPrice === undefined) return null;
  const cached = Math.min(Math.max(usage.cachedTokens, 0), usage.inputTokens);
  const uncached = usage.inputTokens - cached;
  const cachedRate = modelPrice.cachedInputPerMillion ?? modelPrice.inputPerMillion;
  return (
    (uncached * modelPrice.inputPerMillion + cached * cachedRate + usage.outputTokens * modelPrice.outputPerMillion) /
    1_000_000
  );
}
