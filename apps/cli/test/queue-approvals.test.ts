// A queued task whose calls wait for approval (auto_approve false), with a real `rho worker` on
// node-w, its fleet and queue in the shared PostgreSQL (random schemas, dropped after) and a
// loopback model: the worker holds the task while a call waits longer than its lease (no second
// attempt), a third node answers with `rho approve` over the fleet, and the command runs once;
// without an answer the call is denied a little before the deadline, and the task says why; a
// session stopped from outside while it waits is reported parked, with how to answer it.
// The worker's environment says RHO_WHEN_UNATTENDED=withhold: the worker's own flags make it wait.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer, RecordedRequest } from '@rho/core/testing';
import { probePostgres } from '@rho/fleet/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetHome } from './support/fleet.js';
import {
  dropSchemas,
  killWorkers,
  POSTGRES_URL,
  startWorker as startQueueWorker,
  uts,
  waitFor,
} from './support/queue.js';
import type { WorkerProcess } from './support/queue.js';
import { bin, runRho } from './support/run-rho.js';
import type { Outcome } from './support/run-rho.js';

const { available } = await probePostgres(POSTGRES_URL);
const schema = `rho_queue_appr_${randomBytes(5).toString('hex')}`;
const fleetSchema = `rho_fleet_appr_${randomBytes(5).toString('hex')}`;
/** The shortest lease pg-boss allows: the waits below outlast it. */
const LEASE = 10;

interface Task {
  id: string;
  state: string;
  attempt: number;
  host?: string;
  worker_id?: string;
  session_id?: string;
  deadline?: string;
  result?: { status: string; answer?: string; error?: string; exit_code?: number | null; attempt?: number };
  pending_approval?: unknown;
}

type TraceRecord = { type: string; ts: string; [key: string]: unknown };

