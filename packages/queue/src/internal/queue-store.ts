import { ConfigError, RhoError } from '@rho/core';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';

/** Prefix of the pg-boss queues tasks go to: `rho_tasks`, or `rho_tasks.<label>.<label>` (sorted). */
export const QUEUE_PREFIX = 'rho_tasks';

/** The pg-boss queue of a task with these labels (sorted, unique). */
export function queueName(labels: readonly string[]): string {
  return labels.length === 0 ? QUEUE_PREFIX : `${QUEUE_PREFIX}.${labels.join('.')}`;
}

/** The labels of a pg-boss queue named by {@link queueName}, or undefined for another queue. */
export function queueLabels(name: string): string[] | undefined {
  if (name === QUEUE_PREFIX) return [];
  if (!name.startsWith(`${QUEUE_PREFIX}.`)) return undefined;
  return name.slice(QUEUE_PREFIX.length + 1).split('.');
}

/** Connection settings shared by the queue and its workers. */
export interface StoreOptions {
  url: string;
  schema: string;
  /** Run pg-boss's supervision (lease expiry) in this process: workers do. */
  supervise: boolean;
  /** How often supervision looks for expired leases, in seconds. */
  maintenanceSeconds: number;
  /** Create the schema when it is missing (default true); false: a missing queue is a QueueNotFoundError. */
  create?: boolean;
  /** pg-boss and pool errors that did not fail a call (a dropped idle connection, a failed maintenance). */
  onError?: (error: Error) => void;
}

const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

/** The pool, pg-boss, and the queue's own table `<schema>.rho_task` next to pg-boss's. */
export class QueueStore {
  readonly schema: string;
  readonly channel: string;
  readonly pool: pg.Pool;
  readonly boss: PgBoss;
  private readonly url: string;

  private constructor(
    options: StoreOptions,
    pool: pg.Pool,
    boss: PgBoss,
    private readonly driver: typeof pg,
  ) {
    this.schema = options.schema;
    this.channel = `${options.schema}_events`;
    this.pool = pool;
    this.boss = boss;
    this.url = options.url;
  }

