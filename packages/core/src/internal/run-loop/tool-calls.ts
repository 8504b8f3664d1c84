import type { ModelToolCall } from '@rho/model-client';
import { grantsApprove } from '../../approvals.js';
import { askApproval, CANCELLED, PARKED } from './approval-wait.js';
import { InternalError } from '../../errors.js';
import type { ToolHookCall, ToolHookVerdict } from '../../session-options.js';
import type { PreparedToolCall } from '../../tool-registry.js';
import type { ToolContext, ToolResult } from '../../tool.js';
import type { RunScope } from './run-scope.js';

const CANCELLED_BEFORE_RUN = 'Cancelled: the run was stopped before this tool call ran. Nothing was executed.';
const REJECTED = 'Command rejected by user. Awaiting new instructions.';
const SKIPPED_AFTER_REJECTION = 'Command skipped - user rejected previous command.';

/**
 * How the tool calls of one response ended: all answered, cancelled, stopped by a user's
 * rejection, or parked: the run stopped while a call waited for approval, and that call and the
 * ones after it stay open for a resumed run.
 */
export type ToolCallsOutcome = 'done' | 'cancelled' | 'rejected' | 'parked';

interface Entry {
  result: ToolResult;
  started: number;
  /** When the call finished (concurrent calls are recorded later, all together). */
  finished: number;
  ran: boolean;
}

/**
 * Runs the tool calls of one response: validation (by the registry), `pre_tool` hooks, approval
 * (as `agent.approvalFor` decides, asking the session's approver or waiting for an answer from
 * outside), execution, `post_tool` hooks, and one result per call in call order. Calls of
 * read-only tools in one response run concurrently; any other call runs alone. A rejection skips
 * the rest of the response; a cancel answers every pending call.
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
  const recorded = new Set<string>();
  const pending: Promise<void>[] = [];
  const hookCalls = new Map<string, ToolHookCall>();
  let outcome: ToolCallsOutcome = 'done';
  const notRun = (call: PreparedToolCall, content: string) =>
    results.set(call.id, { result: { success: false, content }, started: 0, finished: 0, ran: false });
  // Results are recorded in call order, so traces are deterministic; before a call waits for
  // approval, those of the calls before it are recorded, so a resumed run has them.
  const record = (upTo: number) => {
    for (const call of prepared.slice(0, upTo)) {
      if (recorded.has(call.id)) continue;
      const entry = results.get(call.id);
      if (entry === undefined) throw new InternalError({ message: `Tool call ${call.id} got no result.` });
      recorded.add(call.id);
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
  };

  for (const [index, call] of prepared.entries()) {
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
    let decision = agent.approvalFor(call.tool, call.arguments);
    const hookCall: ToolHookCall = {
      sessionId: scope.sessionId,
      toolCallId: call.id,
      toolName: name,
      arguments: call.arguments,
      approval: decision,
    };
    hookCalls.set(call.id, hookCall);
    const verdict = await beforeToolCall(scope, hookCall);
    if (verdict?.decision === 'deny') {
      refuse(scope, call, `denied by a pre_tool hook: ${verdict.reason}`);
      notRun(call, `Not run: denied by a pre_tool hook: ${verdict.reason}`);
      continue;
    }
    if (verdict?.decision === 'ask')
      decision = {
        ...decision,
        required: true,
        reason: verdict.reason ?? decision.reason ?? 'a pre_tool hook asks for approval of this call',
      };
    // A hook's allow spares the question, never for a dangerous call.
    if (verdict?.decision === 'allow' && decision.dangerous === undefined) decision = { required: false };
    if (
      decision.required &&
      !grantsApprove(state.approvalGrants, { toolName: name, arguments: call.arguments, dangerous: decision.dangerous })
    ) {
      const answer = await askApproval(scope, call, decision, async () => {
        await Promise.all(pending);
        record(index);
      });
      if (answer === PARKED) {
        // The call and the ones after it stay open: a resumed run carries them out.
        outcome = 'parked';
        break;
      }
      if (answer === CANCELLED || controller.signal.aborted) {
        // Cancelled while waiting for the answer: the run ends cancelled, not as a rejection.
        outcome = 'cancelled';
        notRun(call, CANCELLED_BEFORE_RUN);
        continue;
      }
      if (answer !== true) {
        const reason = answer === false ? 'rejected by the user' : answer.refused;
        refuse(scope, call, reason);
        if (answer === false) {
          outcome = 'rejected';
          notRun(call, REJECTED);
        } else {
          notRun(call, `Not run: ${reason}`);
        }
        continue;
      }
    }
    const started = performance.now();
    scope.toolTally.ran += 1;
    state.append({ type: 'tool_start', tool_call_id: call.id, tool_name: name, tool_args: call.arguments });
    const execution = registry.run(call, contextOf({ id: call.id, name })).then(async (result) => {
      const finished = performance.now();
      results.set(call.id, { result, started, finished, ran: true });
      await afterToolCall(scope, hookCall, result, finished - started);
    });
    if (concurrent) pending.push(execution);
    else await execution;
  }
  await Promise.all(pending);
  if (outcome === 'parked') {
    record(prepared.findIndex((call) => !results.has(call.id)));
    return outcome;
  }
  if (controller.signal.aborted && outcome === 'done') outcome = 'cancelled';
  record(prepared.length);
  return outcome;
}

function refuse(scope: RunScope, call: Extract<PreparedToolCall, { ok: true }>, reason: string): void {
  scope.toolTally.refused += 1;
  scope.state.append({
    type: 'tool_blocked',
    tool_call_id: call.id,
    tool_name: call.tool.name,
    tool_args: call.arguments,
    reason,
  });
}

/** The `pre_tool` hooks' verdict; a hook that throws has no opinion (the hook runner records its failure). */
async function beforeToolCall(scope: RunScope, call: ToolHookCall): Promise<ToolHookVerdict | undefined> {
  const hook = scope.toolHooks?.beforeToolCall;
  if (hook === undefined) return undefined;
  try {
    return await hook.call(scope.toolHooks, call, scope.controller.signal);
  } catch {
    return undefined;
  }
}

async function afterToolCall(
  scope: RunScope,
  call: ToolHookCall,
  result: ToolResult,
  durationMs: number,
): Promise<void> {
  const hook = scope.toolHooks?.afterToolCall;
  if (hook === undefined) return;
  try {
    await hook.call(
      scope.toolHooks,
      call,
      { success: result.success, content: result.content, durationMs: Math.round(durationMs) },
      scope.controller.signal,
    );
  } catch {
    // A post_tool hook cannot change the result, nor fail the call.
  }
}
