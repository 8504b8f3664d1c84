import { createInterface } from 'node:readline';
import type { Interface } from 'node:readline';
import type { Approver, ApprovalRequest } from '@rho/core';
import { approvalCallKey } from '@rho/core/internal';
import { toolCallDiff } from './diff.js';
import { toolSignature } from './format.js';
import type { Terminal } from './terminal.js';
import { styles } from './terminal.js';

/** How a person answered an approval prompt. */
export type ApprovalAnswer = 'yes' | 'no' | 'always-call' | 'always-tool';

/** Diff lines shown in the prompt before the rest is summarised. */
const DIFF_LINES = 60;

/**
 * Reads one answer. Only an explicit yes approves: Enter, end of input and anything unknown
 * refuse. `c` approves this exact call (same tool, same arguments) for the rest of the session,
 * `a` every call of the tool.
 */
export function parseApprovalAnswer(input: string | null): ApprovalAnswer {
  if (input === null) return 'no';
  const answer = input.trim().toLowerCase();
  if (answer === 'y' || answer === 'yes') return 'yes';
  if (answer === 'c' || answer === 'call' || answer === 'command') return 'always-call';
  if (answer === 'a' || answer === 'always' || answer === 't' || answer === 'tool') return 'always-tool';
  return 'no';
}

/** What the session remembers of "always" answers. */
export interface ApprovalMemory {
  /** Tools approved for every call. */
  tools: Set<string>;
  /** Exact calls approved (see {@link callKey}). */
  calls: Set<string>;
}

/** An empty {@link ApprovalMemory}. */
export function createApprovalMemory(): ApprovalMemory {
  return { tools: new Set(), calls: new Set() };
}

/** The identity of a call for "always this exact call": the tool and its arguments, key order ignored (core's, which a session's remembered answers use too). */
export const callKey = approvalCallKey;

/** Options of {@link createTerminalApprover}. */
export interface TerminalApproverOptions {
  /**
   * Asks on an existing readline interface (the REPL's); otherwise one is opened per question.
   * `signal` aborts when the answer is no longer wanted (given elsewhere): resolve null then.
   */
  ask?: (question: string, signal?: AbortSignal) => Promise<string | null>;
  /** Remembered answers, shared across runs of a REPL. */
  memory?: ApprovalMemory;
  /** Where relative paths of edit and write resolve, for the diff. */
  workingDir?: string;
  /** Called before the prompt is drawn (clears a status line). */
  beforeAsk?: () => void;
}

/**
 * An approver that asks on the terminal. The prompt names the call, the risk (the policy's
 * reason), the diff an `edit` or `write` would make, and the answers: `y` yes, `N` no (the
 * default: Enter refuses), `c` always this exact call, `a` always this tool except calls that
 * match a dangerous pattern. On a terminal one key answers (no Enter). "Always" never widens past
 * what the person saw: a tool approved with `a` still asks for its next dangerous call, and at a
 * prompt raised by a dangerous pattern the prompt says so.
 */
export function createTerminalApprover(terminal: Terminal, options: TerminalApproverOptions = {}): Approver {
  const memory = options.memory ?? createApprovalMemory();
  const style = styles(terminal.color);
  const ask = options.ask ?? questionOnce;
  return async (request: ApprovalRequest) => {
    const key = callKey(request.toolName, request.arguments);
    // A tool approved "always" covers its calls that match no dangerous pattern; an exact call, itself.
    if (memory.calls.has(key) || (memory.tools.has(request.toolName) && request.dangerous === undefined)) return true;
    options.beforeAsk?.();
    terminal.stderr.write(
      approvalText(request, { color: terminal.color, workingDir: options.workingDir ?? process.cwd() }),
    );
    const always =
      request.dangerous === undefined
        ? `always ${request.toolName} (except dangerous patterns)`
        : `always ${request.toolName} except dangerous patterns: this call and the next "${request.dangerous}" still ask`;
    const typed = await ask(
      `Allow? ${style.bold('y')}es / ${style.bold('N')}o / ${style.bold('c')}: always this exact call / ${style.bold('a')}: ${always} (Enter = no) `,
      request.signal,
    );
    if (request.signal?.aborted === true) {
      // Answered elsewhere (rho approve, the dashboard, the fleet) or cancelled: that answer applies.
      terminal.stderr.write(style.dim('Answered elsewhere; this prompt is closed.\n'));
      return false;
    }
    const answer = parseApprovalAnswer(typed);
    if (answer === 'always-call') memory.calls.add(key);
    if (answer === 'always-tool') memory.tools.add(request.toolName);
    // `a` at a dangerous prompt approves this call once; the tool's next dangerous call asks again.
    if (answer === 'no')
      terminal.stderr.write(
        style.dim('Refused: the run stops here (the model is told the call was rejected when you continue).\n'),
      );
    return answer !== 'no';
  };
}

