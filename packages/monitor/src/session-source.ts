import type { ApprovalAnswer, OperatorChannel, PendingApproval, RawTraceRecord } from '@rho/core';
import type { ContentSearch, ContentSearchOptions } from './content-search.js';
import type { ApprovalAnswerResult } from './pending-approvals.js';
import type { ListedSession } from './listed-session.js';

/** Which control request: stop the run, hold it, or let a held run go on. */
export type ControlKind = 'cancel' | 'pause' | 'resume';

/** Which sessions {@link SessionSource.list} returns; every field is optional, combined with AND. */
export interface SessionFilter {
  /** At most this many, newest first (a fleet's default: 1,000; a directory's: all). */
  limit?: number;
  /**
   * With `limit`: the older sessions that are still live (running, paused, waiting for approval)
   * are returned too, after the newest `limit`, so a long run never drops out of a listing.
   */
  keepLive?: boolean;
  /** Only sessions with one of these live statuses (`dead` included). */
  status?: readonly string[];
  /** Only sessions of this host (a fleet's node). */
  hostname?: string;
  /** Only sessions with this label: `key` (present) or `key=value`. */
  label?: string;
  /** Only sessions whose id starts with this. */
  idPrefix?: string;
  /** Only sessions with one of these ids (an empty list: none). */
  ids?: readonly string[];
  /**
   * Only the sessions a request of this kind can reach, as the source decides: a directory, for
   * cancel and pause, the live ones (and those being set up by a running process), for resume all
   * of them (a pause may be left anywhere); a fleet the live ones, for resume the paused ones.
   */
  accepts?: ControlKind;
  /**
   * Read the usage of live sessions where the source does not keep it as it goes (a directory's
   * meta.json has it only as of the end of a run): each live session's trace is replayed for its
   * tokens and cost. A fleet always has it.
   */
  liveUsage?: boolean;
}

/** What {@link SessionSource.list} returns. */
export interface SessionList {
  /** The sessions, newest first (then, with `keepLive`, the older live ones). */
  sessions: ListedSession[];
  /** How many sessions match the filter without its `limit`, when the source knows (a directory does; a fleet does not count). */
  total?: number;
}

/** Options of {@link SessionSource.follow}. */
export interface FollowSessionOptions {
  /** Replay the trace from its first record (default) or only records written from now on. */
  fromStart?: boolean;
  /** Keep following after the run ends (a later `rho --resume` appends to the same trace). Default false. */
  follow?: boolean;
  /** Follow the session's child agents too (delegate), as they appear (default true). */
  children?: boolean;
  /** Ends the follow (never the agent). */
  signal?: AbortSignal;
  /** Told when the source's connection is lost (with the error) and when it is back (`undefined`); a fleet's. */
  onConnectionLost?: (error: unknown | undefined) => void;
}

/** A record of a followed session, or of one of its child sessions (delegate). */
export interface FollowedRecord {
  /** The trace record, as written. */
  record: RawTraceRecord;
  /** The child session's id, for a record of a child (or grandchild). */
  childId?: string;
}

/** What {@link SessionSource.control} did. */
export interface ControlResult {
  /**
   * `requested`: the request was made; `unchanged`: it was already (or, for resume, nothing was
   * paused); `not_live`: nothing was sent, the session is not live (a cancel or pause left in a
   * finished directory would stop or hold its next resume). A fleet refuses such a request with
   * its `FleetSignalRefusedError` (code `fleet_signal_refused`) instead.
   */
  outcome: 'requested' | 'unchanged' | 'not_live';
  /** The session's live status when the request was made. */
  status: string;
  /** Whether the session is live (or being set up by a running process). */
  live: boolean;
}

/** What {@link SessionSource.sendDirective} did. */
export interface DirectiveResult {
  /** The session's live status when the directive was queued. */
  status: string;
  /** Whether the session is live: its next model call reads it; otherwise a resume does. */
  live: boolean;
}

/** The telemetry views a source may offer ({@link SessionSource.stats}), a fleet's SQL views. */
export type SessionStatsView =
  | 'cost_by_model'
  | 'cost_by_profile'
  | 'cost_by_label'
  | 'cost_by_day'
  | 'tool_calls'
  | 'model_latency'
  | 'sessions_by_status';

/** One row of a telemetry view: column name to value. */
export type SessionStatsRow = Record<string, string | number | null>;

/**
 * Where sessions are listed, followed and steered from: a sessions directory on this machine
 * ({@link createDirectorySource}) or a fleet (`@rho/fleet`'s `createFleetSessionSource`). `rho ps`,
 * `rho watch`, `rho cancel`, the dashboard and scripts work through this interface, so they work
 * the same on either.
 */
export interface SessionSource {
  /** `directory` or `fleet`. */
  readonly kind: 'directory' | 'fleet';
  /** What the source reads, for people (`/home/me/.config/rho/sessions`, `the fleet at postgres://...`). */
  readonly description: string;
  /** Sessions, newest first. */
  list(filter?: SessionFilter): Promise<SessionList>;
  /** One session by its exact id, or undefined. */
  get(id: string): Promise<ListedSession | undefined>;
  /**
   * The session an id, a unique id prefix (or, for a directory, `latest` or a path) names.
   * @throws SessionNotFoundError (from `@rho/core`) for none, and for several (with `candidates`).
   */
  resolve(reference: string): Promise<ListedSession>;
  /**
   * The session's trace records as they are written (and, with `children`, its child agents'),
   * ending when its run ends (unless `follow`) or the signal aborts.
   */
  follow(id: string, options?: FollowSessionOptions): AsyncIterable<FollowedRecord>;
  /** The whole trace as it stands, as the lines of a `trace.jsonl` (for export, or a copy). */
  readTrace(id: string): Promise<string>;
  /** Cancels, pauses or resumes a session (see {@link ControlResult} for what is refused). */
  control(id: string, kind: ControlKind): Promise<ControlResult>;
  /** Queues an instruction the agent reads before its next model call. */
  sendDirective(id: string, text: string): Promise<DirectiveResult>;
  /** The operator side of the session's control channel, as is (no liveness check). */
  operator(id: string): Promise<OperatorChannel>;
  /** The session's tool calls that wait for an answer (from its trace), oldest first. */
  pendingApprovals?(id: string): Promise<PendingApproval[]>;
  /**
   * Answers a waiting tool call exactly once (see {@link ApprovalAnswerResult}). Throws a
   * `ConfigError` for an answer of the wrong shape; a fleet refuses a session that is not live
   * with its `FleetSignalRefusedError`.
   */
  answerApproval?(id: string, toolCallId: string, answer: ApprovalAnswer): Promise<ApprovalAnswerResult>;
  /** Rows of a telemetry view, for a source that keeps them (a fleet). */
  stats?(view: SessionStatsView, options?: { limit?: number }): Promise<SessionStatsRow[]>;
  /**
   * Searches the content of sessions' traces (every string value of every record: messages, tool
   * arguments and results, errors; never keys), newest session first, at most
   * `CONTENT_HITS_PER_SESSION` hits a session, until `limit` hits, for a source that can (a
   * fleet's, in its database). A hit's `record` counts the session's records as {@link follow}
   * yields them without its children, from 0.
   */
  searchContent?(options: ContentSearchOptions): Promise<ContentSearch>;
  /** Releases what the source holds (a fleet's connections, when it owns them). */
  close(): Promise<void>;
}
