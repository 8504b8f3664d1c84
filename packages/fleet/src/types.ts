import type {
  ControlChannel,
  OperatorChannel,
  SecretRedactor,
  SessionStatus,
  StateObserver,
  TraceRecord,
} from '@rho/core';
import type { ContentSearch, ContentSearchOptions, ListingOnlyStatus } from '@rho/monitor';
import type { FleetConfig } from './fleet-config.js';

/** What {@link Fleet.migrate} did: the schema version before and after (equal when up to date). */
export interface MigrateResult {
  /** The version found (0: no fleet schema yet). */
  from: number;
  /** The version now (the latest this package knows). */
  to: number;
}

/** What {@link Fleet.status} reports, for `rho fleet status`. */
export interface FleetStatus {
  /** The connection url with its password replaced by `***`. */
  url: string;
  /** The schema of the fleet's tables. */
  schema: string;
  /** The server's version string (`PostgreSQL 15.x ...`). */
  serverVersion: string;
  /** The schema version in the database (0: not migrated). */
  schemaVersion: number;
  /** The latest version this package knows; `rho fleet migrate` brings the schema to it. */
  latestVersion: number;
  /** Sessions per live status (`dead` for a stale heartbeat). */
  byStatus: Record<string, number>;
  /** Per host (node): how many sessions, and how many of them are live (running, paused, waiting). */
  byHost: { host: string; sessions: number; live: number; lastHeartbeatAt: string | undefined }[];
}

/** A session registering in the fleet ({@link Fleet.attachSession}). */
export interface SessionRegistration {
  /** The session id (its directory name locally). */
  id: string;
  /** The parent's id, for a child session. */
  parentId?: string;
  /** The node's host name; `os.hostname()` by default. */
  host?: string;
  /** The agent's process id; `process.pid` by default. */
  pid?: number;
  /** The working directory the session runs in. */
  cwd?: string;
  /** The model the session runs. */
  model?: string;
  /** The permission profile it runs under. */
  profile?: string;
  /** Free labels for filtering and telemetry (`team: data`, `ticket: OPS-12`). */
  labels?: Record<string, string>;
  /** UTC ISO-8601 start time; now by default. Kept from the first registration on a resume. */
  startedAt?: string;
  /** The task the session was started with (the trace holds it too). */
  firstPrompt?: string;
  /** The status to register with; `running` by default. */
  status?: SessionStatus;
}

/** Something the fleet wants the caller to show: the mirror fell behind or caught up, the database went away or came back. */
export interface FleetWarning {
  /**
   * Stable code: `mirror_behind`, `mirror_caught_up`, `database_unreachable`,
   * `database_reconnected`; `session_taken` (another process owns the session: this one was not
   * registered) and `session_lost` (another process took the session over after this one's
   * heartbeat stopped: this one's writes change nothing, and its control channel asks it to stop).
   */
  code:
    | 'mirror_behind'
    | 'mirror_caught_up'
    | 'database_unreachable'
    | 'database_reconnected'
    | 'session_taken'
    | 'session_lost';
  /** One sentence for people (the url is never in it). */
  message: string;
  /** The session it concerns. */
  sessionId: string;
}

/** Options of {@link Fleet.attachSession}. */
export interface AttachOptions {
  /**
   * The session's local trace file. When the mirror's buffer overflows it drops records and,
   * once the database keeps up again, reads the missing ones back from this file (the source of
   * truth) by their sequence number. Without it, dropped records stay missing in the fleet (a
   * `mirror_behind` warning says how many).
   */
  tracePath?: string;
  /**
   * How many records the trace already holds (a resumed session): the next record observed gets
   * sequence number `recordsBefore + 1`. Defaults to the number of lines in `tracePath` when it
   * is given, else to what the fleet already holds for the session.
   */
  recordsBefore?: number;
  /** Records held in memory while the database is slow or away (10,000 by default). */
  bufferLimit?: number;
  /** Records per insert (200 by default). */
  batchSize?: number;
  /** Receives warnings (never thrown; the agent never waits on the database). */
  onWarning?: (warning: FleetWarning) => void;
}

