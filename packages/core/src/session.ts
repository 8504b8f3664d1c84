import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { ChatMessage, ChatToolCall, ContextWindowInfo, ModelClient, ModelRequest, ModelToolCall, Usage } from '@rho/model-client';
import { ModelApiError, RhoError } from '@rho/model-client';
import type { CompactResult } from './compaction.js';
import { AUTO_COMPACT_THRESHOLD, COMPACTION_PROMPT, messagesToKeep, SUMMARY_PREFIX } from './compaction.js';
import { ContextWindowResolver } from './context-window-resolver.js';
import type { Agent, ApprovalDecision } from './agent.js';
import type { ControlChannel } from './control-channel.js';
import { FileControlChannel } from './control-channel.js';
import { ConfigError, InternalError, SessionWriteError } from './errors.js';
import type { RunStatus, SessionEvent, SessionStatus, UsageTotals } from './events.js';
import { reportedUsage, timestamp } from './events.js';
import { processIdentity, updateSessionMeta } from './session-meta.js';
import { DIRECTIVE_PREFIX, State } from './state.js';
import type { PreparedToolCall } from './tool-registry.js';
import type { ToolContext, ToolResult } from './tool.js';
import { JsonlTraceSink } from './trace-sink.js';
import { SessionLock } from './session-lock.js';

/** What an approver is asked. */
export interface ApprovalRequest {
  toolName: string;
  toolCallId: string;
  arguments: Record<string, unknown>;
  /** Why approval is needed (the policy's reason). */
  reason?: string;
  sessionId: string;
}

/** Answers approval requests: true approves, false rejects. */
export type Approver = (request: ApprovalRequest) => Promise<boolean> | boolean;

/** Limits checked before every model call. Reaching one ends the run with status `limit`. */
export interface Budgets {
  /** Model calls per run. */
  maxTurns?: number;
  /** Input + output tokens of the whole session. */
  maxTokens?: number;
  /** Cost of the whole session in USD. */
  maxCostUsd?: number;
  /** Wall-clock time of one run in milliseconds. */
  maxDurationMs?: number;
}

/** Options of a Session. */
export interface SessionOptions {
  /** Session id; a new random id by default. */
  id?: string;
  /** Existing state to continue (for example from `State.fromJsonl`). */
  state?: State;
  /** The session directory: enables `trace.jsonl`, `meta.json` and the file control channel. */
  directory?: string;
  /** Where the trace goes when there is no directory. */
  tracePath?: string;
  /** The model client; by default the agent creates one. */
  client?: ModelClient;
  /** The control channel; the file channel of `directory` by default. */
  control?: ControlChannel;
  /** Answers approval requests. Without one, calls that need approval are denied with a reason. */
  approver?: Approver;
  /** Receives every event: trace records and transient text deltas. */
  onEvent?: (event: SessionEvent) => void;
  /** Budgets; the agent's by default. */
  budgets?: Budgets;
  /** How often (ms) to poll the control channel and refresh the heartbeat while running. */
  pollIntervalMs?: number;
  /**
   * The lock of `directory`, already taken by the caller (who releases it), for example before
   * replaying the trace. Without one, each run takes the lock itself and releases it when it ends.
   */
  lock?: SessionLock;
}

/** Options of one run. */
export interface RunOptions {
  /** Aborting it cancels the run, like `session.cancel()`. */
  signal?: AbortSignal;
  /** Receives this run's events, in addition to the session's `onEvent`. */
  onEvent?: (event: SessionEvent) => void;
  /** Overrides the budget's `maxTurns` for this run. */
  maxTurns?: number;
}

/** The outcome of a run. */
export interface RunResult {
  /** How the run ended. */
  status: RunStatus;
  /** The final answer: the text of the last assistant message of the run. */
  text: string;
  /** Cumulative usage of the session after the run. */
  usage: UsageTotals;
  /** Usage of this run alone. */
  runUsage: UsageTotals;
  /** For status `limit`: which budget ended the run. */
  limit?: string;
  /** For status `error`: what went wrong. */
  error?: RhoError;
}

