// The built submitter against a real queue: PostgreSQL on the test machine (a schema of its own),
// and a worker of @rho/queue in this process whose runner answers at once, where a `rho worker`
// would start a `rho` session for each task.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dropTestSchema, probePostgres, SHARED_POSTGRES_URL, testSchemaName } from '@rho/fleet/testing';
import { createTaskQueue, createTaskWorker } from '@rho/queue';
import type { TaskQueue, TaskRunner, TaskWorker } from '@rho/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const main = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');
const probe = await probePostgres();

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [main, ...args], { env: { PATH: process.env.PATH, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A worker's runner that answers each task at once (a `rho worker` runs a `rho` session instead). */
const echo: TaskRunner = (task, hooks) => {
  hooks.onSession(`session-${task.id.slice(0, 8)}`);
  return {
    result: Promise.resolve({ status: 'completed', exit_code: 0, answer: `done: ${task.spec.prompt}` }),
    stop: () => {},
  };
};

describe.skipIf(!probe.available)(`the queue submitter ${probe.reason}`, () => {
  const schema = testSchemaName('rho_queue_test');
  const env = { RHO_FLEET_URL: SHARED_POSTGRES_URL, RHO_QUEUE_SCHEMA: schema };
  let queue: TaskQueue;
  let worker: TaskWorker | undefined;
  beforeAll(async () => {
    queue = await createTaskQueue({ url: SHARED_POSTGRES_URL, schema });
  });
  afterAll(async () => {
    await worker?.drain(1);
    await queue?.close();
    await dropTestSchema(schema);
  });

  it('submits prompts and a tasks file with labels, and leaves them queued without --wait', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'rho-submitter-'));
    const file = join(directory, 'tasks.jsonl');
    writeFileSync(file, `${JSON.stringify({ prompt: 'Summarise the logs', labels: ['logs'], priority: 5 })}\n`);
    const submitted = await run(['--label', 'nightly', '--file', file, 'Count the rows'], env);
    expect(submitted.stderr).toBe('');
    expect(submitted.code).toBe(0);
    const ids = submitted.stdout.trim().split('\n');
    expect(ids).toHaveLength(2);
    const tasks = await queue.list({ ids });
    expect(tasks.map((task) => [task.spec.prompt, task.state, task.labels, task.priority]).sort()).toEqual([
      ['Count the rows', 'queued', ['nightly'], 0],
      ['Summarise the logs', 'queued', ['logs', 'nightly'], 5],
    ]);
    for (const id of ids) await queue.cancel(id);
  });

  it('waits for the workers and prints each result', async () => {
    worker = await createTaskWorker({
      url: SHARED_POSTGRES_URL,
      schema,
      runner: echo,
      labels: ['batch'],
      pollSeconds: 0.2,
    });
    const waited = await run(['--label', 'batch', '--wait', '--poll-ms', '100', 'First task', 'Second task'], env);
    expect(waited.stderr).toBe('');
    expect(waited.code).toBe(0);
    const [first, second, ...results] = waited.stdout.trim().split('\n');
    const byId = new Map(results.map((line) => [line.split('\t')[0], line.split('\t').slice(1)]));
    expect(byId.get(first)).toEqual(['done', expect.any(String), 'done: First task']);
    expect(byId.get(second)).toEqual(['done', expect.any(String), 'done: Second task']);
  });

  it('says what is wrong with a task that does not check (exit 2) and when there is no database', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'rho-submitter-'));
    const file = join(directory, 'bad.jsonl');
    writeFileSync(file, `${JSON.stringify({ prompt: 'x', max_turns: 'many' })}\n`);
    const bad = await run(['--file', file], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/max_turns/);
    const none = await run(['a prompt'], {});
    expect(none).toMatchObject({ code: 2, stderr: expect.stringMatching(/No queue database/) as unknown });
  });
});
