import type { QueueStore } from './internal/queue-store.js';
import type { TaskAllowlist } from './task-allowlist.js';
import type { TaskSpec } from './task-spec.js';
import type { TaskResult, TaskState } from './task-types.js';
import {
  profileMayWrite,
  sweepTaskWorkspaces,
  taskWorkspaceMode,
  taskWorkspaceOf,
  workspaceRefusal,
} from './task-workspace.js';
import type { AttemptSession } from './task-workspace.js';
import type { TaskWorkerOptions } from './worker-types.js';

/**
 * A worker's side of its tasks' workspaces: the mode each task runs in, the workspace its result
 * names, and the sweeps (at start, after each task) that discard what attempts that did not finish
 * left behind. One sweep runs at a time; one asked for meanwhile runs after it.
 */
export class WorkerWorkspaces {
  private sweeping: Promise<void> = Promise.resolve();
  private again = false;
  private busy = false;

  constructor(
    private readonly store: QueueStore,
    private readonly options: Pick<TaskWorkerOptions, 'onEvent' | 'onError'>,
    private readonly allow: TaskAllowlist,
    /** `$RHO_HOME` of the worker's sessions. */
    readonly home: string,
    /** Whether this worker runs that attempt of a task now (its result is not recorded yet). */
    private readonly runs: (taskId: string, attempt: number) => boolean,
  ) {}

  /**
   * The spec to run with its workspace mode made explicit, or why the worker refuses it. An eval
   * question (`sql_eval`) runs readonly and has none.
   */
  async decide(spec: TaskSpec): Promise<{ spec: TaskSpec; refusal?: string }> {
    if (spec.sql_eval !== undefined) return { spec };
    const writes = await profileMayWrite(spec.profile ?? this.allow.profiles[0]!, this.home, this.allow.cwd);
    const refusal = workspaceRefusal(spec, writes, this.allow);
    if (refusal !== undefined) return { spec, refusal };
    return { spec: { ...spec, workspace: taskWorkspaceMode(spec, writes) } };
  }

  /** The result's `workspace`: what the session's record and meta.json say (nothing when it made none). */
  async resultOf(result: TaskResult, mode: TaskSpec['workspace']): Promise<TaskResult['workspace']> {
    if (mode === undefined || result.session_id === undefined) return undefined;
    try {
      return await taskWorkspaceOf(this.home, result.session_id, mode);
    } catch (error) {
      this.options.onError?.(error as Error);
      return undefined;
    }
  }

  /** Sweeps now (or right after the sweep running now); settles when it is done, never rejects. */
  sweep(): Promise<void> {
    if (this.busy) {
      this.again = true;
      return this.sweeping;
    }
    this.busy = true;
    this.sweeping = (async () => {
      do {
        this.again = false;
        try {
          const swept = await sweepTaskWorkspaces(this.home, (sessions) => this.abandoned(sessions));
          if (swept.removed.length > 0 || swept.discarded.length > 0)
            this.options.onEvent?.({ type: 'workspace_swept', ...swept });
        } catch (error) {
          this.options.onError?.(error as Error);
        }
      } while (this.again);
      this.busy = false;
    })();
    return this.sweeping;
  }

  /** Settles when no sweep runs. */
  settled(): Promise<void> {
    return this.sweeping;
  }

  /**
   * The sessions, of those given, whose attempt will never be reviewed: a newer attempt holds
   * their task, or it waits in the queue for one, or their attempt still counts as running but
   * its session died without ending (its worker was killed: the attempt is retried), or the task
   * ended with another session's result. A task this queue does not know (another queue's, or
   * deleted) is left alone, and so is an attempt this worker runs now.
   */
  private async abandoned(sessions: AttemptSession[]): Promise<Set<string>> {
    const { rows } = await this.store.query<{
      id: string;
      state: TaskState;
      attempt: number;
      session_id: string | null;
      result: TaskResult | null;
    }>(`SELECT id, state, attempt, session_id, result FROM ${this.store.schema}.rho_task WHERE id = ANY($1::uuid[])`, [
      [...new Set(sessions.map((session) => session.task_id))].filter(isUuid),
    ]);
    const tasks = new Map(rows.map((row) => [row.id, row]));
    const chosen = new Set<string>();
    for (const session of sessions) {
      const task = tasks.get(session.task_id);
      if (task === undefined || this.runs(session.task_id, session.attempt)) continue;
      const own = task.session_id === session.session_id || task.result?.session_id === session.session_id;
      const gone =
        task.attempt > session.attempt ||
        (task.attempt === session.attempt &&
          (task.state === 'queued' || (task.state === 'running' ? !session.ended : !own)));
      if (gone) chosen.add(session.session_id);
    }
    return chosen;
  }
}

function isUuid(text: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);
}
