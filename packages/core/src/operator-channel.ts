import { closeSync, existsSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { AnswerOutcome, ApprovalAnswer } from './approvals.js';
import { claimApprovalAnswer } from './approvals.js';
import { CONTROL_FILES } from './control-channel.js';
import { ConfigError, SessionWriteError } from './errors.js';

/** What a control request did: `requested` when it changed something, `unchanged` when it was already so. */
export type ControlOutcome = 'requested' | 'unchanged';

/**
 * The operators' side of a session's control channel: what `rho cancel`, `pause`, `resume` and
 * `directive` (and any embedding app) send to a session, wherever its agent runs. The agent's
 * side is {@link ControlChannel}, whose contract both sides keep; the file implementation is
 * {@link FileOperatorChannel}, and an implementation for fleets (a database) follows the same
 * contract:
 * - {@link requestCancel} and {@link requestPause} make a request that stays until the agent
 *   clears the cancel after its run stopped, or an operator resumes; asking again is
 *   `unchanged`. Several operators may ask at once; exactly one sees `requested`.
 * - {@link requestResume} withdraws a pause; `unchanged` when there was none.
 * - {@link sendDirective} appends one directive to the session's queue atomically (never
 *   interleaved with or torn by another sender's), to be delivered exactly once, as a user
 *   message starting `[Operator directive] `, before the agent's next model call.
 *
 * Callers decide whom to ask: a cancel or pause left in a finished session would stop or hold its
 * next resume, so the CLI only sends them to live sessions.
 */
export interface OperatorChannel {
  /** Asks the session to stop (its run ends `cancelled`). */
  requestCancel(): Promise<ControlOutcome>;
  /** Asks the session to hold before its next model call or tool call. */
  requestPause(): Promise<ControlOutcome>;
  /** Withdraws a pause request, so a held session goes on. */
  requestResume(): Promise<ControlOutcome>;
  /**
   * Queues an instruction for the agent. Throws a {@link ConfigError} for an empty text, and an
   * error naming the cause when the queue cannot be written (the directive was then not sent).
   */
  sendDirective(text: string): Promise<void>;
  /**
   * Answers a tool call that waits for approval, exactly once: the first answer recorded for a
   * call wins, and a later one gets `already_answered` with the winner. Whether the call still
   * waits is the caller's to check first (from the trace: `rho approve` does); an answer to a call
   * that no longer waits is recorded and never applied. Throws a {@link ConfigError} for an answer
   * of the wrong shape. A channel without it cannot carry approvals.
   */
  answerApproval?(toolCallId: string, answer: ApprovalAnswer): Promise<AnswerOutcome>;
}

/**
 * The file control channel of a session directory, operators' side: creates and removes the
 * `cancel` and `pause` sentinels (exclusive create, so concurrent requests are counted once) and
 * appends to `directives.jsonl` one whole line `{"text": ...}` per `write(2)` on a file opened
 * with O_APPEND, so concurrent senders never interleave or tear lines. The agent's side is
 * {@link FileControlChannel}. A directory that does not exist fails with ENOENT.
 */
export class FileOperatorChannel implements OperatorChannel {
  constructor(readonly directory: string) {}

  async requestCancel(): Promise<ControlOutcome> {
    return createSentinel(join(this.directory, CONTROL_FILES.cancel));
  }

  async requestPause(): Promise<ControlOutcome> {
    return createSentinel(join(this.directory, CONTROL_FILES.pause));
  }

  async requestResume(): Promise<ControlOutcome> {
    const path = join(this.directory, CONTROL_FILES.pause);
    if (!existsSync(path)) return 'unchanged';
    rmSync(path, { force: true });
    return 'requested';
  }

  async sendDirective(text: string): Promise<void> {
    if (text.trim() === '')
      throw new ConfigError({
        message: 'The directive is empty; give the text to send to the agent.',
        code: 'directive_empty',
      });
    const path = join(this.directory, CONTROL_FILES.directives);
    const line = Buffer.from(`${JSON.stringify({ text })}\n`, 'utf8');
    const fd = openSync(path, 'a');
    try {
      let written: number;
      try {
        written = writeSync(fd, line, 0, line.length);
      } catch (error) {
        throw SessionWriteError.from(path, error, 'The directive was not sent; free disk space and send it again.');
      }
      // A short write on a regular file means the disk is full. Completing it would be a second
      // write that another sender's line could come between, and cutting it off could cut a line
      // appended since; so the torn part is ended with a newline: the agent refuses it as one
      // line (a `directive_refused` error in the trace) and the next directive stays whole.
      if (written !== line.length) {
        abandonTornLine(fd);
        throw new SessionWriteError({
          message: `Only ${written} of ${line.length} bytes of the directive reached ${path}: the disk is probably full. The directive was not sent; free disk space and send it again.`,
          path,
          errno: 'ENOSPC',
        });
      }
    } finally {
      closeSync(fd);
    }
  }

  async answerApproval(toolCallId: string, answer: ApprovalAnswer): Promise<AnswerOutcome> {
    return claimApprovalAnswer(this.directory, toolCallId, answer);
  }
}

function createSentinel(path: string): ControlOutcome {
  try {
    closeSync(openSync(path, 'wx'));
    return 'requested';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return 'unchanged';
    throw error;
  }
}

function abandonTornLine(fd: number): void {
  try {
    writeSync(fd, '\n');
  } catch {
    // Nothing more can be done on a full disk; the agent refuses the torn line when it is ended.
  }
}