const CANCELLED_BEFORE_RUN = 'Cancelled: the run was stopped before this tool call ran. Nothing was executed.';
const REJECTED = 'Command rejected by user. Awaiting new instructions.';
const SKIPPED_AFTER_REJECTION = 'Command skipped - user rejected previous command.';
const CANCELLED = Symbol('cancelled');

/**
 * Drives the agent loop for one conversation: model call, tool calls, repeat, until the model
 * answers without tools. A Session holds the conversation's State; the Agent it belongs to is
 * stateless and can back many sessions at once. Runs of one session are sequential.
 */
export class Session {
  readonly id: string;
  readonly agent: Agent;
  readonly state: State;
  readonly directory: string | undefined;
  readonly client: ModelClient;
  /** Answers approval requests; may be set or replaced between runs. */
  approver: Approver | undefined;
  private readonly control: ControlChannel | undefined;
  private readonly onEvent: ((event: SessionEvent) => void) | undefined;
  private readonly budgets: Budgets;
  private readonly pollIntervalMs: number;
  private controller: AbortController | undefined;
  private running = false;
  private runStartedAt = 0;
  private readonly heldLock: SessionLock | undefined;
  private readonly window: ContextWindowResolver;

  constructor(agent: Agent, options: SessionOptions = {}) {
    this.agent = agent;
    this.id = options.id ?? randomUUID();
    this.directory = options.directory;
    this.state = options.state ?? new State();
    const tracePath = options.tracePath ?? (this.directory === undefined ? undefined : join(this.directory, 'trace.jsonl'));
    if (tracePath !== undefined) this.state.setSink(new JsonlTraceSink(tracePath));
    this.client = options.client ?? agent.createClient();
    this.control = options.control ?? (this.directory === undefined ? undefined : new FileControlChannel(this.directory));
    this.approver = options.approver;
    this.onEvent = options.onEvent;
    this.budgets = options.budgets ?? agent.budgets;
    this.pollIntervalMs = options.pollIntervalMs ?? 200;
    this.heldLock = options.lock;
    this.window = new ContextWindowResolver(agent.compaction, this.client);
  }

  /** Whether a run is in progress. */
  get isRunning(): boolean {
    return this.running;
  }

  /**
   * Cancels the current run: the in-flight model stream and the running tool are aborted, every
   * pending tool call gets a result, and the run ends with status `cancelled`.
   */
  cancel(): void {
    this.controller?.abort(new RhoError('cancelled', { message: 'The run was cancelled.' }));
  }

  /**
   * What is left of this session's budgets right now, for a child session that must stay within
   * them: tokens and cost left, time left of the current run, and the same turn limit per run.
   */
  remainingBudgets(): Budgets {
    const { maxTurns, maxTokens, maxCostUsd, maxDurationMs } = this.budgets;
    const usage = this.state.usage;
    const remaining: Budgets = {};
    if (maxTurns !== undefined) remaining.maxTurns = maxTurns;
    if (maxTokens !== undefined) remaining.maxTokens = Math.max(0, maxTokens - usage.input_tokens - usage.output_tokens);
    if (maxCostUsd !== undefined) remaining.maxCostUsd = Math.max(0, maxCostUsd - usage.cost_usd);
    if (maxDurationMs !== undefined) remaining.maxDurationMs = Math.max(0, maxDurationMs - (this.running ? Date.now() - this.runStartedAt : 0));
    return remaining;
  }

  /**
   * Adds a child session's usage to this session's totals (and trace), so it shows in the
   * session's cost and counts against its budgets.
   */
  recordChildUsage(childSessionId: string, usage: UsageTotals, model: string): void {
    this.state.append({
      type: 'llm_end',
      model,
      input_tokens: usage.input_tokens,
      output_tokens: usage.output_tokens,
      cache_read_tokens: usage.cached_tokens,
      reasoning_tokens: usage.reasoning_tokens,
      cost_usd: usage.cost_usd,
      duration_ms: 0,
      purpose: 'child_session',
      ...((usage.unpriced_calls ?? 0) > 0 ? { unpriced_calls: usage.unpriced_calls } : {}),
      child_session_id: childSessionId,
    });
  }

