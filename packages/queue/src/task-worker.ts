import { rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostname as osHostname } from 'node:os';
import { QueueStore, queueLabels, QUEUE_PREFIX } from './internal/queue-store.js';
import type { RunningSession, TaskRunner } from './session-runner.js';
import type { TaskSpec } from './task-spec.js';
import { allowedSpec, taskAllowlist, taskRefusal } from './task-allowlist.js';
import type { TaskAllowlist, TaskAllowlistOptions } from './task-allowlist.js';
import { DEFAULT_QUEUE_SCHEMA, leaseOf } from './task-queue.js';
import type { TaskResult, TaskState } from './task-types.js';

/** Options of {@link createTaskWorker}. */
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
   * What a task may choose on this worker: profiles, directories, model endpoints. Left out: the
   * narrowest (the `readonly` profile, the worker's working directory, no endpoint of the task's
   * own). A task asking for more is refused, not run: it fails with status `refused` and the reason.
   */
  allow?: TaskAllowlistOptions;
  /** The worker's working directory, where relative paths of a task resolve (default the process's). */
  cwd?: string;
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
  | { type: 'task_refused'; task_id: string; reason: string };

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

type StopReason = 'cancelled' | 'expired' | 'lost' | 'handback';

interface Running {
  id: string;
  queue: string;
  attempt: number;
  /** pg-boss's retry count of this attempt (attempt - 1): the fencing token of every heartbeat and settle. */
  retryCount: number;
  session: RunningSession;
  reason?: StopReason;
  timers: NodeJS.Timeout[];
  /** The lease file the session watches: touched after each confirmed renewal, removed when lost. */
  leaseFile: string;
}

/** Starts a worker: it takes matching tasks, runs them, heartbeats, reports results. */
export async function createTaskWorker(options: TaskWorkerOptions): Promise<TaskWorker> {
  const lease = leaseOf(options.leaseSeconds);
  // Checked before connecting: a directory that does not exist is the operator's to fix.
  const allow = taskAllowlist(options.allow ?? {}, options.cwd ?? process.cwd(), options.ownEndpoint);
  const store = await QueueStore.open({
    url: options.url,
    schema: options.schema ?? DEFAULT_QUEUE_SCHEMA,
    supervise: true,
    maintenanceSeconds: Math.max(1, Math.round(options.maintenanceSeconds ?? Math.min(lease, 30))),
    ...(options.onError === undefined ? {} : { onError: options.onError }),
  });
  const worker = new Worker(store, options, lease, allow);
  await worker.start();
  return worker;
}