/** The mirror of one session's trace in the fleet. */
export interface TraceMirror {
  /**
   * Takes one trace record (as persisted in trace.jsonl, in order) without waiting: it is
   * buffered and written in batches. Pass it to `session.state.addObserver` or
   * `SessionOptions.traceObservers`. Never throws.
   */
  readonly observe: StateObserver;
  /** Counters of the mirror so far. */
  stats(): MirrorStats;
  /** Waits until everything observed so far is in the database (or `timeoutMs` passed); true when it is. */
  flush(timeoutMs?: number): Promise<boolean>;
}

/** Counters of a {@link TraceMirror}. */
export interface MirrorStats {
  /** Records observed (the last sequence number given). */
  observed: number;
  /** Records confirmed in the database. */
  mirrored: number;
  /** Records waiting in memory. */
  pending: number;
  /** Records dropped from memory on overflow and not yet recovered from the trace file. */
  dropped: number;
  /** Whether the mirror is behind (dropped records not yet recovered). */
  behind: boolean;
  /** Records the fleet will not get (dropped without a trace file to read them back from, or torn in it). */
  lost?: number;
}

/** A session's connection to the fleet, from {@link Fleet.attachSession}. */
export interface SessionAttachment {
  /** The agent's side of the control channel: give it to the session (`SessionOptions.control`). */
  readonly control: ControlChannel;
  /** Where the session's trace records go. */
  readonly mirror: TraceMirror;
  /**
   * Stops the heartbeat and the listener, flushes the mirror (waiting at most `timeoutMs`, 5 s
   * by default) and records the final status when given. Never throws.
   */
  close(options?: { status?: SessionStatus; timeoutMs?: number }): Promise<void>;
}

/**
 * Live status of a fleet session: the recorded status, or, when its heartbeat is stale, `parked`
 * for a session that waits for approval and `dead` for any other (`@rho/monitor`'s
 * `ListingOnlyStatus`).
 */
export type FleetSessionStatus = SessionStatus | ListingOnlyStatus;

/** One session as the fleet knows it (a row of `agent_registry`, with the live status). */
export interface FleetSession {
  id: string;
  parentId?: string;
  host: string;
  pid?: number;
  cwd?: string;
  model?: string;
  profile?: string;
  /**
   * Live status: when a running, paused or waiting session's heartbeat is older than
   * `deadAfterMs`, `parked` if it waits for approval, else `dead`.
   */
  status: FleetSessionStatus;
  /** The status the session last recorded. */
  recordedStatus: SessionStatus;
  labels: Record<string, string>;
  firstPrompt?: string;
  /** UTC ISO-8601 times. */
  startedAt: string;
  updatedAt: string;
  heartbeatAt?: string;
  /** Cumulative usage from the mirrored `llm_end`/`usage`/`run_end` records. */
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** Model calls without a known price: their cost is not in `costUsd` (all unpriced: the cost is unknown). */
  unpricedCalls: number;
  /** Records mirrored so far (the highest sequence number). */
  records: number;
}

/** Filters of {@link Fleet.listSessions}; all optional, combined with AND. */
export interface FleetListOptions {
  /** Only sessions of this host (node). */
  host?: string;
  /** Only sessions with this label: `key` (present) or `key=value`. */
  label?: string;
  /** Only sessions with this live status (`dead` included). */
  status?: FleetSessionStatus | FleetSessionStatus[];
  /** Only sessions whose id starts with this. */
  idPrefix?: string;
  /** Only sessions with one of these ids (an empty list: none). */
  ids?: readonly string[];
  /** At most this many, newest first (1,000 by default). */
  limit?: number;
}

