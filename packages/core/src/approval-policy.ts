import type { ApprovalDecision, ApprovalPolicy } from './agent.js';
import type { AnyTool } from './tool.js';

/**
 * The approval policy of an agent built without one (no permission profile): a call of a tool
 * annotated `destructive` needs approval, and is therefore refused in a session without an
 * approver; every other call runs. Agents built from a profile (`@rho/agent`, or
 * `approvalPolicy(profile)` of `@rho/permissions`) decide from the profile instead.
 */
export const defaultApprovalPolicy: ApprovalPolicy = (tool) =>
  tool.annotations?.destructive === true
    ? {
        required: true,
        reason: `${tool.name} is annotated destructive, and calls of destructive tools need approval when no permission profile says otherwise`,
      }
    : { required: false };

/**
 * What a tool object still asks for through the retired `requiresApproval` member (tools written
 * for an earlier contract, or by hand): a truthy value, or a function answering truthy for these
 * arguments (a promise counts as truthy), means "ask". A function that throws asks too: a tool
 * never gets less approval than it asked for. Undefined when the tool asks for nothing.
 */
export function approvalRequestedByTool(tool: AnyTool, args: Record<string, unknown>): ApprovalDecision | undefined {
  const asked: unknown = (tool as { requiresApproval?: unknown }).requiresApproval;
  if (typeof asked === 'function') {
    let answer: unknown;
    try {
      answer = (asked as (args: Record<string, unknown>) => unknown).call(tool, args);
    } catch (error) {
      return {
        required: true,
        reason: `${tool.name} asks for approval through requiresApproval, which failed (${error instanceof Error ? error.message : String(error)})`,
      };
    }
    return answer
      ? { required: true, reason: `${tool.name} asks for approval of this call itself (requiresApproval)` }
      : undefined;
  }
  return asked
    ? { required: true, reason: `${tool.name} asks for approval of every call itself (requiresApproval)` }
    : undefined;
}
