/** HTTP statuses worth repeating: request timeout, conflict (lock timeout), rate limit, server errors. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Longest wait a `Retry-After` header can impose, so a provider cannot park a run for hours. */
export const RETRY_AFTER_CAP_MS = 60_000;

/**
 * The wait a provider asked for through `retry-after-ms` (milliseconds) or `Retry-After`
 * (seconds or an HTTP date), capped at {@link RETRY_AFTER_CAP_MS}; `undefined` when absent or
 * unreadable.
 */
export function retryAfterMs(headers: Headers | undefined, now: number = Date.now()): number | undefined {
  if (headers === undefined) return undefined;
  const milliseconds = headers.get('retry-after-ms');
  if (milliseconds !== null && milliseconds.trim() !== '') {
    const value = Number(milliseconds);
    if (Number.isFinite(value) && value >= 0) return Math.min(value, RETRY_AFTER_CAP_MS);
  }
  const header = headers.get('retry-after');
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.min(seconds * 1000, RETRY_AFTER_CAP_MS) : undefined;
  const date = Date.parse(header);
  if (Number.isNaN(date)) return undefined;
  return Math.min(Math.max(date - now, 0), RETRY_AFTER_CAP_MS);
}

/**
 * Exponential backoff with full jitter: a uniform random wait between 0 and
 * `min(maxDelayMs, baseDelayMs * 2^retryIndex)`. `retryIndex` is 0 for the first retry.
 */
export function backoffDelayMs(
  retryIndex: number,
  baseDelayMs: number,
  maxDelayMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(retryIndex, 30));
  return Math.floor(random() * ceiling);
}

/** Waits `milliseconds`, or less when `signal` aborts (it resolves then, never rejects). */
export function sleep(milliseconds: number, signal?: AbortSignal): Promise<void> {
  if (milliseconds <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