/** One mirrored trace record. */
export interface MirroredRecord {
  /** The session it belongs to. */
  sessionId: string;
  /** Its position in the session's trace, from 1, without gaps. */
  seq: number;
  /** The record, as in trace.jsonl. */
  record: TraceRecord;
}

/** Options of {@link Fleet.followRecords}. */
export interface FollowOptions {
  /** Start after this sequence number (0: from the first record). */
  afterSeq?: number;
  /** Stops the iteration. */
  signal?: AbortSignal;
  /** End the iteration once the session is no longer live and every record was read (default true). */
  untilFinished?: boolean;
  /** How often to look without a notification (the LISTEN wake-up is the fast path), in ms; 1,000 by default. */
  pollIntervalMs?: number;
  /**
   * How long to keep trying when the database goes away mid-follow (a restart, a failover), in
   * ms; 300,000 by default. The follow resumes after the last record it yielded, so nothing is
   * repeated or lost; past this it throws the last error.
   */
  reconnectForMs?: number;
  /** Told when the connection is lost (with the error) and when it is back (`undefined`). */
  onConnectionLost?: (error: unknown | undefined) => void;
}

/** The telemetry views ({@link Fleet.stats}); each is an SQL view in the fleet schema of the same name. */
export type FleetStatsView =
  | 'cost_by_model'
  | 'cost_by_profile'
  | 'cost_by_label'
  | 'cost_by_day'
  | 'tool_calls'
  | 'model_latency'
  | 'sessions_by_status';

/** The telemetry views, in the order `rho stats` prints them. */
export const FLEET_STATS_VIEWS: readonly FleetStatsView[] = [
  'sessions_by_status',
  'cost_by_model',
  'cost_by_profile',
  'cost_by_label',
  'cost_by_day',
  'tool_calls',
  'model_latency',
];

/** Options of {@link Fleet.stats}. */
export interface FleetStatsOptions {
  /** At most this many rows (100 by default). */
  limit?: number;
}

/** One row of a telemetry view: column name to value (numbers as numbers, days as `YYYY-MM-DD`). */
export type FleetStatsRow = Record<string, string | number | null>;

/**
 * A connection to a fleet's database, from {@link connectFleet}. Agent side:
 * {@link attachSession}. Operator side: {@link listSessions}, {@link resolveSession},
 * {@link operator}, {@link readRecords}, {@link followRecords}, {@link searchContent}, {@link stats}. Administration:
 * {@link migrate}, {@link status}, {@link reconcile}.
 */
