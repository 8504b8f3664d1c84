// bench/queue: the task queue (@rho/queue on pg-boss) against running the same sessions directly.
//
// N short scripted tasks (default 1,000), each one `rho --json` session answered at once by the
// loopback model server:
// 1. Direct: the N sessions as `rho --json -p ...` processes, 4 at a time (what a script would do
//    on one machine): wall time, tasks per second.
// 2. Queue: the N tasks submitted in one batch, run by 4 `rho worker` processes (concurrency 1
//    each, every session its own `rho` process, as in production): wall time from submit to the
//    last result, tasks per second, queue latency (submit to start, p50/p99, from the database's
//    own clock), and the queue's overhead per task as a ratio to the direct run; and the gap a
//    worker leaves between two tasks (its own work per task), which does not depend on the load
//    staying the same between the two phases.
// 3. Pick-up latency: single tasks submitted to idle workers, one after another: submit to start
//    (p50/p99), the latency a task sees when workers are free (LISTEN/NOTIFY wakes them).
//
// `node bench/queue.mjs [--tasks N] [--quick]`; --quick: 100 tasks, 10 pick-ups. Needs PostgreSQL at
// 127.0.0.1:5432 (RHO_BENCH_POSTGRES_URL), where it uses a schema of its own and drops it after;
// without a server it says so and exits 0.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLoopbackServer } from '@rho/core/testing';
import { createTaskQueue } from '@rho/queue';

const here = dirname(fileURLToPath(import.meta.url));
const bin = join(here, '..', 'apps', 'cli', 'dist', 'bin.js');
const QUICK = process.argv.includes('--quick');
const flag = process.argv.indexOf('--tasks');
const TASKS = flag > 0 ? Number(process.argv[flag + 1]) : QUICK ? 100 : 1000;
const PICKUPS = QUICK ? 10 : 30;
const WORKERS = 4;
const URL_ = process.env.RHO_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const schema = `rho_queue_bench_${randomBytes(4).toString('hex')}`;

// The machine's load average, sampled every 2 s while a phase runs (the machine is shared: the
// figures mean little without it).
function loadSampler() {
  const samples = [];
  const take = () => samples.push(loadavg()[0]);
  take();
  const timer = setInterval(take, 2000);
  return () => {
    clearInterval(timer);
    take();
    const mean = samples.reduce((sum, value) => sum + value, 0) / samples.length;
    return `load average (1 min) ${Math.min(...samples).toFixed(1)}-${Math.max(...samples).toFixed(1)}, mean ${mean.toFixed(1)}`;
  };
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

const server = await startLoopbackServer({ respond: () => ({ type: 'response', text: 'ok', usage: null }) });
const home = mkdtempSync(join(tmpdir(), 'rho-bench-queue-'));
const env = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  RHO_HOME: home,
  OPENAI_BASE_URL: server.url,
  OPENAI_API_KEY: 'bench',
  OPENAI_MODEL: 'scripted',
  RHO_FLEET_URL: URL_,
  RHO_QUEUE_SCHEMA: schema,
};

let queue;
try {
  queue = await createTaskQueue({ url: URL_, schema });
} catch (error) {
  console.log(`queue: PostgreSQL not reachable at ${URL_} (${error.message}); nothing measured.`);
  await server.close();
  process.exit(0);
}

function runDirect(index) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, '--json', '-p', `task ${index}`], {
      env,
      cwd: home,
      stdio: 'ignore',
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`rho exited ${code}`))));
  });
}

async function direct() {
  const started = performance.now();
  let next = 0;
  let finished = 0;
  const stop = ticker('direct', () => finished);
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (next < TASKS) {
        await runDirect(next++);
        finished += 1;
      }
    }),
  );
  stop();
  return performance.now() - started;
}

// Progress is polled with one count (cheap), so the watching does not weigh on the run it measures.
const pg = (await import('pg')).default;
const watcher = new pg.Client({ connectionString: URL_ });
await watcher.connect();
async function finishedCount() {
  const { rows } = await watcher.query(
    `SELECT count(*) FILTER (WHERE state IN ('done', 'failed'))::int AS finished,
            count(*) FILTER (WHERE state = 'failed')::int AS failed
     FROM ${schema}.rho_task WHERE 'batch' = ANY(labels)`,
  );
  return rows[0];
}

const workers = [];
/** Starts the workers; settles once each has said it takes tasks (connected, queue set up). */
function startWorkers() {
  return Promise.all(
    Array.from(
      { length: WORKERS },
      () =>
        new Promise((resolve, reject) => {
          const child = spawn(process.execPath, [bin, 'worker', '--json', '--poll', '1'], {
            env,
            cwd: home,
            stdio: ['ignore', 'ignore', 'pipe'],
          });
          workers.push(child);
          let seen = '';
          child.stderr.on('data', (chunk) => {
            if (seen === undefined) return;
            seen += chunk.toString();
            if (seen.includes('"worker_started"')) {
              seen = undefined;
              resolve();
            }
          });
          child.on('close', (code) => reject(new Error(`a worker exited (${code}) before it started`)));
        }),
    ),
  );
}

