import { randomUUID } from 'node:crypto';
import { ConfigError, RhoError } from '@rho/core';
import { QueueStore, queueName } from './internal/queue-store.js';
import type { TaskSpec } from './task-spec.js';
import type { TaskFilter, TaskRecord, TaskResult, TaskState } from './task-types.js';

/** Where the queue lives. */
export interface TaskQueueOptions {
  /** PostgreSQL connection URL (the fleet's: `--fleet`, `RHO_FLEET_URL`, `fleet.url`). */
  url: string;
  /** The schema of the queue's tables, pg-boss's included (default `rho_queue`). */
  schema?: string;
  /**
   * The lease of the tasks this queue submits, in seconds (default 60, at least 10): a worker
   * heartbeats three times a lease; when the heartbeats stop (the machine died), the task is
   * started again elsewhere.
   */
  leaseSeconds?: number;
  /** Errors that did not fail a call (a dropped idle connection). */
  onError?: (error: Error) => void;
  /**
   * Create the queue's schema when it does not exist (default true). False for a client that only
   * looks (cancel, list): a missing queue is then a {@link QueueNotFoundError} and nothing is made.
   */
  create?: boolean;
}

/** The queue as a client sees it: submit, list, cancel, collect. */
export interface TaskQueue {
  /** Enqueues the tasks in one transaction (all or none); returns their ids in order. */
  submit(tasks: readonly TaskSpec[]): Promise<string[]>;
  /** Tasks matching the filter, newest first. */
  list(filter?: TaskFilter): Promise<TaskRecord[]>;
  /**
   * Cancels a queued or running task (an id or unique prefix). A running task's worker stops its
   * session within moments. Returns the task as it stands after the request; a task already
   * final is returned unchanged.
   */
  cancel(id: string): Promise<TaskRecord>;
  /** Closes the connections. */
  close(): Promise<void>;
}

