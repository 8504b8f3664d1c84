import type { SessionEvent, TraceRecord } from '@rho/core';
import { contentBefore, toolCallDiff } from './diff.js';
import { clipWords, formatCost, formatElapsed, formatTokens, outputPreview, toolSignature } from './format.js';
import type { MarkdownRenderer } from './markdown.js';
import { MarkdownBlocks } from './markdown.js';
import { styles } from './terminal.js';

const SPINNER_FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** Lines of a tool's output shown under its result line. */
const PREVIEW_LINES = 4;
/** Lines of a diff shown under an edit or write. */
const DIFF_LINES = 40;

/** Options of {@link createEventRenderer}. */
export interface EventRendererOptions {
  /**
   * `live`: a run in this process: the answer streams to `out`, everything else goes to `err`,
   * with a status line when `statusLine` is set. `replay`: records of a trace (`rho watch`, the
   * monitor): one line per event on `out`, each with the time it happened.
   */
  mode: 'live' | 'replay';
  /** ANSI styles. */
  color: boolean;
  /** The answer (live) or every line (replay). */
  out: (text: string) => void;
  /** Progress (live); defaults to `out`. */
  err?: (text: string) => void;
  /** Live: redraw a status line (phase, elapsed, tokens, context) on `err`, which is a terminal. */
  statusLine?: boolean;
  /** Live: renders the answer's Markdown (stdout is a terminal); without it the answer is printed as written. */
  markdown?: MarkdownRenderer;
  /** Where relative tool paths resolve (diffs of edit and write). */
  workingDir?: string;
  /** The model's context window in tokens, when known (for the context percentage). */
  contextWindow?: () => number | undefined;
  /** Width lines are clipped to. */
  width?: number;
  /**
   * Live: gather output over a turn of the event loop and write it then (`flush()` before writing
   * to the same streams by other means). Otherwise what one event writes goes out as it is
   * rendered, so several renderers sharing a stream (`rho watch` with child sessions) stay in order.
   */
  gatherPerTick?: boolean;
}

/** Renders session events (live) or trace records (replay) for a person. */
export interface EventRenderer {
  (event: SessionEvent | TraceRecord): void;
  /** Clears the status line until the next event (before a question is asked on the terminal). */
  pauseStatus(): void;
  /** Stops the status line and writes what is still pending. */
  finish(): void;
  /** Writes what is gathered now (before writing to the same terminal by other means). */
  flush(): void;
}

/** Output gathered for one write is written at once past this many characters. */
const OUTPUT_FLUSH_BYTES = 64 * 1024;

/** The phase the status line names. */
type Phase =
  | { kind: 'model' }
  | { kind: 'streaming' }
  | { kind: 'thinking' }
  | { kind: 'tool'; name: string }
  | { kind: 'retry'; until: number; reason: string }
  | { kind: 'idle' };

/**
 * The one renderer of session events, for a run in this process and for a trace read back
 * (`rho watch`, the monitor): tool calls with a preview of their output and the diff of edits,
 * blocked calls, retries, compactions, directives, per-turn usage and the end of the run.
 */
