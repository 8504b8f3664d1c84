import type { TranscriptHeader } from './transcript.js';

/** Lines of a tool output or argument text a readable export keeps; the rest is cut with a note. */
export const MAX_LINES = 200;
/** Characters kept of one such text (a few very long lines are cut too). */
export const MAX_CHARS = 20_000;
/** Characters of a tool call's arguments shown in its one-line summary. */
export const SUMMARY_CHARS = 80;

/** A text cut to {@link MAX_LINES} lines and {@link MAX_CHARS} characters, and what was cut, if anything. */
export function bounded(value: string): { text: string; cut?: string } {
  const lines = value.split('\n');
  let kept = lines.length > MAX_LINES ? lines.slice(0, MAX_LINES).join('\n') : value;
  if (kept.length > MAX_CHARS) kept = kept.slice(0, MAX_CHARS);
  if (kept.length === value.length) return { text: value };
  const keptLines = kept.split('\n').length;
  // A text ending in a newline has no line after it.
  const total = value.endsWith('\n') ? lines.length - 1 : lines.length;
  return {
    text: kept,
    cut: `Cut: the first ${keptLines} of ${total} lines (${kept.length} of ${value.length} characters) are shown; the whole text is in the session's trace.jsonl.`,
  };
}

/** A fence of backticks longer than any run of backticks in `content` (at least three). */
export function fenceFor(content: string): string {
  let longest = 0;
  for (const match of content.matchAll(/`+/g)) longest = Math.max(longest, match[0].length);
  return '`'.repeat(Math.max(3, longest + 1));
}

/** Arguments as readable text: pretty JSON, or the raw text of arguments that were not JSON. */
export function argsText(args: unknown): string {
  if (typeof args === 'string') return args;
  if (args === undefined) return '';
  return JSON.stringify(args, null, 2) ?? String(args);
}

/**
 * A short one-line form of a tool call's arguments for its summary: the value itself when there is
 * one string argument (a command, a path), else compact JSON; cut to {@link SUMMARY_CHARS}.
 */
export function argsShort(args: unknown): string {
  let line: string;
  if (typeof args === 'object' && args !== null && !Array.isArray(args)) {
    const values = Object.values(args as Record<string, unknown>);
    line = values.length === 1 && typeof values[0] === 'string' ? values[0] : JSON.stringify(args);
  } else line = typeof args === 'string' ? args : (JSON.stringify(args) ?? '');
  line = line.replace(/\s+/g, ' ').trim();
  return line.length > SUMMARY_CHARS ? `${line.slice(0, SUMMARY_CHARS - 1)}…` : line;
}

/** A cost in dollars as the header shows it: unknown when no call had a price. */
export function costText(cost: number | null): string {
  if (cost === null) return 'unknown (no call had a known price)';
  return `$${cost < 0.01 && cost > 0 ? cost.toFixed(6) : cost.toFixed(4)}`;
}

/** What a tool call's status says in its summary. */
export function statusText(status: string, reason: string | undefined): string {
  if (status === 'blocked') return reason === undefined ? 'blocked' : `blocked: ${reason}`;
  if (status === 'interrupted') return 'no result (the run stopped before the call ended)';
  return status;
}

/** The header's rows (name, value), those the session has a value for. */
export function headerRows(header: TranscriptHeader): [string, string][] {
  const rows: [string, string | undefined][] = [
    ['Session', header.sessionId],
    ['Model', header.model],
    ['Profile', header.profile],
    ['Working directory', header.workingDir],
    ['Started', header.startedAt],
    ['Status', header.status],
    [
      'Tokens',
      `${header.inputTokens} in (${header.cachedTokens} cached), ${header.outputTokens} out (${header.reasoningTokens} reasoning), ${header.modelCalls} model calls`,
    ],
    ['Cost', costText(header.costUsd)],
  ];
  return rows.filter((row): row is [string, string] => row[1] !== undefined);
}