/** A task id or prefix that matches no task, or more than one. */
export class TaskNotFoundError extends RhoError {
  constructor(options: { message: string }) {
    super('task_not_found', options);
    this.name = 'TaskNotFoundError';
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Default lease of a running task, in seconds. */
export const DEFAULT_LEASE_SECONDS = 60;
/** The shortest lease: pg-boss's heartbeat counts in whole seconds, 10 at least. */
export const MIN_LEASE_SECONDS = 10;
/**
 * The longest one attempt may run, in seconds: pg-boss fails a job that has been active for its
 * `expireInSeconds` whatever its heartbeats, and allows 24 hours at most.
 */
export const MAX_ATTEMPT_SECONDS = 86_400;
/** Default schema of the queue. */
export const DEFAULT_QUEUE_SCHEMA = 'rho_queue';

/** Opens the queue (creating its schema on first use, unless `create: false`). */
export async function createTaskQueue(options: TaskQueueOptions): Promise<TaskQueue> {
  const lease = leaseOf(options.leaseSeconds);
  const store = await QueueStore.open({
    url: options.url,
    schema: options.schema ?? DEFAULT_QUEUE_SCHEMA,
    supervise: false,
    maintenanceSeconds: 60,
    ...(options.create === undefined ? {} : { create: options.create }),
    ...(options.onError === undefined ? {} : { onError: options.onError }),
  });
  return new PostgresTaskQueue(store, lease);
}

/** The lease in whole seconds (pg-boss counts in seconds), at least {@link MIN_LEASE_SECONDS}. */
export function leaseOf(seconds: number | undefined): number {
  if (seconds === undefined) return DEFAULT_LEASE_SECONDS;
  if (!Number.isFinite(seconds) || seconds < MIN_LEASE_SECONDS)
    throw new ConfigError({
      message: `The lease must be at least ${MIN_LEASE_SECONDS} seconds (got ${seconds}): pg-boss's job heartbeat allows no shorter.`,
      code: 'queue_lease',
    });
  return Math.ceil(seconds);
}

interface TaskRow {
  id: string;
  state: TaskState;
  attempt: number;
  host: string | null;
  worker_id: string | null;
  session_id: string | null;
  labels: string[];
  priority: number;
  spec: TaskSpec;
  submitted_at: Date;
  started_at: Date | null;
  heartbeat_at: Date | null;
  finished_at: Date | null;
  deadline: Date | null;
  result: TaskResult | null;
}

/** A row of rho_task as a {@link TaskRecord}. */
export function recordOf(row: TaskRow): TaskRecord {
  const iso = (date: Date | null) => (date === null ? undefined : date.toISOString());
  const optional = <K extends string, V>(key: K, value: V | null | undefined) =>
    value === null || value === undefined ? {} : ({ [key]: value } as Record<K, V>);
  return {
    id: row.id,
    state: row.state,
    attempt: row.attempt,
    ...optional('host', row.host),
    ...optional('worker_id', row.worker_id),
    ...optional('session_id', row.session_id),
    labels: row.labels,
    priority: row.priority,
    spec: row.spec,
    submitted_at: row.submitted_at.toISOString(),
    ...optional('started_at', iso(row.started_at)),
    ...optional('heartbeat_at', iso(row.heartbeat_at)),
    ...optional('finished_at', iso(row.finished_at)),
    ...optional('deadline', iso(row.deadline)),
    ...optional('result', row.result),
  };
}

class PostgresTaskQueue implements TaskQueue {
  constructor(
    private readonly store: QueueStore,
    private readonly leaseSeconds: number,
  ) {}

  async submit(tasks: readonly TaskSpec[]): Promise<string[]> {
    if (tasks.length === 0) return [];
    const { store } = this;
    const queues = [...new Set(tasks.map((task) => queueName(task.labels ?? [])))];
    // pg-boss creates queues outside any transaction; an empty queue left by a failed submit is harmless.
    for (const name of queues) await store.boss.createQueue(name);
    const rows = tasks.map((task) => ({ id: randomUUID(), task, queue: queueName(task.labels ?? []) }));
    await store.transaction(async (client) => {
      const db = { executeSql: async (text: string, values?: unknown[]) => client.query(text, values) };
      for (const queue of queues) {
        await store.boss.insert(
          queue,
          rows
            .filter((row) => row.queue === queue)
            .map(({ id, task }) => ({
              id,
              data: { task_id: id },
              priority: task.priority ?? 0,
              retryLimit: (task.max_attempts ?? 3) - 1,
              retryDelay: 0,
              // The lease: pg-boss fails (and retries) an active job whose worker has not touched it
              // for this long. The worker heartbeats at a third of it.
              heartbeatSeconds: this.leaseSeconds,
              expireInSeconds: MAX_ATTEMPT_SECONDS,
              // A queued job is dropped by pg-boss after its retention; rho_task then says expired.
              retentionSeconds:
                task.deadline === undefined
                  ? 365 * 86_400
                  : Math.max(1, Math.ceil((Date.parse(task.deadline) - Date.now()) / 1000)),
              // Finished jobs leave pg-boss's table after a day: results live in rho_task.
              deleteAfterSeconds: 86_400,
            })),
          { db },
        );
      }
      // One transaction gives every job the same created_on; a microsecond apart each, equal
      // priorities start in the order they were submitted.
      await client.query(
        `UPDATE ${store.schema}.job j SET created_on = j.created_on + (x.ord * interval '1 microsecond')
         FROM unnest($1::uuid[]) WITH ORDINALITY AS x(id, ord) WHERE j.id = x.id`,
        [rows.map((row) => row.id)],
      );
      await client.query(
        `INSERT INTO ${store.schema}.rho_task (id, queue, spec, labels, priority, state, deadline)
         SELECT x.id, x.queue, x.spec, x.labels, x.priority, 'queued', x.deadline
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, queue text, spec jsonb, labels text[], priority int, deadline timestamptz)`,
        [
          JSON.stringify(
            rows.map(({ id, task, queue }) => ({
              id,
              queue,
              spec: task,
              labels: task.labels ?? [],
              priority: task.priority ?? 0,
              deadline: task.deadline ?? null,
            })),
          ),
        ],
      );
    });
    await store.notify('submit').catch(() => undefined);
    return rows.map((row) => row.id);
  }

  async list(filter: TaskFilter = {}): Promise<TaskRecord[]> {
    await this.store.reconcile();
    const where: string[] = [];
    const values: unknown[] = [];
    if (filter.ids !== undefined && filter.ids.length > 0) {
      // Whole ids (a client following its own tasks) use the primary key; prefixes a scan.
      if (filter.ids.every((id) => UUID.test(id))) {
        values.push(filter.ids.map((id) => id.toLowerCase()));
        where.push(`id = ANY($${values.length}::uuid[])`);
      } else {
        values.push(filter.ids.map((id) => `${id.toLowerCase()}%`));
        where.push(`id::text LIKE ANY($${values.length})`);
      }
    }
    if (filter.labels !== undefined && filter.labels.length > 0) {
      values.push(filter.labels);
      where.push(`labels @> $${values.length}::text[]`);
    }
    if (filter.states !== undefined && filter.states.length > 0) {
      values.push(filter.states);
      where.push(`state = ANY($${values.length})`);
    }
    const limit = filter.limit === undefined ? '' : `LIMIT ${Math.max(0, Math.floor(filter.limit))}`;
    const { rows } = await this.store.query<TaskRow>(
      `SELECT * FROM ${this.store.schema}.rho_task ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`}
       ORDER BY submitted_at DESC, id ${limit}`,
      values,
    );
    return rows.map(recordOf);
  }

  async cancel(id: string): Promise<TaskRecord> {
    const matches = await this.list({ ids: [id] });
    if (matches.length !== 1) {
      throw new TaskNotFoundError({
        message:
          matches.length === 0
            ? `No task with id '${id}'. List them with: rho tasks`
            : `'${id}' matches ${matches.length} tasks: give more of the id.`,
      });
    }
    const task = matches[0]!;
    const { rows } = await this.store.query<TaskRow>(
      `UPDATE ${this.store.schema}.rho_task SET state = 'cancelled', finished_at = now(),
         result = coalesce(result, '{}'::jsonb) || jsonb_build_object('status', 'cancelled')
       WHERE id = $1 AND state IN ('queued', 'running') RETURNING *`,
      [task.id],
    );
    if (rows.length === 0) return task;
    const queue = queueName(task.labels);
    // A queued job is cancelled in pg-boss; a running one too (its worker's heartbeat then finds
    // the lease gone), and the worker hears the notification and stops the session at once.
    await this.store.boss.cancel(queue, task.id).catch(() => undefined);
    await this.store.notify(`cancel:${task.id}`).catch(() => undefined);
    return recordOf(rows[0]!);
  }

  async close(): Promise<void> {
    await this.store.close();
  }
}
