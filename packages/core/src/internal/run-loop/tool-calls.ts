import type { ModelToolCall } from '@rho/model-client';
import type { ApprovalDecision } from '../../agent.js';
import { InternalError } from '../../errors.js';
import type { PreparedToolCall } from '../../tool-registry.js';
import type { ToolContext, ToolResult } from '../../tool.js';
import type { RunScope } from './run-scope.js';

const CANCELLED_BEFORE_RUN = 'Cancelled: the run was stopped before this tool call ran. Nothing was executed.';
const REJECTED = 'Command rejected by user. Awaiting new instructions.';
const SKIPPED_AFTER_REJECTION = 'Command skipped - user rejected previous command.';
const CANCELLED = Symbol('cancelled');

/** How the tool calls of one response ended: all answered, cancelled, or stopped by a user's rejection. */
export type ToolCallsOutcome = 'done' | 'cancelled' | 'rejected';

interface Entry {
  result: ToolResult;
  started: number;
  /** When the call finished (concurrent calls are recorded later, all together). */
  finished: number;
  ran: boolean;
}

/**
 * Runs the tool calls of one response: validation (by the registry), approval (as
 * `agent.approvalFor` decides, asking the session's approver), execution, and one result per call
 * in call order. Calls of read-only tools in one response run concurrently; any other call runs
 * alone. A rejection skips the rest of the response; a cancel answers every pending call.
 */
export async function runToolCalls(scope: RunScope, toolCalls: ModelToolCall[]): Promise<ToolCallsOutcome> {
  const { agent, state, controller } = scope;
  const registry = agent.registry;
  const prepared = toolCalls.map((call) =>
    registry.prepare({
      id: call.id,
      name: call.name,
      arguments: call.arguments,
      ...(call.truncated === true ? { truncated: true } : {}),
    }),
  );
  const contextOf = (call: { id: string; name: string }): ToolContext => ({
    signal: controller.signal,
    sessionId: scope.sessionId,
    toolCallId: call.id,
    workingDir: agent.workingDir,
    backend: agent.backend,
    children: scope.childrenFor(call),
    ...(state.secretRedactor === undefined ? {} : { redactor: state.secretRedactor }),
  });
  const concurrent =
    prepared.length > 1 && prepared.every((call) => call.ok && call.tool.annotations?.readOnly === true);
  const results = new Map<string, Entry>();
  const pending: Promise<void>[] = [];
  let outcome: ToolCallsOutcome = 'done';
  const notRun = (call: PreparedToolCall, content: string) =>
    results.set(call.id, { result: { success: false, content }, started: 0, finished: 0, ran: false });

  for (const call of prepared) {
    const name = call.ok ? call.tool.name : call.name;
    if (outcome !== 'done') {
      notRun(call, outcome === 'rejected' ? SKIPPED_AFTER_REJECTION : CANCELLED_BEFORE_RUN);
      continue;
    }
    if (!(await scope.control.checkpoint(controller))) {
      outcome = 'cancelled';
      notRun(call, CANCELLED_BEFORE_RUN);
      continue;
    }
    if (!call.ok) {
      // Malformed, unknown or invalid: the model reads why and corrects itself.
      const started = performance.now();
      state.append({ type: 'tool_start', tool_call_id: call.id, tool_name: name, tool_args: call.arguments });
      results.set(call.id, { result: call.result, started, finished: performance.now(), ran: true });
      continue;
    }
    const decision = agent.approvalFor(call.tool, call.arguments);
    if (decision.required) {
      const answer = await askApproval(scope, call, decision);
      if (answer === CANCELLED || controller.signal.aborted) {
        // Cancelled while waiting for the answer: the run ends cancelled, not as a rejection.
        outcome = 'cancelled';
        notRun(call, CANCELLED_BEFORE_RUN);
        continue;
      }
      if (answer !== true) {
        const reason = answer === false ? 'rejected by the user' : answer;
        state.append({
          type: 'tool_blocked',
          tool_call_id: call.id,
          tool_name: name,
          tool_args: call.arguments,
          reason,
        });
        if (answer === false) {
          outcome = 'rejected';
          notRun(call, REJECTED);
        } else {
          notRun(call, `Not run: ${answer}`);
        }
        continue;
      }
    }
    const started = performance.now();
    state.append({ type: 'tool_start', tool_call_id: call.id, tool_name: name, tool_args: call.arguments });
    const execution = registry.run(call, contextOf({ id: call.id, name })).then((result) => {
      results.set(call.id, { result, started, finished: performance.now(), ran: true });
    });
    if (concurrent) pending.push(execution);
    else await execution;
  }
  await Promise.all(pending);
  if (controller.signal.aborted && outcome === 'done') outcome = 'cancelled';
  // Results are recorded in call order, so traces are deterministic.
  for (const call of prepared) {
    const entry = results.get(call.id);
    if (entry === undefined) throw new InternalError({ message: `Tool call ${call.id} got no result.` });
    state.addMessage({ role: 'tool', tool_call_id: call.id, content: entry.result.content });
    if (entry.ran) {
      state.append({
        type: 'tool_end',
        tool_call_id: call.id,
        tool_name: call.ok ? call.tool.name : call.name,
        success: entry.result.success,
        duration_ms: Math.round(entry.finished - entry.started),
        ...(entry.result.metadata === undefined ? {} : { metadata: entry.result.metadata }),
      });
    }
  }
  return outcome;
}

/** Asks the approver; returns true, false (rejected by the user), a reason it was denied, or CANCELLED. */
async function askApproval(
  scope: RunScope,
  call: Extract<PreparedToolCall, { ok: true }>,
  decision: ApprovalDecision,
): Promise<true | false | string | typeof CANCELLED> {
  const { approver, controller } = scope;
  if (approver === undefined) {
    return `'${call.tool.name}' needs approval${decision.reason === undefined ? '' : ` (${decision.reason})`}, and nobody can approve in this session (it runs without an approver). Do not retry it; use another way, or tell the user that this step needs approval (for example by rerunning rho with --auto-approve).`;
  }
  scope.control.setStatus('waiting_approval');
  try {
    const approved = await Promise.race([
      Promise.resolve(
        approver({
          toolName: call.tool.name,
          toolCallId: call.id,
          arguments: call.arguments,
          sessionId: scope.sessionId,
          ...(decision.reason === undefined ? {} : { reason: decision.reason }),
        }),
      ),
      abortPromise(controller.signal),
    ]);
    if (controller.signal.aborted) return CANCELLED;
    return approved === true;
  } finally {
    scope.control.setStatus('running');
  }
}

function abortPromise(signal: AbortSignal): Promise<false> {
  // Resolves (never rejects) so that an approver that answers later is simply ignored.
  return new Promise((resolve) => {
    if (signal.aborted) resolve(false);
    else signal.addEventListener('abort', () => resolve(false), { once: true });
  });
}