  /**
   * Runs one task to completion (or cancellation, a limit, an error). Never throws for run
   * failures; throws `SessionLockedError` before doing anything when another process runs the
   * session (it holds the session directory's lock).
   */
  async run(prompt: string, options: RunOptions = {}): Promise<RunResult> {
    if (this.running) throw new ConfigError({ message: 'This session is already running; wait for run() to finish or cancel() it first.', code: 'session_busy' });
    // One writer per session directory: another process running it makes this throw SessionLockedError.
    const runLock = this.directory !== undefined && this.heldLock === undefined ? SessionLock.acquire(this.directory) : undefined;
    this.running = true;
    const controller = new AbortController();
    this.controller = controller;
    const external = options.signal;
    const onExternalAbort = () => controller.abort(external?.reason);
    if (external?.aborted) controller.abort(external.reason);
    else external?.addEventListener('abort', onExternalAbort, { once: true });
    const listeners = [this.onEvent, options.onEvent].filter((listener): listener is (event: SessionEvent) => void => listener !== undefined);
    const removeObserver = listeners.length > 0 ? this.state.addObserver((record) => emit(listeners, record)) : undefined;
    const usageBefore = { ...this.state.usage };
    const startedAt = Date.now();
    this.runStartedAt = startedAt;
    let status: RunStatus = 'completed';
    let limit: string | undefined;
    let failure: RhoError | undefined;
    let finalText = '';
    const stopPolling = this.startPolling(controller);
    try {
      this.state.append({ type: 'run_start', prompt });
      this.writeMeta({ status: 'running', ...processIdentity(), heartbeat_at: timestamp(), ...(this.state.runCount === 1 && prompt !== '' ? { first_prompt: prompt } : {}) });
      if (prompt !== '') this.state.addMessage({ role: 'user', content: prompt });
      const budgets: Budgets = { ...this.budgets, ...(options.maxTurns === undefined ? {} : { maxTurns: options.maxTurns }) };
      let turns = 0;
      for (;;) {
        if (!(await this.checkpoint(controller))) {
          status = 'cancelled';
          break;
        }
        await this.deliverDirectives();
        const reached = reachedLimit(budgets, turns, this.state.usage, startedAt);
        if (reached !== undefined) {
          limit = reached;
          status = 'limit';
          finalText = await this.finalTurnAtLimit(reached, controller, listeners);
          break;
        }
        if (await this.compactionDue(controller.signal)) {
          await this.compactNow({ trigger: 'auto', signal: controller.signal });
          if (controller.signal.aborted) {
            status = 'cancelled';
            break;
          }
        }
        turns += 1;
        const outcome = await this.modelTurn(controller, listeners, true);
        if (outcome.kind === 'cancelled') {
          status = 'cancelled';
          break;
        }
        if (outcome.kind === 'error') {
          status = 'error';
          failure = outcome.error;
          break;
        }
        if (outcome.text !== '') finalText = outcome.text;
        if (outcome.toolCalls.length === 0) {
          // An answer cut off at the model's output limit is not a finished answer.
          if (outcome.finishReason === 'length') status = 'truncated';
          break;
        }
        const toolOutcome = await this.runToolCalls(outcome.toolCalls, controller);
        if (toolOutcome === 'cancelled') {
          status = 'cancelled';
          break;
        }
        if (toolOutcome === 'rejected') break;
      }
    } catch (error) {
      status = controller.signal.aborted ? 'cancelled' : 'error';
      failure = RhoError.isInstance(error)
        ? error
        : new InternalError({ message: `Unexpected failure in the agent loop: ${error instanceof Error ? error.message : String(error)}. This is a bug in rho; please report it with the session's trace.jsonl.`, cause: error });
      if (status === 'error') this.safeAppend({ type: 'error', content: failure.message, code: failure.code });
    } finally {
      stopPolling();
      external?.removeEventListener('abort', onExternalAbort);
      const runUsage = difference(this.state.usage, usageBefore);
      this.safeAppend({ type: 'run_end', status, usage: reportedUsage(this.state.usage), ...(limit === undefined ? {} : { limit }), ...(status === 'truncated' ? { finish_reason: 'length' } : {}) });
      removeObserver?.();
      try {
        this.writeMeta({ status, cost_usd: reportedUsage(this.state.usage).cost_usd, ...(limit === undefined ? {} : { limit }) });
        await this.control?.clearCancel();
      } catch {
        // Meta and control files are best effort; the trace is the source of truth.
      }
      this.controller = undefined;
      this.running = false;
      runLock?.release();
      return { status, text: finalText, usage: { ...this.state.usage }, runUsage, ...(limit === undefined ? {} : { limit }), ...(failure === undefined ? {} : { error: failure }) };
    }
  }

