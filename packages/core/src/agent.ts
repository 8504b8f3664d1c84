import type { ModelClient, ModelClientOptions } from '@rho/model-client';
import { createModelClient } from '@rho/model-client';
import type { ExecutionBackend } from './execution-backend.js';
import { createLocalBackend } from './local-backend.js';
import type { CompactionOptions } from './compaction.js';
import type { Budgets, SessionOptions } from './session-options.js';
import { Session } from './session.js';
import { ToolRegistry } from './tool-registry.js';
import type { AnyTool } from './tool.js';
import type { AgentToolOptions } from './agent-tool.js';
import { createAgentTool } from './agent-tool.js';
import { approvalRequestedByTool, defaultApprovalPolicy } from './approval-policy.js';
import type { SecretInput, SecretRedactor } from './secret-redaction.js';
import { createSecretRedactor, mergeSecretRedactors } from './secret-redaction.js';

/** Whether a tool call needs approval, and why. */
export interface ApprovalDecision {
  /** Whether a person (the session's approver) must approve the call before it runs. */
  required: boolean;
  /** Why; shown to the approver, and to the model when the call is refused. */
  reason?: string;
  /**
   * The dangerous pattern the call matched, when approval is asked because of one: such a call
   * is never approved by a timeout, a hook or an "always this tool" answer.
   */
  dangerous?: string;
}

/**
 * Decides which tool calls need approval, from the tool (its name and annotations) and the
 * call's arguments: for example `approvalPolicy(profile)` of `@rho/permissions`. `true` is
 * `{ required: true }`.
 */
export type ApprovalPolicy = (tool: AnyTool, args: Record<string, unknown>) => ApprovalDecision | boolean;

/** Configuration of an {@link Agent}. */
export interface AgentOptions {
  /** The system prompt. */
  systemPrompt?: string;
  /** The model; `OPENAI_MODEL`-style defaults are the caller's business. Default `gpt-5-mini`. */
  model?: string;
  /** Tools, or a registry to share. */
  tools?: Iterable<AnyTool> | ToolRegistry;
  /**
   * How to reach the model: a ready client, a factory (called once per session), or options for
   * the OpenAI-compatible client.
   */
  client?: ModelClient | (() => ModelClient);
  /** Options of the OpenAI-compatible client when `client` is not given. */
  clientOptions?: Omit<ModelClientOptions, 'model'>;
  /** Working directory of tools; relative paths in tool arguments resolve against it. Default: the process's. */
  workingDir?: string;
  /** Where tools run processes and touch files. Default: this machine. */
  backend?: ExecutionBackend;
  /**
   * The one decision of which calls need approval. Default {@link defaultApprovalPolicy}: calls
   * of tools annotated `destructive` need approval, others do not.
   */
  approvalPolicy?: ApprovalPolicy;
  /** Default budgets of sessions. */
  budgets?: Budgets;
  /** When and how to compact history (automatic by default when the model's window is known). */
  compaction?: CompactionOptions;
  /**
   * Secrets the model and the trace must never see (API keys, database passwords, tokens), named
   * (`{ name: 'OPENAI_API_KEY', value }`, replaced with `[REDACTED:OPENAI_API_KEY]`) or not. Every
   * session of this agent replaces them, and the password of any URL, in every tool result (before
   * long output is cut) and every trace record before the model, the trace or an observer sees it.
   */
  secrets?: Iterable<SecretInput>;
  /** A redactor made with `createSecretRedactor` (shared with other sinks); merged with `secrets`. */
  redactor?: SecretRedactor;
}

/**
 * The stateless half of an agent: configuration, tools and how to reach the model. One Agent
 * backs any number of concurrent Sessions; each Session holds its own conversation.
 */
export class Agent {
  readonly systemPrompt: string;
  readonly model: string;
  readonly registry: ToolRegistry;
  readonly workingDir: string;
  readonly backend: ExecutionBackend;
  readonly budgets: Budgets;
  readonly compaction: CompactionOptions;
  /** The redactor of every session of this agent (from `secrets` and `redactor`), if any. */
  readonly redactor: SecretRedactor | undefined;
  private readonly client: ModelClient | (() => ModelClient) | undefined;
  private readonly clientOptions: Omit<ModelClientOptions, 'model'> | undefined;
  private readonly approvalPolicy: ApprovalPolicy;
  private readonly options: AgentOptions;

  constructor(options: AgentOptions = {}) {
    this.options = options;
    this.systemPrompt = options.systemPrompt ?? 'You are a helpful assistant.';
    this.model = options.model ?? 'gpt-5-mini';
    this.registry = options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools ?? []);
    this.workingDir = options.workingDir ?? process.cwd();
    this.backend = options.backend ?? createLocalBackend();
    this.budgets = options.budgets ?? {};
    this.compaction = options.compaction ?? {};
    this.client = options.client;
    this.clientOptions = options.clientOptions;
    this.approvalPolicy = options.approvalPolicy ?? defaultApprovalPolicy;
    this.redactor = mergeSecretRedactors(
      options.redactor,
      options.secrets === undefined ? undefined : createSecretRedactor(options.secrets),
    );
  }

  /** A model client for a new session. */
  createClient(): ModelClient {
    if (typeof this.client === 'function') return this.client();
    if (this.client !== undefined) return this.client;
    return createModelClient({ ...this.clientOptions, model: this.model });
  }

  /**
   * Whether a call of `tool` with `args` needs approval: the one place this is decided. The
   * agent's approval policy decides; a tool object that still carries a `requiresApproval` of
   * its own (an earlier tool contract) is asked as well and can only add approval, never remove
   * it; a policy that throws asks for approval, so an error never lets a call through unasked.
   */
  approvalFor(tool: AnyTool, args: Record<string, unknown>): ApprovalDecision {
    let decision: ApprovalDecision;
    try {
      const answer = this.approvalPolicy(tool, args);
      decision =
        typeof answer === 'boolean' ? { required: answer } : { ...answer, required: answer.required !== false };
    } catch (error) {
      decision = {
        required: true,
        reason: `the approval policy failed for ${tool.name} (${error instanceof Error ? error.message : String(error)})`,
      };
    }
    if (decision.required) return decision;
    return approvalRequestedByTool(tool, args) ?? decision;
  }

  /**
   * A new agent with the same configuration, changed by `overrides`. Tools given as a registry
   * are copied, so changing the new agent's tools leaves this one's alone.
   */
  derive(overrides: AgentOptions = {}): Agent {
    const { secrets: _secrets, ...options } = this.options;
    return new Agent({
      ...options,
      ...(this.redactor === undefined ? {} : { redactor: this.redactor }),
      tools: this.registry.clone(),
      backend: this.backend,
      workingDir: this.workingDir,
      ...overrides,
    });
  }

  /**
   * This agent as a tool another agent can call: each call runs a new, independent session of
   * this agent on the formatted input and answers with its final text.
   */
  asTool(options: AgentToolOptions): AnyTool {
    return createAgentTool(this, options);
  }

  /** A new session of this agent. */
  createSession(options: SessionOptions = {}): Session {
    return new Session(this, options);
  }
}
