// The task queue with real `rho worker` processes on simulated nodes: each worker runs in its own
// UTS namespace with its own host name (`unshare --uts`, as root; elsewhere RHO_WORKER_HOST names
// it) and its own RHO_HOME, against the shared PostgreSQL (a random schema, dropped after) and a
// loopback model server whose answers the test releases. Waits are on conditions, never on time.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer, RecordedRequest } from '@rho/core/testing';
import pg from 'pg';
import { probePostgres } from '@rho/fleet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchemas, killWorkers, POSTGRES_URL, startWorker as startQueueWorker, waitFor } from './support/queue.js';
import type { WorkerProcess } from './support/queue.js';
import { runRho } from './support/run-rho.js';

const { available } = await probePostgres(POSTGRES_URL);
const schema = `rho_queue_cli_${randomBytes(5).toString('hex')}`;

interface Task {
  id: string;
  state: string;
  attempt: number;
  host?: string;
  session_id?: string;
  started_at?: string;
  result?: { status: string; answer?: string; exit_code?: number | null; attempt?: number; error?: string };
}

describe.skipIf(!available)('rho submit / worker / tasks / results on several nodes', { timeout: 180_000 }, () => {
  let server: LoopbackServer;
  const gates = new Map<string, () => void>();
  const opened = new Set<string>();
  const workers: WorkerProcess[] = [];
  const env = () => ({
    RHO_FLEET_URL: POSTGRES_URL,
    RHO_QUEUE_SCHEMA: schema,
    RHO_QUEUE_LEASE: '10',
    OPENAI_BASE_URL: server.url,
    OPENAI_API_KEY: 'test',
    OPENAI_MODEL: 'scripted',
    RHO_HOME: mkdtempSync(join(tmpdir(), 'rho-queue-client-')),
  });
  const rho = async (...args: string[]) => runRho(args, { env: env() });
  const tasks = async (...args: string[]): Promise<Task[]> => {
    const outcome = await rho('tasks', '--json', ...args);
    expect(outcome.code, outcome.stderr).toBe(0);
    return JSON.parse(outcome.stdout) as Task[];
  };
  const task = async (id: string) => (await tasks(id))[0]!;
  const submit = async (...args: string[]): Promise<string[]> => {
    const outcome = await rho('submit', '--json', ...args);
    expect(outcome.code, outcome.stderr).toBe(0);
    return JSON.parse(outcome.stdout) as string[];
  };
  /** Starts `rho worker` as node `host` (its own UTS namespace and RHO_HOME, its own process group). */
  const startWorker = async (host: string, ...args: string[]) => {
    const worker = await startQueueWorker({ host, args, env: env() });
    workers.push(worker);
    return worker;
  };
  const exited = (child: ChildProcess) =>
    new Promise<number | null>((resolve) =>
      child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.on('exit', resolve),
    );
  const finishedLines = (id: string) =>
    workers.flatMap((worker) => worker.log.filter((line) => line.includes('"task_finished"') && line.includes(id)));

  beforeAll(async () => {
    // "quick X" answers at once; "hold KEY" answers when the test opens the gate KEY.
    server = await startLoopbackServer({
      respond: async (request: RecordedRequest) => {
        const messages = (request.body?.messages ?? []) as { role: string; content: string }[];
        const prompt = messages.filter((message) => message.role === 'user').at(-1)?.content ?? '';
        const hold = /^hold (\S+)/.exec(prompt);
        if (hold !== null && !opened.has(hold[1]!)) {
          await new Promise<void>((resolve) => gates.set(hold[1]!, resolve));
        }
        return { type: 'response', text: `answer: ${prompt}` };
      },
    });
  });
  const open = (key: string) => {
    opened.add(key);
    gates.get(key)?.();
  };
  const heldRequests = (key: string) =>
    server.requests.filter((request) => JSON.stringify(request.body?.messages ?? []).includes(`hold ${key}`)).length;

  afterAll(async () => {
    killWorkers(workers);
    await server?.close();
    if (available) await dropSchemas(schema);
  });

  it('checks a tasks file line by line and submits nothing when a line is bad', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rho-queue-file-'));
    writeFileSync(join(dir, 'bad.jsonl'), '{"prompt": "quick a"}\n{"prompt": "quick b", "max_turns": "two"}\n');
    const bad = await rho('submit', '--file', join(dir, 'bad.jsonl'));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('bad.jsonl:2: max_turns: must be a whole number.');
    expect(bad.stderr).toContain('nothing was submitted');
    expect(await tasks()).toEqual([]);
  });

  it('spreads tasks over workers on three nodes and collects their results', async () => {
    await Promise.all(['node-a', 'node-b', 'node-c'].map((host) => startWorker(host, '--labels', 'pool')));
    const dir = mkdtempSync(join(tmpdir(), 'rho-queue-file-'));
    const lines = [0, 1, 2].map((index) => JSON.stringify({ prompt: `hold spread${index}`, labels: ['pool'] }));
    writeFileSync(join(dir, 'tasks.jsonl'), `${lines.join('\n')}\n`);
    const ids = await submit('--file', join(dir, 'tasks.jsonl'), '--label', 'batch1');
    expect(ids).toHaveLength(3);
    // Each worker runs one task at a time: all three running means one on each node.
    const running = await waitFor(async () => {
      const list = await tasks('--label', 'batch1');
      return list.length === 3 && list.every((item) => item.state === 'running' && item.session_id !== undefined)
        ? list
        : undefined;
    }, 'three tasks running');
    expect(new Set(running.map((item) => item.host))).toEqual(new Set(['node-a', 'node-b', 'node-c']));
    for (const index of [0, 1, 2]) open(`spread${index}`);
    await waitFor(async () => {
      const list = await tasks('--label', 'batch1');
      return list.length === 3 && list.every((item) => item.state === 'done');
    }, 'done');
    const results = await rho('results', '--label', 'batch1', '--json');
    const rows = results.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(rows.map((row) => row.answer).sort()).toEqual([
      'answer: hold spread0',
      'answer: hold spread1',
      'answer: hold spread2',
    ]);
    expect(rows.every((row) => row.exit_code === 0 && row.status === 'completed' && row.attempt === 1)).toBe(true);
    const table = await rho('results', ...ids.map((id) => id.slice(0, 8)));
    expect(table.stdout).toMatch(/^ID\s+STATE\s+HOST/);
    expect(table.stdout).toContain('node-');
  });

  it('retries the task of a SIGKILLed worker on another node, which completes it once (attempt 2 in its trace)', async () => {
    const [id] = await submit('--label', 'pool', 'hold crash');
    const first = await waitFor(async () => {
      const item = await task(id!);
      return item.state === 'running' && item.session_id !== undefined ? item : undefined;
    }, 'running');
    await waitFor(() => heldRequests('crash') === 1, 'the model call of attempt 1');
    const victim = workers.find((worker) => worker.host === first.host)!;
    // The node dies: the worker and its session, the whole process group, at once.
    process.kill(-victim.child.pid!, 'SIGKILL');
    await exited(victim.child);
    const retried = await waitFor(async () => {
      const item = await task(id!);
      return item.attempt === 2 && item.state === 'running' && item.session_id !== undefined ? item : undefined;
    }, 'attempt 2 running');
    expect(retried.host).not.toBe(first.host);
    open('crash');
    const done = await waitFor(async () => {
      const item = await task(id!);
      return item.state === 'done' ? item : undefined;
    }, 'done');
    expect(done).toMatchObject({
      attempt: 2,
      host: retried.host,
      result: { answer: 'answer: hold crash', attempt: 2 },
    });
    expect(finishedLines(id!)).toHaveLength(1);
    const home = workers.find((worker) => worker.host === retried.host)!.home;
    const trace = readFileSync(join(home, 'sessions', done.session_id!, 'trace.jsonl'), 'utf8');
    expect(JSON.parse(trace.split('\n')[0]!)).toMatchObject({ type: 'run_start', task_id: id, task_attempt: 2 });
  });

  it('cancels a queued task and a running one (the session stops with 130)', async () => {
    const [queued] = await submit('--label', 'nobody', 'quick never');
    const [running] = await submit('--label', 'pool', 'hold cancel');
    await waitFor(async () => (await task(running!)).session_id !== undefined, 'running');
    await waitFor(() => heldRequests('cancel') === 1, 'its model call');
    const outcome = await rho('tasks', 'cancel', queued!.slice(0, 13), running!);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toContain(`${queued}: cancelled`);
    const stopped = await waitFor(async () => {
      const item = await task(running!);
      return item.result?.exit_code !== undefined ? item : undefined;
    }, 'the session stopped');
    expect(stopped).toMatchObject({ state: 'cancelled', result: { exit_code: 130, status: 'cancelled' } });
    expect((await task(queued!)).state).toBe('cancelled');
    // `rho cancel ID` with a task's id (no session has it) cancels the task too.
    const [another] = await submit('--label', 'nobody', 'quick never again');
    const byCancel = await rho('cancel', another!.slice(0, 13));
    expect(byCancel.code, byCancel.stderr).toBe(0);
    expect(byCancel.stdout).toContain(`cancel: task ${another}`);
    expect((await task(another!)).state).toBe('cancelled');
    const unknown = await rho('cancel', 'ffffffff-0000');
    expect(unknown.code).not.toBe(0);
    // Neither a session nor a task.
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("No session or task with id 'ffffffff-0000'");
  });

  it('rho cancel, rho tasks and rho results never create a queue where none was: cancel says there is no such session or task', async () => {
    const fresh = `rho_queue_none_${randomBytes(5).toString('hex')}`;
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    const exists = async () =>
      (await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [fresh])).rowCount === 1;
    try {
      const freshEnv = { ...env(), RHO_QUEUE_SCHEMA: fresh };
      const cancel = await runRho(['cancel', 'ffffffff-0000'], { env: freshEnv });
      expect(cancel.code).toBe(2);
      expect(cancel.stderr).toContain("No session or task with id 'ffffffff-0000'");
      const listed = await runRho(['tasks', '--json'], { env: freshEnv });
      expect(listed.code, listed.stderr).toBe(0);
      expect(JSON.parse(listed.stdout)).toEqual([]);
      const results = await runRho(['results', '--json'], { env: freshEnv });
      expect(results.code, results.stderr).toBe(0);
      const cancelTask = await runRho(['tasks', 'cancel', 'ffffffff'], { env: freshEnv });
      expect(cancelTask.code).not.toBe(0);
      expect(cancelTask.stderr).toContain("No task with id 'ffffffff'");
      expect(await exists()).toBe(false);
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS ${fresh} CASCADE`);
      await client.end();
    }
  });

  it('expires a task whose deadline passes while it runs, and one that waits past its deadline', async () => {
    const [waiting] = await submit('--label', 'nobody', '--deadline', '1s', 'quick too late');
    const [runs] = await submit('--label', 'pool', '--deadline', '8s', 'hold deadline');
    await waitFor(async () => (await task(runs!)).state === 'running', 'running');
    const expired = await waitFor(async () => {
      const item = await task(runs!);
      return item.state === 'expired' && item.result !== undefined ? item : undefined;
    }, 'expired while running');
    expect(expired.result).toMatchObject({ status: 'expired' });
    expect((await task(waiting!)).state).toBe('expired');
  });

  it('honours priorities: a free worker takes the highest first', async () => {
    const low = await submit('--label', 'prio', '--priority', '0', 'quick low');
    const high = await submit('--label', 'prio', '--priority', '9', 'quick high');
    const mid = await submit('--label', 'prio', '--priority', '5', 'quick mid');
    await startWorker('node-p', '--labels', 'prio', '--concurrency', '1');
    await waitFor(async () => (await tasks('--label', 'prio')).every((item) => item.state === 'done'), 'done');
    const order = (await tasks('--label', 'prio'))
      .sort((a, b) => a.started_at!.localeCompare(b.started_at!))
      .map((item) => item.id);
    expect(order).toEqual([high[0], mid[0], low[0]]);
  });

  it('drains on SIGTERM: takes nothing new, finishes the running task, exits 0', async () => {
    const worker = await startWorker('node-d', '--labels', 'drain', '--grace', '120');
    const [id] = await submit('--label', 'drain', 'hold drain');
    await waitFor(async () => (await task(id!)).session_id !== undefined, 'running');
    await waitFor(() => heldRequests('drain') === 1, 'its model call');
    process.kill(worker.child.pid!, 'SIGTERM');
    await waitFor(() => worker.log.some((line) => line.includes('"worker_draining"')), 'draining');
    const [later] = await submit('--label', 'drain', 'quick later');
    open('drain');
    expect(await exited(worker.child)).toBe(0);
    expect(await task(id!)).toMatchObject({ state: 'done', host: 'node-d', result: { answer: 'answer: hold drain' } });
    expect((await task(later!)).state).toBe('queued');
    expect(worker.log.some((line) => line.includes(later!))).toBe(false);
  });
  it("hands its running task back when SIGTERM's grace runs out; another node completes it once, as attempt 2", async () => {
    const worker = await startWorker('node-h', '--labels', 'handback', '--grace', '1');
    const [id] = await submit('--label', 'handback', 'hold handback');
    const first = await waitFor(async () => {
      const item = await task(id!);
      return item.session_id !== undefined ? item : undefined;
    }, 'running');
    await waitFor(() => heldRequests('handback') === 1, 'its model call');
    process.kill(worker.child.pid!, 'SIGTERM');
    // The session is cancelled after the grace second, the task handed back, and the worker exits.
    expect(await exited(worker.child)).toBe(0);
    expect(worker.log.some((line) => line.includes('"task_handed_back"') && line.includes(id!))).toBe(true);
    expect(await task(id!)).toMatchObject({ state: 'queued', attempt: 1 });
    const trace = readFileSync(join(worker.home, 'sessions', first.session_id!, 'trace.jsonl'), 'utf8');
    expect(trace).toContain('"status":"cancelled"');
    await startWorker('node-i', '--labels', 'handback');
    await waitFor(async () => {
      const item = await task(id!);
      return item.attempt === 2 && item.session_id !== undefined;
    }, 'attempt 2 running');
    open('handback');
    const done = await waitFor(async () => {
      const item = await task(id!);
      return item.state === 'done' ? item : undefined;
    }, 'done');
    expect(done).toMatchObject({ attempt: 2, host: 'node-i', result: { answer: 'answer: hold handback', attempt: 2 } });
    expect(finishedLines(id!)).toHaveLength(1);
  });
});
