import type { AnswerOutcome, ApprovalAnswer, OperatorChannel, PendingApproval, RawTraceRecord } from '@rho/core';
import type { ContentSearch, ContentSearchOptions, ListedSession } from '@rho/monitor';

/** The content search's types are `@rho/monitor`'s, which a fleet's `SessionSource` answers with too. */
export type { ContentHit, ContentSearch, ContentSearchOptions } from '@rho/monitor';

/** A sessions page: which rows, in which order (all filtering, sorting and paging is done by the source). */
export interface SessionQuery {
  /** Free text searched in id, first prompt, model, profile and host (case-insensitive). */
  search?: string;
  /** Only sessions with this status. `active` means running, paused or waiting for approval. */
  status?: string;
  /** Only sessions of this model. */
  model?: string;
  /** Only sessions of this profile. */
  profile?: string;
  /** Sort key (default `startedAt`). */
  sort?: SessionSortKey;
  /** Sort direction (default `desc`). */
  order?: 'asc' | 'desc';
  /** Rows to skip (default 0). */
  offset?: number;
  /** Rows to return (default 100, at most 1000). */
  limit?: number;
  /**
   * Show child agents under their parents (default true): a page then holds root sessions,
   * each followed by its descendants, and sorting applies among siblings.
   */
  tree?: boolean;
}

/** The columns a sessions page sorts by. */
export type SessionSortKey = 'startedAt' | 'status' | 'model' | 'profile' | 'hostname' | 'tokens' | 'costUsd' | 'id';

/** One page of sessions. */
export interface SessionPage {
  /** The rows of this page, in order: `@rho/monitor`'s listed sessions, each with its depth under its root. */
  rows: (ListedSession & { depth: number })[];
  /** How many rows match the query in all (every page together). */
  total: number;
  /** How many sessions the source has (before filtering). */
  all: number;
  /** Distinct models, profiles and statuses among all sessions, for the filter menus. */
  facets: { models: string[]; profiles: string[]; statuses: string[] };
}

/** Cost figures of the costs page. */
export interface CostStats {
  /** By model (from each model call's `llm_end`). */
  byModel: CostBucket[];
  /** By permission profile of the session. */
  byProfile: CostBucket[];
  /** By UTC day of the model call (`YYYY-MM-DD`), oldest first. */
  byDay: CostBucket[];
  /** Sessions summed. */
  sessions: number;
}

/** One bucket of {@link CostStats}. */
export interface CostBucket {
  /** The model, profile or day. */
  key: string;
  /** Model calls. */
  calls: number;
  /** Input tokens. */
  inputTokens: number;
  /** Output tokens. */
  outputTokens: number;
  /** Known cost in USD (calls without a price add nothing). */
  costUsd: number;
  /** Calls without a known price. */
  unpricedCalls: number;
}

/** Tool figures of the tools page. */
export interface ToolStats {
  /** One row per tool name, most called first. */
  tools: ToolBucket[];
  /**
   * The latency of model calls, one row per model, most called first (`failures` and `blocked`
   * are 0); undefined when the source does not know it (a fleet's views).
   */
  models?: ToolBucket[];
  /** Sessions summed. */
  sessions: number;
}

/** One tool of {@link ToolStats}. */
export interface ToolBucket {
  /** The tool's name. */
  name: string;
  /** Calls that ran (`tool_end`). */
  calls: number;
  /** Calls that ran and failed (`success: false`). */
  failures: number;
  /** Calls refused before running (`tool_blocked`). */
  blocked: number;
  /** Median duration in ms. */
  p50Ms: number;
  /** Mean duration in ms (undefined when the source does not know it). */
  meanMs?: number;
  /** 95th percentile duration in ms (undefined when the source does not know it). */
  p95Ms?: number;
  /** Longest duration in ms (undefined when the source does not know it). */
  maxMs?: number;
}

/**
 * What {@link DashboardSource.answerApproval} did: the answer is the one applied (`answered`),
 * another won before it (`already_answered`, with the winner), or nothing was recorded because the
 * call does not wait (`not_pending`, with the calls that do and, when the call was answered before,
 * the answer that stands).
 */
