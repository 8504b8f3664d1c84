import type { ApprovalDecision } from '../../agent.js';
import type { AnswerOutcome, ApprovalAnswer } from '../../approvals.js';
import { checkApprovalAnswer } from '../../approvals.js';
import type { ControlChannel } from '../../control-channel.js';
import { ConfigError } from '../../errors.js';
import type { State } from '../../state.js';
import type { PreparedToolCall } from '../../tool-registry.js';
import type { LocalAnswers, RunScope } from './run-scope.js';

export const CANCELLED = Symbol('cancelled');
export const PARKED = Symbol('parked');

/** What the approval step answered: run it, a person's rejection (the run stops), a refusal with a reason, a cancel or a park. */
export type Answer = true | false | { refused: string } | typeof CANCELLED | typeof PARKED;

/**
 * Answers a waiting call of a session, exactly once: through its control channel when that
 * carries approvals (so an answer from another process and this one settle on one), else in this
 * process. A call that does not wait is a {@link ConfigError} naming the calls that do.
 */
export async function answerWaitingCall(
  session: { sessionId: string; state: State; control: ControlChannel | undefined; localAnswers: LocalAnswers },
  toolCallId: string,
  answer: ApprovalAnswer,
): Promise<AnswerOutcome> {
  const checked = checkApprovalAnswer({ source: 'library', ...answer });
  const { state, control } = session;
  if (!state.pendingApprovals.has(toolCallId)) {
    const waiting = [...state.pendingApprovals.keys()];
    throw new ConfigError({
      message: `Tool call ${toolCallId} does not wait for approval in session ${session.sessionId}${waiting.length === 0 ? ' (no call waits)' : `; waiting: ${waiting.join(', ')}`}.`,
      code: 'approval_not_pending',
    });
  }
  const outcome = control?.settleApproval === undefined ? undefined : await control.settleApproval(toolCallId, checked);
  const local = session.localAnswers.offer(toolCallId, outcome?.answer ?? checked);
  if (outcome !== undefined) return outcome;
  return local.first
    ? { outcome: 'answered', answer: local.kept }
    : { outcome: 'already_answered', answer: local.kept };
}

/** Asks the approver, or waits for an answer from outside when nobody attached can give one. */
export async function askApproval(
  scope: RunScope,
  call: Extract<PreparedToolCall, { ok: true }>,
  decision: ApprovalDecision,
  beforeWait: () => Promise<void>,
): Promise<Answer> {
  const { approver, controller } = scope;
  // A call that waited in an earlier run (parked, then stopped or killed): an answer given
  // meanwhile applies before anyone is asked again, and before `withhold` could refuse it.
  const parked = scope.state.pendingApprovals.has(call.id);
  if (parked) {
    const given = scope.localAnswers.take(call.id) ?? (await scope.control.takeApprovalAnswer(call.id));
    if (given !== undefined) return applyAnswer(scope, call, given);
  }
  if (approver !== undefined) {
    scope.control.setStatus('waiting_approval');
    // The approver is told to stop asking when the run is cancelled or, for a listed call, when
    // an answer arrives from elsewhere while it asks (that answer then applies).
    const asking = new AbortController();
    const stopAsking = () => asking.abort();
    controller.signal.addEventListener('abort', stopAsking, { once: true });
    let approved: boolean | 'wait' | { elsewhere: ApprovalAnswer } | undefined;
    try {
      approved = await Promise.race([
        Promise.resolve(
          approver({
            toolName: call.tool.name,
            toolCallId: call.id,
            arguments: call.arguments,
            sessionId: scope.sessionId,
            ...(decision.reason === undefined ? {} : { reason: decision.reason }),
            ...(decision.dangerous === undefined ? {} : { dangerous: decision.dangerous }),
            signal: asking.signal,
          }),
        ),
        abortPromise(controller.signal),
        ...(parked ? [answerFromElsewhere(scope, call.id, asking.signal)] : []),
      ]);
    } finally {
      controller.signal.removeEventListener('abort', stopAsking);
      asking.abort();
      if (controller.signal.aborted) scope.control.setStatus('running');
    }
    if (controller.signal.aborted || approved === undefined) return CANCELLED;
    if (typeof approved === 'object') return applyAnswer(scope, call, approved.elsewhere);
    if (approved !== 'wait' && parked) {
      // The call is listed as waiting: settle the approver's answer on the channel, so that an
      // answer given elsewhere meanwhile and this one apply once (the first wins).
      const settled = await scope.control.settleApproval(call.id, {
        decision: approved ? 'approve' : 'deny',
        scope: 'once',
        by: 'approver',
        source: 'approver',
        at: new Date().toISOString(),
      });
      return applyAnswer(scope, call, settled.answer);
    }
    if (approved !== 'wait') {
      scope.control.setStatus('running');
      return approved === true;
    }
  }
  if (scope.approvals.unattended === 'withhold') {
    return {
      refused: `'${call.tool.name}' needs approval${decision.reason === undefined ? '' : ` (${decision.reason})`}, and nobody can approve in this session (it runs without an approver). Do not retry it; use another way, or tell the user that this step needs approval (for example by rerunning rho with --auto-approve).`,
    };
  }
  await beforeWait();
  return waitForAnswer(scope, call, decision);
}

