import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { ContextWindowInfo, ModelClient } from '@rho/model-client';
import { RhoError } from '@rho/model-client';
import type { Agent } from './agent.js';
import type { ChildSession } from './child-sessions.js';
import type { CompactResult } from './compaction.js';
import type { ControlChannel } from './control-channel.js';
import { FileControlChannel } from './control-channel.js';
import { InternalError, SessionBusyError } from './errors.js';
import type { RunStatus, SessionEvent, UsageTotals } from './events.js';
import { reportedUsage, timestamp } from './events.js';
import { compactHistory } from './internal/run-loop/auto-compaction.js';
import { ContextWindowResolver } from './context-window-resolver.js';
import { remainingBudgets } from './internal/run-loop/budgets.js';
import { childSessionsOf } from './internal/run-loop/child-session-host.js';
import { RunControl } from './internal/run-loop/run-control.js';
import type { EventListener, RunScope } from './internal/run-loop/run-scope.js';
import { LocalAnswers, emit, safeAppend } from './internal/run-loop/run-scope.js';
import { recordChildUsage, usageDifference } from './internal/run-loop/usage.js';
import type { AnswerOutcome, ApprovalAnswer, PendingApproval } from './approvals.js';
import { answerWaitingCall } from './internal/run-loop/approval-wait.js';
import { resumeParkedCalls } from './internal/run-loop/parked-calls.js';
import { runTurns } from './internal/run-loop/run-turns.js';
import type {
  Approver,
  Budgets,
  ResolvedApprovals,
  RunOptions,
  RunResult,
  SessionOptions,
  ToolHooks,
} from './session-options.js';
import { DEFAULT_APPROVAL_TIMEOUT_MS } from './session-options.js';
import type { SessionObserver } from './session-observer.js';
import type { SecretRedactor } from './secret-redaction.js';
import { mergeSecretRedactors } from './secret-redaction.js';
import { processIdentity } from './session-meta.js';
import { SessionLock } from './session-lock.js';
import { State } from './state.js';
import { JsonlTraceSink } from './trace-sink.js';

/**
 * Drives the agent loop for one conversation: model call, tool calls, repeat, until the model
 * answers without tools. A Session holds the conversation's State; the Agent it belongs to is
 * stateless and can back many sessions at once. Runs of one session are sequential.
 *
 * This class owns the run's orchestration; each step lives in `internal/run-loop/` (model turn,
 * tool calls with approval, budgets, run control, usage, compaction, child sessions).
 */
export class Session implements ChildSession {
  /** The session's id (its directory name when it has one). */
  readonly id: string;
  /** The agent whose configuration, tools and policy the session runs with. */
  readonly agent: Agent;
  /** The conversation: messages, usage, status; every change is a trace record. */
  readonly state: State;
  /** The session directory (trace, meta.json, control files), if any. */
  readonly directory: string | undefined;
  /** The model client of this session. */
  readonly client: ModelClient;
  /** Answers approval requests; may be set or replaced between runs. */
  approver: Approver | undefined;
  /** Options for each child session its tools spawn (`SessionOptions.childSessionOptions`). */
  readonly childSessionOptions: SessionOptions['childSessionOptions'];
  /** The redactor every record passes (the agent's merged with `SessionOptions.redactor`), if any. */
  readonly redactor: SecretRedactor | undefined;
  private readonly onEvent: ((event: SessionEvent) => void) | undefined;
  private readonly budgets: Budgets;
  private readonly control: RunControl;
  private readonly heldLock: SessionLock | undefined;
  private readonly window: ContextWindowResolver;
  private controller: AbortController | undefined;
  private running = false;
  private runStartedAt = 0;
  private readonly observerList: SessionObserver[] = [];
  private readonly approvals: ResolvedApprovals;
  private readonly toolHooks: ToolHooks | undefined;
  private readonly localAnswers = new LocalAnswers();
  private readonly controlChannel: ControlChannel | undefined;

  constructor(agent: Agent, options: SessionOptions = {}) {
    this.agent = agent;
    this.id = options.id ?? randomUUID();
    this.directory = options.directory;
    this.state = options.state ?? new State();
    // Before anything is appended or sent: a replayed history is redacted too.
    this.redactor = mergeSecretRedactors(
      mergeSecretRedactors(agent.redactor, options.redactor),
      this.state.secretRedactor,
    );
    if (this.redactor !== undefined) this.state.setRedactor(this.redactor);
    const tracePath =
      options.tracePath ?? (this.directory === undefined ? undefined : join(this.directory, 'trace.jsonl'));
    if (tracePath !== undefined) this.state.setSink(new JsonlTraceSink(tracePath));
    for (const observer of options.traceObservers ?? []) this.state.addObserver(observer);
    this.childSessionOptions = options.childSessionOptions;
    this.client = options.client ?? agent.createClient();
    const control: ControlChannel | undefined =
      options.control ?? (this.directory === undefined ? undefined : new FileControlChannel(this.directory));
    this.control = new RunControl({
      sessionId: this.id,
      state: this.state,
      directory: this.directory,
      control,
      pollIntervalMs: options.pollIntervalMs ?? 200,
    });
    this.controlChannel = control;
    this.approver = options.approver;
    this.approvals = {
      unattended: options.approvals?.unattended ?? 'withhold',
      timeoutMs: options.approvals?.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS,
      onTimeout: options.approvals?.onTimeout ?? 'deny',
      deadline: options.approvals?.deadline,
    };
    this.toolHooks = options.toolHooks;
    this.onEvent = options.onEvent;
    this.budgets = options.budgets ?? agent.budgets;
    this.heldLock = options.lock;
    this.window = new ContextWindowResolver(agent.compaction, this.client);
  }

