import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ChatMessage } from '@rho/model-client';
import { parse } from 'yaml';
import { runChild } from './agent-tool.js';
import { agentConfigToDocument, parseAgentConfig } from './agent-config.js';
import { SessionStore } from './session-store.js';
import { readSessionMeta } from './session-meta.js';
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
 * is added to the parent's.
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
        full_context: { type: 'boolean', description: 'Give the sub-agent a copy of this conversation so far (default false).' },
      },
      required: ['instruction'],
    },
    async handle({ arguments: { instruction, full_context: fullContext } }, context): Promise<ToolResult> {
      if (instruction.trim() === '') return { success: false, content: 'Delegate requires a non-empty instruction.' };
      const parent = context.session;
      if (parent === undefined) return { success: false, content: 'delegate can only run inside a session.' };
      const childAgent = parent.agent.derive();
      childAgent.registry.unregister(DELEGATE_TOOL_NAME);

      let directory: string | undefined;
      let id: string | undefined;
      if (parent.directory !== undefined) {
        const store = new SessionStore(dirname(parent.directory));
        const meta = readSessionMeta(parent.directory);
        const created = store.create({
          config: parentConfig(parent.directory),
          parentId: parent.id,
          model: parent.client.model,
          workingDir: childAgent.workingDir,
          ...(meta?.profile === undefined ? {} : { profile: meta.profile }),
        });
        directory = created.directory;
        id = created.id;
      }
      const child = childAgent.createSession({
        ...(id === undefined ? {} : { id }),
        ...(directory === undefined ? {} : { directory }),
        client: parent.agent.createClient(),
        budgets: parent.remainingBudgets(),
        ...(parent.approver === undefined ? {} : { approver: parent.approver }),
      });
      if (fullContext === true) {
        for (const message of historyWithoutPendingCalls(parent.state.messages)) child.state.addMessage(message);
      }
      return runChild(child, instruction, context, 'delegate');
    },
  });
}

/** The parent's history without its last assistant message if that message's calls are still running. */
function historyWithoutPendingCalls(messages: readonly ChatMessage[]): ChatMessage[] {
  const copy = structuredClone([...messages]);
  for (let index = copy.length - 1; index >= 0; index -= 1) {
    const message = copy[index]!;
    if (message.role === 'assistant' && message.tool_calls !== undefined) {
      const answered = new Set(copy.slice(index + 1).flatMap((item) => (item.role === 'tool' ? [item.tool_call_id] : [])));
      if (message.tool_calls.some((call) => !answered.has(call.id))) return copy.slice(0, index);
      break;
    }
  }
  return copy;
}

function parentConfig(directory: string): Record<string, unknown> {
  try {
    return agentConfigToDocument(parseAgentConfig(parse(readFileSync(join(directory, 'config.yaml'), 'utf8'))));
  } catch {
    return {};
  }
}