export type DashboardApprovalResult =
  AnswerOutcome | { outcome: 'not_pending'; waiting: string[]; answered?: ApprovalAnswer };

/** Options of {@link DashboardSource.follow}. */
export interface FollowOptions {
  /** Ends the iteration when aborted. */
  signal: AbortSignal;
}

/**
 * Where the dashboard's sessions come from: a sessions directory ({@link createFileSource}), or
 * any `@rho/monitor` `SessionSource` ({@link createDashboardSource}: a fleet's). Everything the
 * server shows goes through this interface, and nothing else reads sessions, so a source for
 * another store plugs in without touching the server or the pages.
 */
export interface DashboardSource {
  /** What the source reads, for the page header (`files: /home/me/.config/rho/sessions`). */
  readonly description: string;
  /** One page of sessions: filtered, sorted and paged by the source. */
  listSessions(query: SessionQuery): Promise<SessionPage>;
  /** One session, or undefined when there is no such session. */
  getSession(id: string): Promise<ListedSession | undefined>;
  /**
   * The session's trace records from the first, then each new one as it is written, in batches;
   * ends when the signal aborts. Throws a `SessionNotFoundError` for an unknown id. A source may
   * hand on an empty batch when it has caught up with what was written (a directory's does): the
   * trace viewer then knows its tree is whole; a source that does not is taken to have caught up
   * after a short quiet.
   */
  follow(id: string, options: FollowOptions): AsyncIterable<RawTraceRecord[]>;
  /**
   * The session's trace records at these indexes (0-based, as `follow` hands them on), for the
   * trace viewer's detail pane; an index the trace does not have is left out. Optional: without
   * it, the server keeps the records it followed (within a budget) and reads the trace again for
   * those it let go. Throws a `SessionNotFoundError` for an unknown id.
   */
  readRecords?(id: string, indexes: readonly number[]): Promise<Map<number, RawTraceRecord>>;
  /** The control channel of a session (cancel, pause, resume, directive). Throws for an unknown id. */
  operator(id: string): Promise<OperatorChannel>;
  /**
   * The session's tool calls that wait for approval (from its trace), oldest first. Optional: a
   * source without it shows no waiting calls and answers none. An unknown id has none, or throws a
   * `SessionNotFoundError` (the server asks only about sessions it found).
   */
  pendingApprovals?(id: string): Promise<PendingApproval[]>;
  /**
   * Answers a waiting call exactly once (see {@link DashboardApprovalResult}): `@rho/monitor`'s
   * `answerIfPending` over the session's operator channel. Throws a `ConfigError` for an answer of
   * the wrong shape, a `SessionNotFoundError` for an unknown id.
   */
  answerApproval?(id: string, toolCallId: string, answer: ApprovalAnswer): Promise<DashboardApprovalResult>;
  /**
   * The session's directory on this machine (its `meta.json`, `workspace.json`, checkpoints), for
   * `GET /api/sessions/:id/changes`. Optional: a source without it (a fleet's: the files are on the
   * node that ran the session) shows no changes. Undefined for an unknown id.
   */
  sessionDirectory?(id: string): Promise<string | undefined>;
  /**
   * Searches the content of sessions' traces (messages, tool arguments and results, errors), not
   * only ids and prompts; a hit's `record` counts records as {@link follow} yields them. A
   * directory's reads the trace files; {@link createDashboardSource} passes on its
   * `SessionSource`'s (a fleet's searches its database). Optional: a source without it searches
   * the listing only (`GET /api/search` answers 501).
   */
  searchContent?(options: ContentSearchOptions): Promise<ContentSearch>;
  /** Costs (by model, profile, day) over every session. */
  costStats(): Promise<CostStats>;
  /** Tool calls, failures and latency over every session. */
  toolStats(): Promise<ToolStats>;
  /** Releases what the source holds (watchers, connections). */
  close(): Promise<void>;
}