class Worker implements TaskWorker {
  readonly id: string;
  readonly stopped: Promise<void>;
  private readonly host: string;
  private readonly concurrency: number;
  private readonly labels: readonly string[];
  private readonly tasks = new Map<string, Running>();
  private stopping = false;
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private unlisten: (() => Promise<void>) | undefined;
  private resolveStopped!: () => void;
  private looping: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: QueueStore,
    private readonly options: TaskWorkerOptions,
    private readonly lease: number,
    readonly allow: TaskAllowlist,
  ) {
    this.host = options.hostname ?? osHostname();
    this.id = `${this.host}:${process.pid}`;
    this.concurrency = Math.max(1, Math.floor(options.concurrency ?? 1));
    this.labels = [...new Set(options.labels ?? [])];
    this.stopped = new Promise((resolve) => (this.resolveStopped = resolve));
  }

  running(): number {
    return this.tasks.size;
  }

  async start(): Promise<void> {
    try {
      this.unlisten = await this.store.listen(
        (message) => this.onNotification(message),
        (error) => this.options.onError?.(error),
      );
    } catch (error) {
      // Without notifications the worker still polls.
      this.options.onError?.(error as Error);
    }
    this.looping = this.loop();
  }

  private onNotification(message: string): void {
    if (message.startsWith('cancel:')) {
      const task = this.tasks.get(message.slice('cancel:'.length));
      if (task !== undefined) this.stop(task, 'cancelled');
    } else this.wake();
  }

  private wake(): void {
    // A notice that arrives while the worker is busy looking is kept for the next wait.
    if (this.wakeUp === undefined) this.woken = true;
    else this.wakeUp();
  }

  private async loop(): Promise<void> {
    const pollMs = Math.max(50, (this.options.pollSeconds ?? 2) * 1000);
    let lastReconcile = 0;
    while (!this.stopping) {
      let took = false;
      try {
        if (Date.now() - lastReconcile > this.lease * 1000) {
          lastReconcile = Date.now();
          await this.store.reconcile();
        }
        if (this.tasks.size < this.concurrency) took = await this.takeOne();
      } catch (error) {
        this.options.onError?.(error as Error);
      }
      if (took || this.stopping) continue;
      if (this.woken) {
        this.woken = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }

  /** The pg-boss queues whose tasks this worker may take: those carrying all of its labels. */
  private async queues(): Promise<string[]> {
    const { rows } = await this.store.query<{ name: string }>(
      `SELECT name FROM ${this.store.schema}.queue WHERE name = $1 OR name LIKE $2`,
      [QUEUE_PREFIX, `${QUEUE_PREFIX}.%`],
    );
    return rows
      .map((row) => row.name)
      .filter((name) => {
        const labels = queueLabels(name);
        return labels !== undefined && this.labels.every((label) => labels.includes(label));
      });
  }

  /** Takes the best waiting task (highest priority, oldest first, over every matching queue). */
  private async takeOne(): Promise<boolean> {
    const queues = await this.queues();
    if (queues.length === 0) return false;
    const s = this.store.schema;
    const next = await this.store.query<{ name: string }>(
      `SELECT name FROM ${s}.job WHERE name = ANY($1) AND state < 'active' AND start_after < now()
       ORDER BY priority DESC, created_on, id LIMIT 1`,
      [queues],
    );
    const queue = next.rows[0]?.name;
    if (queue === undefined) return false;
    const [job] = await this.store.boss.fetch<{ task_id: string }>(queue, { batchSize: 1, includeMetadata: true });
    // Another worker took it first: look again at once.
    if (job === undefined) return true;
    const attempt = job.retryCount + 1;
    const claimed = await this.store.query<{ spec: TaskSpec; deadline: Date | null; state: TaskState }>(
      `UPDATE ${s}.rho_task SET state = 'running', attempt = $2, host = $3, worker_id = $4, session_id = NULL,
         started_at = now(), heartbeat_at = now(), finished_at = NULL, result = NULL
       WHERE id = $1 AND state IN ('queued', 'running') RETURNING spec, deadline, state`,
      [job.id, attempt, this.host, this.id],
    );
    const row = claimed.rows[0];
    if (row === undefined) {
      // Cancelled or expired while queued (or not a rho task): done with it in pg-boss too.
      const { rows } = await this.store.query<{ state: TaskState }>(`SELECT state FROM ${s}.rho_task WHERE id = $1`, [
        job.id,
      ]);
      await this.store.boss.complete(queue, { id: job.id, retryCount: job.retryCount });
      this.options.onEvent?.({ type: 'task_skipped', task_id: job.id, state: rows[0]?.state ?? 'failed' });
      return true;
    }
    // The worker decides what a task may choose: a task asking for more is refused, never run.
    const refusal = taskRefusal(row.spec, this.allow);
    if (refusal !== undefined) {
      this.options.onEvent?.({ type: 'task_refused', task_id: job.id, reason: refusal });
      await this.finish({ id: job.id, queue, attempt, retryCount: job.retryCount }, 'failed', {
        status: 'refused',
        attempt,
        host: this.host,
        error: `refused by the worker on ${this.host}: ${refusal}`,
      });
      return true;
    }
    if (row.deadline !== null && row.deadline.getTime() <= Date.now()) {
      await this.finish({ id: job.id, queue, attempt, retryCount: job.retryCount }, 'expired', {
        status: 'expired',
        attempt,
        host: this.host,
        error: 'the deadline passed before the task started',
      });
      return true;
    }
    this.launch({
      id: job.id,
      queue,
      attempt,
      retryCount: job.retryCount,
      // Jobs submitted without a heartbeat (none should be): the worker's own period.
      leaseSeconds: job.heartbeatSeconds ?? this.lease,
      spec: allowedSpec(row.spec, this.allow),
      deadline: row.deadline,
    });
    return true;
  }

  private launch(task: {
    id: string;
    queue: string;
    attempt: number;
    retryCount: number;
    leaseSeconds: number;
    spec: TaskSpec;
    deadline: Date | null;
  }): void {
    const s = this.store.schema;
    this.options.onEvent?.({ type: 'task_started', task_id: task.id, attempt: task.attempt, prompt: task.spec.prompt });
    // The lease as the session sees it: renewed now (the job was just fetched), then after each
    // confirmed heartbeat. A session whose worker is frozen sees the file age and stops itself.
    const leaseFile = join(tmpdir(), `rho-lease-${task.id}-${task.attempt}-${process.pid}`);
    touchLease(leaseFile);
    const session = this.options.runner(
      { id: task.id, attempt: task.attempt, spec: task.spec, lease: { file: leaseFile, seconds: task.leaseSeconds } },
      {
        onSession: (sessionId) => {
          this.options.onEvent?.({ type: 'task_session', task_id: task.id, session_id: sessionId });
          this.store
            .query(`UPDATE ${s}.rho_task SET session_id = $3 WHERE id = $1 AND attempt = $2`, [
              task.id,
              task.attempt,
              sessionId,
            ])
            .catch((error: Error) => this.options.onError?.(error));
        },
      },
    );
    const running: Running = {
      id: task.id,
      queue: task.queue,
      attempt: task.attempt,
      retryCount: task.retryCount,
      session,
      timers: [],
      leaseFile,
    };
    this.tasks.set(task.id, running);
    // The job's own lease (set when it was submitted), whatever this worker's: three beats a lease.
    running.timers.push(setInterval(() => void this.heartbeat(running), (task.leaseSeconds * 1000) / 3));
    if (task.deadline !== null) {
      const wait = task.deadline.getTime() - Date.now();
      // setTimeout holds at most about 24.8 days; a later deadline is checked by heartbeats.
      if (wait < 2 ** 31 - 1) running.timers.push(setTimeout(() => this.stop(running, 'expired'), Math.max(0, wait)));
    }
    void session.result.then((result) => this.ended(running, result));
  }

  /** Renews the lease; stops the session when the task was cancelled or the lease was lost. */
  private async heartbeat(task: Running): Promise<void> {
    const s = this.store.schema;
    try {
      // pg-boss's heartbeat, fenced to this attempt: it touches the job only while it is active
      // and still at the retry count this worker fetched.
      const touched = (await this.store.boss.touch(task.queue, { id: task.id, retryCount: task.retryCount })) as {
        affected?: number;
      };
      const renewed = touched.affected === 1;
      const row = await this.store.query<{ state: TaskState; attempt: number }>(
        `UPDATE ${s}.rho_task SET heartbeat_at = now() WHERE id = $1 RETURNING state, attempt`,
        [task.id],
      );
      const state = row.rows[0];
      if (renewed && state !== undefined && state.attempt === task.attempt) touchLease(task.leaseFile);
      if (state?.state === 'cancelled') this.stop(task, 'cancelled');
      else if (!renewed || state === undefined || state.attempt !== task.attempt) this.stop(task, 'lost');
    } catch (error) {
      this.options.onError?.(error as Error);
    }
  }

  private stop(task: Running, reason: StopReason): void {
    if (task.reason !== undefined) return;
    task.reason = reason;
    // A lost lease: the session sees it at its next step even before the signal arrives.
    if (reason === 'lost') rmSync(task.leaseFile, { force: true });
    task.session.stop(reason === 'lost' ? 'kill' : 'cancel');
    const killAfter = (this.options.killAfterSeconds ?? 10) * 1000;
    task.timers.push(setTimeout(() => task.session.stop('kill'), killAfter).unref());
  }

  private async ended(task: Running, result: TaskResult): Promise<void> {
    for (const timer of task.timers) clearTimeout(timer);
    rmSync(task.leaseFile, { force: true });
    result.host = this.host;
    result.attempt = task.attempt;
    try {
      if (task.reason === 'handback') {
        await this.store.boss.fail(
          task.queue,
          { id: task.id, retryCount: task.retryCount },
          { reason: 'handed back by a worker that was stopped' },
        );
        await this.store.reconcile();
        this.options.onEvent?.({ type: 'task_handed_back', task_id: task.id, attempt: task.attempt });
      } else if (task.reason !== 'lost') {
        const state: TaskState =
          task.reason === 'cancelled'
            ? 'cancelled'
            : task.reason === 'expired'
              ? 'expired'
              : result.status === 'completed'
                ? 'done'
                : 'failed';
        if (task.reason === 'expired') {
          result.status = 'expired';
          result.error = 'the deadline passed while the task ran';
        }
        await this.finish(task, state, result);
      }
    } catch (error) {
      this.options.onError?.(error as Error);
    } finally {
      this.tasks.delete(task.id);
      this.wake();
      this.drained?.();
    }
  }

  /** Records the final state (guarded by the attempt, so a lost attempt cannot overwrite a newer one). */
  private async finish(
    task: { id: string; queue: string; attempt: number; retryCount: number },
    state: TaskState,
    result: TaskResult,
  ): Promise<void> {
    const s = this.store.schema;
    const { rows } = await this.store.query<{ state: TaskState }>(
      `UPDATE ${s}.rho_task SET state = CASE WHEN state = 'cancelled' THEN 'cancelled' ELSE $3 END,
         result = $4::jsonb, finished_at = coalesce(finished_at, now())
       WHERE id = $1 AND attempt = $2 AND state IN ('running', 'cancelled') RETURNING state`,
      [task.id, task.attempt, state, JSON.stringify(result)],
    );
    if (rows.length === 0) {
      // The task is no longer this attempt's (its lease lapsed and another attempt took it): the
      // result is not recorded, and the job, fenced to the live attempt, is left alone.
      this.options.onEvent?.({
        type: 'task_lost',
        task_id: task.id,
        attempt: task.attempt,
        reason: "the task's lease lapsed and another attempt holds it; this attempt's result was not recorded",
      });
      return;
    }
    // Fenced like the heartbeat: a stale attempt cannot complete the job another attempt holds.
    await this.store.boss.complete(
      task.queue,
      { id: task.id, retryCount: task.retryCount },
      { state, status: result.status },
    );
    this.options.onEvent?.({ type: 'task_finished', task_id: task.id, state: rows[0]?.state ?? state, result });
  }

  private drained: (() => void) | undefined;

  async drain(graceSeconds: number): Promise<void> {
    if (this.stopping) {
      // Asked again (a second Ctrl+C): hand back now instead of waiting out the grace.
      if (graceSeconds <= 0) for (const task of this.tasks.values()) this.stop(task, 'handback');
      return this.stopped;
    }
    this.stopping = true;
    this.wake();
    const allDone = () =>
      new Promise<void>((resolve) => {
        if (this.tasks.size === 0) resolve();
        else this.drained = () => this.tasks.size === 0 && resolve();
      });
    // A task being taken right now is started (and then drained like the others) before the count.
    await this.looping;
    const grace = setTimeout(() => {
      for (const task of this.tasks.values()) this.stop(task, 'handback');
    }, graceSeconds * 1000);
    await allDone();
    clearTimeout(grace);
    await this.unlisten?.();
    await this.store.close();
    this.resolveStopped();
    return this.stopped;
  }
}

/** Marks the lease renewed now, for the session that watches the file (creating it the first time). */
function touchLease(file: string): void {
  try {
    const now = new Date();
    writeFileSync(file, '');
    utimesSync(file, now, now);
  } catch {
    // The session then stops itself at its next step: the safe side.
  }
}
