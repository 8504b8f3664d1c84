// A worker decides what a task may choose (issue 32): a task naming a profile, a directory or a
// model endpoint beyond the worker's allowlist is refused, not run, and says why. And the queue's
// submitters and workers are separate database roles (queueRolesSql), on a real PostgreSQL.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTaskQueue, createTaskWorker, parseTaskSpec, queueRolesSql, taskAllowlist } from '../src/index.js';
import type { RunnableTask, TaskQueue, TaskResult, TaskRunner, TaskWorker } from '../src/index.js';
import { dropSchema, POSTGRES_URL, postgresAvailable, testSchema, waitFor } from './support/postgres.js';

const available = await postgresAvailable();

/** A runner that records what it was given and completes at once. */
function recordingRunner() {
  const started: RunnableTask[] = [];
  const runner: TaskRunner = (task) => {
    started.push(task);
    return { result: Promise.resolve({ status: 'completed', exit_code: 0, answer: 'ran' }), stop: () => undefined };
  };
  return { runner, started };
}

it('checks the allowlist itself: a missing directory or a bad endpoint says what to fix', () => {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'rho-allow-')));
  expect(taskAllowlist({}, cwd)).toMatchObject({ profiles: ['readonly'], dirs: [cwd], endpoints: [] });
  expect(() => taskAllowlist({ dirs: ['nowhere'] }, cwd)).toThrow(/nowhere cannot be resolved.*--allow-dir/);
  expect(() => taskAllowlist({ endpoints: ['http://user:pw@host/v1'] }, cwd)).toThrow(/without credentials/);
  expect(() => taskAllowlist({ profiles: [] }, cwd)).toThrow(/allows no profile/);
});