/** Runs the built `rho` as node `host`: its own host name (a UTS namespace) where this process may give one. */
function rhoOnNode(host: string, args: string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
  if (!uts) return runRho(args, { env: { ...env, RHO_FLEET_HOST: host } });
  return new Promise((resolve, reject) => {
    const child = spawn(
      'unshare',
      ['--uts', 'sh', '-c', `hostname ${host} && exec "$0" "$@"`, process.execPath, bin, ...args],
      { env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...env }, cwd: tmpdir() },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe.skipIf(!available)('queued tasks that wait for approval', { timeout: 240_000 }, () => {
  let server: LoopbackServer;
  let worker: WorkerProcess & { work: string };
  const clientEnv = () => ({
    RHO_QUEUE_SCHEMA: schema,
    RHO_QUEUE_LEASE: String(LEASE),
    RHO_HOME: fleetHome({ schema: fleetSchema, url: POSTGRES_URL }),
  });
  const rho = async (...args: string[]) => runRho(args, { env: clientEnv() });
  const task = async (id: string): Promise<Task> => {
    const outcome = await rho('tasks', '--json', id);
    expect(outcome.code, outcome.stderr).toBe(0);
    return (JSON.parse(outcome.stdout) as Task[])[0]!;
  };
  const submit = async (...args: string[]): Promise<string> => {
    // In place (the worker allows it): the commands' effects are counted in the worker's directory.
    const outcome = await rho(
      'submit',
      '--json',
      '--label',
      'approvals',
      '--profile',
      'developer',
      '--workspace',
      'in-place',
      ...args,
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    return (JSON.parse(outcome.stdout) as string[])[0]!;
  };
  const trace = (sessionId: string): TraceRecord[] => {
    const path = join(worker.home, 'sessions', sessionId, 'trace.jsonl');
    if (!existsSync(path)) return [];
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as TraceRecord);
  };
  /** Waits until the task's session has a call waiting; returns the task then. */
  const waiting = (id: string) =>
    waitFor(async () => {
      const item = await task(id);
      if (item.state !== 'queued' && item.state !== 'running')
        throw new Error(`task ${id} ended (${item.state}) before a call waited: ${JSON.stringify(item.result)}`);
      return item.session_id !== undefined && trace(item.session_id).some((r) => r.type === 'approval_requested')
        ? item
        : undefined;
    }, `a call of task ${id} waiting for approval`);
  const started = (id: string) => worker.log.filter((line) => line.includes('"task_started"') && line.includes(id));
  /** The pg-boss job of a task: still attempt 1, active, and heartbeating past the lease. */
  const job = async (id: string) => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ state: string; retry_count: number; beat: number }>(
        `SELECT state, retry_count, extract(epoch FROM heartbeat_on - started_on)::float AS beat FROM ${schema}.job WHERE id = $1`,
        [id],
      );
      return rows[0]!;
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    const migrated = await runRho(['fleet', 'migrate'], { env: clientEnv() });
    expect(migrated.code, migrated.stderr).toBe(0);
    // "clean KEY": remove build-KEY (a dangerous pattern: the developer profile asks) and note
    // the run in runs.log; once the tool's result is in, the answer.
    server = await startLoopbackServer({
      respond: async (request: RecordedRequest) => {
        const messages = (request.body?.messages ?? []) as { role: string; content: string }[];
        const key = /^clean (\S+)/.exec(messages.find((message) => message.role === 'user')?.content ?? '')?.[1];
        if (key === undefined || messages.at(-1)?.role === 'tool') return { type: 'response', text: 'Cleaned.' };
        // A model that takes its time: the call starts waiting well after the session started,
        // so its --approval-timeout alone would end the wait past the worker's bound.
        if (key === 'deadline') await new Promise((resolve) => setTimeout(resolve, 3000));
        const command = `rm -rf build-${key} && echo ${key} >> runs.log`;
        return {
          type: 'response',
          toolCalls: [{ id: `call_${key}`, name: 'bash', arguments: JSON.stringify({ command }) }],
        };
      },
    });
    const home = fleetHome({ schema: fleetSchema, url: POSTGRES_URL });
    const work = mkdtempSync(join(tmpdir(), 'rho-queue-appr-work-'));
    for (const key of ['answered', 'deadline', 'cancelled', 'parked']) mkdirSync(join(work, `build-${key}`));
    const started = await startQueueWorker({
      host: 'node-w',
      args: ['--labels', 'approvals', '--allow-profile', 'developer', '--allow-in-place'],
      home,
      cwd: work,
      env: {
        RHO_QUEUE_SCHEMA: schema,
        RHO_QUEUE_LEASE: String(LEASE),
        RHO_WHEN_UNATTENDED: 'withhold',
        OPENAI_BASE_URL: server.url,
        OPENAI_API_KEY: 'test',
        OPENAI_MODEL: 'scripted',
        ...(uts ? {} : { RHO_FLEET_HOST: 'node-w' }),
      },
    });
    worker = { ...started, work };
  });

  afterAll(async () => {
    if (worker !== undefined) killWorkers([worker]);
    await server?.close();
    if (available) await dropSchemas(schema, fleetSchema);
  });

  const runs = () =>
    existsSync(join(worker.work, 'runs.log')) ? readFileSync(join(worker.work, 'runs.log'), 'utf8').split('\n') : [];

  it('holds the task while a call waits past its lease; a third node answers over the fleet; the command runs once', async () => {
    const id = await submit('--no-auto-approve', 'clean answered');
    const first = await waiting(id);
    expect(first).toMatchObject({ state: 'running', attempt: 1, host: 'node-w' });
    // Longer than a lease: the worker's heartbeats keep the job its own, and the session's lease holds.
    await new Promise((resolve) => setTimeout(resolve, (LEASE + 5) * 1000));
    const held = await task(id);
    expect(held).toMatchObject({
      state: 'running',
      attempt: 1,
      worker_id: first.worker_id,
      session_id: first.session_id,
    });
    const beating = await job(id);
    expect(beating).toMatchObject({ state: 'active', retry_count: 0 });
    expect(beating.beat).toBeGreaterThan(LEASE);
    expect(trace(first.session_id!).some((record) => record.type === 'run_end')).toBe(false);
    expect(runs()).not.toContain('answered');

    // Node c: another RHO_HOME, another host name; the fleet carries the answer to node-w.
    const approver = { RHO_HOME: fleetHome({ schema: fleetSchema, url: POSTGRES_URL }) };
    const approved = await rhoOnNode('node-c', ['approve', first.session_id!], approver);
    expect(approved.stderr).toBe('');
    expect(approved.code).toBe(0);
    expect(approved.stdout).toMatch(/^Approved bash\(rm -rf build-answered.*\(call call_answered\)/);

    const done = await waitFor(async () => {
      const item = await task(id);
      return item.state === 'done' ? item : undefined;
    }, 'the task done');
    expect(done).toMatchObject({ attempt: 1, host: 'node-w', result: { status: 'completed', answer: 'Cleaned.' } });
    expect(runs().filter((line) => line === 'answered')).toHaveLength(1);
    expect(existsSync(join(worker.work, 'build-answered'))).toBe(false);
    const records = trace(first.session_id!);
    expect(records.filter((record) => record.type === 'tool_start')).toHaveLength(1);
    expect(records.find((record) => record.type === 'approval_answered')).toMatchObject({
      decision: 'approve',
      ...(uts ? { by: expect.stringMatching(/@node-c$/) } : {}),
    });
    // One attempt, one session: nothing ran the task again.
    expect(started(id)).toHaveLength(1);
    expect(readdirSync(join(worker.home, 'sessions')).filter((name) => name === first.session_id)).toHaveLength(1);
  });

  it('denies the call a little before the deadline when nobody answers: refused, with the reason, not expired', async () => {
    const id = await submit('--no-auto-approve', '--deadline', '30s', 'clean deadline');
    const first = await waiting(id);
    const requested = trace(first.session_id!).find((record) => record.type === 'approval_requested')!;
    const deadline = Date.parse(first.deadline!);
    // The wait ends before the deadline, by a margin for the run to end (5 s for a 30 s deadline).
    expect(Date.parse(String(requested.expires_at))).toBe(deadline - 5000);
    expect(requested.on_timeout).toBe('deny');
    const final = await waitFor(async () => {
      const item = await task(id);
      return item.state !== 'running' && item.state !== 'queued' && item.result !== undefined ? item : undefined;
    }, 'the task final');
    expect(final).toMatchObject({ state: 'failed', attempt: 1, result: { status: 'refused', exit_code: 1 } });
    expect(final.result!.error).toMatch(
      /^every tool call the session asked for was refused: bash: the approval timed out: nobody answered within \d+ s \(the approval deadline, /,
    );
    expect(runs()).not.toContain('deadline');
    expect(existsSync(join(worker.work, 'build-deadline'))).toBe(true);
    const answered = trace(first.session_id!).find((record) => record.type === 'approval_answered')!;
    expect(answered).toMatchObject({ decision: 'deny', source: 'timeout' });
    expect(Date.parse(answered.ts)).toBeLessThan(deadline);
    expect(started(id)).toHaveLength(1);
    const table = await rho('tasks', id);
    expect(table.stdout).toMatch(new RegExp(`^${id.slice(0, 8)}\\s+refused\\s`, 'm'));
  });

  it('a task cancelled while its call waits ends its session cancelled, not parked', async () => {
    const id = await submit('--no-auto-approve', 'clean cancelled');
    const first = await waiting(id);
    const cancelled = await rho('tasks', 'cancel', id);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    const final = await waitFor(async () => {
      const item = await task(id);
      return item.result?.exit_code !== undefined ? item : undefined;
    }, 'the session stopped');
    expect(final).toMatchObject({ state: 'cancelled', result: { status: 'cancelled', exit_code: 130 } });
    const end = trace(first.session_id!).find((record) => record.type === 'run_end');
    expect(end).toMatchObject({ status: 'cancelled' });
    expect(runs()).not.toContain('cancelled');
  });

  it('a session stopped from outside while its call waits is reported parked, with how to answer it', async () => {
    const id = await submit('--no-auto-approve', 'clean parked');
    const first = await waiting(id);
    const meta = JSON.parse(readFileSync(join(worker.home, 'sessions', first.session_id!, 'meta.json'), 'utf8')) as {
      pid: number;
    };
    // What a machine shutting down does to every process: the session parks (exit 4).
    process.kill(meta.pid, 'SIGTERM');
    const final = await waitFor(async () => {
      const item = await task(id);
      return item.state === 'failed' ? item : undefined;
    }, 'the task final');
    expect(final.result).toMatchObject({
      status: 'waiting_approval',
      exit_code: 4,
      pending_approval: { tool_call_id: 'call_parked', tool_name: 'bash' },
    });
    expect(final.result!.error).toContain(
      `the session ${first.session_id} stopped on node-w while call call_parked (bash) waited for approval; it is parked, not done`,
    );
    expect(final.result!.error).toContain(`rho approve ${first.session_id}`);
    expect(final.result!.error).toContain(`rho --resume ${first.session_id}`);
    const table = await rho('tasks', id);
    expect(table.stdout).toMatch(new RegExp(`^${id.slice(0, 8)}\\s+parked\\s`, 'm'));
    expect(table.stdout).toContain(`${id.slice(0, 8)}: the session ${first.session_id} stopped on node-w`);
    expect(started(id)).toHaveLength(1);
    expect(runs()).not.toContain('parked');
  });
});