export function createEventRenderer(options: EventRendererOptions): EventRenderer {
  const style = styles(options.color);
  const live = options.mode === 'live';
  // Output goes out in one write per stream, in order, for each event, or with `gatherPerTick`
  // once per turn of the event loop (setImmediate): each write to a pipe or terminal is a system
  // call, and a tool turn's three or four events (the turn's usage line, the call, its result and
  // preview) happen in one turn of the loop. Anything that writes to the terminal by other means
  // (the approval prompt, run-command's own notices) calls flush() or pauseStatus() first, and
  // finish() flushes, so nothing is reordered; more than OUTPUT_FLUSH_BYTES gathered is written
  // at once, so memory stays bounded.
  const perTick = live && options.gatherPerTick === true;
  let pending: { to: (text: string) => void; text: string }[] = [];
  let pendingBytes = 0;
  let flushScheduled = false;
  /** Inside render(): writes are gathered; outside (the status line's timer), per tick or at once. */
  let rendering = 0;
  const flush = (): void => {
    flushScheduled = false;
    if (pending.length === 0) return;
    const writes = pending;
    pending = [];
    pendingBytes = 0;
    for (const { to, text } of writes) to(text);
  };
  const batched =
    (to: (text: string) => void) =>
    (text: string): void => {
      const last = pending.at(-1);
      if (last?.to === to) last.text += text;
      else pending.push({ to, text });
      pendingBytes += text.length;
      if (pendingBytes >= OUTPUT_FLUSH_BYTES || rendering === 0) flush();
      else if (perTick && !flushScheduled) {
        flushScheduled = true;
        setImmediate(flush);
      }
    };
  const out = batched(options.out);
  const err = batched(options.err ?? options.out);
  const width = Math.max(40, options.width ?? 100);
  const results = new Map<string, string>();
  const before = new Map<string, { name: string; args: unknown; content: string | undefined }>();
  const blocks = new MarkdownBlocks();
  let midLine = false;
  let time = '';
  /** A line of progress: live on `err`, replay on `out` after the time. */
  const say = (text: string) => {
    if (live) {
      clearStatus();
      endAnswerLine();
      err(`${text}\n`);
    } else out(`${time}${text}\n`);
  };

  // ---- the answer (live) ----
  const writeAnswer = (text: string) => {
    if (text === '') return;
    out(text);
    midLine = !text.endsWith('\n');
  };
  const flushAnswer = () => {
    if (options.markdown === undefined) return;
    const rest = blocks.flush();
    if (rest.trim() !== '') writeAnswer(options.markdown(rest));
  };
  const endAnswerLine = () => {
    flushAnswer();
    if (midLine) {
      out('\n');
      midLine = false;
    }
  };

  // ---- the status line (live, on a terminal) ----
  let runStarted = Date.now();
  let phase: Phase = { kind: 'idle' };
  let phaseStarted = Date.now();
  let contextTokens: number | undefined;
  let runTokens = 0;
  let streamedChars = 0;
  let timer: NodeJS.Timeout | undefined;
  let frame = 0;
  let drawn = false;
  const clearStatus = () => {
    if (drawn) err('\r\u001b[K');
    drawn = false;
  };
  const statusText = (): string => {
    const elapsed = formatElapsed(Date.now() - runStarted).replace(/^\d+ms$/, '0s');
    const phaseText = (() => {
      switch (phase.kind) {
        case 'model':
          return `waiting for the model ${formatElapsed(Date.now() - phaseStarted).replace(/^\d+ms$/, '0s')}`;
        case 'streaming':
          return 'streaming';
        case 'thinking':
          return 'thinking';
        case 'tool':
          return `running ${phase.name} ${formatElapsed(Date.now() - phaseStarted).replace(/^\d+ms$/, '0s')}`;
        case 'retry':
          // Once the backoff is over, the retried request is waiting for the model again.
          if (Date.now() >= phase.until)
            return `waiting for the model (retried) ${formatElapsed(Date.now() - phase.until).replace(/^\d+ms$/, '0s')}`;
          return `${clipWords(phase.reason, 60)}: retrying in ${Math.ceil((phase.until - Date.now()) / 1000)} s`;
        case 'idle':
          return 'working';
      }
    })();
    const tokens = runTokens + Math.round(streamedChars / 4);
    const window = options.contextWindow?.();
    const context =
      contextTokens === undefined
        ? ''
        : window === undefined || window <= 0
          ? ` · context ${formatTokens(contextTokens)}`
          : ` · context ${Math.min(999, Math.round((contextTokens / window) * 100))}%`;
    return clipWords(
      `${phaseText} · ${elapsed} in all · ${formatTokens(tokens)} tokens${context} · Ctrl+C cancels`,
      width - 4,
    );
  };
  const draw = () => {
    frame = (frame + 1) % SPINNER_FRAMES.length;
    err(`\r\u001b[K${style.cyan(SPINNER_FRAMES[frame]!)} ${style.dim(statusText())}`);
    drawn = true;
  };
  const setPhase = (next: Phase) => {
    if (next.kind !== phase.kind || (next.kind === 'tool' && phase.kind === 'tool' && next.name !== phase.name))
      phaseStarted = Date.now();
    phase = next;
    if (options.statusLine !== true || !live) return;
    // While the answer streams on the same terminal, a status line under it would interleave.
    if (next.kind === 'streaming' || next.kind === 'idle') {
      stopTimer();
      return;
    }
    if (midLine) return;
    if (timer === undefined) {
      timer = setInterval(draw, 100);
      timer.unref();
    }
    draw();
  };
  const stopTimer = () => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
    clearStatus();
  };

  // ---- per-turn and per-run usage ----
  let runUsage = { input: 0, output: 0, cost: 0, unpriced: 0 };
  let turn = 0;

  const toolResultLines = (name: string, id: string, args: unknown, success: boolean) => {
    const content = results.get(id) ?? '';
    results.delete(id);
    const saved = before.get(id);
    before.delete(id);
    const indent = '    ';
    if (success && (name === 'edit' || name === 'write')) {
      const diff = toolCallDiff(
        name,
        saved?.args ?? args,
        options.workingDir ?? process.cwd(),
        saved?.content ?? (live ? undefined : name === 'write' ? '' : undefined),
      );
      if (diff !== undefined && diff.lines.length > 0) {
        for (const line of diffLines(diff.lines, style, width - indent.length)) say(`${indent}${line}`);
        return;
      }
    }
    const preview = outputPreview(content, PREVIEW_LINES, width - indent.length - 2);
    // A failure's first line is already on the result line.
    const lines = success ? preview.lines : preview.lines.slice(1);
    for (const line of lines) say(style.dim(`${indent}│ ${line}`));
    if (preview.more > 0) say(style.dim(`${indent}… ${preview.more} more line${preview.more === 1 ? '' : 's'}`));
  };

  const renderEvent = (event: SessionEvent | TraceRecord): void => {
    time = live ? '' : `${style.dim(clock(event.ts))} `;
    if (
      live &&
      event.type !== 'text' &&
      event.type !== 'reasoning' &&
      event.type !== 'llm_start' &&
      event.type !== 'retry' &&
      event.type !== 'tool_start' &&
      event.type !== 'usage'
    )
      clearStatus();
    switch (event.type) {
      case 'run_start':
        runStarted = Date.now();
        runUsage = { input: 0, output: 0, cost: 0, unpriced: 0 };
        turn = 0;
        runTokens = 0;
        if (!live) say(`${style.bold('▶ run started:')} ${preview(event.prompt, 120)}`);
        break;
      case 'text':
        if (phase.kind !== 'streaming') {
          clearStatus();
          setPhase({ kind: 'streaming' });
        }
        streamedChars += event.text.length;
        if (options.markdown === undefined) writeAnswer(event.text);
        else writeAnswer(renderBlocks(blocks.push(event.text), options.markdown));
        break;
      case 'reasoning':
        streamedChars += event.text.length;
        if (phase.kind !== 'thinking' && phase.kind !== 'streaming') setPhase({ kind: 'thinking' });
        break;
      case 'llm_start':
        contextTokens = count(event.context_size);
        if (live) setPhase({ kind: 'model' });
        else say(style.dim(`… calling ${event.model} (context ${formatTokens(count(event.context_size))} tokens)`));
        break;
      case 'llm_end': {
        streamedChars = 0;
        const input = count(event.input_tokens);
        const output = count(event.output_tokens);
        const priced = typeof event.cost_usd === 'number';
        const cost = priced ? `$${(event.cost_usd as number).toFixed(4)}` : 'cost unknown';
        if (live) {
          if (event.purpose === 'child_session') {
            runUsage = {
              input: runUsage.input + input,
              output: runUsage.output + output,
              cost: runUsage.cost + (priced ? (event.cost_usd as number) : 0),
              unpriced: runUsage.unpriced + count(event.unpriced_calls),
            };
            break;
          }
          turn += 1;
          runTokens += input + output;
          runUsage = {
            input: runUsage.input + input,
            output: runUsage.output + output,
            cost: runUsage.cost + (priced ? (event.cost_usd as number) : 0),
            unpriced: runUsage.unpriced + (priced ? 0 : 1),
          };
          if (input > 0) contextTokens = input;
          endAnswerLine();
          const reported = event.usage_reported === false ? ' (no usage reported)' : '';
          say(
            style.dim(
              `  turn ${turn}: +${formatTokens(input)} in, +${formatTokens(output)} out, ${priced ? `+${cost}` : cost}${reported}${typeof event.duration_ms === 'number' ? `, ${formatElapsed(event.duration_ms)}` : ''}`,
            ),
          );
          setPhase({ kind: 'idle' });
        } else {
          const duration = typeof event.duration_ms === 'number' ? `, ${formatElapsed(event.duration_ms)}` : '';
          say(
            `${style.cyan('◆')} ${event.model}: ${formatTokens(input)} in, ${formatTokens(output)} out, ${cost}${duration}`,
          );
        }
        break;
      }
      case 'message':
        if (event.role === 'tool')
          results.set(
            event.tool_call_id,
            typeof event.content === 'string' ? event.content : JSON.stringify(event.content ?? ''),
          );
        else if (
          !live &&
          event.role === 'assistant' &&
          typeof event.content === 'string' &&
          event.content.trim() !== ''
        )
          say(`${style.bold('assistant:')} ${preview(event.content, 200)}`);
        break;
      case 'tool_start':
        if (live) {
          clearStatus();
          before.set(event.tool_call_id, {
            name: event.tool_name,
            args: event.tool_args,
            content: contentBefore(event.tool_name, event.tool_args, options.workingDir ?? process.cwd()),
          });
        } else before.set(event.tool_call_id, { name: event.tool_name, args: event.tool_args, content: undefined });
        say(
          `${style.cyan('→')} ${toolSignature(event.tool_name, event.tool_args, live ? Math.max(40, width - 10) : 200)}`,
        );
        if (live) setPhase({ kind: 'tool', name: event.tool_name });
        break;
      case 'tool_end': {
        const content = results.get(event.tool_call_id) ?? '';
        const timing = typeof event.duration_ms === 'number' ? style.dim(`(${formatElapsed(event.duration_ms)})`) : '';
        const args = before.get(event.tool_call_id)?.args;
        if (event.success)
          say(`  ${style.green('✓')} ${event.tool_name}${live ? '' : ' ok'}${timing === '' ? '' : ` ${timing}`}`);
        else
          say(
            `  ${style.red('✗')} ${event.tool_name}${live ? '' : ' failed'}${timing === '' ? '' : ` ${timing}`}: ${clipWords(firstLine(content), Math.max(40, width - event.tool_name.length - 20))}`,
          );
        toolResultLines(event.tool_name, event.tool_call_id, args, event.success);
        if (live) setPhase({ kind: 'idle' });
        break;
      }
      case 'tool_blocked':
        say(
          `  ${style.yellow('⊘')} ${toolSignature(event.tool_name, event.tool_args, 120)} blocked: ${clipWords(firstLine(event.reason), 200)}`,
        );
        break;
      case 'directive':
        say(
          `${style.yellow(live ? '⚑ operator directive:' : '⚑ directive:')} ${preview(event.text, live ? 2000 : 200)}`,
        );
        break;
      case 'compact':
        say(
          style.dim(
            `compacted (${event.trigger}): ${formatTokens(count(event.tokens_before))} -> ${formatTokens(count(event.tokens_after))} tokens`,
          ),
        );
        break;
      case 'error':
        say(`${style.red(live ? 'Error:' : 'error:')} ${live ? String(event.content) : preview(event.content, 300)}`);
        break;
      case 'retry':
        say(
          style.yellow(
            retryLine({
              reason: preview(event.reason, 200),
              delay_ms: count(event.delay_ms),
              attempt: count(event.attempt),
              max_attempts: count(event.max_attempts),
            }),
          ),
        );
        if (live) setPhase({ kind: 'retry', until: Date.now() + count(event.delay_ms), reason: String(event.reason) });
        break;
      case 'refusal':
        say(
          `${style.red(live ? 'Refused:' : 'refused:')} ${live ? String(event.content) : preview(event.content, 300)}`,
        );
        break;
      case 'status':
        if (!live) say(style.yellow(`status: ${event.status}`));
        else if (event.status === 'paused') say(style.yellow('Paused by an operator; waiting for resume...'));
        break;
      case 'run_end': {
        if (live) {
          stopTimer();
          setPhase({ kind: 'idle' });
          endAnswerLine();
          if (event.status === 'cancelled') say(style.yellow('Cancelled'));
          if (event.status === 'limit') say(style.yellow(`Stopped: reached ${event.limit ?? 'a limit'}`));
          if (event.status === 'truncated') say(style.red(TRUNCATED_NOTE));
          if (event.usage !== undefined) say(style.dim(usageLine(runUsage, event.usage)));
        } else {
          const usage =
            typeof event.usage !== 'object' || event.usage === null
              ? ''
              : style.dim(
                  ` [${formatTokens(count(event.usage.input_tokens))} in, ${formatTokens(count(event.usage.output_tokens))} out, ${event.usage.cost_usd === null ? 'cost unknown' : `$${count(event.usage.cost_usd).toFixed(4)}`}]`,
                );
          say(
            `${style.bold('■ run ended:')} ${event.status}${event.limit === undefined ? '' : ` (${event.limit})`}${usage}`,
          );
        }
        break;
      }
      case 'usage':
      case 'approval_requested':
      case 'approval_answered':
        break;
      case 'hook':
        // A hook that failed or timed out never fails the run, and never passes unseen.
        if (event.outcome !== 'ok')
          say(
            style.yellow(
              `hook ${preview(event.hook, 80)} (${event.event}) ${event.outcome === 'timeout' ? 'timed out' : 'failed'}${event.reason === undefined ? '' : `: ${preview(event.reason, 200)}`}`,
            ),
          );
        break;
      default: {
        const unknown: never = event;
        void unknown;
      }
    }
  };
  const render = ((event: SessionEvent | TraceRecord) => {
    rendering += 1;
    try {
      renderEvent(event);
    } finally {
      rendering -= 1;
      if (!perTick) flush();
    }
  }) as EventRenderer;
  render.flush = flush;
  render.pauseStatus = () => {
    stopTimer();
    endAnswerLine();
    flush();
  };
  render.finish = () => {
    stopTimer();
    endAnswerLine();
    flush();
  };
  return render;
}

/** The usage line after a run: this run's tokens and cost, then the session's cost. */
function usageLine(
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

function renderBlocks(markdown: string, render: MarkdownRenderer): string {
  if (markdown === '') return '';
  return `${render(markdown).replace(/\n*$/, '')}\n\n`;
}

function diffLines(lines: string[], style: ReturnType<typeof styles>, width: number): string[] {
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

/** A number from a record that may come from another writer. */
function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function clock(ts: unknown): string {
  if (typeof ts !== 'string') return '--:--:--';
  const time = Date.parse(ts);
  return Number.isNaN(time) ? '--:--:--' : new Date(time).toISOString().slice(11, 19);
}

function firstLine(text: unknown): string {
  return (
    (typeof text === 'string' ? text : '')
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim() ?? ''
  );
}

/** Traces from other writers (the Python original, older versions) may lack fields: never fail on them. */
function preview(value: unknown, length: number): string {
  const text = typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);
  return clipWords(text.replace(/\s+/g, ' ').trim(), length);
}