/** A line every 15 s while a phase runs, so a long run shows it is alive. */
function ticker(label, done) {
  const started = performance.now();
  const timer = setInterval(async () => {
    const count = await done();
    console.log(`queue: ... ${label}: ${count}/${TASKS} after ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }, 15_000);
  return () => clearInterval(timer);
}

try {
  console.log(`queue: ${TASKS} tasks, ${WORKERS} workers (concurrency 1 each); direct: ${WORKERS} at a time`);
  let load = loadSampler();
  const directMs = await direct();
  console.log(
    `queue: direct   ${(directMs / 1000).toFixed(1)} s, ${((TASKS * 1000) / directMs).toFixed(1)} tasks/s, ${(directMs / TASKS).toFixed(1)} ms/task; ${load()}`,
  );

  // The workers are up before the clock starts (their start-up is not the queue's cost per task).
  await startWorkers();
  load = loadSampler();
  const started = performance.now();
  await queue.submit(Array.from({ length: TASKS }, (_, index) => ({ prompt: `task ${index}`, labels: ['batch'] })));
  let counts;
  const stopTicker = ticker('queued', async () => (await finishedCount()).finished);
  for (;;) {
    counts = await finishedCount();
    if (counts.finished >= TASKS) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const queueMs = performance.now() - started;
  stopTicker();
  const queueLoad = load();
  const batch = await queue.list({ labels: ['batch'] });
  // The queue's own work per task on a worker: from one session's end to the next one's start on
  // the same worker (record the result, complete the job, find, fetch and claim the next). Robust
  // to the load varying between the direct and the queued phase, unlike the ratio.
  const gaps = [];
  const byWorker = new Map();
  for (const task of batch) byWorker.set(task.worker_id, [...(byWorker.get(task.worker_id) ?? []), task]);
  for (const tasks of byWorker.values()) {
    const ordered = tasks.sort((a, b) => Date.parse(a.started_at) - Date.parse(b.started_at));
    for (let index = 1; index < ordered.length; index += 1)
      gaps.push(Date.parse(ordered[index].started_at) - Date.parse(ordered[index - 1].finished_at));
  }
  const latency = batch.map((task) => Date.parse(task.started_at) - Date.parse(task.submitted_at));
  console.log(
    `queue: queued   ${(queueMs / 1000).toFixed(1)} s, ${((TASKS * 1000) / queueMs).toFixed(1)} tasks/s, ${(queueMs / TASKS).toFixed(1)} ms/task (${counts.failed} failed); ${queueLoad}`,
  );
  console.log(
    `queue: latency submit->start over the batch p50 ${(percentile(latency, 50) / 1000).toFixed(2)} s, p99 ${(percentile(latency, 99) / 1000).toFixed(2)} s (waiting behind the batch included)`,
  );
  console.log(
    `queue: overhead per task ${((queueMs - directMs) / TASKS).toFixed(1)} ms; ratio queue/direct ${(queueMs / directMs).toFixed(2)}x`,
  );

  console.log(
    `queue: worker gap between tasks (result recorded -> next started) p50 ${percentile(gaps, 50).toFixed(0)} ms, p99 ${percentile(gaps, 99).toFixed(0)} ms, vs ${(directMs / TASKS).toFixed(0)} ms/task direct: ${((100 * percentile(gaps, 50)) / ((directMs * WORKERS) / TASKS)).toFixed(1)}% of a session`,
  );

  // One cheap read by key per look (not queue.list, which reconciles the whole table each time
  // and, 50 times a second, would load the database the workers are using).
  const taskRow = async (id) =>
    (await watcher.query(`SELECT state, submitted_at, started_at FROM ${schema}.rho_task WHERE id = $1`, [id])).rows[0];
  // The workers' own CPU (pg-boss, polling, spawning and reading the sessions), per task: what the
  // queue costs on the worker machines besides the sessions themselves (Linux only).
  const cpuMs = workers.map((child) => {
    try {
      const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in ticks of 10 ms
    } catch {
      return Number.NaN;
    }
  });
  const workerCpu = cpuMs.reduce((sum, value) => sum + value, 0);
  if (Number.isFinite(workerCpu))
    console.log(
      `queue: the ${WORKERS} worker processes' own CPU over the batch: ${(workerCpu / 1000).toFixed(1)} s, ${(workerCpu / TASKS).toFixed(1)} ms per task`,
    );

  const pickups = [];
  load = loadSampler();
  for (let index = 0; index < PICKUPS; index += 1) {
    const [id] = await queue.submit([{ prompt: `single ${index}`, labels: ['single'] }]);
    let task;
    for (;;) {
      task = await taskRow(id);
      if (task.started_at !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    pickups.push(task.started_at.getTime() - task.submitted_at.getTime());
    while ((await taskRow(id)).state === 'running') await new Promise((resolve) => setTimeout(resolve, 50));
  }
  console.log(
    `queue: pick-up latency, idle workers (${PICKUPS} single tasks): p50 ${percentile(pickups, 50).toFixed(0)} ms, p99 ${percentile(pickups, 99).toFixed(0)} ms; ${load()}`,
  );
} finally {
  for (const child of workers) child.kill('SIGTERM');
  await Promise.all(
    workers.map(
      (child) => new Promise((resolve) => (child.exitCode !== null ? resolve() : child.on('close', resolve))),
    ),
  );
  await queue.close();
  await watcher.end();
  const client = new pg.Client({ connectionString: URL_ });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
  await server.close();
  rmSync(home, { recursive: true, force: true });
}
