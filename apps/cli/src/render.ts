import type { SessionEvent, TraceRecord } from '@rho/core';
import { contentBefore, toolCallDiff } from './diff.js';
import { clipWords, formatElapsed, formatTokens, toolSignature } from './format.js';
import type { MarkdownRenderer } from './markdown.js';
import { MarkdownBlocks } from './markdown.js';
import { OutputBatch } from './output-batch.js';
import {
  approvalAnsweredLine,
  approvalRequestedLine,
  clock,
  count,
  diffLines,
  firstLine,
  hookLine,
  preview,
  renderBlocks,
  retryLine,
  TRUNCATED_NOTE,
  usageLine,
} from './render-lines.js';
import { StatusLine } from './status-line.js';
import { styles } from './terminal.js';
import { toolResultView } from './tool-result-view.js';

/** Lines of a tool's output shown under its result line. */
const PREVIEW_LINES = 4;

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
  /** Replay: the session the records are of, for the commands that answer a waiting call. */
  sessionId?: string;
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

/**
 * The one renderer of session events, for a run in this process and for a trace read back
 * (`rho watch`, the monitor): tool calls with a preview of their output and the diff of edits,
 * blocked calls, retries, compactions, directives, per-turn usage and the end of the run.
 */
export function createEventRenderer(options: EventRendererOptions): EventRenderer {
  const style = styles(options.color);
  const live = options.mode === 'live';
  // Writes are gathered per event, or per turn of the event loop with `gatherPerTick` (see OutputBatch).
  const perTick = live && options.gatherPerTick === true;
  const batch = new OutputBatch(perTick);
  const flush = batch.flush;
  const out = batch.writer(options.out);
  const err = batch.writer(options.err ?? options.out);
  const width = Math.max(40, options.width ?? 100);
  const results = new Map<string, string>();
  const before = new Map<string, { name: string; args: unknown; content: string | undefined }>();
  const blocks = new MarkdownBlocks();
  let midLine = false;
  let time = '';
  /** A line of progress: live on `err`, replay on `out` after the time. */
  const say = (text: string) => {
    if (live) {
      status.clear();
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
  const status = new StatusLine({
    err,
    style,
    width,
    enabled: options.statusLine === true && live,
    midLine: () => midLine,
    ...(options.contextWindow === undefined ? {} : { contextWindow: options.contextWindow }),
  });

  // ---- per-turn and per-run usage ----
  let runUsage = { input: 0, output: 0, cost: 0, unpriced: 0 };
  let turn = 0;

  /** The call's result line (`✓ bash (3ms)`, `✗ bash (3ms): exit 2`) and its output, for the tool's kind. */
  const toolResult = (event: Extract<SessionEvent, { type: 'tool_end' }>) => {
    const id = event.tool_call_id;
    const name = event.tool_name;
    const content = results.get(id) ?? '';
    results.delete(id);
    const saved = before.get(id);
    before.delete(id);
    const indent = '    ';
    const diff =
      event.success && (name === 'edit' || name === 'write')
        ? toolCallDiff(
            name,
            saved?.args,
            options.workingDir ?? process.cwd(),
            saved?.content ?? (live ? undefined : name === 'write' ? '' : undefined),
          )
        : undefined;
    const view = toolResultView(
      {
        name,
        content,
        metadata: event.metadata,
        success: event.success,
        ...(diff === undefined ? {} : { diff: diffLines(diff.lines, style, width - indent.length) }),
      },
      PREVIEW_LINES,
      width - indent.length - 2,
      style,
    );
    const timing =
      typeof event.duration_ms === 'number' ? ` ${style.dim(`(${formatElapsed(event.duration_ms)})`)}` : '';
    const mark = event.success
      ? `${style.green('✓')} ${name}${live ? '' : ' ok'}`
      : `${style.red('✗')} ${name}${live ? '' : ' failed'}`;
    say(`  ${mark}${timing}${view.headline === undefined ? '' : `: ${view.headline}`}`);
    for (const line of view.lines) say(`${indent}${line}`);
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
      status.clear();
    switch (event.type) {
      case 'run_start':
        status.runStarted = Date.now();
        runUsage = { input: 0, output: 0, cost: 0, unpriced: 0 };
        turn = 0;
        status.runTokens = 0;
        if (!live) say(`${style.bold('▶ run started:')} ${preview(event.prompt, 120)}`);
        break;
      case 'text': {
        // The status line (streaming, elapsed, tokens so far) stays under the answer while it streams,
        // drawn only where the answer ended a line; cleared before each piece of it is written.
        const starting = status.phase.kind !== 'streaming';
        status.streamedChars += event.text.length;
        const text =
          options.markdown === undefined ? event.text : renderBlocks(blocks.push(event.text), options.markdown);
        if (text !== '' || starting) status.clear();
        writeAnswer(text);
        if (starting) status.set({ kind: 'streaming' });
        else if (text !== '') status.redraw();
        break;
      }
      case 'reasoning':
        status.streamedChars += event.text.length;
        if (status.phase.kind !== 'thinking' && status.phase.kind !== 'streaming') status.set({ kind: 'thinking' });
        break;
      case 'llm_start':
        status.contextTokens = count(event.context_size);
        if (live) status.set({ kind: 'model' });
        else say(style.dim(`… calling ${event.model} (context ${formatTokens(count(event.context_size))} tokens)`));
        break;
      case 'llm_end': {
        status.streamedChars = 0;
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
          status.runTokens += input + output;
          runUsage = {
            input: runUsage.input + input,
            output: runUsage.output + output,
            cost: runUsage.cost + (priced ? (event.cost_usd as number) : 0),
            unpriced: runUsage.unpriced + (priced ? 0 : 1),
          };
          if (input > 0) status.contextTokens = input;
          endAnswerLine();
          const reported = event.usage_reported === false ? ' (no usage reported)' : '';
          say(
            style.dim(
              `  turn ${turn}: +${formatTokens(input)} in, +${formatTokens(output)} out, ${priced ? `+${cost}` : cost}${reported}${typeof event.duration_ms === 'number' ? `, ${formatElapsed(event.duration_ms)}` : ''}`,
            ),
          );
          status.set({ kind: 'idle' });
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
          status.clear();
          before.set(event.tool_call_id, {
            name: event.tool_name,
            args: event.tool_args,
            content: contentBefore(event.tool_name, event.tool_args, options.workingDir ?? process.cwd()),
          });
        } else before.set(event.tool_call_id, { name: event.tool_name, args: event.tool_args, content: undefined });
        say(
          `${style.cyan('→')} ${toolSignature(event.tool_name, event.tool_args, live ? Math.max(40, width - 10) : 200)}`,
        );
        if (live) status.set({ kind: 'tool', name: event.tool_name });
        break;
      case 'tool_end':
        toolResult(event);
        if (live) status.set({ kind: 'idle' });
        break;
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
        if (live)
          status.set({ kind: 'retry', until: Date.now() + count(event.delay_ms), reason: String(event.reason) });
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
          status.stop();
          status.set({ kind: 'idle' });
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
        break;
      // A live run says on stderr itself that a call waits, and how to answer it (run-command).
      case 'approval_requested':
        if (!live) say(approvalRequestedLine(event, options.sessionId, style));
        break;
      case 'approval_answered':
        if (!live) say(approvalAnsweredLine(event, style));
        break;
      case 'hook': {
        // A hook that failed or timed out never fails the run, and never passes unseen.
        const line = hookLine(event, style, !live);
        if (line !== undefined) say(line);
        break;
      }
      default: {
        const unknown: never = event;
        void unknown;
      }
    }
  };
  const render = ((event: SessionEvent | TraceRecord) => {
    batch.rendering += 1;
    try {
      renderEvent(event);
    } finally {
      batch.rendering -= 1;
      if (!perTick) flush();
    }
  }) as EventRenderer;
  render.flush = flush;
  render.pauseStatus = () => {
    status.stop();
    endAnswerLine();
    flush();
  };
  render.finish = () => {
    status.stop();
    endAnswerLine();
    flush();
  };
  return render;
}

export { createJsonRenderer } from './render-lines.js';
