import type { LiveStatus } from './live-status.js';

/**
 * One session as every view lists it (`rho ps`, `rho watch`, the dashboard, an operator script),
 * whichever {@link SessionSource} it comes from: a sessions directory or a fleet. Fields a source
 * does not know are left out (a fleet has no session directory here).
 */
export interface ListedSession {
  /** The session id (its directory's name). */
  id: string;
  /** Live status: the recorded status, or `dead` when its process is gone; `unknown` when it cannot be read. */
  status: LiveStatus;
  /** The status the session last recorded (differs from `status` only for dead sessions). */
  recordedStatus: string;
  /** Why the status is `dead` or `unknown`, for people. */
  statusReason?: string;
  /** Why the session's meta.json could not be read (its status is then `unknown`). */
  problem?: string;
  /** The model the session runs. */
  model?: string;
  /** The permission profile it runs under. */
  profile?: string;
  /** Host the agent runs on (a fleet's node); the pid is only meaningful there. */
  hostname?: string;
  /** Process id of the agent. */
  pid?: number;
  /** The working directory the session runs in (a fleet records it). */
  cwd?: string;
  /** Free labels (`team: data`): a fleet's, or meta.json's `labels` for a directory. */
  labels?: Record<string, string>;
  /** UTC ISO-8601 start time. */
  startedAt: string;
  /** When the session's record was last written. */
  updatedAt?: string;
  /** Last heartbeat of the agent process. */
  heartbeatAt?: string;
  /** The task the session was started with. */
  firstPrompt?: string;
  /** Id of the parent session, for child agents. */
  parentId?: string;
  /** Input tokens of the whole session; undefined while not known (a trace not read yet). */
  inputTokens?: number;
  /** Output tokens of the whole session; undefined while not known. */
  outputTokens?: number;
  /**
   * Cost in USD of the priced model calls: `null` when calls were made and none was priced (the
   * cost is unknown), undefined when no figure is known yet (a directory's session before the end
   * of its first run, unless its usage was read from the trace).
   */
  costUsd?: number | null;
  /** Model calls without a known price: their cost is not in `costUsd`. */
  unpricedCalls?: number;
  /** Records a fleet holds of the session's trace (its mirror's count). */
  records?: number;
  /** The session directory, for a session of a sessions directory. */
  directory?: string;
  /** What an isolated run changed in its workspace (`changes` of meta.json), once a run ended. */
  changes?: { files: number; additions: number; deletions: number };
}
