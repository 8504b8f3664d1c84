import type { ModelClient, RhoError } from '@rho/model-client';
import type { ControlChannel } from './control-channel.js';
import type { RunStatus, SessionEvent, UsageTotals } from './events.js';
import type { SecretRedactor } from './secret-redaction.js';
import type { SessionLock } from './session-lock.js';
import type { State, StateObserver } from './state.js';

/** What an approver is asked. */
export interface ApprovalRequest {
  /** The tool the model wants to call. */
  toolName: string;
  /** The model's id for the call. */
  toolCallId: string;
  /** The validated arguments of the call. */
  arguments: Record<string, unknown>;
  /** Why approval is needed (the policy's reason). */
  reason?: string;
  /** The dangerous pattern the call matched, when approval is asked because of one. */
  dangerous?: string;
  /** The session asking (a child session asks its parent's approver with its own id). */
  sessionId: string;
  /**
   * Aborted when this approver's answer is no longer wanted: the call was answered elsewhere (a
   * call listed as waiting, answered with `rho approve`, the dashboard or the fleet while the
   * prompt was shown) or the run was cancelled. An approver should stop asking; its answer is ignored.
   */
  signal?: AbortSignal;
}

/**
 * Answers approval requests: true approves, false rejects. `'wait'` hands the call to the
 * session's waiting approvals (see {@link SessionApprovals}): an approver that cannot answer
 * now (nobody at the terminal) parks the call instead of refusing it.
 */
export type Approver = (request: ApprovalRequest) => Promise<boolean | 'wait'> | boolean | 'wait';

/**
 * What happens to a call that needs approval when no approver answers it (none is attached, or
 * it answered `'wait'`).
 */
export interface SessionApprovals {
  /**
   * `wait`: the call waits in `waiting_approval`, recorded in the trace, for an answer from
   * `rho approve`/`rho deny`, the dashboard, a fleet node or `session.answerApproval`; the run
   * goes on when it comes (the `rho` CLI, its queue workers and fleet agents wait by default).
   * `withhold` (the library's default, and rho's behaviour before waiting approvals): the call is
   * refused at once with a reason the model reads.
   */
  unattended?: 'wait' | 'withhold';
  /** How long a call waits, in milliseconds (default {@link DEFAULT_APPROVAL_TIMEOUT_MS}). */
  timeoutMs?: number;
  /**
   * What a timeout answers: `deny` (the default) or `approve`. A call that matched a dangerous
   * pattern is denied at its timeout whatever this says.
   */
  onTimeout?: 'deny' | 'approve';
  /**
   * No call waits past this moment: a call's wait ends at the earlier of its timeout and this,
   * and the timeout's answer applies then. A queue worker sets it a little before its task's
   * deadline, so that a call that starts waiting late still ends by that answer, not by the
   * deadline stopping the run.
   */
  deadline?: Date;
}

/** {@link SessionApprovals} with its defaults applied (the deadline stays optional). */
export type ResolvedApprovals = Required<Omit<SessionApprovals, 'deadline'>> & Pick<SessionApprovals, 'deadline'>;

/** How long a call waits for approval by default: one hour. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 60 * 60 * 1000;

/** A tool call as hooks see it, after the profile decided whether it needs approval. */
export interface ToolHookCall {
  sessionId: string;
  toolCallId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  /** What the profile (the agent's approval policy) decided for this call (an `ApprovalDecision`). */
  approval: { required: boolean; reason?: string; dangerous?: string };
}

/**
 * What a `beforeToolCall` hook decided: `allow` (run it without asking, unless it matched a
 * dangerous pattern, which still asks), `deny` (refused; the model reads the reason), `ask` (a
 * person must approve it even if the profile would not ask). Undefined: no opinion. A hook can
 * never run a tool the profile does not offer, nor get past a tool's own checks.
 */
export type ToolHookVerdict =
  { decision: 'allow'; reason?: string } | { decision: 'deny'; reason: string } | { decision: 'ask'; reason?: string };

/** Hooks around tool calls (`pre_tool` and `post_tool` of the `hooks` setting); they record themselves in the trace. */
export interface ToolHooks {
  /** Asked before approval; several decisions combine to the strictest (deny, then ask, then allow). */
  beforeToolCall?(call: ToolHookCall, signal: AbortSignal): Promise<ToolHookVerdict | undefined>;
  /** Told each result; cannot change it. */
  afterToolCall?(
    call: ToolHookCall,
    result: { success: boolean; content: string; durationMs: number },
    signal: AbortSignal,
  ): Promise<void>;
}

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
  /** Answers approval requests. Without one, calls that need approval wait or are refused (see `approvals`). */
  approver?: Approver;
  /** What happens to a call that needs approval when no approver answers it. */
  approvals?: SessionApprovals;
  /** Hooks around each tool call. */
  toolHooks?: ToolHooks;
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
  /**
   * Trace record observers: each receives every record the session appends, in order and as
   * persisted (after the trace sink took it), for the whole life of the session, between runs
   * too (`onEvent` sees only runs, and transient events as well). For mirrors of the trace, for
   * example a fleet database. An observer must return at once and not throw (a throw is ignored).
   * The same as calling `session.state.addObserver` for each before the first run.
   */
  traceObservers?: readonly StateObserver[];
  /**
   * Options for each child session a tool of this session spawns (`ToolContext.children.spawn`),
   * given the child's id, its parent's id and its directory; they apply after the defaults the
   * spawn chose and before the tool's own `session` options. The child inherits this function,
   * so grandchildren get it too. For example, an app registers every child in a fleet and returns
   * its control channel and trace observers. Must return at once.
   */
  childSessionOptions?: (child: ChildSessionInfo) => SessionOptions;
  /**
   * More secrets to keep from the model and the trace, added to the agent's (`AgentOptions.secrets`
   * and `redactor`): every record of this session, tool results first, passes the merged redactor.
   * Child sessions spawned by its tools get it too.
   */
  redactor?: SecretRedactor;
}

/** What {@link SessionOptions.childSessionOptions} is told about a child session being spawned. */
export interface ChildSessionInfo {
  /** The child's session id. */
  id: string;
  /** The spawning session's id. */
  parentId: string;
  /** The child's session directory, when it has one. */
  directory: string | undefined;
}

/** Options of one run. */
export interface RunOptions {
  /** Aborting it cancels the run, like `session.cancel()`. */
  signal?: AbortSignal;
  /** Receives this run's events, in addition to the session's `onEvent`. */
  onEvent?: (event: SessionEvent) => void;
  /** Overrides the budget's `maxTurns` for this run. */
  maxTurns?: number;
  /**
   * The queued task this run carries out (`rho worker` sets it): recorded in `run_start` as
   * `task_id` and `task_attempt`, so a retried task's trace says which attempt it is.
   */
  task?: { id: string; attempt: number };
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
