// The queue and its worker against a real PostgreSQL, with an in-process runner standing in for
// the rho session (the CLI suite runs real `rho` processes on several simulated hosts).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTaskQueue, createTaskWorker, parseTaskSpec } from '../src/index.js';
import type { RunnableTask, TaskQueue, TaskResult, TaskRunner, TaskWorker } from '../src/index.js';
import { dropSchema, POSTGRES_URL, postgresAvailable, testSchema, waitFor } from './support/postgres.js';

const available = await postgresAvailable();
const schema = testSchema();

/** A runner whose sessions end when the test says (or when stopped, as cancelled). */
function scriptedRunner() {
  const started: RunnableTask[] = [];
  const finishers = new Map<string, (result: TaskResult) => void>();
  const runner: TaskRunner = (task, hooks) => {
    started.push(task);
    hooks.onSession(`session-${task.id.slice(0, 4)}-${task.attempt}`);
    let finish!: (result: TaskResult) => void;
    const result = new Promise<TaskResult>((resolve) => (finish = resolve));
    finishers.set(task.id, finish);
    // Answers "auto" tasks at once.
    if (task.spec.prompt.startsWith('auto'))
      setImmediate(() => finish({ status: 'completed', exit_code: 0, answer: `did ${task.spec.prompt}` }));
    return {
      result,
      stop: (how) => finish({ status: 'cancelled', exit_code: how === 'kill' ? null : 130 }),
    };
  };
  return {
    runner,
    started,
    complete: (id: string, answer: string) => finishers.get(id)?.({ status: 'completed', exit_code: 0, answer }),
  };
}