describe.skipIf(!available)('a worker refuses what its allowlist does not grant', () => {
  const schema = testSchema('rho_queue_allow');
  let queue: TaskQueue;
  const workers: TaskWorker[] = [];
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-worker-allow-')));
  const home = join(root, 'worker');
  const other = join(root, 'other');
  mkdirSync(home);
  mkdirSync(other);

  beforeAll(async () => {
    queue = await createTaskQueue({ url: POSTGRES_URL, schema, leaseSeconds: 10 });
  });
  afterAll(async () => {
    for (const worker of workers) await worker.drain(0);
    await queue?.close();
    if (available) await dropSchema(schema);
  });

  const start = async (runner: TaskRunner, labels: string[], allow = {}) => {
    const worker = await createTaskWorker({
      url: POSTGRES_URL,
      schema,
      runner,
      labels,
      allow,
      cwd: home,
      ownEndpoint: 'http://127.0.0.1:9/v1',
      leaseSeconds: 10,
      pollSeconds: 0.2,
    });
    workers.push(worker);
    return worker;
  };

  it('by default runs only readonly in its own directory, and refuses the rest with the reason', async () => {
    const labels = ['narrow'];
    const task = (fields: Record<string, unknown>) => parseTaskSpec({ labels, ...fields }, 'test');
    const ids = await queue.submit([
      task({ prompt: 'plain' }),
      task({ prompt: 'root', profile: 'unrestricted' }),
      task({ prompt: 'elsewhere', working_dir: other }),
      task({ prompt: 'escape', working_dir: 'sub/../../other' }),
      task({ prompt: 'config', config: join(other, 'agent.yaml') }),
      task({ prompt: 'inside', working_dir: 'sub' }),
      task({
        prompt: 'eval',
        sql_eval: { question_id: 'q', db_id: 'd', dataset: 'chinook', base_url: 'http://127.0.0.1:1/v1' },
      }),
      task({
        prompt: 'own',
        sql_eval: { question_id: 'q', db_id: 'd', dataset: 'chinook', base_url: 'http://127.0.0.1:9/v1/' },
      }),
      task({ prompt: 'dbs', sql_eval: { question_id: 'q', db_id: 'd', databases_dir: other } }),
    ]);
    const script = recordingRunner();
    const worker = await start(script.runner, labels);
    const tasks = await waitFor(async () => {
      const rows = await queue.list({ ids });
      return rows.every((row) => row.state === 'done' || row.state === 'failed') ? rows : undefined;
    }, 'every task final');
    await worker.drain(0);
    const byPrompt = new Map(tasks.map((row) => [row.spec.prompt, row]));
    expect(script.started.map((started) => started.spec.prompt).sort()).toEqual(['inside', 'own', 'plain']);
    // A task naming no profile runs with the first allowed one, named explicitly.
    expect(script.started.find((started) => started.spec.prompt === 'plain')!.spec.profile).toBe('readonly');
    const refused = (prompt: string) => {
      const row = byPrompt.get(prompt)!;
      expect(row).toMatchObject({ state: 'failed', result: { status: 'refused' } });
      return row.result!.error!;
    };
    expect(refused('root')).toMatch(/profile 'unrestricted' is not allowed on this worker \(it allows readonly/);
    expect(refused('elsewhere')).toMatch(
      new RegExp(`working_dir ${other} is outside the directories this worker allows \\(${home}`),
    );
    expect(refused('escape')).toMatch(/working_dir sub\/\.\.\/\.\.\/other is outside/);
    expect(refused('config')).toMatch(/^refused by the worker on .*: config .* is outside/);
    expect(refused('eval')).toMatch(
      /sql_eval\.base_url http:\/\/127\.0\.0\.1:1\/v1 is not an endpoint this worker allows.*never sends its key/,
    );
    expect(refused('dbs')).toMatch(/sql_eval\.databases_dir .* is outside/);
  });

  it('runs what the allowlist grants: another profile, another directory, another endpoint', async () => {
    const labels = ['wide'];
    const ids = await queue.submit([
      parseTaskSpec({ prompt: 'dev', labels, profile: 'developer', working_dir: other }, 'test'),
      parseTaskSpec(
        {
          prompt: 'eval',
          labels,
          sql_eval: { question_id: 'q', db_id: 'd', dataset: 'chinook', base_url: 'http://127.0.0.1:1/v1/chat' },
        },
        'test',
      ),
      parseTaskSpec({ prompt: 'root', labels, profile: 'unrestricted' }, 'test'),
    ]);
    const script = recordingRunner();
    const worker = await start(script.runner, labels, {
      profiles: ['readonly', 'developer'],
      dirs: [home, other],
      endpoints: ['http://127.0.0.1:1/v1'],
    });
    await waitFor(
      async () => (await queue.list({ ids })).every((row) => row.state !== 'queued' && row.state !== 'running'),
      'final',
    );
    await worker.drain(0);
    expect(script.started.map((started) => started.spec.prompt).sort()).toEqual(['dev', 'eval']);
    expect((await queue.list({ ids: [ids[2]!] }))[0]!.result?.status).toBe('refused');
  });
});

describe.skipIf(!available)('queue roles: submitters and workers are separate database roles', () => {
  const schema = testSchema('rho_queue_roles');
  const suffix = randomBytes(4).toString('hex');
  const roles = {
    submitter: `rho_sub_${suffix}`,
    worker: `rho_wrk_${suffix}`,
    alice: `alice_${suffix}`,
    node: `node_${suffix}`,
  };
  const as = (role: string) => POSTGRES_URL.replace('postgres@', `${role}@`);
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  let owner: TaskQueue;
  let submitter: TaskQueue;
  const workers: TaskWorker[] = [];

  beforeAll(async () => {
    owner = await createTaskQueue({ url: POSTGRES_URL, schema });
    await admin.connect();
    const script = queueRolesSql({ schema, submitterRole: roles.submitter, workerRole: roles.worker });
    await admin.query(script);
    // Idempotent: a second run changes nothing and does not fail.
    await admin.query(script);
    await admin.query(`create role ${roles.alice} login in role ${roles.submitter}`);
    await admin.query(`create role ${roles.node} login in role ${roles.worker}`);
    submitter = await createTaskQueue({ url: as(roles.alice), schema });
  });
  afterAll(async () => {
    for (const worker of workers) await worker.drain(0);
    await submitter?.close();
    await owner?.close();
    if (available) await dropSchema(schema);
    for (const role of [roles.alice, roles.node, roles.submitter, roles.worker])
      await admin
        .query(`drop owned by ${role}`)
        .then(() => admin.query(`drop role if exists ${role}`))
        .catch(() => undefined);
    await admin.end();
  });

  it('lets a submitter submit (a new label set too) and read results, and a worker run the task', async () => {
    const [id] = await submitter.submit([parseTaskSpec({ prompt: 'via roles', labels: ['fresh'] }, 'test')]);
    const script = recordingRunner();
    const errors: Error[] = [];
    // pg-boss 12 records each supervision pass of a queue in its queue row (monitor_on).
    const monitored = `select max(monitor_on) as at from ${schema}.queue where name = 'rho_tasks.fresh'`;
    const before = await admin.query<{ at: Date | null }>(monitored);
    const worker = await createTaskWorker({
      url: as(roles.node),
      schema,
      runner: script.runner,
      labels: ['fresh'],
      leaseSeconds: 10,
      maintenanceSeconds: 1,
      pollSeconds: 0.2,
      onError: (error) => errors.push(error),
    });
    workers.push(worker);
    const task = await waitFor(async () => {
      const [row] = await submitter.list({ ids: [id!] });
      return row?.state === 'done' ? row : undefined;
    }, 'the task done');
    expect(task.result).toMatchObject({ status: 'completed', answer: 'ran' });
    expect(script.started.map((started) => started.id)).toEqual([id]);
    // pg-boss's supervision (lease expiry, queue statistics) runs as the worker role too, without an error.
    await waitFor(async () => {
      const { rows } = await admin.query<{ at: Date | null }>(monitored);
      return rows[0]?.at !== null && rows[0]?.at?.getTime() !== before.rows[0]?.at?.getTime();
    }, "a maintenance run by the worker's role");
    expect(errors.map((error) => error.message)).toEqual([]);
    // A task still running when the worker drains is handed back (pg-boss fails and re-inserts it).
    const [held] = await submitter.submit([parseTaskSpec({ prompt: 'held', labels: ['held'] }, 'test')]);
    const holding = await createTaskWorker({
      url: as(roles.node),
      schema,
      labels: ['held'],
      leaseSeconds: 10,
      pollSeconds: 0.2,
      onError: (error) => errors.push(error),
      runner: () => {
        let stop!: () => void;
        const result = new Promise<TaskResult>((resolve) => (stop = () => resolve({ status: 'cancelled' })));
        return { result, stop: () => stop() };
      },
    });
    await waitFor(
      async () => (await submitter.list({ ids: [held!] }))[0]?.state === 'running',
      'the held task running',
    );
    await holding.drain(0);
    expect((await submitter.list({ ids: [held!] }))[0]).toMatchObject({ state: 'queued', attempt: 1 });
    expect(errors.map((error) => error.message)).toEqual([]);
    await submitter.cancel(held!);
    // A submitter cancels its queued task.
    const [later] = await submitter.submit([parseTaskSpec({ prompt: 'later', labels: ['nobody'] }, 'test')]);
    expect((await submitter.cancel(later!)).state).toBe('cancelled');
  });

  it('keeps a submitter from claiming, completing or rewriting tasks, and a worker from submitting or rewriting them', async () => {
    const [id] = await owner.submit([parseTaskSpec({ prompt: 'guarded', labels: ['nobody'] }, 'test')]);
    const alice = new pg.Client({ connectionString: as(roles.alice) });
    const node = new pg.Client({ connectionString: as(roles.node) });
    await alice.connect();
    await node.connect();
    try {
      const t = `${schema}.rho_task`;
      // Submitter: no claim, no forged result, no change of what the task asks for.
      await expect(alice.query(`update ${t} set state = 'running' where id = $1`, [id])).rejects.toThrow(
        /row-level security/,
      );
      await expect(
        alice.query(`update ${t} set state = 'done', result = '{"answer":"forged"}' where id = $1`, [id]),
      ).rejects.toThrow(/row-level security/);
      await expect(
        alice.query(`update ${t} set spec = '{"prompt":"x","profile":"unrestricted"}' where id = $1`, [id]),
      ).rejects.toThrow(/permission denied/);
      await expect(
        alice.query(
          `insert into ${t} (id, queue, spec, labels, priority, state) values (gen_random_uuid(), 'rho_tasks', '{}', '{}', 0, 'done')`,
        ),
      ).rejects.toThrow(/row-level security/);
      // Worker: no submitting, no change of what a task asks for.
      await expect(
        node.query(
          `insert into ${t} (id, queue, spec, labels, priority, state) values (gen_random_uuid(), 'rho_tasks', '{}', '{}', 0, 'queued')`,
        ),
      ).rejects.toThrow(/permission denied/);
      await expect(node.query(`update ${t} set spec = '{"prompt":"x"}' where id = $1`, [id])).rejects.toThrow(
        /permission denied/,
      );
      await expect(node.query(`update ${t} set labels = '{gpu}' where id = $1`, [id])).rejects.toThrow(
        /permission denied/,
      );
      // A finished task's result is out of a submitter's reach.
      await owner.cancel(id!);
      const { rowCount } = await alice.query(`update ${t} set result = '{"answer":"forged"}' where id = $1`, [id]);
      expect(rowCount).toBe(0);
    } finally {
      await alice.end();
      await node.end();
    }
  });
});