  /**
   * Replaces history with a summary written by the model, keeping the original task and the
   * latest user messages verbatim. The summary is written to the trace, so a resumed session
   * continues from it. When summarisation fails, history is left untouched and the error is
   * reported (and recorded).
   */
  async compact(options: { instructions?: string; signal?: AbortSignal } = {}): Promise<CompactResult> {
    if (this.running) throw new ConfigError({ message: 'Cannot compact while a run is in progress; wait for it to finish.', code: 'session_busy' });
    const lock = this.directory !== undefined && this.heldLock === undefined ? SessionLock.acquire(this.directory) : undefined;
    try {
      await this.resolveContextWindow(options.signal);
      return await this.compactNow({ trigger: 'manual', ...options });
    } finally {
      lock?.release();
    }
  }

  /** The context window used for automatic compaction, once resolved (the first run resolves it). */
  get contextWindow(): number | undefined {
    return this.window.info?.tokens;
  }

  /** The context window and where it came from (flag, env, config, discovered, table, default), once resolved. */
  get contextWindowInfo(): ContextWindowInfo | undefined {
    return this.window.info;
  }

  /**
   * Resolves the context window once per session: the agent's setting, else the server's answer
   * (bounded by a short timeout), the table of known models, the default. Never throws.
   */
  resolveContextWindow(signal?: AbortSignal): Promise<ContextWindowInfo> {
    return this.window.resolve(signal);
  }

  private async compactionDue(signal: AbortSignal): Promise<boolean> {
    const { auto = true, threshold = AUTO_COMPACT_THRESHOLD } = this.agent.compaction;
    const window = (await this.resolveContextWindow(signal)).tokens;
    if (!auto || this.state.messages.length < 2) return false;
    const current = this.state.lastInputTokens ?? this.state.estimateTokens(this.agent.systemPrompt);
    return current > Math.floor(window * threshold);
  }

  private async compactNow(options: { trigger: 'auto' | 'manual'; instructions?: string; signal?: AbortSignal }): Promise<CompactResult> {
    const { trigger } = options;
    const tokensBefore = this.state.lastInputTokens ?? this.state.estimateTokens(this.agent.systemPrompt);
    const guidance = options.instructions !== undefined && options.instructions.trim() !== '' ? `\n\nUser guidance: ${options.instructions.trim()}` : '';
    // Same system prompt and tools as the conversation, so the provider's prompt cache is reused.
    const request: ModelRequest = {
      messages: [{ role: 'system', content: this.agent.systemPrompt }, ...this.state.messages, { role: 'user', content: `${COMPACTION_PROMPT}${guidance}` }],
      ...(this.agent.registry.size > 0 ? { tools: this.agent.registry.specs() } : {}),
    };
    this.state.append({ type: 'llm_start', model: this.client.model, context_size: tokensBefore, ...this.window.traceFields(), purpose: 'compaction' });
    const started = performance.now();
    let summary: string;
    let ended = false;
    try {
      const response = await this.client.complete(request, options.signal, {
        onRetry: (notice) => this.state.append({ type: 'retry', attempt: notice.attempt, max_attempts: notice.maxAttempts, delay_ms: notice.delayMs, reason: notice.reason, ...(notice.statusCode === undefined ? {} : { status_code: notice.statusCode }), purpose: 'compaction' }),
      });
      ended = true;
      this.state.append({
        type: 'llm_end',
        model: response.model || this.client.model,
        input_tokens: response.usage?.inputTokens ?? 0,
        output_tokens: response.usage?.outputTokens ?? 0,
        cache_read_tokens: response.usage?.cachedTokens ?? 0,
        reasoning_tokens: response.usage?.reasoningTokens ?? 0,
        cost_usd: response.usage === null ? null : response.usage.costUsd,
        duration_ms: Math.round(performance.now() - started),
        finish_reason: response.finishReason,
        purpose: 'compaction',
        ...(response.usage === null ? { usage_reported: false } : {}),
      });
      summary = response.text.trim();
      if (summary === '') throw new ModelApiError({ message: 'The model returned an empty summary.', isRetryable: false });
    } catch (error) {
      if (SessionWriteError.isInstance(error)) throw error;
      if (!ended) {
        // The call failed: it still ends, so every llm_start has its llm_end.
        this.state.append({ type: 'llm_end', model: this.client.model, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, reasoning_tokens: 0, cost_usd: null, duration_ms: Math.round(performance.now() - started), finish_reason: null, purpose: 'compaction', usage_reported: false });
      }
      const message = `Compaction failed, history left unchanged: ${error instanceof Error ? error.message : String(error)}`;
      this.safeAppend({ type: 'error', content: message, code: 'compaction_failed' });
      return { ok: false, error: message, trigger };
    }
    const kept = messagesToKeep(this.state.messages);
    const content = `${SUMMARY_PREFIX}\n\n${summary}`;
    const after = new State();
    after.messages = [...kept, { role: 'user', content }];
    const tokensAfter = after.estimateTokens(this.agent.systemPrompt);
    this.state.append({ type: 'compact', trigger, tokens_before: tokensBefore, tokens_after: tokensAfter, summary: content, kept });
    return { ok: true, summary, tokensBefore, tokensAfter, trigger };
  }