  /**
   * Attaches an observer to this session's runs: it gets every event, as `onEvent` does, and is
   * asked for an observer of each child session a tool call starts. Takes effect from the next
   * run. Returns a function that detaches it.
   */
  observe(observer: SessionObserver): () => void {
    this.observerList.push(observer);
    return () => {
      const index = this.observerList.indexOf(observer);
      if (index >= 0) this.observerList.splice(index, 1);
    };
  }

  /** The observers attached with {@link observe}. */
  get observers(): readonly SessionObserver[] {
    return this.observerList;
  }

  /** Whether a run is in progress. */
  get isRunning(): boolean {
    return this.running;
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
    return remainingBudgets(this.budgets, this.state.usage, this.running ? Date.now() - this.runStartedAt : 0);
  }

  /**
   * Adds a child session's usage to this session's totals (and trace), so it shows in the
   * session's cost and counts against its budgets.
   */
  recordChildUsage(childSessionId: string, usage: UsageTotals, model: string): void {
    recordChildUsage(this.state, childSessionId, usage, model);
  }

  /**
   * The tool calls that wait for a person's answer (status `waiting_approval`): while a run waits,
   * and after a parked run stopped (a resumed run waits for them again).
   */
  pendingApprovals(): PendingApproval[] {
    return [...this.state.pendingApprovals.values()];
  }

  /**
   * Answers a waiting tool call, exactly once: through the session's control channel when it
   * carries approvals (so an answer from another process and this one settle on one), else in
   * this process. A call that does not wait (unknown, answered, or finished) is a
   * {@link ConfigError} naming the calls that do; `already_answered` says which answer won a race.
   */
  answerApproval(toolCallId: string, answer: ApprovalAnswer): Promise<AnswerOutcome> {
    return answerWaitingCall(
      { sessionId: this.id, state: this.state, control: this.controlChannel, localAnswers: this.localAnswers },
      toolCallId,
      answer,
    );
  }

