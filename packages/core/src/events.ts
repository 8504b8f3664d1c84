import type { ChatMessage } from '@rho/model-client';

/** Cumulative usage of a session, as persisted in `usage` and `run_end` records. */
export interface UsageTotals {
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  /** Sum of known costs; calls of unpriced models add nothing. */
  cost_usd: number;
  /** Number of model calls whose cost was unknown (model not in the price table). */
  unpriced_calls?: number;
}

/**
 * How a run ended. `truncated`: the model's last answer stopped at its output-token limit
 * (`finish_reason: length`), so the final text is incomplete. `refused`: tool calls were asked
 * for and every one was refused (by the profile's approval, a person, a hook or a timeout), so
 * the task was not done. `waiting_approval`: the run stopped while a tool call waited for a
 * person's answer (the process was stopped); the session resumes at that call.
 */
export type RunStatus = (typeof RUN_STATUSES)[number];

/**
 * Every status a run can end with ({@link RunStatus}), in the order of the Statuses table of the
 * user guide: the one list every view, check and filter of run statuses derives from.
 */
export const RUN_STATUSES = [
  'waiting_approval',
  'completed',
  'refused',
  'truncated',
  'error',
  'limit',
  'cancelled',
] as const;

/** Status of a session in `meta.json` and `State`. */
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/**
 * Every status a session records ({@link SessionStatus}): before its first run (`created`), at
 * work (`running`, `paused`), and the run statuses. Listings add statuses of their own (a
 * monitor's `parked` and `dead`, from whether a process still runs the session).
 */
export const SESSION_STATUSES = ['created', 'running', 'paused', ...RUN_STATUSES] as const;

/**
 * The statuses of a session that an agent process should be working on right now: it reads a
 * cancel, a pause or a directive, and a listing checks that its process is still there.
 */
export const ACTIVE_SESSION_STATUSES = [
  'running',
  'paused',
  'waiting_approval',
] as const satisfies readonly SessionStatus[];

interface Base {
  /** UTC ISO-8601 timestamp. */
  ts: string;
}

/** A run began with this prompt. */
export interface RunStartEvent extends Base {
  type: 'run_start';
  prompt: string;
  /** The queued task this run carries out (`rho worker`), when there is one. */
  task_id?: string;
  /** Which attempt at that task this is, from 1 (a task is retried when its worker dies). */
  task_attempt?: number;
}
/** A message was appended to history (the OpenAI chat shape, flattened). */
export type MessageEvent = Base & { type: 'message' } & ChatMessage & {
    /** Set on user messages that an operator injected with a directive. */
    directive?: boolean;
  };
/** A model call is starting. */
export interface LlmStartEvent extends Base {
  type: 'llm_start';
  model: string;
  context_size: number;
  /** The context window compaction works against, in tokens (absent in traces of older versions). */
  context_window?: number;
  /** Where `context_window` came from: `flag`, `env`, `config`, `discovered`, `table` or `default`. */
  context_window_source?: string;
  /** Set when the call is not a turn of this conversation (`compaction`), as on its `llm_end`. */
  purpose?: string;
}
/** A model call finished. */
export interface LlmEndEvent extends Base {
  type: 'llm_end';
  model: string;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  reasoning_tokens: number;
  /** `null` when the model's price is unknown. */
  cost_usd: number | null;
  duration_ms: number;
  finish_reason?: string | null;
  /**
   * Why the record exists when it is not a turn of this conversation: `compaction` (the
   * summarising call), `child_session` (usage of a child session rolled up into its parent).
   */
  purpose?: string;
  /** For `child_session`: the child's id. */
  child_session_id?: string;
  /** For `child_session`: how many of the child's calls had no known cost. */
  unpriced_calls?: number;
  /**
   * False when the provider sent no usage: token counts are then zero, the cost null (unpriced),
   * or 0 when the call was cancelled (a stopped call does not make the session's cost unknown).
   */
  usage_reported?: boolean;
  /** The provider's id of the response (`chatcmpl-...`), when it sent one. */
  response_id?: string;
}
/** A tool call is starting (after approval). */
export interface ToolStartEvent extends Base {
  type: 'tool_start';
  tool_call_id: string;
  tool_name: string;
  tool_args: unknown;
}
/** A tool call finished. */
export interface ToolEndEvent extends Base {
  type: 'tool_end';
  tool_call_id: string;
  tool_name: string;
  success: boolean;
  duration_ms: number;
  metadata?: Record<string, unknown>;
}
/** A tool call was refused (approval denied, policy). */
export interface ToolBlockedEvent extends Base {
  type: 'tool_blocked';
  tool_call_id: string;
  tool_name: string;
  tool_args: unknown;
  reason: string;
}
/**
 * A tool call waits for a person's answer (nobody was attached to approve it): the session parks
 * in `waiting_approval` until `approval_answered` for the same call. The request stays pending
 * across a crash or a stop: a resumed session waits for, and applies, the answer.
 */
