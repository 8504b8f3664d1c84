import { didYouMean } from './did-you-mean.js';
import { UsageError } from './exit-codes.js';

/** Reasoning efforts OpenAI-compatible servers accept (`reasoning_effort`). */
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;

/**
 * An OpenAI-compatible endpoint from `--base-url`, `base_url` or `OPENAI_BASE_URL`: an http(s)
 * URL with a host. Checked before any network call, so a typo is a message instead of retries.
 */
export function checkBaseUrl(value: string, source: string): string {
  const trimmed = value.trim();
  const example = 'for example http://localhost:11434/v1 or https://api.openai.com/v1';
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    throw new UsageError({
      message: `${source} must be an http:// or https:// URL, ${example} (got ${JSON.stringify(value)}${/^[\w.-]+(:\d+)?(\/|$)/.test(trimmed) ? `; did you mean http://${trimmed}?` : ''}).`,
    });
  }
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new UsageError({ message: `${source} is not a valid URL: ${JSON.stringify(value)}. Use a URL ${example}.` });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError({ message: `${source} must use http:// or https:// (got ${url.protocol}//), ${example}.` });
  }
  if (url.hostname === '')
    throw new UsageError({ message: `${source} has no host: ${JSON.stringify(value)}. Use a URL ${example}.` });
  return trimmed;
}

/** A whole number of at least 1 (`--max-turns`, `--max-tokens`). */
export function checkPositiveInteger(value: unknown, flag: string, example: number): number {
  const text = String(value).trim();
  const number = Number(text);
  if (text === '' || !Number.isInteger(number) || number < 1) {
    throw new UsageError({
      message: `${flag} must be a whole number of at least 1, for example ${flag} ${example} (got ${JSON.stringify(String(value))}).`,
    });
  }
  return number;
}

/** A number above 0 (`--max-cost`). */
export function checkPositiveNumber(value: unknown, flag: string, example: number): number {
  const text = String(value).trim();
  const number = Number(text);
  if (text === '' || !Number.isFinite(number) || number <= 0) {
    throw new UsageError({
      message: `${flag} must be a number above 0, for example ${flag} ${example} (got ${JSON.stringify(String(value))}).`,
    });
  }
  return number;
}

/** One of `choices`, with a suggestion when the value is close to one. */
export function checkChoice<T extends string>(value: string, choices: readonly T[], flag: string): T {
  const normalised = value.trim().toLowerCase();
  if ((choices as readonly string[]).includes(normalised)) return normalised as T;
  const suggestion = didYouMean(normalised, choices);
  throw new UsageError({
    message: `${flag} must be one of ${choices.join(', ')} (got ${JSON.stringify(value)}${suggestion === undefined ? '' : `; did you mean ${suggestion}?`}).`,
  });
}

/** `--var key=value` items (the flag may be repeated; each takes exactly one value). */
export function checkVars(items: unknown): string[] {
  const list = items === undefined ? [] : Array.isArray(items) ? items.map(String) : [String(items)];
  for (const item of list) {
    const index = item.indexOf('=');
    if (index <= 0 || item.slice(0, index).trim() === '') {
      throw new UsageError({
        message: `--var takes key=value, for example --var who=ZELDA (got ${JSON.stringify(item)}). Repeat --var for each variable.`,
      });
    }
  }
  return list;
}
