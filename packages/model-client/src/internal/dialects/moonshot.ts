// Moonshot (Kimi): the usage of a stream may come inside the finishing choice
// (`choices[0].usage`) instead of (or before) the chunk's own `usage`, and cached input tokens may
// be reported as a top-level `usage.cached_tokens` instead of `prompt_tokens_details.cached_tokens`.
// Recorded in vercel/ai's `packages/moonshotai/src/__fixtures__/`.

/** The usage a choice carries (Moonshot), if any. */
export function choiceUsageOf(choice: unknown): Record<string, unknown> | undefined {
  if (choice === null || typeof choice !== 'object') return undefined;
  const usage = (choice as Record<string, unknown>)['usage'];
  return usage !== null && typeof usage === 'object' ? (usage as Record<string, unknown>) : undefined;
}

/** Cached input tokens where Moonshot puts them, when the standard field is missing. */
export function topLevelCachedTokens(usage: Record<string, unknown>): number | undefined {
  const cached = usage['cached_tokens'];
  return typeof cached === 'number' ? cached : undefined;
}