export interface ApprovalRequestedEvent extends Base {
  type: 'approval_requested';
  tool_call_id: string;
  tool_name: string;
  tool_args: unknown;
  /** The rule and risk line: why the profile asks for approval. */
  reason?: string;
  /** The dangerous pattern the call matched, when it matched one (never approved by a timeout or an "always"). */
  dangerous?: string;
  /** When the wait times out (UTC ISO-8601), when it is bounded. */
  expires_at?: string;
  /** What a timeout answers. */
  on_timeout?: 'deny' | 'approve';
}
/** A waiting tool call was answered (by an operator, the library, a hook or a timeout). */
export interface ApprovalAnsweredEvent extends Base {
  type: 'approval_answered';
  tool_call_id: string;
  tool_name: string;
  decision: 'approve' | 'deny';
  /** `once` (this call), `call` (this exact call for the rest of the session), `tool` (every call of the tool that matches no dangerous pattern). */
  scope: 'once' | 'call' | 'tool';
  /** The reason given with a denial (the model reads it). */
  reason?: string;
  /** Who answered (`user@host`, `dashboard`, `timeout`, ...). */
  by?: string;
  /** Where the answer came from: `operator` (rho approve/deny, the dashboard, the library), `timeout`. */
  source: string;
  /** The tool arguments the answer was for, for a `call`-scoped answer (a resumed session remembers it). */
  tool_args?: unknown;
}
/** A hook ran (hooks of the agent config or `$RHO_HOME/config.yaml`). */
export interface HookRunEvent extends Base {
  type: 'hook';
  /** The event it ran for: `pre_tool`, `post_tool`, `session_end`, `waiting_approval`, ... */
  event: string;
  /** Which hook: its name, or its command or URL. */
  hook: string;
  /** `ok`, `failed` (non-zero exit, HTTP error, bad answer), `timeout` (killed at its timeout). */
  outcome: 'ok' | 'failed' | 'timeout';
  duration_ms: number;
  /** For `pre_tool`: what it decided (`allow`, `deny`, `ask`), when it decided something. */
  decision?: string;
  /** The reason it gave, or why it failed. */
  reason?: string;
  /** The tool call it ran for (`pre_tool`, `post_tool`). */
  tool_call_id?: string;
}
/** History was compacted: `summary` and the `kept` messages replace everything before. */
export interface CompactEvent extends Base {
  type: 'compact';
  trigger: 'auto' | 'manual';
  tokens_before: number;
  tokens_after: number;
  summary: string;
  kept: ChatMessage[];
}
/** An operator directive was delivered. */
export interface DirectiveEvent extends Base {
  type: 'directive';
  text: string;
  /** Position in the control channel after this directive; a resumed session continues from it. */
  cursor?: number;
}
/**
 * A model call's attempt failed before any output and is repeated after `delay_ms`. Written for
 * people and monitors; replay ignores it (it changes no state).
 */
