import type { ToolSpec } from '@rho/model-client';
import { ConfigError } from './errors.js';
import type { SecretRedactor } from './secret-redaction.js';
import type { AnyTool, ToolContext, ToolResult } from './tool.js';
import { MAX_TOOL_OUTPUT_BYTES, truncateOutput } from './truncate.js';
import { validateArguments } from './internal/validate-arguments.js';
import { oneOf } from './choices.js';

/** Default of {@link ToolRegistry.cancelGraceMs}. */
export const TOOL_CANCEL_GRACE_MS = 5_000;

const ABANDONED: unique symbol = Symbol('abandoned');

/**
 * `work`'s outcome; or, once `signal` is aborted and `work` has not settled within `graceMs`,
 * {@link ABANDONED} (the work goes on unobserved: a promise cannot be stopped).
 */
function settleOrAbandon<T>(work: Promise<T>, signal: AbortSignal, graceMs: number): Promise<T | typeof ABANDONED> {
  return new Promise<T | typeof ABANDONED>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = () => {
      timer = setTimeout(() => resolve(ABANDONED), graceMs);
    };
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    work.then(
      (value) => {
        done();
        resolve(value);
      },
      (error: unknown) => {
        done();
        reject(error);
      },
    );
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** A tool call as the model sent it, before its arguments were parsed. */
export interface RawToolCall {
  id: string;
  name: string;
  /** The raw JSON text of the arguments, or an already parsed value. */
  arguments: string | Record<string, unknown>;
  /** The answer stopped at the model's output limit before these arguments were complete. */
  truncated?: boolean;
}

/** A tool call whose arguments were parsed and validated, ready to run. */
export type PreparedToolCall =
  | { ok: true; id: string; tool: AnyTool; arguments: Record<string, unknown> }
  | { ok: false; id: string; name: string; arguments: unknown; result: ToolResult };

/**
 * The tools an agent offers. `specs()` is sorted by name so the prompt prefix stays stable for
 * provider prompt caching. `dispatch()` never throws for a bad call: unknown tools, malformed or
 * invalid arguments and thrown errors all become unsuccessful results the model can read.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, AnyTool>();
  private cachedSpecs: ToolSpec[] | undefined;

  /**
   * How long a tool may take to stop once the run is cancelled (its `context.signal` aborted)
   * before the run stops waiting for it: a tool that ignores the signal (a tool package's) would
   * otherwise keep a cancelled run, and a SIGTERM, waiting for ever. Built-in tools stop well
   * within it (bash: SIGTERM, then SIGKILL 2 s later).
   */
  cancelGraceMs = TOOL_CANCEL_GRACE_MS;

  constructor(tools: Iterable<AnyTool> = []) {
    for (const tool of tools) this.register(tool);
  }

  /** Adds a tool; a tool of the same name is replaced. */
  register(tool: AnyTool): this {
    if (typeof tool?.handle !== 'function' || typeof tool.name !== 'string') {
      throw new ConfigError({
        message:
          'register() expects a tool made with defineTool() (an object with name, description, parameters and handle).',
      });
    }
    this.tools.set(tool.name, tool);
    this.cachedSpecs = undefined;
    return this;
  }

  /** Removes a tool; unknown names are ignored. */
  unregister(name: string): boolean {
    this.cachedSpecs = undefined;
    return this.tools.delete(name);
  }

  /** The tool of that name, if registered. */
  get(name: string): AnyTool | undefined {
    return this.tools.get(name);
  }

  /** Whether a tool of that name is registered. */
  has(name: string): boolean {
    return this.tools.has(name);
  }

  /** Names of all tools, sorted. */
  names(): string[] {
    return [...this.tools.keys()].sort();
  }

  /** Number of tools. */
  get size(): number {
    return this.tools.size;
  }

  /** A copy of this registry; changes to either do not affect the other. */
  clone(): ToolRegistry {
    return new ToolRegistry(this.tools.values());
  }

  /** The tool specs sent to the model, sorted by name. */
  specs(): ToolSpec[] {
    this.cachedSpecs ??= this.names().map((name) => {
      const tool = this.tools.get(name)!;
      return {
        type: 'function',
        function: {
          name: tool.name,
          description: tool.description,
          parameters: tool.parameters as unknown as Record<string, unknown>,
        },
      };
    });
    return this.cachedSpecs;
  }

  /**
   * Parses and validates one call. Unknown tools, malformed JSON and invalid arguments give a
   * ready unsuccessful result that tells the model how to correct the call.
   */
  prepare(call: RawToolCall): PreparedToolCall {
    const tool = this.tools.get(call.name);
    let parsed: unknown = call.arguments;
    if (call.truncated === true) {
      return {
        ok: false,
        id: call.id,
        name: call.name,
        arguments: call.arguments,
        result: {
          success: false,
          content: `Error: your call to '${call.name}' was cut off: the answer reached the output token limit (finish_reason length) before its arguments were complete. Nothing was run. Call the tool again with shorter arguments (for example, write a large file in several smaller calls).\nArguments received: ${truncateOutput(typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments), 2_000)}`,
          metadata: { error: 'truncated_arguments' },
        },
      };
    }
    if (typeof call.arguments === 'string') {
      const text = call.arguments.trim();
      if (text === '') {
        parsed = {};
      } else {
        try {
          parsed = JSON.parse(text);
        } catch (error) {
          return {
            ok: false,
            id: call.id,
            name: call.name,
            arguments: call.arguments,
            result: {
              success: false,
              content: `Error: the arguments of your call to '${call.name}' are not valid JSON (${(error as Error).message}). Nothing was run. Call the tool again with the arguments as one JSON object.\nArguments received: ${truncateOutput(call.arguments, 2_000)}`,
              metadata: { error: 'malformed_arguments' },
            },
          };
        }
      }
    }
    if (tool === undefined) {
      const available = this.names();
      return {
        ok: false,
        id: call.id,
        name: call.name,
        arguments: parsed,
        result: {
          success: false,
          content: `Error: unknown tool '${call.name}': ${available.length === 0 ? 'this agent has no tools' : `the tool name must be ${oneOf(available)}`}.`,
          metadata: { error: 'unknown_tool' },
        },
      };
    }
    const validation = validateArguments(tool.parameters, parsed);
    if (!validation.ok) {
      return {
        ok: false,
        id: call.id,
        name: call.name,
        arguments: parsed,
        result: {
          success: false,
          content: `Error: invalid arguments for tool '${tool.name}': ${validation.problems.join('; ')}. Nothing was run. Fix the arguments and call the tool again.`,
          metadata: { error: 'invalid_arguments', problems: validation.problems },
        },
      };
    }
    return { ok: true, id: call.id, tool, arguments: validation.value };
  }

  /**
   * Runs a prepared call. Thrown errors become an unsuccessful result; cancellation (an aborted
   * `context.signal`) is reported as such. Output is truncated past `maxOutputBytes`.
   */
  async run(
    call: Extract<PreparedToolCall, { ok: true }>,
    context: ToolContext,
    maxOutputBytes: number = MAX_TOOL_OUTPUT_BYTES,
  ): Promise<ToolResult> {
    let result: ToolResult;
    try {
      const handled = (async () =>
        call.tool.handle({ callId: call.id, toolName: call.tool.name, arguments: call.arguments }, context))();
      const settled = await settleOrAbandon(handled, context.signal, this.cancelGraceMs);
      if (settled === ABANDONED) {
        return {
          success: false,
          content: `Cancelled: the run was stopped while this tool was running, and the tool did not stop within ${this.cancelGraceMs / 1000} s of being asked to; it was abandoned.`,
          metadata: { error: 'cancelled', abandoned: true },
        };
      }
      result = settled;
      if (typeof result?.content !== 'string' || typeof result.success !== 'boolean') {
        result = {
          success: false,
          content: `Tool '${call.tool.name}' returned an invalid result (expected { content: string, success: boolean }).`,
          metadata: { error: 'invalid_result' },
        };
      }
    } catch (error) {
      if (context.signal.aborted) {
        return {
          success: false,
          content: 'Cancelled: the run was stopped while this tool was running.',
          metadata: { error: 'cancelled' },
        };
      }
      const name = error instanceof Error ? error.name : 'Error';
      const message = error instanceof Error ? error.message : String(error);
      result = {
        success: false,
        content: `Tool '${call.tool.name}' failed: ${name}: ${message}\nArguments: ${JSON.stringify(call.arguments)}`,
        metadata: { error: 'exception', exception: name },
      };
    }
    // Known secrets go before the output is cut: a secret cut in two would no longer be recognised.
    if (context.redactor !== undefined) result = redactResult(result, context.redactor);
    const content = truncateOutput(result.content, maxOutputBytes);
    return content === result.content
      ? result
      : { ...result, content, metadata: { ...result.metadata, truncated: true } };
  }

  /** Prepares and runs one call. */
  async dispatch(call: RawToolCall, context: ToolContext): Promise<ToolResult> {
    const prepared = this.prepare(call);
    return prepared.ok ? this.run(prepared, context) : prepared.result;
  }
}

/** A result with the known secrets of its content and metadata replaced (itself when it has none). */
function redactResult(result: ToolResult, redactor: SecretRedactor): ToolResult {
  const content = redactor.text(result.content);
  const metadata = result.metadata === undefined ? undefined : redactor(result.metadata);
  if (content === result.content && metadata === result.metadata) return result;
  return { ...result, content, ...(metadata === undefined ? {} : { metadata }) };
}
