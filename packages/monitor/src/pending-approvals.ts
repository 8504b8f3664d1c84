import type { AnswerOutcome, ApprovalAnswer, OperatorChannel, PendingApproval } from '@rho/core';
import { checkApprovalAnswer, ConfigError, State } from '@rho/core';

/**
 * What {@link SessionSource.answerApproval} did: the answer is the one applied (`answered`),
 * another won before it (`already_answered`, with the winner), or nothing was recorded because
 * the call does not wait (`not_pending`, with the calls that do).
 */
export type ApprovalAnswerResult = AnswerOutcome | { outcome: 'not_pending'; waiting: string[] };

/**
 * The tool calls that wait for approval in a trace (the lines of a `trace.jsonl`): an
 * `approval_requested` with no `approval_answered` and no tool result after it, oldest first.
 */
export function pendingApprovalsInTrace(trace: string | Uint8Array): PendingApproval[] {
  return [...State.fromJsonl(trace).pendingApprovals.values()];
}

/**
 * Answers a waiting call through a session's operator channel, after checking the answer's shape
 * (a {@link ConfigError} saying what to fix) and that the call still waits (`not_pending`
 * otherwise: an answer to a call that no longer waits would be recorded and never applied).
 */
export async function answerIfPending(
  pending: readonly PendingApproval[],
  toolCallId: string,
  answer: ApprovalAnswer,
  operator: () => Promise<OperatorChannel>,
): Promise<ApprovalAnswerResult> {
  const checked = checkApprovalAnswer(answer);
  if (!pending.some((call) => call.toolCallId === toolCallId))
    return { outcome: 'not_pending', waiting: pending.map((call) => call.toolCallId) };
  const channel = await operator();
  if (channel.answerApproval === undefined)
    throw new ConfigError({
      message: "This session's operator channel cannot carry approvals; answer in the session itself.",
      code: 'approval_unsupported',
    });
  return channel.answerApproval(toolCallId, checked);
}
