import type { RunningSession, TaskRunner } from './session-runner.js';
import type { TaskSpec } from './task-spec.js';
import type { TaskAllowlist, TaskAllowlistOptions } from './task-allowlist.js';
import type { TaskResult, TaskState } from './task-types.js';
import type { TaskWorkspaceSweep } from './task-workspace.js';

/** Options of `createTaskWorker`. */
export interface TaskWorkerOptions {
  /** PostgreSQL connection URL of the queue. */
  url: string;
  /** The queue's schema (default `rho_queue`). */
  schema?: string;
  /** Tasks run at the same time (default 1). */
  concurrency?: number;
  /** Take only tasks that carry all of these labels (default: any task). */
  labels?: readonly string[];
  /** Runs a task as a session (see `createCliSessionRunner`). */
  runner: TaskRunner;
  /**
   * What a task may choose on this worker: profiles, directories, model endpoints, how long a call
   * may wait for approval and whether a timeout may approve it. Left out: the
   * narrowest (the `readonly` profile, the worker's working directory, no endpoint of the task's
   * own). A task asking for more is refused, not run: it fails with status `refused` and the reason.
   */
  allow?: TaskAllowlistOptions;
  /** The worker's working directory, where relative paths of a task resolve (default the process's). */
  cwd?: string;
  /**
   * `$RHO_HOME` of the sessions the runner starts (default core's `rhoHome()`): where the worker
   * reads a session's workspace record and sweeps `workspaces/` (see `sweepTaskWorkspaces`).
   */
  home?: string;
  /** The model endpoint the worker itself is configured with (`OPENAI_BASE_URL`): a task naming it is no override. */
  ownEndpoint?: string;
  /**
   * How often this worker brings the queue's catalogue in line with pg-boss, in seconds (default 60).
   * A running task's lease is the one it was submitted with (the queue's `leaseSeconds`, kept by
   * pg-boss as the job's `heartbeatSeconds`): the worker heartbeats at a third of it.
   */
  leaseSeconds?: number;
  /** How often to look for tasks when no notification arrives, in seconds (default 2). */
  pollSeconds?: number;
  /** How often this worker looks for expired leases of dead workers, in seconds (default: the lease, at most 30). */
  maintenanceSeconds?: number;
  /** Seconds a cancelled session is given to stop before it is killed (default 10). */
  killAfterSeconds?: number;
  /** The host name reported for running tasks (default the machine's). */
  hostname?: string;
  /** What the worker does, for a log. */
  onEvent?: (event: WorkerEvent) => void;
  /** Errors that did not stop the worker (a dropped connection, a failed poll). */
  onError?: (error: Error) => void;
}

/** What a worker reports as it works. */
export type WorkerEvent =
  | { type: 'task_started'; task_id: string; attempt: number; prompt: string }
  | { type: 'task_session'; task_id: string; session_id: string }
  | { type: 'task_finished'; task_id: string; state: TaskState; result: TaskResult }
  | { type: 'task_handed_back'; task_id: string; attempt: number }
  /** This worker's attempt ended after the task had passed to another attempt: its result was not recorded. */
  | { type: 'task_lost'; task_id: string; attempt: number; reason: string }
  | { type: 'task_skipped'; task_id: string; state: TaskState }
  | { type: 'task_refused'; task_id: string; reason: string }
  /** A sweep removed workspaces: those `@rho/workspace` found orphaned or decided, and those of attempts that did not finish. */
  | ({ type: 'workspace_swept' } & TaskWorkspaceSweep);

/** A worker taking tasks from the queue. */
export interface TaskWorker {
  /** `host:pid`. */
  readonly id: string;
  /** What this worker lets a task choose. */
  readonly allow: TaskAllowlist;
  /** Tasks running now. */
  running(): number;
  /**
   * Stops taking tasks and lets running ones finish; those still running after `graceSeconds`
   * are stopped and handed back to the queue (another worker starts them again). Then closes.
   */
  drain(graceSeconds: number): Promise<void>;
  /** Settles when the worker has stopped. */
  readonly stopped: Promise<void>;
}

/** Why a worker stops a session it runs. */
export type StopReason = 'cancelled' | 'expired' | 'lost' | 'handback';

/** A task a worker runs now (the worker's own bookkeeping). */
export interface Running {
  id: string;
  queue: string;
  attempt: number;
  /** pg-boss's retry count of this attempt (attempt - 1): the fencing token of every heartbeat and settle. */
  retryCount: number;
  session: RunningSession;
  /** The workspace mode the session runs in (none for an eval question). */
  workspace?: TaskSpec['workspace'];
  reason?: StopReason;
  timers: NodeJS.Timeout[];
  /** The lease file the session watches: touched after each confirmed renewal, removed when lost. */
  leaseFile: string;
}
