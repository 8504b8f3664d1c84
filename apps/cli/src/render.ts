import type { SessionEvent } from '@rho/core';
import { formatElapsed, formatUsage, toolSignature } from './format.js';
import type { Terminal } from './terminal.js';
import { styles } from './terminal.js';

const SPINNER_FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * Renders session events for a person: the answer on stdout, progress on stderr. With
 * `spinner` (a terminal), a progress indicator shows while the model is thinking.
 */
export function createHumanRenderer(terminal: Terminal, options: { spinner?: boolean } = {}): (event: SessionEvent) => void {
  const style = styles(terminal.color);
  let midLine = false;
  const results = new Map<string, string>();
  let spinnerTimer: NodeJS.Timeout | undefined;
  const stopSpinner = () => {
    if (spinnerTimer === undefined) return;
    clearInterval(spinnerTimer);
    spinnerTimer = undefined;
    terminal.stderr.write('\r\u001b[K');
  };
  const startSpinner = () => {
    if (options.spinner !== true || spinnerTimer !== undefined || midLine) return;
    const started = Date.now();
    let frame = 0;
    const draw = () => {
      frame = (frame + 1) % SPINNER_FRAMES.length;
      terminal.stderr.write(`\r\u001b[K${style.cyan(SPINNER_FRAMES[frame]!)} ${style.dim(`working (${formatElapsed(Date.now() - started)} • Ctrl+C: cancel)`)}`);
    };
    draw();
    spinnerTimer = setInterval(draw, 100);
    spinnerTimer.unref();
  };
  const endLine = () => {
    if (midLine) {
      terminal.stdout.write('\n');
      midLine = false;
    }
  };
  return (event) => {
    if (event.type !== 'llm_start') stopSpinner();
    switch (event.type) {
      case 'text':
        terminal.stdout.write(event.text);
        midLine = !event.text.endsWith('\n');
        break;
      case 'tool_start':
        endLine();
        terminal.stderr.write(`${style.cyan('→')} ${toolSignature(event.tool_name, event.tool_args)}\n`);
        break;
      case 'message':
        if (event.role === 'tool') results.set(event.tool_call_id, event.content);
        break;
      case 'tool_end': {
        const content = results.get(event.tool_call_id) ?? '';
        results.delete(event.tool_call_id);
        const firstLine = content.split('\n').find((line) => line.trim() !== '') ?? '';
        const timing = style.dim(`(${formatElapsed(event.duration_ms)})`);
        if (event.success) terminal.stderr.write(`  ${style.green('✓')} ${event.tool_name} ${timing}\n`);
        else terminal.stderr.write(`  ${style.red('✗')} ${event.tool_name} ${timing}: ${firstLine.slice(0, 200)}\n`);
        break;
      }
      case 'tool_blocked':
        endLine();
        terminal.stderr.write(`  ${style.yellow('⊘')} ${toolSignature(event.tool_name, event.tool_args)} blocked: ${event.reason.split('\n')[0]}\n`);
        break;
      case 'directive':
        endLine();
        terminal.stderr.write(`${style.yellow('⚑')} operator directive: ${event.text}\n`);
        break;
      case 'compact':
        endLine();
        terminal.stderr.write(style.dim(`Compacted: ${event.tokens_before} -> ${event.tokens_after} tokens\n`));
        break;
      case 'error':
        endLine();
        terminal.stderr.write(`${style.red('Error:')} ${event.content}\n`);
        break;
      case 'retry':
        endLine();
        terminal.stderr.write(style.yellow(`${retryLine(event)}\n`));
        break;
      case 'refusal':
        endLine();
        terminal.stderr.write(`${style.red('Refused:')} ${event.content}\n`);
        break;
      case 'status':
        if (event.status === 'paused') {
          endLine();
          terminal.stderr.write(style.yellow('Paused by an operator; waiting for resume...\n'));
        }
        break;
      case 'run_end':
        endLine();
        if (event.status === 'cancelled') terminal.stderr.write(style.yellow('Cancelled\n'));
        if (event.status === 'limit') terminal.stderr.write(style.yellow(`Stopped: reached ${event.limit ?? 'a limit'}\n`));
        if (event.status === 'truncated') terminal.stderr.write(style.red(`${TRUNCATED_NOTE}\n`));
        if (event.usage !== undefined) terminal.stderr.write(style.dim(`${formatUsage({ ...event.usage, cost_usd: event.usage.cost_usd ?? 0 })}\n`));
        break;
      case 'llm_start':
        startSpinner();
        break;
      case 'run_start':
      case 'llm_end':
      case 'usage':
      case 'reasoning':
        break;
      default: {
        const unknown: never = event;
        void unknown;
      }
    }
  };
}

/** What a person is told when the last answer stopped at the model's output limit. */
export const TRUNCATED_NOTE =
  "Incomplete: the model's answer was cut off at its output-token limit (finish_reason: length); what it wrote is not a whole answer. Resume the session to let it continue.";

/** `rate limited (429), retrying in 4.2 s, attempt 2 of 9` */
export function retryLine(event: { reason: string; delay_ms: number; attempt: number; max_attempts: number }): string {
  const delay = event.delay_ms < 1000 ? `${event.delay_ms} ms` : `${(event.delay_ms / 1000).toFixed(event.delay_ms < 10_000 ? 1 : 0)} s`;
  return `${event.reason}, retrying in ${delay}, attempt ${event.attempt} of ${event.max_attempts}`;
}

/** Renders every event as one JSON line on stdout. */
export function createJsonRenderer(terminal: Terminal): (event: SessionEvent) => void {
  return (event) => {
    terminal.stdout.write(`${JSON.stringify(event)}\n`);
  };
}
