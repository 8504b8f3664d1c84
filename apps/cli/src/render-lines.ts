// The lines the event renderer (render.ts) writes, made from records as pure functions: usage,
// diffs, retries, and the small formats every line uses (times, previews, counts that may be
// missing from another writer's record).
import type { ApprovalAnsweredEvent, ApprovalRequestedEvent, HookRunEvent, SessionEvent } from '@rho/core';
import { clipWords, formatCost, formatElapsed, formatTokens, shellWord, toolSignature } from './format.js';
import type { MarkdownRenderer } from './markdown.js';
import type { styles } from './terminal.js';

/** Lines of a diff shown under an edit or write. */
const DIFF_LINES = 40;

/** The usage line after a run: this run's tokens and cost, then the session's cost. */
export function usageLine(
  run: { input: number; output: number; cost: number; unpriced: number },
  session: {
    input_tokens: number;
    output_tokens: number;
    cached_tokens: number;
    reasoning_tokens: number;
    cost_usd: number | null;
    unpriced_calls?: number;
  },
): string {
  const runCost =
    run.unpriced > 0 && run.cost === 0
      ? 'cost unknown'
      : `$${run.cost.toFixed(4)}${run.unpriced > 0 ? ` + ${run.unpriced} unpriced call${run.unpriced === 1 ? '' : 's'}` : ''}`;
  const sessionCost = formatCost({ ...session, cost_usd: session.cost_usd ?? 0 });
  return `[run: ${formatTokens(run.input)} in | ${formatTokens(run.output)} out, ${runCost} · session: ${formatTokens(session.input_tokens)} in | ${formatTokens(session.output_tokens)} out, ${sessionCost}]`;
}

export function renderBlocks(markdown: string, render: MarkdownRenderer): string {
  if (markdown === '') return '';
  return `${render(markdown).replace(/\n*$/, '')}\n\n`;
}

export function diffLines(lines: string[], style: ReturnType<typeof styles>, width: number): string[] {
  const shown = lines.slice(0, DIFF_LINES).map((line) => {
    const text = line.length > width ? `${line.slice(0, width - 1)}…` : line;
    if (line.startsWith('@@')) return style.cyan(text);
    if (line.startsWith('+')) return style.green(text);
    if (line.startsWith('-')) return style.red(text);
    return style.dim(text);
  });
  if (lines.length > DIFF_LINES) shown.push(style.dim(`… ${lines.length - DIFF_LINES} more diff lines`));
  return shown;
}

/** What a person is told when the last answer stopped at the model's output limit. */
export const TRUNCATED_NOTE =
  "Incomplete: the model's answer was cut off at its output-token limit (finish_reason: length); what it wrote is not a whole answer. Resume the session to let it continue.";

/** `rate limited (429), retrying in 4.2 s, attempt 2 of 9` */
export function retryLine(event: { reason: string; delay_ms: number; attempt: number; max_attempts: number }): string {
  const delay =
    event.delay_ms < 1000
      ? `${event.delay_ms} ms`
      : `${(event.delay_ms / 1000).toFixed(event.delay_ms < 10_000 ? 1 : 0)} s`;
  return `${event.reason}, retrying in ${delay}, attempt ${event.attempt} of ${event.max_attempts}`;
}

/** A number from a record that may come from another writer. */
export function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

export function clock(ts: unknown): string {
  if (typeof ts !== 'string') return '--:--:--';
  const time = Date.parse(ts);
  return Number.isNaN(time) ? '--:--:--' : new Date(time).toISOString().slice(11, 19);
}

export function firstLine(text: unknown): string {
  return (
    (typeof text === 'string' ? text : '')
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim() ?? ''
  );
}

/** Traces from other writers (the Python original, older versions) may lack fields: never fail on them. */
export function preview(value: unknown, length: number): string {
  const text = typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);
  return clipWords(text.replace(/\s+/g, ' ').trim(), length);
}

/**
 * `⏸ waiting for approval: bash(rm -rf build) — RISK (dangerous pattern "rm -rf"); answer with rho
 * approve ID CALL or rho deny ID CALL; at 13:04:05 UTC it is denied`: a call that waits for an
 * answer from elsewhere, and the commands that give it (`ID` when the session is not known).
 */
export function approvalRequestedLine(
  event: ApprovalRequestedEvent,
  sessionId: string | undefined,
  style: ReturnType<typeof styles>,
): string {
  const target = `${shellWord(sessionId ?? 'ID')} ${shellWord(String(event.tool_call_id))}`;
  const risk = preview(event.reason ?? 'the profile asks for approval of this tool', 200);
  const dangerous = event.dangerous === undefined ? '' : ` (dangerous pattern "${preview(event.dangerous, 60)}")`;
  const until =
    typeof event.expires_at === 'string'
      ? `; at ${clock(event.expires_at)} UTC it is ${event.on_timeout === 'approve' && event.dangerous === undefined ? 'approved' : 'denied'}`
      : '';
  return `${style.yellow('⏸ waiting for approval:')} ${toolSignature(String(event.tool_name), event.tool_args, 160)} — ${risk}${dangerous}; answer with rho approve ${target} or rho deny ${target}${until}`;
}

/** `✓ approved by alice@host (once) — bash call call_rm`, `✗ denied by timeout (once) — bash call call_rm: REASON`. */
export function approvalAnsweredLine(event: ApprovalAnsweredEvent, style: ReturnType<typeof styles>): string {
  const approved = event.decision === 'approve';
  const scope =
    event.scope === 'call' ? 'always this call' : event.scope === 'tool' ? `always ${String(event.tool_name)}` : 'once';
  const who = preview(event.by ?? event.source ?? 'someone', 80);
  const reason =
    typeof event.reason === 'string' && event.reason.trim() !== '' ? `: ${preview(event.reason, 200)}` : '';
  return `${approved ? style.green('✓ approved') : style.red('✗ denied')} by ${who} (${scope}) — ${String(event.tool_name)} call ${String(event.tool_call_id)}${reason}`;
}

/**
 * A hook's run: `hook NAME (EVENT) ok in 12ms: allow (REASON)`; one that failed or timed out in
 * yellow. `all` (replay) shows every run; otherwise (a live run) only those that failed or timed out.
 */
export function hookLine(event: HookRunEvent, style: ReturnType<typeof styles>, all: boolean): string | undefined {
  const name = `hook ${preview(event.hook, 80)} (${String(event.event)})`;
  if (event.outcome !== 'ok') {
    const reason = event.reason === undefined ? '' : `: ${preview(event.reason, 200)}`;
    return style.yellow(`${name} ${event.outcome === 'timeout' ? 'timed out' : 'failed'}${reason}`);
  }
  if (!all) return undefined;
  const took = typeof event.duration_ms === 'number' ? ` in ${formatElapsed(event.duration_ms)}` : '';
  const decided = typeof event.decision === 'string' ? `: ${event.decision}` : '';
  const reason = typeof event.reason === 'string' && event.reason !== '' ? ` (${preview(event.reason, 200)})` : '';
  return style.dim(`${name} ok${took}${decided}${reason}`);
}

/** A JSON line per event on stdout; `run_start` also names the session and its working directory. */
export function createJsonRenderer(
  write: (text: string) => void,
  run: { sessionId: string; workingDir: string },
): (event: SessionEvent) => void {
  return (event) => {
    write(
      `${JSON.stringify(event.type === 'run_start' ? { ...event, session_id: run.sessionId, working_dir: run.workingDir } : event)}\n`,
    );
  };
}