describe.skipIf(!available)('task queue on PostgreSQL', () => {
  let queue: TaskQueue;
  const workers: TaskWorker[] = [];
  const startWorker = async (runner: TaskRunner, options: { labels?: string[]; concurrency?: number } = {}) => {
    const worker = await createTaskWorker({
      url: POSTGRES_URL,
      schema,
      runner,
      leaseSeconds: 10,
      maintenanceSeconds: 1,
      pollSeconds: 0.2,
      killAfterSeconds: 1,
      ...options,
    });
    workers.push(worker);
    return worker;
  };

  beforeAll(async () => {
    queue = await createTaskQueue({ url: POSTGRES_URL, schema, leaseSeconds: 10 });
  });
  afterAll(async () => {
    for (const worker of workers) await worker.drain(0);
    await queue?.close();
    if (available) await dropSchema(schema);
  });

  it('runs higher priorities first, then the oldest', async () => {
    const labels = ['prio'];
    const ids = await queue.submit(
      [0, 5, 2, 5].map((priority, index) => parseTaskSpec({ prompt: `auto ${index}`, priority, labels }, 'test')),
    );
    const script = scriptedRunner();
    const worker = await startWorker(script.runner, { labels, concurrency: 1 });
    await waitFor(async () => (await queue.list({ ids })).every((task) => task.state === 'done'), 'four tasks done');
    await worker.drain(0);
    expect(script.started.map((task) => task.id)).toEqual([ids[1], ids[3], ids[2], ids[0]]);
    const [task] = await queue.list({ ids: [ids[1]!] });
    expect(task).toMatchObject({
      state: 'done',
      attempt: 1,
      session_id: `session-${ids[1]!.slice(0, 4)}-1`,
      result: { status: 'completed', answer: 'did auto 1' },
    });
  });

  it('gives a worker with --labels only the tasks carrying all of them', async () => {
    const [plain, gpu, both] = await queue.submit([
      parseTaskSpec({ prompt: 'auto plain', labels: ['lab'] }, 'test'),
      parseTaskSpec({ prompt: 'auto gpu', labels: ['lab', 'gpu'] }, 'test'),
      parseTaskSpec({ prompt: 'auto both', labels: ['gpu', 'lab', 'eu'] }, 'test'),
    ]);
    const script = scriptedRunner();
    const worker = await startWorker(script.runner, { labels: ['gpu', 'lab'], concurrency: 2 });
    await waitFor(
      async () => (await queue.list({ ids: [gpu!, both!] })).every((task) => task.state === 'done'),
      'labelled tasks done',
    );
    await worker.drain(0);
    expect(script.started.map((task) => task.id).sort()).toEqual([gpu, both].sort());
    expect((await queue.list({ ids: [plain!] }))[0]!.state).toBe('queued');
    await queue.cancel(plain!);
  });

  it('cancels a queued task (no worker starts it) and a running one (its session is stopped)', async () => {
    const labels = ['cancel'];
    const [running, queued] = await queue.submit([
      parseTaskSpec({ prompt: 'hold', labels, priority: 1 }, 'test'),
      parseTaskSpec({ prompt: 'auto never', labels }, 'test'),
    ]);
    const script = scriptedRunner();
    const worker = await startWorker(script.runner, { labels, concurrency: 1 });
    await waitFor(async () => (await queue.list({ ids: [running!] }))[0]!.state === 'running', 'the task running');
    expect((await queue.cancel(queued!)).state).toBe('cancelled');
    expect((await queue.cancel(running!.slice(0, 12))).state).toBe('cancelled');
    const done = await waitFor(async () => (await queue.list({ ids: [running!] }))[0]!.result?.exit_code, 'exit code');
    expect(done).toBe(130);
    // The worker is free again, and still does not start the cancelled task.
    const [after] = await queue.submit([parseTaskSpec({ prompt: 'auto after', labels }, 'test')]);
    await waitFor(async () => (await queue.list({ ids: [after!] }))[0]!.state === 'done', 'the next task');
    await worker.drain(0);
    expect(script.started.map((task) => task.id)).toEqual([running, after]);
    expect((await queue.list({ ids: [queued!, running!] })).map((task) => task.state)).toEqual([
      'cancelled',
      'cancelled',
    ]);
  });

  it('expires a task whose deadline passes while queued, and one whose deadline passes while it runs', async () => {
    const labels = ['deadline'];
    const [waiting] = await queue.submit([parseTaskSpec({ prompt: 'auto late', labels, deadline: '300ms' }, 'test')]);
    await waitFor(async () => (await queue.list({ ids: [waiting!] }))[0]!.state === 'expired', 'queued task expired');
    const [runs] = await queue.submit([parseTaskSpec({ prompt: 'hold long', labels, deadline: '3s' }, 'test')]);
    const script = scriptedRunner();
    const worker = await startWorker(script.runner, { labels, concurrency: 1 });
    const task = await waitFor(async () => {
      const [row] = await queue.list({ ids: [runs!] });
      return row!.state === 'expired' ? row : undefined;
    }, 'running task expired');
    await worker.drain(0);
    expect(script.started.map((started) => started.id)).toEqual([runs]);
    expect(task!.result).toMatchObject({ status: 'expired', attempt: 1 });
  });

  it('hands running tasks back when a draining worker runs out of grace; another worker starts attempt 2', async () => {
    const labels = ['drain'];
    const [id] = await queue.submit([parseTaskSpec({ prompt: 'hold', labels }, 'test')]);
    const first = scriptedRunner();
    const worker = await startWorker(first.runner, { labels });
    await waitFor(async () => (await queue.list({ ids: [id!] }))[0]!.state === 'running', 'running');
    await worker.drain(0);
    expect((await queue.list({ ids: [id!] }))[0]).toMatchObject({ state: 'queued', attempt: 1 });
    const second = scriptedRunner();
    const next = await startWorker(second.runner, { labels });
    await waitFor(async () => second.started.length === 1, 'second worker started it');
    expect(second.started[0]).toMatchObject({ id, attempt: 2 });
    second.complete(id!, 'finally');
    const task = await waitFor(async () => {
      const [row] = await queue.list({ ids: [id!] });
      return row!.state === 'done' ? row : undefined;
    }, 'done');
    await next.drain(0);
    expect(task).toMatchObject({ attempt: 2, result: { answer: 'finally', attempt: 2 } });
  });

  it("heartbeats a task at a third of the lease it was submitted with, not of the worker's", async () => {
    const labels = ['lease'];
    const [id] = await queue.submit([parseTaskSpec({ prompt: 'hold', labels }, 'test')]);
    const script = scriptedRunner();
    // Submitted with a 10 s lease; taken by a worker whose own period is 10 minutes.
    const worker = await createTaskWorker({
      url: POSTGRES_URL,
      schema,
      runner: script.runner,
      labels,
      leaseSeconds: 600,
      pollSeconds: 0.2,
    });
    workers.push(worker);
    await waitFor(async () => (await queue.list({ ids: [id!] }))[0]!.state === 'running', 'running');
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ heartbeat_seconds: number }>(
        `SELECT heartbeat_seconds FROM ${schema}.job WHERE id = $1`,
        [id],
      );
      expect(rows[0]!.heartbeat_seconds).toBe(10);
      // pg-boss's heartbeat moves heartbeat_on; a worker beating at a third of its own 600 s would
      // not touch it within the test's wait.
      await waitFor(async () => {
        const beat = await client.query<{ moved: boolean }>(
          `SELECT heartbeat_on > started_on + interval '1 second' AS moved FROM ${schema}.job WHERE id = $1 AND state = 'active'`,
          [id],
        );
        return beat.rows[0]?.moved === true;
      }, 'a heartbeat');
    } finally {
      await client.end();
    }
    script.complete(id!, 'ok');
    await waitFor(async () => (await queue.list({ ids: [id!] }))[0]!.state === 'done', 'done');
    await worker.drain(0);
    expect((await queue.list({ ids: [id!] }))[0]).toMatchObject({ state: 'done', attempt: 1 });
  });

  it('tells the session of a task with auto_approve false how long its calls may wait: never past the deadline', async () => {
    const labels = ['approvals'];
    const [bounded, open, approving] = await queue.submit([
      parseTaskSpec(
        { prompt: 'auto bounded', labels, auto_approve: false, approval_timeout: '30m', deadline: '40s' },
        't',
      ),
      parseTaskSpec({ prompt: 'auto open', labels, auto_approve: false }, 'test'),
      parseTaskSpec({ prompt: 'auto approving', labels, auto_approve: false, on_timeout: 'approve' }, 'test'),
    ]);
    const script = scriptedRunner();
    const worker = await createTaskWorker({
      url: POSTGRES_URL,
      schema,
      runner: script.runner,
      labels,
      allow: { maxApprovalWaitMs: 2 * 3_600_000 },
      leaseSeconds: 10,
      pollSeconds: 0.2,
    });
    workers.push(worker);
    const ids = [bounded!, open!, approving!];
    const tasks = await waitFor(async () => {
      const rows = await queue.list({ ids });
      return rows.every((row) => row.state === 'done' || row.state === 'failed') ? rows : undefined;
    }, 'the three tasks final');
    await worker.drain(0);
    const given = (id: string) => script.started.find((task) => task.id === id)?.approvals;
    const deadline = Date.parse(tasks.find((row) => row.id === bounded)!.deadline!);
    // Asked 30 minutes, the deadline 40 s away: the wait ends 5 s before it.
    expect(given(bounded!)).toEqual({
      timeoutMs: expect.any(Number),
      deadline: new Date(deadline - 5000).toISOString(),
      onTimeout: 'deny',
    });
    expect(given(bounded!)!.timeoutMs).toBeLessThanOrEqual(35_000);
    // No deadline: the worker's longest wait.
    expect(given(open!)).toMatchObject({ timeoutMs: 2 * 3_600_000, onTimeout: 'deny' });
    // A timeout that approves is the worker's to allow: refused, never started.
    expect(given(approving!)).toBeUndefined();
    expect(tasks.find((row) => row.id === approving)).toMatchObject({
      state: 'failed',
      result: { status: 'refused', error: expect.stringMatching(/on_timeout approve is not allowed on this worker/) },
    });
  });

  it('fences a lost attempt: its late completion does not end the job another worker now runs', async () => {
    const labels = ['fence'];
    const [id] = await queue.submit([parseTaskSpec({ prompt: 'hold', labels }, 'test')]);
    const first = scriptedRunner();
    const a = await startWorker(first.runner, { labels });
    await waitFor(async () => (await queue.list({ ids: [id!] }))[0]!.state === 'running', 'attempt 1 running');
    // What pg-boss's supervision does to a job whose heartbeats stopped (a worker frozen past its
    // lease): the job fails back to retry. Then a second worker takes attempt 2.
    const { PgBoss } = await import('pg-boss');
    const boss = new PgBoss({
      connectionString: POSTGRES_URL,
      schema,
      supervise: false,
      schedule: false,
      migrate: false,
    });
    await boss.start();
    try {
      await boss.fail('rho_tasks.fence', id!, { reason: 'lease lost (test)' });
    } finally {
      await boss.stop({ graceful: false });
    }
    const second = scriptedRunner();
    const b = await startWorker(second.runner, { labels });
    await waitFor(async () => second.started.length === 1, 'attempt 2 started');
    expect(second.started[0]).toMatchObject({ id, attempt: 2 });
    // Attempt 1 wakes and finishes before its next heartbeat could tell it the job is gone. Its
    // completion is for attempt 1: pg-boss must leave attempt 2's active job alone.
    first.complete(id!, 'stale');
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      // Attempt 2's worker still holds the job: its heartbeat moves heartbeat_on while it is active.
      await waitFor(async () => {
        const { rows } = await client.query<{ beat: boolean }>(
          `SELECT heartbeat_on > started_on + interval '1 second' AS beat FROM ${schema}.job WHERE id = $1 AND state = 'active' AND retry_count = 1`,
          [id],
        );
        return rows[0]?.beat === true;
      }, "attempt 2's heartbeat on its active job");
    } finally {
      await client.end();
    }
    second.complete(id!, 'second');
    const task = await waitFor(async () => {
      const [row] = await queue.list({ ids: [id!] });
      return row!.state === 'done' ? row : undefined;
    }, 'done');
    await a.drain(0);
    await b.drain(0);
    expect(task).toMatchObject({ attempt: 2, result: { answer: 'second', attempt: 2 } });
  });

  it('stops a session whose attempt lost its lease by interrupting it first, so its trace ends, then kills it', async () => {
    const labels = ['lost-stop'];
    const [id] = await queue.submit([parseTaskSpec({ prompt: 'hold', labels }, 'test')]);
    // A session that ignores the interrupt: only a kill ends it.
    const stops: { how: 'cancel' | 'kill'; at: number }[] = [];
    const stubborn: TaskRunner = (task, hooks) => {
      hooks.onSession(`session-stubborn-${task.attempt}`);
      let finish!: (result: TaskResult) => void;
      const result = new Promise<TaskResult>((resolve) => (finish = resolve));
      return {
        result,
        stop: (how) => {
          stops.push({ how, at: Date.now() });
          if (how === 'kill') finish({ status: 'cancelled', exit_code: null });
        },
      };
    };
    const a = await startWorker(stubborn, { labels });
    await waitFor(async () => (await queue.list({ ids: [id!] }))[0]!.state === 'running', 'attempt 1 running');
    const { PgBoss } = await import('pg-boss');
    const boss = new PgBoss({
      connectionString: POSTGRES_URL,
      schema,
      supervise: false,
      schedule: false,
      migrate: false,
    });
    await boss.start();
    try {
      await boss.fail('rho_tasks.lost-stop', id!, { reason: 'lease lost (test)' });
    } finally {
      await boss.stop({ graceful: false });
    }
    // The next heartbeat finds the attempt gone: an interrupt, then (ignored) a kill.
    await waitFor(async () => stops.some((stop) => stop.how === 'kill'), 'the kill after the interrupt');
    expect(stops.map((stop) => stop.how)).toEqual(['cancel', 'kill']);
    expect(stops[1]!.at - stops[0]!.at).toBeGreaterThanOrEqual(900);
    await a.drain(0);
  });

  it('refuses a lease shorter than pg-boss heartbeat allows, saying what to use', async () => {
    await expect(createTaskQueue({ url: POSTGRES_URL, schema, leaseSeconds: 2 })).rejects.toThrow(
      /at least 10 seconds \(got 2\)/,
    );
  });

  it('says what to do with a queue an older rho made (pg-boss 10), which pg-boss 12 cannot migrate', async () => {
    const old = testSchema('rho_queue_old');
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      // What pg-boss 10 leaves: its schema version 24 (the rest of its tables do not matter here).
      await client.query(`CREATE SCHEMA ${old}`);
      await client.query(
        `CREATE TABLE ${old}.version (version int PRIMARY KEY, maintained_on timestamptz, cron_on timestamptz)`,
      );
      await client.query(`INSERT INTO ${old}.version (version) VALUES (24)`);
      await expect(createTaskQueue({ url: POSTGRES_URL, schema: old })).rejects.toThrow(
        new RegExp(`made by an older rho \\(pg-boss 10\\).*DROP SCHEMA ${old} CASCADE.*--queue-schema`),
      );
    } finally {
      await client.end();
      await dropSchema(old);
    }
  });

  it('refuses an unknown or ambiguous task id with a clear error', async () => {
    await expect(queue.cancel('ffffffff-0000')).rejects.toThrow(/No task with id 'ffffffff-0000'/);
  });
});
