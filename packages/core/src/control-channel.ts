import { closeSync, existsSync, fstatSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { AnswerOutcome, ApprovalAnswer } from './approvals.js';
import { claimApprovalAnswer, readApprovalAnswer } from './approvals.js';
import type { SessionStatus } from './events.js';
import { timestamp } from './events.js';
import { updateSessionMeta } from './session-meta.js';

/** Directives taken from the channel, with the positions to acknowledge them at. */
export interface TakenDirectives {
  /** The directives' texts, in order (refused lines excluded). */
  texts: string[];
  /** Opaque cursor just past everything taken; the next call starts from it. */
  cursor: number;
  /**
   * Every line taken, in order, each with the cursor just past it (recorded in its `directive`
   * trace record, so a crash between two directives of one batch neither loses nor repeats one).
   * A line that is not a directive (`{"text": string}`) has `refused` saying why and is not
   * delivered. Channels that leave it out have their `texts` delivered with the batch's cursor.
   */
  items?: { text: string; cursor: number; refused?: string }[];
}

/**
 * The agent's side of a session's control channel: how a running session learns that operators
 * want it to stop, hold or change course, and how it tells them it is alive. Operators use the
 * other side, {@link OperatorChannel}. Files in the session directory by default
 * ({@link FileControlChannel}); an implementation for fleets (a database) takes its place
 * through `SessionOptions.control` without touching the loop.
 *
 * The contract a second implementation must keep (the file channel is the reference):
 * - **Cancel.** {@link isCancelRequested} is true from the moment an operator's
 *   `requestCancel` returned until the agent calls {@link clearCancel}, which it does once the
 *   run has stopped (so a cancel sent while a run ends never stops the next run). An
 *   implementation over a network sees a request once it is delivered, a few milliseconds later
 *   (`@rho/fleet`'s by LISTEN/NOTIFY), and never waits on the network to answer. The session
 *   polls it every `pollIntervalMs` (200 ms by default) during a run and before every model call
 *   and tool call; a call must be cheap and must not throw for "nothing requested".
 * - **Pause.** {@link isPauseRequested} is true from an operator's `requestPause` until their
 *   `requestResume`. The session holds before its next model call or tool call while it is true
 *   (polling it), reporting `paused`, and reports `running` when it goes on. A cancel still
 *   ends a paused session.
 * - **Directives, exactly once.** Directives form an append-only queue in the order operators
 *   sent them. {@link takeDirectives} returns those after `cursor` (0: the start), each whole,
 *   each with the cursor just past it, and the cursor past all of them; the session records each
 *   directive with its cursor in the trace before delivering it, and passes the last cursor
 *   recorded (also after a resume, from the trace) to the next call. So a directive is delivered
 *   once even across crashes and resumes, and one sent while the agent reads is taken next time,
 *   never lost. Cursors are opaque numbers that only grow while the queue exists; a cursor past
 *   the end of the queue (the queue was reset) means "start over at 0". Something that is not a
 *   directive is returned with `refused` and is never delivered to the model.
 * - **Liveness.** {@link heartbeat} is called about every 5 s while a run is in progress and
 *   {@link reportStatus} when the status changes within a run (`paused`, `waiting_approval`,
 *   `running` again); operators judge a session dead when its heartbeat is older than 30 s (on
 *   another host) or its process is gone. Both are best effort: the session ignores their
 *   failures, and the trace remains the source of truth.
 * - **Approvals, exactly once.** While a tool call waits for approval (status
 *   `waiting_approval`), the session polls {@link takeApprovalAnswer} for the call's id; the first
 *   answer recorded for a call is the one every reader sees (operators record answers with
 *   `OperatorChannel.answerApproval`, which tells a second answerer which answer won). A timeout
 *   is recorded with {@link settleApproval}, which returns the answer that won (a person's that
 *   arrived first, or the timeout's). A channel without these methods has no remote approvals:
 *   only the session's own `answerApproval` answers its waiting calls.
 */
export interface ControlChannel {
  /** Whether an operator asked the session to stop (and the request was not cleared yet). */
  isCancelRequested(): Promise<boolean>;
  /** Whether an operator asked the session to hold before its next model call or tool call. */
  isPauseRequested(): Promise<boolean>;
  /** Directives queued after `cursor`, each whole and each delivered once (see the contract above). */
  takeDirectives(cursor: number): Promise<TakenDirectives>;
  /** Clears a cancel request once the run has stopped. */
  clearCancel(): Promise<void>;
  /** A sign of life of the agent process, for operators' liveness checks. */
  heartbeat(): Promise<void>;
  /** The session's status changed within a run (`paused`, `waiting_approval`, `running`); also a heartbeat. */
  reportStatus(status: SessionStatus): Promise<void>;
  /** The answer recorded for a waiting tool call, if any yet (see the contract above). */
  takeApprovalAnswer?(toolCallId: string): Promise<ApprovalAnswer | undefined>;
  /** Records `answer` unless another was recorded first; returns the one that won. */
  settleApproval?(toolCallId: string, answer: ApprovalAnswer): Promise<AnswerOutcome>;
}

/** Names of the control files in a session directory. */
export const CONTROL_FILES = { cancel: 'cancel', pause: 'pause', directives: 'directives.jsonl' } as const;

/**
 * The file control channel of a session directory, agent side: `cancel` and `pause` are sentinel
 * files whose presence is the request; `directives.jsonl` is append-only (writers append whole
 * lines with one `write(2)`), and the reader remembers how many bytes it consumed instead of
 * truncating, so a directive appended while the agent reads is never lost or delivered twice (the
 * cursor is that byte offset). Heartbeat and status go to `meta.json`. The operator side is
 * {@link FileOperatorChannel}.
 */
export class FileControlChannel implements ControlChannel {
  constructor(readonly directory: string) {}

  async isCancelRequested(): Promise<boolean> {
    return existsSync(join(this.directory, CONTROL_FILES.cancel));
  }

  async isPauseRequested(): Promise<boolean> {
    return existsSync(join(this.directory, CONTROL_FILES.pause));
  }

  async takeDirectives(cursor: number): Promise<TakenDirectives> {
    const path = join(this.directory, CONTROL_FILES.directives);
    // Checked every turn: a stat that does not throw is far cheaper than a failing open.
    const info = statSync(path, { throwIfNoEntry: false });
    if (info === undefined) return { texts: [], cursor: 0 };
    if (info.size === cursor) return { texts: [], cursor };
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch {
      return { texts: [], cursor: 0 };
    }
    try {
      const size = fstatSync(fd).size;
      // The file was truncated or replaced (by an operator or the Python original): start over.
      const start = size < cursor ? 0 : cursor;
      if (size === start) return { texts: [], cursor: start };
      const buffer = Buffer.alloc(size - start);
      let read = 0;
      while (read < buffer.length) {
        const count = readSync(fd, buffer, read, buffer.length - read, start + read);
        if (count === 0) break;
        read += count;
      }
      // Only whole lines: a line still being written is taken next time.
      const lastNewline = buffer.lastIndexOf(0x0a, read - 1);
      if (lastNewline === -1) return { texts: [], cursor: start };
      const items: { text: string; cursor: number; refused?: string }[] = [];
      let lineStart = 0;
      while (lineStart <= lastNewline) {
        const lineEnd = buffer.indexOf(0x0a, lineStart);
        const line = buffer.subarray(lineStart, lineEnd).toString('utf8').trim();
        lineStart = lineEnd + 1;
        if (line === '') continue;
        const cursor = start + lineStart;
        const text = directiveText(line);
        if (typeof text === 'string') items.push({ text, cursor });
        else items.push({ text: line, cursor, refused: text.refused });
      }
      return {
        texts: items.flatMap((item) => (item.refused === undefined ? [item.text] : [])),
        cursor: start + lastNewline + 1,
        items,
      };
    } finally {
      closeSync(fd);
    }
  }

  async clearCancel(): Promise<void> {
    rmSync(join(this.directory, CONTROL_FILES.cancel), { force: true });
  }

  async heartbeat(): Promise<void> {
    updateSessionMeta(this.directory, { heartbeat_at: timestamp() });
  }

  async reportStatus(status: SessionStatus): Promise<void> {
    updateSessionMeta(this.directory, { status, heartbeat_at: timestamp() });
  }

  async takeApprovalAnswer(toolCallId: string): Promise<ApprovalAnswer | undefined> {
    return readApprovalAnswer(this.directory, toolCallId);
  }

  async settleApproval(toolCallId: string, answer: ApprovalAnswer): Promise<AnswerOutcome> {
    return claimApprovalAnswer(this.directory, toolCallId, answer);
  }
}

/** The text of a directive line (`{"text": string}`), or why the line is refused. */
function directiveText(line: string): string | { refused: string } {
  const shown = line.length > 200 ? `${line.slice(0, 200)}...` : line;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return {
      refused: `the line is not JSON: ${shown}. A directive is one line {"text": "..."}; send it with rho directive.`,
    };
  }
  if (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { text?: unknown }).text === 'string'
  ) {
    const text = (value as { text: string }).text;
    if (text.trim() !== '') return text;
    return { refused: "the directive's text is empty." };
  }
  return { refused: `the line is not {"text": string}: ${shown}.` };
}