  /**
   * Runs one task to completion (or cancellation, a limit, an error). Never throws for run
   * failures; throws `SessionBusyError` when a run of this session is already in progress, and
   * `SessionLockedError` before doing anything when another process runs the session (it holds
   * the session directory's lock).
   */
  async run(prompt: string, options: RunOptions = {}): Promise<RunResult> {
    if (this.running)
      throw new SessionBusyError({
        message: 'This session is already running; wait for run() to finish or cancel() it first.',
        operation: 'run',
      });
    // The SDK loads while the run sets up (lock, trace, meta, context window), not in the first request.
    void this.client.preload?.();
    // One writer per session directory: another process running it makes this throw SessionLockedError.
    const runLock =
      this.directory !== undefined && this.heldLock === undefined ? SessionLock.acquire(this.directory) : undefined;
    this.running = true;
    const controller = new AbortController();
    this.controller = controller;
    // The context window (maybe asked of the server) is resolved while the run sets up; the first
    // turn awaits the same promise.
    void this.window.resolve(controller.signal);
    const external = options.signal;
    let stoppedFromOutside = false;
    const onExternalAbort = () => {
      if (!controller.signal.aborted) stoppedFromOutside = true;
      controller.abort(external?.reason);
    };
    if (external?.aborted) onExternalAbort();
    else external?.addEventListener('abort', onExternalAbort, { once: true });
    const listeners = [
      this.onEvent,
      options.onEvent,
      ...this.observerList.map((observer) => (event: SessionEvent) => observer.onEvent(event)),
    ].filter((listener): listener is EventListener => listener !== undefined);
    const removeObserver =
      listeners.length > 0 ? this.state.addObserver((record) => emit(listeners, record)) : undefined;
    const scope = this.scopeOf(controller, listeners, () => stoppedFromOutside);
    const usageBefore = { ...this.state.usage };
    const startedAt = Date.now();
    this.runStartedAt = startedAt;
    let status: RunStatus = 'completed';
    let limit: string | undefined;
    let failure: RhoError | undefined;
    let finalText = '';
    const stopPolling = this.control.startPolling(controller);
    let result: RunResult;
    try {
      this.state.append({
        type: 'run_start',
        prompt,
        ...(options.task === undefined ? {} : { task_id: options.task.id, task_attempt: options.task.attempt }),
      });
      this.control.writeMeta({
        status: 'running',
        ...processIdentity(),
        heartbeat_at: timestamp(),
        ...(this.state.runCount === 1 && prompt !== ''
          ? { first_prompt: this.redactor === undefined ? prompt : this.redactor.text(prompt) }
          : {}),
      });
      // A run parked while a call waited for approval goes on at that call: its answer (given
      // while the process was gone, or awaited now) applies before anything else.
      const parked = await resumeParkedCalls(scope);
      if (parked !== undefined) status = parked;
      if (parked === undefined && prompt !== '') this.state.addMessage({ role: 'user', content: prompt });
      const budgets: Budgets = {
        ...this.budgets,
        ...(options.maxTurns === undefined ? {} : { maxTurns: options.maxTurns }),
      };
      if (parked === undefined) {
        const ended = await runTurns(scope, budgets, startedAt);
        ({ status } = ended);
        limit = ended.limit;
        failure = ended.failure;
        finalText = ended.finalText;
      }
      // Tool calls were asked for and none ran: whatever the model said, the task was not done.
      if (status === 'completed' && scope.toolTally.refused > 0 && scope.toolTally.ran === 0) status = 'refused';
    } catch (error) {
      status = controller.signal.aborted ? 'cancelled' : 'error';
      failure = RhoError.isInstance(error)
        ? error
        : new InternalError({
            message: `Unexpected failure in the agent loop: ${error instanceof Error ? error.message : String(error)}. This is a bug in rho; please report it with the session's trace.jsonl.`,
            cause: error,
          });
      if (status === 'error') safeAppend(this.state, { type: 'error', content: failure.message, code: failure.code });
    } finally {
      stopPolling();
      external?.removeEventListener('abort', onExternalAbort);
      const runUsage = usageDifference(this.state.usage, usageBefore);
      safeAppend(this.state, {
        type: 'run_end',
        status,
        usage: reportedUsage(this.state.usage),
        ...(limit === undefined ? {} : { limit }),
        ...(status === 'truncated' ? { finish_reason: 'length' } : {}),
      });
      removeObserver?.();
      try {
        this.control.writeMeta({
          status,
          cost_usd: reportedUsage(this.state.usage).cost_usd,
          ...(limit === undefined ? {} : { limit }),
        });
        await this.control.clearCancel();
      } catch {
        // Meta and control files are best effort; the trace is the source of truth.
      }
      this.controller = undefined;
      this.running = false;
      runLock?.release();
      result = {
        status,
        text: finalText,
        usage: { ...this.state.usage },
        runUsage,
        ...(limit === undefined ? {} : { limit }),
        ...(failure === undefined ? {} : { error: failure }),
      };
    }
    // Every failure of the loop was caught above and is reported in the result.
    return result;
  }

  /**
   * Replaces history with a summary written by the model, keeping the original task and the
   * latest user messages verbatim. The summary is written to the trace, so a resumed session
   * continues from it. When summarisation fails, history is left untouched and the error is
   * reported (and recorded). Throws `SessionBusyError` while a run is in progress.
   */
  async compact(options: { instructions?: string; signal?: AbortSignal } = {}): Promise<CompactResult> {
    if (this.running)
      throw new SessionBusyError({
        message: 'Cannot compact while a run is in progress; wait for it to finish.',
        operation: 'compact',
      });
    const lock =
      this.directory !== undefined && this.heldLock === undefined ? SessionLock.acquire(this.directory) : undefined;
    try {
      await this.resolveContextWindow(options.signal);
      return await compactHistory(
        { agent: this.agent, state: this.state, client: this.client, window: this.window },
        { trigger: 'manual', ...options },
      );
    } finally {
      lock?.release();
    }
  }

  /** What the parts of the loop share during one run. */
  private scopeOf(
    controller: AbortController,
    listeners: readonly EventListener[],
    stoppedFromOutside: () => boolean = () => false,
  ): RunScope {
    const currentApprover = (): Approver | undefined => this.approver;
    return {
      approvals: this.approvals,
      toolHooks: this.toolHooks,
      localAnswers: this.localAnswers,
      toolTally: { ran: 0, refused: 0 },
      stoppedFromOutside,
      sessionId: this.id,
      agent: this.agent,
      state: this.state,
      client: this.client,
      window: this.window,
      controller,
      listeners,
      control: this.control,
      // Read at each call: an approver replaced during a run is the one asked next.
      get approver() {
        return currentApprover();
      },
      childrenFor: (call) => childSessionsOf(this, { toolCallId: call.id, toolName: call.name }),
    };
  }
}