export interface Fleet {
  /** The configuration it connected with. */
  readonly config: FleetConfig;
  /**
   * Creates or upgrades the schema to the latest version: versioned migrations in one
   * transaction under an advisory lock, so two nodes migrating at once are safe; running it again
   * does nothing.
   */
  migrate(): Promise<MigrateResult>;
  /** Connection (redacted), schema version against the latest, sessions by status and by host. */
  status(): Promise<FleetStatus>;
  /**
   * The version of the fleet's schema in the database (0: not migrated), one query: what
   * `rho doctor` compares with `LATEST_SCHEMA_VERSION` (an outdated schema may lack what
   * {@link status} counts).
   */
  schemaVersion(): Promise<number>;
  /**
   * Registers (or re-registers, on a resume) a session and starts its heartbeat and signal
   * listener. Waits for the registration; throws a {@link FleetUnavailableError} when the
   * database cannot be reached (the caller decides whether to run without the fleet).
   */
  attachSession(info: SessionRegistration, options?: AttachOptions): Promise<SessionAttachment>;
  /**
   * Like {@link attachSession} but returns at once and registers in the background (retrying
   * while the database is away): for child sessions spawned during a run, from core's
   * `SessionOptions.childSessionOptions`, which must not wait. Signals reach it once registered.
   */
  attachSessionInBackground(info: SessionRegistration, options?: AttachOptions): SessionAttachment;
  /**
   * The operator side of a session's control channel. Each request is refused with a
   * {@link FleetSignalRefusedError} when the session has finished or is dead, and with core's
   * `SessionNotFoundError` when the fleet does not know it.
   */
  operator(sessionId: string): OperatorChannel;
  /** Sessions across the fleet, newest first (the query `rho ps` uses). */
  listSessions(options?: FleetListOptions): Promise<FleetSession[]>;
  /**
   * The session whose id is, or starts with, `prefix`, fleet-wide. Throws core's
   * `SessionNotFoundError` for none, and for several (with `candidates`).
   */
  resolveSession(prefix: string): Promise<FleetSession>;
  /** Mirrored records after `afterSeq`, in order (at most `limit`, 1,000 by default). */
  readRecords(sessionId: string, afterSeq?: number, limit?: number): Promise<MirroredRecord[]>;
  /** Mirrored records as they arrive, woken by LISTEN/NOTIFY (for watch, export and monitor). */
  followRecords(sessionId: string, options?: FollowOptions): AsyncIterable<MirroredRecord>;
  /**
   * Searches the mirrored traces' content in SQL: the records whose string values (never keys,
   * nor a record's `type` and `ts`) hold `query`, case-insensitive and literally (`%` and `_` are
   * characters), newest session first, at most 20 a session, until `limit` hits or 2,000,000
   * records read. A hit's `record` is its index among the session's records as
   * {@link followRecords} yields them, from 0. What `SessionSource.searchContent` of
   * `createFleetSessionSource` (and so the dashboard over a fleet) answers.
   */
  searchContent(options: ContentSearchOptions): Promise<ContentSearch>;
  /**
   * Marks sessions dead whose agent is gone: on `host` (default this node), recorded live
   * sessions whose pid is not a running process here; everywhere, live sessions whose heartbeat
   * is older than `deadAfterMs`. Returns the ids marked. `connectFleet` does not call it; a node
   * calls it when it starts (the CLI does on `rho fleet` commands and agent start).
   */
  reconcile(options?: { host?: string }): Promise<string[]>;
  /** Rows of a telemetry view. */
  stats(view: FleetStatsView, options?: FleetStatsOptions): Promise<FleetStatsRow[]>;
  /** Closes every connection (attachments included). */
  close(): Promise<void>;
}

/** Options of {@link connectFleet}. */
export interface ConnectFleetOptions {
  /** Connections in the shared pool (5 by default; each attachment's listener shares one more). */
  maxConnections?: number;
  /** Seconds to wait for the server (10 by default). */
  connectTimeoutSeconds?: number;
  /**
   * Longest wait for a lock on the fleet's tables, per statement, in ms (5,000 by default;
   * PostgreSQL's `lock_timeout`). A command that meets a table locked longer fails with a
   * {@link FleetUnavailableError} (code `fleet_busy`) that says what it waited for, instead of
   * waiting as long as the lock is held. Migrations wait without a limit.
   */
  lockTimeoutMs?: number;
  /** Longest time one statement may run, in ms (30,000 by default; `statement_timeout`). */
  statementTimeoutMs?: number;
  /**
   * How often the attached sessions' control flags are read without a notification (the safety
   * net under LISTEN/NOTIFY, which delivers in milliseconds), in ms; 2,000 by default. The
   * heartbeat rides on the same query every `heartbeatIntervalMs`.
   */
  syncIntervalMs?: number;
  /** Receives warnings of every attachment that has no `onWarning` of its own. */
  onWarning?: (warning: FleetWarning) => void;
  /**
   * The secrets to keep out of the fleet's tables (core's `createSecretRedactor`, given rho's API
   * keys, database passwords and the like): applied to every mirrored record and to what a
   * session registers (first prompt, labels, working directory). Whatever is given, the password
   * of any URL written in them, and the fleet url's own, are removed too.
   */
  redactor?: SecretRedactor;
}
