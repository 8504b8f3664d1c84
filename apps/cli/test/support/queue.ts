// The task queue's CLI tests: `rho worker` processes on simulated nodes against the shared
// PostgreSQL (127.0.0.1:5432, user postgres, trust; RHO_TEST_POSTGRES_URL elsewhere). Each worker
// runs in its own UTS namespace with its own host name (`unshare --uts`, as root; elsewhere
// RHO_WORKER_HOST names it), its own RHO_HOME and its own process group, so a test can stop,
// freeze or kill the worker with the sessions it runs. Waits are on conditions, never on time.
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { bin } from './run-rho.js';

export const POSTGRES_URL = process.env.RHO_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Whether this process may give a worker its own host name with a UTS namespace. */
export const uts = spawnSync('unshare', ['--uts', 'true']).status === 0;

/**
 * Polls `check` every 150 ms until it gives a value (neither `undefined` nor `false`), for at most
 * `timeoutMs`. An error thrown by `check` fails the wait at once (a task that ended early says so).
 */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 90_000,
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

/** A running `rho worker`: its node, process, `$RHO_HOME` and the lines of its stderr so far. */
export interface WorkerProcess {
  host: string;
  child: ChildProcess;
  home: string;
  log: string[];
}

/** What {@link startWorker} starts. */
export interface WorkerOptions {
  /** The node's host name. */
  host: string;
  /** After `rho worker --json --poll 0.2`. */
  args?: string[];
  /** The worker's environment (besides PATH and HOME), for example RHO_QUEUE_SCHEMA and the model's. */
  env: NodeJS.ProcessEnv;
  /** Its `$RHO_HOME`; a new temporary folder by default. */
  home?: string;
  cwd?: string;
}

/**
 * Starts `rho worker --json --poll 0.2 ARGS` as node `host` in a process group of its own, and
 * resolves once it said `worker_started`.
 */
export async function startWorker(options: WorkerOptions): Promise<WorkerProcess> {
  const { host } = options;
  const home = options.home ?? mkdtempSync(join(tmpdir(), `rho-worker-${host}-`));
  const workerArgs = [bin, 'worker', '--json', '--poll', '0.2', ...(options.args ?? [])];
  const child = spawn(
    uts ? 'unshare' : process.execPath,
    uts ? ['--uts', 'sh', '-c', `hostname ${host} && exec "$0" "$@"`, process.execPath, ...workerArgs] : workerArgs,
    {
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ...options.env,
        RHO_HOME: home,
        ...(uts ? {} : { RHO_WORKER_HOST: host }),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    },
  );
  const worker: WorkerProcess = { host, child, home, log: [] };
  let buffer = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    worker.log.push(...lines);
  });
  const exited = new Promise<never>((_, reject) =>
    child.on('exit', (code, signal) =>
      reject(new Error(`worker ${host} exited (${signal ?? code}) before it started:\n${worker.log.join('\n')}`)),
    ),
  );
  exited.catch(() => undefined);
  try {
    await Promise.race([
      waitFor(() => worker.log.some((line) => line.includes('"worker_started"')), `worker ${host} started`),
      exited,
    ]);
  } catch (error) {
    killWorkers([worker]);
    throw error;
  }
  return worker;
}

/** Kills each worker's process group (its sessions too), waking a frozen one first. */
export function killWorkers(workers: Iterable<WorkerProcess>): void {
  for (const worker of workers) {
    try {
      process.kill(-worker.child.pid!, 'SIGCONT');
      process.kill(-worker.child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Drops the tests' schemas from the shared PostgreSQL. */
export async function dropSchemas(...schemas: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}