export interface RetryEvent extends Base {
  type: 'retry';
  /** The attempt about to be made (2 for the first retry). */
  attempt: number;
  /** Attempts allowed in all (the retry count + 1). */
  max_attempts: number;
  /** The wait before that attempt, in milliseconds. */
  delay_ms: number;
  /** Why: `rate limited (429)`, `server error 503`, `no response from ... within 5 s`, ... */
  reason: string;
  /** HTTP status of the failed attempt, when there was one. */
  status_code?: number;
  /** Set when the call is not a turn of this conversation (`compaction`), as on its `llm_start`. */
  purpose?: string;
}
/**
 * The model declined to answer (OpenAI's `refusal`, sent with structured outputs): `content` is
 * its refusal text. Written before the assistant message of that turn; replay ignores it (the
 * history keeps the assistant message, whose content is the answer text, often empty).
 */
export interface RefusalEvent extends Base {
  type: 'refusal';
  content: string;
}
/** Something failed; `content` says what. */
export interface ErrorEvent extends Base {
  type: 'error';
  content: string;
  code?: string;
  /** Text the model had streamed (and the user had seen) when its call failed; not in the history. */
  partial_text?: string;
}
/** Cumulative usage snapshot (written by `State.toJsonl()`). */
export interface UsageEvent extends Base, UsageTotals {
  type: 'usage';
  status?: SessionStatus;
  run_count?: number;
}
/** Usage as reported at the end of a run: `cost_usd` is null when no call was priced. */
export type ReportedUsage = Omit<UsageTotals, 'cost_usd'> & { cost_usd: number | null };

/**
 * Usage with `cost_usd: null` when calls were made and none had a known cost (an unknown cost is
 * never reported as 0); `unpriced_calls` says how many calls have no price.
 */
export function reportedUsage(usage: UsageTotals): ReportedUsage {
  return (usage.unpriced_calls ?? 0) > 0 && usage.cost_usd === 0 ? { ...usage, cost_usd: null } : { ...usage };
}

/** A run ended. */
export interface RunEndEvent extends Base {
  type: 'run_end';
  status: RunStatus;
  /** Cumulative usage of the session; `cost_usd` is null when unknown (see `unpriced_calls`). */
  usage?: ReportedUsage;
  /** For `limit`: which limit ended the run. */
  limit?: string;
  /** For `truncated`: the finish reason of the last answer (`length`). */
  finish_reason?: string;
}
/** The session's status changed (paused, waiting for approval, running again). */
export interface StatusEvent extends Base {
  type: 'status';
  status: SessionStatus;
}

/** Every record of `trace.jsonl`. */
export type TraceRecord =
  | RunStartEvent
  | MessageEvent
  | LlmStartEvent
  | LlmEndEvent
  | ToolStartEvent
  | ToolEndEvent
  | ToolBlockedEvent
  | ApprovalRequestedEvent
  | ApprovalAnsweredEvent
  | HookRunEvent
  | CompactEvent
  | DirectiveEvent
  | ErrorEvent
  | RetryEvent
  | RefusalEvent
  | UsageEvent
  | RunEndEvent
  | StatusEvent;

/** Transient events handed to `onEvent` but never persisted. */
export type TransientEvent =
  { type: 'text'; ts: string; text: string } | { type: 'reasoning'; ts: string; text: string };

/** Everything a Session hands to `onEvent`. */
export type SessionEvent = TraceRecord | TransientEvent;

/** Record types written to the trace. */
export const TRACE_RECORD_TYPES: ReadonlySet<string> = new Set([
  'run_start',
  'message',
  'llm_start',
  'llm_end',
  'tool_start',
  'tool_end',
  'tool_blocked',
  'approval_requested',
  'approval_answered',
  'hook',
  'compact',
  'directive',
  'error',
  'retry',
  'refusal',
  'usage',
  'run_end',
  'status',
]);

/** The current time as a UTC ISO-8601 string. */
export function timestamp(): string {
  return new Date().toISOString();
}