  /** Connects, creates or migrates the schema, and starts pg-boss. */
  static async open(options: StoreOptions): Promise<QueueStore> {
    if (!SCHEMA.test(options.schema)) {
      throw new ConfigError({
        message: `Queue schema '${options.schema}' is not a plain PostgreSQL name: use lower-case letters, digits and _.`,
        code: 'queue_schema_invalid',
      });
    }
    // The driver and pg-boss load when a queue is opened, not when @rho/queue is imported.
    const [{ default: pgModule }, { PgBoss: PgBossClass }] = await Promise.all([import('pg'), import('pg-boss')]);
    const pool = new pgModule.Pool({ connectionString: options.url, max: 4, connectionTimeoutMillis: 10_000 });
    pool.on('error', (error) => options.onError?.(error));
    const boss = new PgBossClass({
      db: { executeSql: async (text: string, values?: unknown[]) => pool.query(text, values) },
      schema: options.schema,
      supervise: options.supervise,
      schedule: false,
      migrate: true,
      // Expired leases (a job whose heartbeat stopped) are found by the supervision pass, every
      // maintenanceSeconds for every queue.
      superviseIntervalSeconds: options.maintenanceSeconds,
      monitorIntervalSeconds: options.maintenanceSeconds,
    });
    boss.on('error', (error: Error) => options.onError?.(error));
    const store = new QueueStore(options, pool, boss, pgModule);
    try {
      await pool.query('SELECT 1');
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw new QueueUnavailableError({
        message: `Cannot reach the queue's PostgreSQL at ${redact(options.url)}: ${(error as Error).message}. Check --fleet / RHO_FLEET_URL and that the server is running.`,
        cause: error,
      });
    }
    if (options.create === false) {
      // Looking must not create: pg-boss's start would make the schema (`rho cancel ID` on a
      // database that never had a queue).
      const { rows } = await pool
        .query<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [`${options.schema}.rho_task`])
        .catch(async (error: unknown) => {
          await pool.end().catch(() => undefined);
          throw new QueueUnavailableError({
            message: `Cannot read the queue's PostgreSQL at ${redact(options.url)}: ${(error as Error).message}.`,
            cause: error,
          });
        });
      if (rows[0]?.found === null || rows[0]?.found === undefined) {
        await pool.end().catch(() => undefined);
        throw new QueueNotFoundError({
          message: `No task queue in schema '${options.schema}' at ${redact(options.url)}: nothing was ever submitted there (rho submit creates it).`,
        });
      }
    }
    try {
      await boss.start();
      await store.migrate();
    } catch (error) {
      await store.close();
      // pg-boss 12 migrates schemas of pg-boss 11 and later only; rho's queues before Node 22 were
      // pg-boss 10's (schema version 24), and pg-boss 11 cannot migrate those either.
      if (/Cannot migrate pg-boss schema from version (\d|1\d|2[0-4])\b/.test((error as Error).message)) {
        throw new QueueUnavailableError({
          message: `The queue in schema '${options.schema}' at ${redact(options.url)} was made by an older rho (pg-boss 10), which this rho cannot take over. Let that rho's workers finish its tasks (rho tasks --state queued,running shows none left; rho results keeps what you need), then drop it (DROP SCHEMA ${options.schema} CASCADE), or give this rho another schema (--queue-schema).`,
          cause: error,
        });
      }
      throw new QueueUnavailableError({
        message: `Cannot set up the queue schema '${options.schema}' at ${redact(options.url)}: ${(error as Error).message}.`,
        cause: error,
      });
    }
    return store;
  }

  private async migrate(): Promise<void> {
    // A submitter or worker role (rho tasks roles) may not create anything: once the table is
    // there, its owner made it, and nothing is to do.
    const { rows } = await this.pool.query<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [
      `${this.schema}.rho_task`,
    ]);
    if (rows[0]?.found !== null && rows[0]?.found !== undefined) return;
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`rho_queue:${this.schema}`]);
      await client.query(`
        CREATE TABLE IF NOT EXISTS ${this.schema}.rho_task (
          id uuid PRIMARY KEY,
          queue text NOT NULL,
          spec jsonb NOT NULL,
          labels text[] NOT NULL DEFAULT '{}',
          priority integer NOT NULL DEFAULT 0,
          state text NOT NULL,
          attempt integer NOT NULL DEFAULT 0,
          host text,
          worker_id text,
          session_id text,
          deadline timestamptz,
          submitted_at timestamptz NOT NULL DEFAULT now(),
          started_at timestamptz,
          heartbeat_at timestamptz,
          finished_at timestamptz,
          result jsonb
        );
        CREATE INDEX IF NOT EXISTS rho_task_state ON ${this.schema}.rho_task (state);
        CREATE INDEX IF NOT EXISTS rho_task_labels ON ${this.schema}.rho_task USING gin (labels);
        CREATE INDEX IF NOT EXISTS rho_task_submitted ON ${this.schema}.rho_task (submitted_at);
      `);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** A query on the pool. */
  async query<Row extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<Row>> {
    return this.pool.query<Row>(text, values);
  }

  /** Runs `work` in one transaction. */
  async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** Tells listening workers something changed (`submit`, `cancel:<id>`). */
  async notify(message: string): Promise<void> {
    await this.pool.query('SELECT pg_notify($1, $2)', [this.channel, message]);
  }

  /** A dedicated connection LISTENing on the queue's channel. */
  async listen(onMessage: (message: string) => void, onError: (error: Error) => void): Promise<() => Promise<void>> {
    const client = new this.driver.Client({ connectionString: this.url });
    client.on('error', onError);
    client.on('notification', (message) => {
      if (message.channel === this.channel) onMessage(message.payload ?? '');
    });
    await client.connect();
    await client.query(`LISTEN "${this.channel}"`);
    return async () => {
      await client.end().catch(() => undefined);
    };
  }

  /**
   * Brings rho_task in line with pg-boss where a worker could not: running tasks whose lease
   * expired go back to queued (or fail when no attempt is left), queued tasks past their deadline
   * expire. Any client may run it; every update is guarded by the state it expects.
   */
  async reconcile(): Promise<void> {
    const s = this.schema;
    await this.query(`
      UPDATE ${s}.rho_task t SET state = 'queued', host = NULL, worker_id = NULL, session_id = NULL
      FROM ${s}.job j WHERE j.id = t.id AND j.name = t.queue AND t.state = 'running' AND j.state IN ('created', 'retry')`);
    await this.query(`
      UPDATE ${s}.rho_task t SET state = 'failed', finished_at = now(),
        result = jsonb_build_object('status', 'lost', 'error',
          'the worker on ' || coalesce(t.host, '?') || ' stopped answering and no attempt is left')
      FROM ${s}.job j WHERE j.id = t.id AND j.name = t.queue AND t.state = 'running' AND j.state = 'failed'`);
    const expired = await this.query<{ id: string; queue: string }>(`
      UPDATE ${s}.rho_task SET state = 'expired', finished_at = now(),
        result = jsonb_build_object('status', 'expired', 'error', 'the deadline passed before a worker took the task')
      WHERE state = 'queued' AND deadline < now() RETURNING id, queue`);
    for (const row of expired.rows) await this.boss.cancel(row.queue, row.id).catch(() => undefined);
  }

  /** Stops pg-boss and closes the pool. */
  async close(): Promise<void> {
    await this.boss.stop({ graceful: false, close: false }).catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }
}

/** The queue's PostgreSQL cannot be reached or set up. */
export class QueueUnavailableError extends RhoError {
  constructor(options: { message: string; cause?: unknown }) {
    super('queue_unavailable', options);
  }
}

/** The queue's schema does not exist (and was not to be created). */
export class QueueNotFoundError extends RhoError {
  constructor(options: { message: string }) {
    super('queue_not_found', options);
    this.name = 'QueueNotFoundError';
  }

  static override isInstance(error: unknown): error is QueueNotFoundError {
    return RhoError.isInstance(error) && error.code === 'queue_not_found';
  }
}

/** A connection URL without its password, for messages. */
export function redact(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}
