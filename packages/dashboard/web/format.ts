/** 1234 → 1.2K, 1234567 → 1.2M. */
export function compact(value: number | undefined): string {
  if (value === undefined) return '-';
  if (value >= 1e6) return `${(value / 1e6).toFixed(1)}M`;
  if (value >= 1e3) return `${(value / 1e3).toFixed(1)}K`;
  return String(Math.round(value));
}

/** A cost in USD; `-` when unknown. */
export function usd(value: number | null | undefined): string {
  if (value === undefined || value === null) return '-';
  return value >= 1 ? `$${value.toFixed(2)}` : `$${value.toFixed(4)}`;
}

/** Milliseconds for people. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** How long ago an ISO time was. */
export function age(iso: string | undefined, now = Date.now()): string {
  if (iso === undefined) return '-';
  return stretch(Math.max(0, (now - Date.parse(iso)) / 1000));
}

/** How long until an ISO time: `in 5m`, or `now` once it has passed. */
export function until(iso: string | undefined, now = Date.now()): string {
  if (iso === undefined) return '-';
  const seconds = (Date.parse(iso) - now) / 1000;
  return seconds <= 0 ? 'now' : `in ${stretch(seconds)}`;
}

/** Seconds for people: `12s`, `5m`, `3h`, `2d`. */
function stretch(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)}s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86_400)}d`;
}

/** The text of a message's content (a string, or OpenAI content parts). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((part) =>
        typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string'
          ? (part as { text: string }).text
          : '',
      )
      .join('');
  return '';
}

/** A call as people read it: `shell(make clean)`, `write(path='a.txt', content='...')`, cut to `max` characters. */
export function callSignature(name: string, args: unknown, max = 120): string {
  let inner: string;
  if (typeof args !== 'object' || args === null) inner = args === undefined ? '' : JSON.stringify(args);
  else {
    const entries = Object.entries(args as Record<string, unknown>);
    inner =
      entries.length === 1 && typeof entries[0]![1] === 'string'
        ? (entries[0]![1] as string)
        : entries
            .map(([key, value]) => `${key}=${typeof value === 'string' ? `'${value}'` : JSON.stringify(value)}`)
            .join(', ');
  }
  inner = inner.replace(/\s*\n\s*/g, ' ⏎ ');
  if (inner.length > max) inner = `${inner.slice(0, max - 1)}…`;
  return `${name}(${inner})`;
}

/** `3 files changed, +12/-4` (as rho ps and rho diff say it), `no changes`. */
export function changeStats(stats: { files: number; additions: number; deletions: number }): string {
  if (stats.files === 0) return 'no changes';
  return `${stats.files} ${stats.files === 1 ? 'file' : 'files'} changed, +${stats.additions}/-${stats.deletions}`;
}
