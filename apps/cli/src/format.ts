import type { UsageTotals } from '@rho/core';

/** `1234` → `1.2K`, `3400000` → `3.4M`. */
export function formatTokens(count: number): string {
  if (count >= 1_000_000) return `${(count / 1_000_000).toFixed(1)}M`;
  if (count >= 1_000) return `${(count / 1_000).toFixed(1)}K`;
  return String(count);
}

/** `250ms`, `12s`, `3m04s`, `1h05m`. */
export function formatElapsed(milliseconds: number): string {
  if (milliseconds < 1000) return `${Math.round(milliseconds)}ms`;
  const seconds = Math.floor(milliseconds / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/** `$0.0012`; `cost unknown` when nothing was priced; `$0.0012 + unpriced` when some calls were not. */
export function formatCost(usage: UsageTotals): string {
  if (usage.cost_usd === 0 && (usage.unpriced_calls ?? 0) > 0) return 'cost unknown';
  const known = `$${usage.cost_usd.toFixed(4)}`;
  return (usage.unpriced_calls ?? 0) > 0 ? `${known} + unpriced` : known;
}

/** The usage line printed after a run. */
export function formatUsage(usage: UsageTotals): string {
  const cache =
    usage.cached_tokens > 0 && usage.input_tokens > 0
      ? `, cache ${Math.round((usage.cached_tokens / usage.input_tokens) * 100)}%`
      : '';
  return `[session: ${formatTokens(usage.input_tokens)} in | ${formatTokens(usage.output_tokens)} out${cache}, ${formatCost(usage)}]`;
}

/** A short one-line form of tool arguments: `bash(ls -la)`, `read(path='a.txt', limit=5)`. */
export function toolSignature(name: string, args: unknown, maxLength = 120): string {
  let inner: string;
  if (typeof args !== 'object' || args === null) inner = args === undefined ? '' : JSON.stringify(args);
  else if (name === 'bash' && typeof (args as { command?: unknown }).command === 'string')
    inner = (args as { command: string }).command;
  else {
    inner = Object.entries(args as Record<string, unknown>)
      .map(([key, value]) => `${key}=${typeof value === 'string' ? `'${value}'` : JSON.stringify(value)}`)
      .join(', ');
  }
  inner = clipWords(inner.replace(/\s*\n\s*/g, ' ⏎ '), maxLength);
  return `${name}(${inner})`;
}

/** How long ago an ISO timestamp was: `12s`, `5m`, `3h`, `2d`. */
export function formatAge(iso: string, now: number = Date.now()): string {
  const seconds = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (!Number.isFinite(seconds)) return '-';
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

/**
 * `text` shortened to at most `max` characters at a word boundary, with `…` when cut: a cut never
 * falls inside a word (a single word longer than `max` is the only exception).
 */
export function clipWords(text: string, max: number): string {
  if (text.length <= max) return text;
  const room = text.slice(0, Math.max(1, max - 1));
  // The room ends where a word ends: keep it whole.
  if (/\s/.test(text[room.length] ?? ' ')) return `${room.trimEnd()}…`;
  const boundary = room.search(/\s+\S*$/);
  const kept = boundary > max / 3 ? room.slice(0, boundary) : room;
  return `${kept.trimEnd()}…`;
}

/** The first `lines` non-empty lines of a tool's output, each clipped to `width`, and how many lines were left out. */
export function outputPreview(content: string, lines: number, width: number): { lines: string[]; more: number } {
  const all = content.replace(/\s+$/, '').split('\n');
  while (all.length > 0 && all[0]!.trim() === '') all.shift();
  if (all.length === 0) return { lines: [], more: 0 };
  return {
    lines: all.slice(0, lines).map((line) => clipWords(line.replace(/\t/g, '  ').replace(/\r/g, ''), width)),
    more: Math.max(0, all.length - lines),
  };
}

/** A word as a shell reads it: as is when it holds nothing the shell would change, else single-quoted. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9._:@%+=,/-]+$/.test(word) && !word.startsWith('-') ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The commands that answer a waiting call: `rho approve ID CALL`, `rho deny ID CALL --reason "..."`. */
export function answerCommands(sessionId: string, toolCallId: string): { approve: string; deny: string } {
  const target = `${shellWord(sessionId)} ${shellWord(toolCallId)}`;
  return { approve: `rho approve ${target}`, deny: `rho deny ${target} --reason "..."` };
}