/** The text above the question: the call, its risk and, for edit and write, the diff. */
export function approvalText(
  request: Pick<ApprovalRequest, 'toolName' | 'arguments' | 'reason'>,
  options: { color: boolean; workingDir: string },
): string {
  const style = styles(options.color);
  const lines = [`\n${style.yellow('approval needed')} ${toolSignature(request.toolName, request.arguments, 400)}`];
  lines.push(`  ${style.bold('risk:')} ${request.reason ?? 'the profile asks for approval of this tool'}`);
  const diff = toolCallDiff(request.toolName, request.arguments, options.workingDir);
  if (diff !== undefined) {
    if (diff.lines.length === 0) lines.push(style.dim(`  (no change to ${diff.path})`));
    for (const line of diff.lines.slice(0, DIFF_LINES)) {
      const coloured = line.startsWith('@@')
        ? style.cyan(line)
        : line.startsWith('+')
          ? style.green(line)
          : line.startsWith('-')
            ? style.red(line)
            : style.dim(line);
      lines.push(`  ${coloured}`);
    }
    if (diff.lines.length > DIFF_LINES) lines.push(style.dim(`  … ${diff.lines.length - DIFF_LINES} more diff lines`));
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Asks once. On a terminal one key answers (shown, then a new line): Enter, Escape, Ctrl+C or
 * Ctrl+D refuse. Elsewhere (a pipe) a line is read.
 */
function questionOnce(question: string, signal?: AbortSignal): Promise<string | null> {
  const input = process.stdin;
  if (signal?.aborted === true) return Promise.resolve(null);
  if (input.isTTY === true && typeof input.setRawMode === 'function') return keyOnce(question, input, signal);
  return new Promise((resolve) => {
    const readline: Interface = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    let answered = false;
    const onAbort = () => {
      process.stderr.write('\n');
      readline.close();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    readline.question(question, (answer) => {
      answered = true;
      readline.close();
      resolve(answer);
    });
    readline.on('close', () => {
      signal?.removeEventListener('abort', onAbort);
      if (!answered) resolve(null);
    });
    readline.on('SIGINT', () => readline.close());
  });
}

function keyOnce(question: string, input: NodeJS.ReadStream, signal?: AbortSignal): Promise<string | null> {
  return new Promise((resolve) => {
    process.stderr.write(question);
    const wasRaw = input.isRaw;
    input.setRawMode(true);
    input.resume();
    const stop = () => {
      input.off('data', onData);
      signal?.removeEventListener('abort', onAbort);
      input.setRawMode(wasRaw);
      input.pause();
    };
    const onAbort = () => {
      stop();
      process.stderr.write('\n');
      resolve(null);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const onData = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      stop();
      // Ctrl+C, Ctrl+D, Escape and Enter refuse; any other key is the answer.
      const refused =
        text === '\u0003' || text === '\u0004' || text.startsWith('\u001b') || text === '\r' || text === '\n';
      process.stderr.write(`${refused ? '' : text.trim()}\n`);
      resolve(refused ? null : text.slice(0, 1));
    };
    input.on('data', onData);
  });
}
