import { rmSync } from 'node:fs';
import { hostname as osHostname } from 'node:os';
import { rhoHome } from '@rho/core';
import { leaseFilePath, touchLease } from './internal/lease-file.js';
import { QueueStore, queueLabels, QUEUE_PREFIX } from './internal/queue-store.js';
import type { TaskSpec } from './task-spec.js';
import { allowedSpec, taskAllowlist, taskRefusal } from './task-allowlist.js';
import type { TaskAllowlist } from './task-allowlist.js';
import { taskApprovalWait } from './task-approvals.js';
import { attemptOutcome } from './task-outcome.js';
import { DEFAULT_QUEUE_SCHEMA, leaseOf } from './task-queue.js';
import type { TaskResult, TaskState } from './task-types.js';
import type { Running, StopReason, TaskWorker, TaskWorkerOptions } from './worker-types.js';
import { WorkerWorkspaces } from './worker-workspaces.js';

/** How long a session whose attempt lost its lease has to stop before it is killed. */
const LOST_KILL_SECONDS = 2;

export type { TaskWorker, TaskWorkerOptions, WorkerEvent } from './worker-types.js';

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
  private readonly workspaces: WorkerWorkspaces;

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
    this.workspaces = new WorkerWorkspaces(
      store,
      options,
      allow,
      options.home ?? rhoHome(),
      (id, attempt) => this.tasks.get(id)?.attempt === attempt,
    );
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
    // What attempts killed with an earlier worker here left behind, before the first task.
    await this.workspaces.sweep();
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
    const decided = await this.workspaces.decide(allowedSpec(row.spec, this.allow));
    const refusal = taskRefusal(row.spec, this.allow) ?? decided.refusal;
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
      spec: decided.spec,
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
    const leaseFile = leaseFilePath(task.id, task.attempt);
    touchLease(leaseFile);
    // A call that needs approval waits while this worker holds the task (its heartbeats go on),
    // as long as the worker allows and never past the deadline: there the timeout answers.
    const approvals = taskApprovalWait(task.spec, this.allow, { deadline: task.deadline, startedAt: Date.now() });
    const session = this.options.runner(
      {
        id: task.id,
        attempt: task.attempt,
        spec: task.spec,
        lease: { file: leaseFile, seconds: task.leaseSeconds },
        ...(approvals === undefined ? {} : { approvals }),
      },
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
      ...(task.spec.workspace === undefined ? {} : { workspace: task.spec.workspace }),
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
    // A lost lease: the session sees it at its next step even before the signal arrives, so it
    // starts no model or tool call more; the signal ends the call in flight and the session
    // records why it ended (a kill would leave its trace without an end). One that does not stop
    // within LOST_KILL_SECONDS is killed: another attempt may be running.
    if (reason === 'lost') rmSync(task.leaseFile, { force: true });
    task.session.stop('cancel');
    const grace = this.options.killAfterSeconds ?? 10;
    const killAfter = (reason === 'lost' ? Math.min(grace, LOST_KILL_SECONDS) : grace) * 1000;
    task.timers.push(setTimeout(() => task.session.stop('kill'), killAfter).unref());
  }

  private async ended(task: Running, result: TaskResult): Promise<void> {
    for (const timer of task.timers) clearTimeout(timer);
    rmSync(task.leaseFile, { force: true });
    result.host = this.host;
    result.attempt = task.attempt;
    const workspace = await this.workspaces.resultOf(result, task.workspace);
    if (workspace !== undefined) result.workspace = workspace;
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
        const outcome = attemptOutcome(task.reason, result, this.host);
        await this.finish(task, outcome.state, outcome.result);
      }
    } catch (error) {
      this.options.onError?.(error as Error);
    } finally {
      this.tasks.delete(task.id);
      // A handed-back or lost attempt's workspace goes now (its retry has its own), and any left behind.
      await this.workspaces.sweep();
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
    await this.workspaces.settled();
    await this.unlisten?.();
    await this.store.close();
    this.resolveStopped();
    return this.stopped;
  }
}