  /** One model call; records the assistant message. */
  private async modelTurn(
    controller: AbortController,
    listeners: ((event: SessionEvent) => void)[],
    withTools: boolean,
    extraMessages: ChatMessage[] = [],
  ): Promise<{ kind: 'ok'; text: string; toolCalls: ModelToolCall[]; finishReason: string | null } | { kind: 'cancelled' } | { kind: 'error'; error: RhoError }> {
    const request: ModelRequest = {
      messages: [{ role: 'system', content: this.agent.systemPrompt }, ...this.state.messages, ...extraMessages],
      ...(withTools && this.agent.registry.size > 0 ? { tools: this.agent.registry.specs() } : {}),
    };
    const model = this.client.model;
    this.state.append({ type: 'llm_start', model, context_size: this.state.lastInputTokens ?? this.state.estimateTokens(this.agent.systemPrompt), ...this.window.traceFields() });
    const started = performance.now();
    let text = '';
    let refusal = '';
    const toolCalls: ModelToolCall[] = [];
    let usage: Usage | null = null;
    let finishReason: string | null = null;
    let reportedModel = model;
    let error: RhoError | undefined;
    try {
      for await (const event of this.client.stream(request, controller.signal)) {
        switch (event.type) {
          case 'text':
            text += event.text;
            if (listeners.length > 0) emit(listeners, { type: 'text', ts: timestamp(), text: event.text });
            break;
          case 'reasoning':
            if (listeners.length > 0) emit(listeners, { type: 'reasoning', ts: timestamp(), text: event.text });
            break;
          case 'refusal':
            refusal += event.text;
            break;
          case 'tool_call':
            toolCalls.push(event.toolCall);
            break;
          case 'done':
            usage = event.usage;
            finishReason = event.finishReason;
            reportedModel = event.model || model;
            break;
          case 'error':
            error = event.error;
            break;
          case 'retry':
            // The failed attempt produced nothing; the record makes the wait visible (replay ignores it).
            this.state.append({ type: 'retry', attempt: event.attempt, max_attempts: event.maxAttempts, delay_ms: event.delayMs, reason: event.reason, ...(event.statusCode === undefined ? {} : { status_code: event.statusCode }) });
            break;
          default: {
            const unknown: never = event;
            void unknown;
          }
        }
        if (controller.signal.aborted) break;
      }
    } catch (thrown) {
      if (!controller.signal.aborted) {
        error = RhoError.isInstance(thrown) ? thrown : new ModelApiError({ message: `The model call failed: ${thrown instanceof Error ? thrown.message : String(thrown)}`, isRetryable: false, cause: thrown });
      }
    }
    this.state.append({
      type: 'llm_end',
      model: reportedModel,
      input_tokens: usage?.inputTokens ?? 0,
      output_tokens: usage?.outputTokens ?? 0,
      cache_read_tokens: usage?.cachedTokens ?? 0,
      reasoning_tokens: usage?.reasoningTokens ?? 0,
      cost_usd: usage === null ? null : usage.costUsd,
      duration_ms: Math.round(performance.now() - started),
      finish_reason: finishReason,
      ...(usage === null ? { usage_reported: false } : {}),
    });
    // A refusal is recorded whatever happens next: it is what the model said instead of an answer.
    if (refusal !== '') this.state.append({ type: 'refusal', content: refusal });
    if (controller.signal.aborted) {
      // Keep what the model already said; drop tool calls that were never acted on.
      if (text !== '') this.state.addMessage({ role: 'assistant', content: text });
      return { kind: 'cancelled' };
    }
    if (error !== undefined) {
      // Text already streamed to the user is kept with the error (it is not an answer, so it does
      // not enter the history).
      this.state.append({ type: 'error', content: error.message, code: error.code, ...(text === '' ? {} : { partial_text: text }) });
      return { kind: 'error', error };
    }
    if (toolCalls.length > 0) {
      // extra_content (Gemini's thought signature) stays on the call: the provider needs it back.
      const calls: ChatToolCall[] = toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments }, ...(call.extraContent === undefined ? {} : { extra_content: call.extraContent }) }));
      // Text streamed alongside tool calls is part of the answer: keep it in history.
      this.state.addMessage({ role: 'assistant', content: text === '' ? null : text, tool_calls: calls });
    } else {
      this.state.addMessage({ role: 'assistant', content: text });
    }
    return { kind: 'ok', text, toolCalls, finishReason };
  }

  /** Runs the tool calls of one response. Every call gets exactly one result. */
  private async runToolCalls(toolCalls: ModelToolCall[], controller: AbortController): Promise<'done' | 'cancelled' | 'rejected'> {
    const registry = this.agent.registry;
    const prepared = toolCalls.map((call) => registry.prepare({ id: call.id, name: call.name, arguments: call.arguments, ...(call.truncated === true ? { truncated: true } : {}) }));
    const context: ToolContext = { signal: controller.signal, sessionId: this.id, workingDir: this.agent.workingDir, backend: this.agent.backend, session: this };
    const concurrent = prepared.length > 1 && prepared.every((call) => call.ok && call.tool.annotations?.readOnly === true);
    const results = new Map<string, { result: ToolResult; started: number; ran: boolean }>();
    const pending: Promise<void>[] = [];
    let outcome: 'done' | 'cancelled' | 'rejected' = 'done';

    const finish = (call: PreparedToolCall, result: ToolResult, started: number, ran: boolean) => {
      this.state.addMessage({ role: 'tool', tool_call_id: call.id, content: result.content });
      if (ran) {
        this.state.append({
          type: 'tool_end',
          tool_call_id: call.id,
          tool_name: call.ok ? call.tool.name : call.name,
          success: result.success,
          duration_ms: Math.round(performance.now() - started),
          ...(result.metadata === undefined ? {} : { metadata: result.metadata }),
        });
      }
    };

    for (const call of prepared) {
      const name = call.ok ? call.tool.name : call.name;
      if (outcome !== 'done') {
        results.set(call.id, { result: { success: false, content: outcome === 'rejected' ? SKIPPED_AFTER_REJECTION : CANCELLED_BEFORE_RUN }, started: 0, ran: false });
        continue;
      }
      if (!(await this.checkpoint(controller))) {
        outcome = 'cancelled';
        results.set(call.id, { result: { success: false, content: CANCELLED_BEFORE_RUN }, started: 0, ran: false });
        continue;
      }
      if (!call.ok) {
        // Malformed, unknown or invalid: the model reads why and corrects itself.
        const started = performance.now();
        this.state.append({ type: 'tool_start', tool_call_id: call.id, tool_name: name, tool_args: call.arguments });
        results.set(call.id, { result: call.result, started, ran: true });
        continue;
      }
      const decision = this.agent.approvalFor(call.tool, call.arguments);
      if (decision.required) {
        const answer = await this.askApproval(call, decision, controller);
        if (answer === CANCELLED || controller.signal.aborted) {
          // Cancelled while waiting for the answer: the run ends cancelled, not as a rejection.
          outcome = 'cancelled';
          results.set(call.id, { result: { success: false, content: CANCELLED_BEFORE_RUN }, started: 0, ran: false });
          continue;
        }
        if (answer !== true) {
          const reason = answer === false ? 'rejected by the user' : answer;
          this.state.append({ type: 'tool_blocked', tool_call_id: call.id, tool_name: name, tool_args: call.arguments, reason });
          if (answer === false) {
            outcome = 'rejected';
            results.set(call.id, { result: { success: false, content: REJECTED }, started: 0, ran: false });
          } else {
            results.set(call.id, { result: { success: false, content: `Not run: ${answer}` }, started: 0, ran: false });
          }
          continue;
        }
      }
      const started = performance.now();
      this.state.append({ type: 'tool_start', tool_call_id: call.id, tool_name: name, tool_args: call.arguments });
      const execution = registry.run(call, context).then((result) => {
        results.set(call.id, { result, started, ran: true });
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
      finish(call, entry.result, entry.started, entry.ran);
    }
    return outcome;
  }

  /** Asks the approver; returns true, false (rejected by the user), a reason it was denied, or CANCELLED. */
  private async askApproval(call: Extract<PreparedToolCall, { ok: true }>, decision: ApprovalDecision, controller: AbortController): Promise<true | false | string | typeof CANCELLED> {
    if (this.approver === undefined) {
      return `'${call.tool.name}' needs approval${decision.reason === undefined ? '' : ` (${decision.reason})`}, and nobody can approve in this session (it runs without an approver). Do not retry it; use another way, or tell the user that this step needs approval (for example by rerunning rho with --auto-approve).`;
    }
    this.setStatus('waiting_approval');
    try {
      const approved = await Promise.race([
        Promise.resolve(this.approver({ toolName: call.tool.name, toolCallId: call.id, arguments: call.arguments, sessionId: this.id, ...(decision.reason === undefined ? {} : { reason: decision.reason }) })),
        abortPromise(controller.signal),
      ]);
      if (controller.signal.aborted) return CANCELLED;
      return approved === true;
    } finally {
      this.setStatus('running');
    }
  }

  /**
   * Before a model call or a tool call: holds while paused, returns false when cancelled.
   */
  private async checkpoint(controller: AbortController): Promise<boolean> {
    if (controller.signal.aborted) return false;
    if (this.control === undefined) return true;
    if (await this.control.isCancelRequested()) {
      controller.abort();
      return false;
    }
    if (!(await this.control.isPauseRequested())) return true;
    this.setStatus('paused');
    try {
      while (!controller.signal.aborted) {
        await delay(this.pollIntervalMs, controller.signal);
        if (await this.control.isCancelRequested()) {
          controller.abort();
          break;
        }
        if (!(await this.control.isPauseRequested())) break;
      }
    } finally {
      this.setStatus('running');
    }
    return !controller.signal.aborted;
  }

  /** Delivers queued operator directives as user messages, each exactly once. */
  private async deliverDirectives(): Promise<void> {
    if (this.control === undefined) return;
    const taken = await this.control.takeDirectives(this.state.directiveCursor);
    // Each record carries the cursor just past its own line: a crash between two directives of a
    // batch neither loses the second nor repeats the first.
    const items: { text: string; cursor: number; refused?: string }[] = taken.items ?? taken.texts.map((text) => ({ text, cursor: taken.cursor }));
    for (const item of items) {
      if (item.refused !== undefined) {
        this.state.append({ type: 'error', content: `Directive refused (not sent to the model): ${item.refused}`, code: 'directive_refused' });
        continue;
      }
      this.state.append({ type: 'directive', text: item.text, cursor: item.cursor });
      this.state.addMessage({ role: 'user', content: `${DIRECTIVE_PREFIX}${item.text}` }, { directive: true });
    }
    this.state.directiveCursor = taken.cursor;
  }

  /** A budget was reached: one last model call without tools to summarise, then stop. */
  private async finalTurnAtLimit(limit: string, controller: AbortController, listeners: ((event: SessionEvent) => void)[]): Promise<string> {
    this.state.addMessage({
      role: 'user',
      content: `[rho] The run has reached its ${describeLimit(limit)} and must stop now. Do not call tools. Reply with a short summary of what you did, what you found, and what remains to be done.`,
    });
    const outcome = await this.modelTurn(controller, listeners, false);
    if (outcome.kind !== 'ok') return '';
    // Offered no tools, the model may still call some: answer each (not run), so every call in
    // history has its result and a resumed session does not report them as interrupted.
    for (const call of outcome.toolCalls) {
      const reason = `the run reached its ${describeLimit(limit)}`;
      this.state.append({ type: 'tool_blocked', tool_call_id: call.id, tool_name: call.name, tool_args: parseArguments(call.arguments), reason });
      this.state.addMessage({ role: 'tool', tool_call_id: call.id, content: `Not run: ${reason}. No more tools can be called in this run.` });
    }
    return outcome.text;
  }

  private setStatus(status: SessionStatus): void {
    if (this.state.status === status) return;
    this.state.append({ type: 'status', status });
    this.writeMeta({ status, heartbeat_at: timestamp() });
  }

  private writeMeta(patch: Parameters<typeof updateSessionMeta>[1]): void {
    if (this.directory === undefined) return;
    try {
      updateSessionMeta(this.directory, { id: this.id, ...patch });
    } catch {
      // meta.json is a convenience for the monitor; the trace is the source of truth.
    }
  }

  /** Polls the control channel for cancel while a run is in progress and refreshes the heartbeat. */
  private startPolling(controller: AbortController): () => void {
    if (this.control === undefined && this.directory === undefined) return () => {};
    let ticks = 0;
    const heartbeatEvery = Math.max(1, Math.round(5_000 / this.pollIntervalMs));
    const timer = setInterval(() => {
      ticks += 1;
      void this.control?.isCancelRequested().then((cancelled) => {
        if (cancelled) controller.abort();
      }, () => {});
      if (ticks % heartbeatEvery === 0) this.writeMeta({ heartbeat_at: timestamp() });
    }, this.pollIntervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  private safeAppend(record: Parameters<State['append']>[0]): void {
    try {
      this.state.append(record);
    } catch {
      // A trace that cannot be written (disk full) must not hide the run's outcome.
    }
  }
}

function emit(listeners: ((event: SessionEvent) => void)[], event: SessionEvent): void {
  for (const listener of listeners) {
    try {
      listener(event);
    } catch {
      // A listener's failure must not break the run.
    }
  }
}

function reachedLimit(budgets: Budgets, turns: number, usage: UsageTotals, startedAt: number): string | undefined {
  if (budgets.maxTurns !== undefined && turns >= budgets.maxTurns) return 'max_turns';
  if (budgets.maxTokens !== undefined && usage.input_tokens + usage.output_tokens >= budgets.maxTokens) return 'max_tokens';
  if (budgets.maxCostUsd !== undefined && usage.cost_usd >= budgets.maxCostUsd) return 'max_cost_usd';
  if (budgets.maxDurationMs !== undefined && Date.now() - startedAt >= budgets.maxDurationMs) return 'max_duration_ms';
  return undefined;
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function describeLimit(limit: string): string {
  switch (limit) {
    case 'max_turns':
      return 'turn limit';
    case 'max_tokens':
      return 'token budget';
    case 'max_cost_usd':
      return 'cost budget';
    case 'max_duration_ms':
      return 'time limit';
    default:
      return `limit (${limit})`;
  }
}

function difference(after: UsageTotals, before: UsageTotals): UsageTotals {
  return {
    input_tokens: after.input_tokens - before.input_tokens,
    output_tokens: after.output_tokens - before.output_tokens,
    cached_tokens: after.cached_tokens - before.cached_tokens,
    reasoning_tokens: after.reasoning_tokens - before.reasoning_tokens,
    cost_usd: after.cost_usd - before.cost_usd,
    unpriced_calls: (after.unpriced_calls ?? 0) - (before.unpriced_calls ?? 0),
  };
}

function delay(milliseconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, milliseconds);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function abortPromise(signal: AbortSignal): Promise<false> {
  // Resolves (never rejects) so that an approver that answers later is simply ignored.
  return new Promise((resolve) => {
    if (signal.aborted) resolve(false);
    else signal.addEventListener('abort', () => resolve(false), { once: true });
  });
}
