import { hostname, userInfo } from 'node:os';
import type { ApprovalAnswer, PendingApproval } from '@rho/core';
import type { SessionSource } from '@rho/monitor';
import { EXIT, UsageError } from '../../exit-codes.js';
import { toolSignature } from '../../format.js';
import type { MonitorIo } from './monitor-io.js';

/** What `rho approve` / `rho deny` were told. */
export interface ApprovalCommand {
  decision: 'approve' | 'deny';
  /** The waiting call; may be left out when exactly one call waits. */
  call?: string;
  /** `--always-this-call` / `--always-tool` (approve only). */
  scope?: 'call' | 'tool';
  /** `--reason` (the model reads it with a denial). */
  reason?: string;
}

/** Who answers: `user@host` of this process. */
export function answerer(): string {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // A user without a passwd entry (a container): the host still says where the answer came from.
  }
  return `${user}@${hostname()}`;
}

/**
 * `rho approve` and `rho deny`: answers a tool call that waits for approval in a session (this
 * machine's or a fleet's), exactly once. Bad input (no call waits, an unknown or finished call,
 * several waiting and none named, an answer that lost a race) is one line on stderr and exit 2,
 * with nothing recorded.
 */
export async function approvalAction(
  source: SessionSource,
  prefix: string,
  command: ApprovalCommand,
  io: MonitorIo,
): Promise<number> {
  if (command.decision === 'deny' && command.scope !== undefined)
    throw new UsageError({
      message: 'A denial applies to that call only: --always-this-call and --always-tool are for rho approve.',
    });
  const session = await source.resolve(prefix);
  if (source.pendingApprovals === undefined || source.answerApproval === undefined)
    throw new UsageError({ message: 'This session source cannot carry approvals; answer in the session itself.' });
  const pending = await source.pendingApprovals(session.id);
  const call = chooseCall(session.id, pending, command);
  const answer: ApprovalAnswer = {
    decision: command.decision,
    by: answerer(),
    source: 'operator',
    ...(command.scope === undefined ? {} : { scope: command.scope }),
    ...(command.reason === undefined || command.reason.trim() === '' ? {} : { reason: command.reason }),
  };
  const result = await source.answerApproval(session.id, call.toolCallId, answer);
  if (result.outcome === 'not_pending')
    throw new UsageError({
      message: `Call ${call.toolCallId} of session ${session.id} no longer waits for approval${result.waiting.length === 0 ? '' : ` (waiting: ${result.waiting.join(', ')})`}; nothing was recorded.`,
    });
  if (result.outcome === 'already_answered') {
    io.err(
      `rho: call ${call.toolCallId} was already answered (${result.answer.decision}${result.answer.by === undefined ? '' : ` by ${result.answer.by}`}); that answer stands and yours was not recorded.\n`,
    );
    return EXIT.badInput;
  }
  const reach =
    command.scope === 'tool'
      ? ` (and every later ${call.toolName} call that matches no dangerous pattern)`
      : command.scope === 'call'
        ? ' (and this exact call for the rest of the session)'
        : '';
  io.out(
    `${command.decision === 'approve' ? 'Approved' : 'Denied'} ${toolSignature(call.toolName, call.arguments, 120)} (call ${call.toolCallId}) in ${session.id}${reach}${session.status === 'waiting_approval' || session.status === 'running' || session.status === 'paused' ? '' : `; the session is not running (${session.status}): continue it with rho --resume ${session.id}`}\n`,
  );
  return EXIT.completed;
}

function chooseCall(sessionId: string, pending: readonly PendingApproval[], command: ApprovalCommand): PendingApproval {
  if (pending.length === 0)
    throw new UsageError({ message: `No tool call of session ${sessionId} waits for approval; nothing was recorded.` });
  if (command.call !== undefined) {
    const found = pending.find((call) => call.toolCallId === command.call);
    if (found !== undefined) return found;
    throw new UsageError({
      message: `Call ${command.call} does not wait for approval in session ${sessionId} (waiting: ${pending.map((call) => call.toolCallId).join(', ')}); nothing was recorded.`,
    });
  }
  if (pending.length === 1) return pending[0]!;
  throw new UsageError({
    message: `${pending.length} calls of session ${sessionId} wait for approval; name one: ${pending.map((call) => `${call.toolCallId} (${toolSignature(call.toolName, call.arguments, 60)})`).join(', ')}.`,
  });
}
