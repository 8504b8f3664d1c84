import type { TaskSpec } from './task-spec.js';

/** Where a task stands. `running` tasks name their host; the rest are final but `queued`. */
export type TaskState = 'queued' | 'running' | 'done' | 'failed' | 'cancelled' | 'expired';

/** What a worker reports when a task's session ends. */
export interface TaskResult {
  /**
   * How the session ended: the run's status (`completed`, `error`, `limit`, `cancelled`,
   * `truncated`, `refused`: every tool call it asked for was refused, `waiting_approval`: it was
   * stopped while a call waited for approval and is parked, see {@link pending_approval}), or
   * `refused` by the worker (the task asked for more than it allows; not run), `expired` (the
   * deadline passed while it ran), `lost` (the worker stopped answering and no attempt was left),
   * `crashed` (the session process ended without a status).
   */
  status: string;
  /** The session process's exit code (0 completed, 1 failed or refused, 3 limit, 4 parked, 130 cancelled), when it ran. */
  exit_code?: number | null;
  /** The final answer. */
  answer?: string;
  /** The session's id on the worker (its trace is in that worker's `$RHO_HOME/sessions/<id>`). */
  session_id?: string;
  /** Token usage of the run, as in the trace's `run_end`. */
  usage?: Record<string, number>;
  /** What the run cost in USD, when the model is priced. */
  cost_usd?: number;
  /** Which attempt produced this result, from 1. */
  attempt?: number;
  /** The host the session ran on. */
  host?: string;
  /** What went wrong, in words (a failed, refused, parked or lost task). */
  error?: string;
  /**
   * The call a parked session (status `waiting_approval`) waits on: answer it with
   * `rho approve SESSION` / `rho deny SESSION`, then continue the session with `rho --resume`
   * on its host.
   */
  pending_approval?: { tool_call_id: string; tool_name: string; expires_at?: string };
  /**
   * Structured output the session reported (a `{"type": "task_output", "output": ...}` line):
   * an eval question's outcome, which its submitter grades.
   */
  output?: unknown;
  /**
   * Where the session changed files. An isolated one names its workspace on the worker (a git
   * worktree on `branch`, or a copy) and what changed there: review it on `host` with
   * `rho diff SESSION`, keep it with `rho apply SESSION`, drop it with `rho discard SESSION`.
   */
  workspace?: TaskWorkspace;
}

/** The workspace of a task's session, as its result carries it (see {@link TaskResult.workspace}). */
export type TaskWorkspace =
  | {
      mode: 'isolated';
      /** A git worktree of the working directory's repository, or a copy of a plain directory. */
      kind: 'git-worktree' | 'copy';
      /** `rho/<session id>`, for a worktree. */
      branch?: string;
      /** Where the agent worked, on the worker: under its `$RHO_HOME/workspaces/`. */
      path: string;
      /** What the agent changed there, against what it started from. */
      changes: { files: number; additions: number; deletions: number };
    }
  | { mode: 'in-place' };

/** A task as `rho tasks` and `rho results` show it. */
export interface TaskRecord {
  /** The task id (a UUID). */
  id: string;
  state: TaskState;
  /** Attempts started so far (0 while never started). */
  attempt: number;
  /** The host of the worker running it (or that ran its last attempt). */
  host?: string;
  /** The worker's id (`host:pid`). */
  worker_id?: string;
  /** The fleet/session id of the session running it (or that ran it). */
  session_id?: string;
  labels: string[];
  priority: number;
  /** What was submitted. */
  spec: TaskSpec;
  submitted_at: string;
  started_at?: string;
  heartbeat_at?: string;
  finished_at?: string;
  deadline?: string;
  /** Set once the task is final. */
  result?: TaskResult;
}

/** Which tasks to list. */
export interface TaskFilter {
  /** Task ids or unique id prefixes. */
  ids?: readonly string[];
  /** Tasks carrying all of these labels. */
  labels?: readonly string[];
  /** Tasks in one of these states. */
  states?: readonly TaskState[];
  /** At most this many, newest first. */
  limit?: number;
}