/**
 * Parks the call in `waiting_approval` (recorded in the trace) until an answer arrives from the
 * control channel or this process, its timeout passes, an operator cancels, or the run is
 * stopped (then the call stays waiting for a resumed run).
 */
async function waitForAnswer(
  scope: RunScope,
  call: Extract<PreparedToolCall, { ok: true }>,
  decision: ApprovalDecision,
): Promise<Answer> {
  const { state, controller, approvals } = scope;
  const onTimeout = decision.dangerous === undefined ? approvals.onTimeout : 'deny';
  const requestedAt = Date.now();
  // The wait ends at its timeout, or at the approvals' deadline when that comes first.
  const deadline = approvals.deadline?.getTime() ?? Number.POSITIVE_INFINITY;
  const expiresAt = Math.min(requestedAt + approvals.timeoutMs, Math.max(requestedAt, deadline));
  const cutShort = expiresAt < requestedAt + approvals.timeoutMs;
  state.append({
    type: 'approval_requested',
    tool_call_id: call.id,
    tool_name: call.tool.name,
    tool_args: call.arguments,
    ...(decision.reason === undefined ? {} : { reason: decision.reason }),
    ...(decision.dangerous === undefined ? {} : { dangerous: decision.dangerous }),
    expires_at: new Date(expiresAt).toISOString(),
    on_timeout: onTimeout,
  });
  scope.control.setStatus('waiting_approval');
  let answer: ApprovalAnswer | undefined;
  for (;;) {
    answer = scope.localAnswers.take(call.id) ?? (await scope.control.takeApprovalAnswer(call.id));
    if (answer !== undefined) break;
    if (controller.signal.aborted) {
      if (scope.stoppedFromOutside()) return PARKED;
      scope.control.setStatus('running');
      return CANCELLED;
    }
    if (await scope.control.cancelRequested()) {
      controller.abort();
      scope.control.setStatus('running');
      return CANCELLED;
    }
    if (Date.now() >= expiresAt) {
      const waitedMs = expiresAt - requestedAt;
      const minutes = Math.round(waitedMs / 60_000);
      const waited = minutes >= 1 ? `${minutes} minute${minutes === 1 ? '' : 's'}` : `${Math.round(waitedMs / 1000)} s`;
      const settled = await scope.control.settleApproval(call.id, {
        decision: onTimeout,
        scope: 'once',
        reason: `nobody answered within ${waited} (the approval ${cutShort ? `deadline, ${new Date(expiresAt).toISOString()}` : 'timeout'})`,
        by: 'timeout',
        source: 'timeout',
        at: new Date().toISOString(),
      });
      answer = settled.answer;
      break;
    }
    await scope.localAnswers.wait(
      Math.min(scope.control.pollIntervalMs, Math.max(1, expiresAt - Date.now())),
      controller.signal,
    );
  }
  return applyAnswer(scope, call, answer);
}

/** Records the answer that applies to a waiting call, and what it means for the call. */
function applyAnswer(scope: RunScope, call: Extract<PreparedToolCall, { ok: true }>, answer: ApprovalAnswer): Answer {
  const { state } = scope;
  const scopeOf = answer.decision === 'approve' ? (answer.scope ?? 'once') : 'once';
  state.append({
    type: 'approval_answered',
    tool_call_id: call.id,
    tool_name: call.tool.name,
    decision: answer.decision,
    scope: scopeOf,
    source: answer.source ?? 'operator',
    ...(answer.reason === undefined ? {} : { reason: answer.reason }),
    ...(answer.by === undefined ? {} : { by: answer.by }),
    ...(scopeOf === 'call' ? { tool_args: call.arguments } : {}),
  });
  scope.control.setStatus('running');
  if (answer.decision === 'approve') return true;
  const who =
    answer.source === 'timeout'
      ? 'the approval timed out'
      : `denied${answer.by === undefined ? '' : ` by ${answer.by}`}`;
  return { refused: `${who}${answer.reason === undefined ? '' : `: ${answer.reason}`}` };
}

/** Resolves with an answer given through the channel or this process, or undefined once `signal` aborts. */
async function answerFromElsewhere(
  scope: RunScope,
  toolCallId: string,
  signal: AbortSignal,
): Promise<{ elsewhere: ApprovalAnswer } | undefined> {
  while (!signal.aborted) {
    const answer = scope.localAnswers.take(toolCallId) ?? (await scope.control.takeApprovalAnswer(toolCallId));
    if (answer !== undefined && !signal.aborted) return { elsewhere: answer };
    await scope.localAnswers.wait(scope.control.pollIntervalMs, signal);
  }
  return undefined;
}

function abortPromise(signal: AbortSignal): Promise<false> {
  // Resolves (never rejects) so that an approver that answers later is simply ignored.
  return new Promise((resolve) => {
    if (signal.aborted) resolve(false);
    else signal.addEventListener('abort', () => resolve(false), { once: true });
  });
}
