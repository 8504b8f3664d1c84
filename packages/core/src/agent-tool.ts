import type { ChildAgent, ChildSession } from './child-sessions.js';
import type { JsonObjectSchema } from './json-schema.js';
import type { SessionOptions } from './session-options.js';
import type { AnyTool, ToolAnnotations, ToolContext, ToolResult } from './tool.js';
import { defineTool } from './tool.js';

/** Options of {@link createAgentTool} / `agent.asTool()`. */
export interface AgentToolOptions {
  /** The tool's name. */
  name: string;
  /** Written for the calling model: what this agent is good at and what to send it. */
  description: string;
  /** JSON Schema of the input; default `{ instruction: string }`. */
  parameters?: JsonObjectSchema;
  /** Turns the arguments into the child's task. Default: `instruction` alone, else one `key: value` line per argument. */
  formatInput?: (args: Record<string, unknown>) => string;
  /** Effects of the wrapped agent, for the caller's approval policy (the child's own tools are approved on their own). */
  annotations?: ToolAnnotations;
  /** Options of each child session (for example a directory); called once per call. */
  sessionOptions?: (args: Record<string, unknown>, context: ToolContext) => SessionOptions;
}

const DEFAULT_PARAMETERS: JsonObjectSchema = {
  type: 'object',
  properties: {
    instruction: { type: 'string', description: 'The task for the agent, with all the context it needs.' },
  },
  required: ['instruction'],
};

/** The default input formatter: the instruction alone, or one `key: value` line per argument. */
export function formatAgentInput(args: Record<string, unknown>): string {
  const keys = Object.keys(args);
  if (keys.length === 1 && keys[0] === 'instruction') return String(args.instruction ?? '');
  return keys
    .map((key) => `${key}: ${typeof args[key] === 'string' ? args[key] : JSON.stringify(args[key])}`)
    .join('\n');
}

/**
 * Wraps a preconfigured agent (its own system prompt, tools, model) as a tool. Every call runs a
 * new session of that agent: no history is shared between calls. Cancelling the caller cancels
 * the child; the child asks the caller's approver and keeps its own budgets where they are
 * tighter than what is left of the caller's; its usage is added to the caller's totals. It uses
 * only `ToolContext.children`.
 */
export function createAgentTool(agent: ChildAgent, options: AgentToolOptions): AnyTool {
  const format = options.formatInput ?? formatAgentInput;
  return defineTool({
    name: options.name,
    description: options.description,
    parameters: options.parameters ?? DEFAULT_PARAMETERS,
    ...(options.annotations === undefined ? {} : { annotations: options.annotations }),
    async handle({ arguments: args }, context): Promise<ToolResult> {
      const task = format(args as Record<string, unknown>).trim();
      if (task === '') return { success: false, content: `${options.name}: received empty instruction.` };
      const sessionOptions = options.sessionOptions?.(args as Record<string, unknown>, context) ?? {};
      // Called outside a session (no parent to answer to), the agent runs on its own settings.
      const child =
        context.children === undefined
          ? agent.createSession(sessionOptions)
          : context.children.spawn({ agent, session: sessionOptions });
      return runChild(child, task, context, options.name);
    },
  });
}

/**
 * Runs a child session on `task` with the tool's signal (so it is cancelled with the caller),
 * adds its usage to the caller's, and turns its outcome into a tool result.
 */
export async function runChild(
  child: ChildSession,
  task: string,
  context: ToolContext,
  label: string,
): Promise<ToolResult> {
  const started = performance.now();
  const result = await child.run(task, { signal: context.signal });
  context.children?.recordUsage(child.id, result.runUsage, child.client.model);
  const metadata = {
    child_session_id: child.id,
    child_status: result.status,
    child_usage: result.runUsage,
    duration_seconds: Math.round((performance.now() - started) / 10) / 100,
    ...(result.limit === undefined ? {} : { child_limit: result.limit }),
  };
  if (result.status === 'completed') return { success: true, content: result.text, metadata };
  const why =
    result.status === 'error'
      ? `failed: ${result.error?.message ?? 'unknown error'}`
      : result.status === 'limit'
        ? `stopped at its ${result.limit ?? 'limit'}`
        : result.status === 'truncated'
          ? "was cut off at the model's output limit (its answer is incomplete)"
          : result.status === 'refused'
            ? 'could run none of its tool calls (every one was refused)'
            : result.status === 'waiting_approval'
              ? 'stopped while a tool call waited for approval'
              : 'was cancelled';
  return {
    success: false,
    content: `${label}: the sub-agent ${why}.${result.text === '' ? '' : ` Its last answer:\n${result.text}`}`,
    metadata,
  };
}
