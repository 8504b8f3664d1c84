import type { InferSchema, JsonObjectSchema } from './json-schema.js';
import type { ExecutionBackend } from './execution-backend.js';
import type { ChildSessions } from './child-sessions.js';
import type { SecretRedactor } from './secret-redaction.js';

/** What a tool returns: `content` is what the model reads, `metadata` is for people and traces. */
export interface ToolResult {
  /** Text the model reads. */
  content: string;
  /** Whether the call did what was asked. An unsuccessful result is still read by the model. */
  success: boolean;
  /** Structured details for the monitor, UI and trace; never sent to the model. */
  metadata?: Record<string, unknown>;
}

/** One call of a tool by the model, after argument validation and coercion. */
export interface ToolInvocation<Args = Record<string, unknown>> {
  /** The model's id for this call. */
  callId: string;
  /** The tool's name. */
  toolName: string;
  /** Validated and coerced arguments. */
  arguments: Args;
}

/** What a running tool knows about its surroundings. */
export interface ToolContext {
  /** Aborted when the run is cancelled: stop work and kill child processes. */
  signal: AbortSignal;
  /** The id of the session the call belongs to. */
  sessionId: string;
  /** The model's id of this call (absent when the tool is called outside a session). */
  toolCallId?: string;
  /** The session's working directory; relative paths in arguments resolve against it. */
  workingDir: string;
  /** Where processes run and files live (local by default). */
  backend: ExecutionBackend;
  /**
   * Starts child sessions of the running session (delegate, agent tools, your own): absent when
   * the tool is called outside a session, for example directly in a test.
   */
  children?: ChildSessions;
  /**
   * The session's redactor of known secrets. The registry applies it to the tool's result (its
   * content and metadata) before cutting long output, so a secret is never cut in two; a tool that
   * cuts or streams output itself applies it to the whole output first.
   */
  redactor?: SecretRedactor;
}

/**
 * What a tool declares about its effects, as MCP tools do (`readOnlyHint`, `destructiveHint`,
 * `openWorldHint`). Tools declare; they never decide approval: the agent's approval policy
 * reads these (with the permission profile, when there is one) and decides for every call.
 */
export interface ToolAnnotations {
  /** The tool never changes anything; calls of read-only tools in one response run concurrently. */
  readOnly?: boolean;
  /**
   * The tool may destroy or overwrite data (not only add to it). Without a profile, calls of a
   * destructive tool need approval, and are refused where nobody can approve.
   */
  destructive?: boolean;
  /** The tool reaches beyond the machine and the configured systems (the network, other services). */
  openWorld?: boolean;
}

/** A tool the model can call. Build one with {@link defineTool}. */
export interface Tool<Args = Record<string, unknown>> {
  /** Name the model calls the tool by: `[a-zA-Z0-9_-]{1,64}`. */
  readonly name: string;
  /** Written for the model: what the tool does, its limits and defaults. */
  readonly description: string;
  /** JSON Schema of the arguments, sent to the model. */
  readonly parameters: JsonObjectSchema;
  /** Effects of the tool, which the agent's approval policy reads. */
  readonly annotations?: ToolAnnotations;
  /** Runs one call. Throwing turns into an unsuccessful result the model can read. */
  handle(invocation: ToolInvocation<Args>, context: ToolContext): Promise<ToolResult>;
}

/** A tool with its argument type erased, as stored in a registry. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = Tool<any>;

/** The declaration {@link defineTool} takes; `parameters` must be written `as const`-compatible. */
export interface ToolDefinition<S extends JsonObjectSchema> {
  name: string;
  description: string;
  parameters: S;
  annotations?: ToolAnnotations;
  handle(invocation: ToolInvocation<InferSchema<S>>, context: ToolContext): Promise<ToolResult>;
}

/**
 * Declares a tool. The argument type of `handle` is inferred from the JSON Schema in
 * `parameters`, so declare the schema inline (or `as const`).
 *
 * @example
 * const echo = defineTool({
 *   name: 'echo',
 *   description: 'Repeats the text back.',
 *   parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
 *   async handle({ arguments: { text } }) { return { content: text, success: true }; },
 * });
 */
export function defineTool<const S extends JsonObjectSchema>(definition: ToolDefinition<S>): Tool<InferSchema<S>> {
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(definition.name)) {
    throw new TypeError(`Tool name "${definition.name}" is invalid: use 1-64 letters, digits, "_" or "-".`);
  }
  return Object.freeze({ ...definition });
}
