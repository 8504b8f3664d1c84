import { hostname, userInfo } from 'node:os';
import type { ApprovalAnswer, PendingApproval } from '@rho/core';
import { readTrace } from '@rho/core';
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
  // A call answered a moment ago (the other side of a race) no longer waits: say which answer stands.
  const named =
    command.call ?? (pending.length === 0 ? undefined : pending.length === 1 ? pending[0]!.toolCallId : undefined);
  if (named === undefined ? pending.length === 0 : !pending.some((call) => call.toolCallId === named)) {
    const answered = await lastAnswer(source, session.id, named);
    if (answered !== undefined) return lostRace(answered, io);
  }
  const call = chooseCall(session.id, pending, command);
  const answer: ApprovalAnswer = {
    decision: command.decision,
    by: answerer(),
    source: 'operator',
    ...(command.scope === undefined ? {} : { scope: command.scope }),
    ...(command.reason === undefined || command.reason.trim() === '' ? {} : { reason: command.reason }),
  };
  const result = await source.answerApproval(session.id, call.toolCallId, answer);
  if (result.outcome === 'not_pending') {
    // The call stopped waiting between the listing and this answer: another answer won it.
    const winner = await lastAnswer(source, session.id, call.toolCallId);
    if (winner !== undefined) return lostRace(winner, io);
  }
  if (result.outcome === 'not_pending')
    throw new UsageError({
      message: `Call ${call.toolCallId} of session ${session.id} no longer waits for approval${result.waiting.length === 0 ? '' : ` (waiting: ${result.waiting.join(', ')})`}; nothing was recorded.`,
    });
  if (result.outcome === 'already_answered')
    return lostRace({ toolCallId: call.toolCallId, decision: result.answer.decision, by: result.answer.by }, io);
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

export interface RecordedAnswer {
  toolCallId: string;
  toolName?: string | undefined;
  decision: string;
  by?: string | undefined;
}

function lostRace(answer: RecordedAnswer, io: MonitorIo): number {
  io.err(
    `rho: call ${answer.toolCallId} was already answered (${answer.decision}${answer.by === undefined ? '' : ` by ${answer.by}`}); that answer stands and yours was not recorded.\n`,
  );
  return EXIT.badInput;
}

/**
 * The answer the session's trace recorded last (for `toolCallId`, or any call), when it was given
 * within the last minute: the answer that won a race this one lost. An older answer is history,
 * and the caller says that no call waits.
 */
export async function lastAnswer(
  source: SessionSource,
  id: string,
  toolCallId: string | undefined,
): Promise<RecordedAnswer | undefined> {
  const { records } = readTrace(await source.readTrace(id));
  for (let index = records.length - 1; index >= 0; index -= 1) {
    const record = records[index]!;
    if (record.type !== 'approval_answered') continue;
    if (toolCallId !== undefined && record.tool_call_id !== toolCallId) continue;
    const at = typeof record.ts === 'string' ? Date.parse(record.ts) : Number.NaN;
    if (!(Date.now() - at < 60_000)) return undefined;
    return {
      toolCallId: String(record.tool_call_id),
      ...(typeof record.tool_name === 'string' ? { toolName: record.tool_name } : {}),
      decision: String(record.decision),
      ...(typeof record.by === 'string' ? { by: record.by } : {}),
    };
  }
  return undefined;
}
