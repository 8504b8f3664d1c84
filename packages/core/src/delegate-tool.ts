import { runChild } from './agent-tool.js';
import type { AnyTool, ToolResult } from './tool.js';
import { defineTool } from './tool.js';

/** Name of the delegate tool; a child agent never has it. */
export const DELEGATE_TOOL_NAME = 'delegate';

/**
 * `delegate`: hands a focused subtask to a child agent with the parent's configuration (system
 * prompt, model, tools and profile, working directory, databases, execution backend) minus
 * `delegate` itself, so delegation is one level deep. The child runs as its own session
 * (its own directory with `parent_id` when the parent has one), asks the parent's approver,
 * stays within what is left of the parent's budgets, is cancelled with the parent, and its usage
 * is added to the parent's. It uses only `ToolContext.children`.
 */
export function createDelegateTool(): AnyTool {
  return defineTool({
    name: DELEGATE_TOOL_NAME,
    description:
      'Delegate a focused subtask to a sub-agent that has the same tools and permissions as you, and get back its final answer. ' +
      'Use it for self-contained investigations whose details you do not need in your own context. ' +
      'The sub-agent cannot delegate further. Give a complete instruction: it sees nothing of this conversation unless full_context is true.',
    parameters: {
      type: 'object',
      properties: {
        instruction: { type: 'string', description: 'The subtask, with everything the sub-agent needs to know.' },
        full_context: {
          type: 'boolean',
          description: 'Give the sub-agent a copy of this conversation so far (default false).',
        },
      },
      required: ['instruction'],
    },
    async handle({ arguments: { instruction, full_context: fullContext } }, context): Promise<ToolResult> {
      if (instruction.trim() === '') return { success: false, content: 'Delegate requires a non-empty instruction.' };
      if (context.children === undefined) return { success: false, content: 'delegate can only run inside a session.' };
      const child = context.children.spawn({ withoutTools: [DELEGATE_TOOL_NAME], copyHistory: fullContext === true });
      return runChild(child, instruction, context, 'delegate');
    },
  });
}
