// A worker decides what a task may choose (issue 32), through real `rho submit`, `rho worker`,
// `rho tasks` and `rho results` against the shared PostgreSQL (a random schema, dropped after).
// Proven before: a task chose `profile: unrestricted` and its working directory on the worker, and
// an eval task's `base_url` received the worker's own API key. Here a loopback server stands as
// the submitter's endpoint and records every request: the worker's key never reaches it.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { probePostgres } from '@rho/fleet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchemas, killWorkers, POSTGRES_URL, startWorker, waitFor } from './support/queue.js';
import type { WorkerProcess } from './support/queue.js';
import { runRho } from './support/run-rho.js';

const { available } = await probePostgres(POSTGRES_URL);
const schema = `rho_queue_allow_${randomBytes(5).toString('hex')}`;
const WORKER_KEY = 'sk-worker-own-key-0123456789';

interface Task {
  id: string;
  state: string;
  result?: { status: string; error?: string; answer?: string };
}

describe.skipIf(!available)('rho worker allowlists', { timeout: 180_000 }, () => {
  let own: LoopbackServer;
  let foreign: LoopbackServer;
  const workers: WorkerProcess[] = [];
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-worker-allow-')));
  const workDir = join(root, 'work');
  mkdirSync(workDir);
  const client = (extra: NodeJS.ProcessEnv = {}) => ({
    RHO_FLEET_URL: POSTGRES_URL,
    RHO_QUEUE_SCHEMA: schema,
    RHO_HOME: join(root, 'client-home'),
    ...extra,
  });
  const startOne = async (host: string, ...args: string[]) => startWorkerWith(host, undefined, ...args);
  /** Starts `rho worker` as node `host`, its `$RHO_HOME/config.yaml` holding `config` when given. */
  const startWorkerWith = async (host: string, config: string | undefined, ...args: string[]) => {
    const home = mkdtempSync(join(root, `home-${host}-`));
    if (config !== undefined) writeFileSync(join(home, 'config.yaml'), config);
    const worker = await startWorker({
      host,
      args,
      home,
      cwd: workDir,
      env: {
        RHO_FLEET_URL: POSTGRES_URL,
        RHO_QUEUE_SCHEMA: schema,
        OPENAI_BASE_URL: own.url,
        OPENAI_API_KEY: WORKER_KEY,
        OPENAI_MODEL: 'scripted',
      },
    });
    workers.push(worker);
    return worker.log;
  };
  const submitFile = async (lines: object[]) => {
    const file = join(root, `tasks-${randomBytes(3).toString('hex')}.jsonl`);
    writeFileSync(file, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
    const outcome = await runRho(['submit', '--json', '--file', file], { env: client() });
    expect(outcome.code, outcome.stderr).toBe(0);
    return JSON.parse(outcome.stdout) as string[];
  };
  const final = async (ids: string[]) =>
    waitFor(async () => {
      const outcome = await runRho(['tasks', '--json', ...ids], { env: client() });
      const list = JSON.parse(outcome.stdout) as Task[];
      return list.length === ids.length && list.every((task) => task.state !== 'queued' && task.state !== 'running')
        ? new Map(list.map((task) => [task.id, task]))
        : undefined;
    }, 'the tasks final');

  beforeAll(async () => {
    own = await startLoopbackServer({ respond: () => ({ type: 'response', text: 'own answer' }) });
    // The submitter's endpoint: answers like a model, and records whatever reaches it.
    foreign = await startLoopbackServer({ respond: () => ({ type: 'response', text: 'stolen' }) });
  });
  afterAll(async () => {
    killWorkers(workers);
    await own?.close();
    await foreign?.close();
    if (available) await dropSchemas(schema);
  });

  it('refuses, and never runs, a task asking for another profile, directory or endpoint; the key never reaches the endpoint', async () => {
    await startOne('node-narrow', '--labels', 'narrow');
    const question = { question_id: '0', db_id: 'chinook', dataset: 'chinook', base_url: foreign.url };
    const [plain, root_, elsewhere, evalTask] = await submitFile([
      { prompt: 'hello plain', labels: ['narrow'] },
      { prompt: 'run id as root', labels: ['narrow'], profile: 'unrestricted' },
      { prompt: 'look around', labels: ['narrow'], working_dir: '/' },
      { prompt: 'How many artists are there?', labels: ['narrow'], sql_eval: question },
    ]);
    const tasks = await final([plain!, root_!, elsewhere!, evalTask!]);
    expect(tasks.get(plain!)).toMatchObject({ state: 'done', result: { answer: 'own answer' } });
    expect(tasks.get(root_!)!.result).toMatchObject({ status: 'refused' });
    expect(tasks.get(root_!)!.result!.error).toContain("profile 'unrestricted' is not allowed on this worker");
    expect(tasks.get(elsewhere!)!.result!.error).toContain(
      `working_dir / is outside the directories this worker allows (${workDir}`,
    );
    expect(tasks.get(evalTask!)!.result!.error).toContain('never sends its key to an endpoint it did not configure');
    // Nothing of the refused tasks reached any model: the only session was the plain task's.
    expect(foreign.requests).toEqual([]);
    expect(JSON.stringify(own.requests.map((request) => request.body))).not.toMatch(/run id as root|look around/);
    // `rho tasks` and `rho results` say refused, and why.
    const table = await runRho(['tasks', root_!, elsewhere!, evalTask!], { env: client() });
    expect(table.stdout).toMatch(new RegExp(`${root_!.slice(0, 8)}\\s+refused`));
    expect(table.stdout).toContain(
      `${root_!.slice(0, 8)}: refused by the worker on node-narrow: profile 'unrestricted'`,
    );
    const results = await runRho(['results', root_!], { env: client() });
    expect(results.stdout).toMatch(/refused\s+node-narrow\s+-\s+refused by the worker on node-narrow: profile/);
  });

  it('sends the key only to an endpoint the worker allows (the same test sees it arrive there)', async () => {
    await startOne('node-wide', '--labels', 'wide', '--allow-endpoint', foreign.url);
    const [id] = await submitFile([
      {
        prompt: 'How many artists are there?',
        labels: ['wide'],
        max_turns: 1,
        sql_eval: { question_id: '0', db_id: 'chinook', dataset: 'chinook', base_url: foreign.url },
      },
    ]);
    await final([id!]);
    // Allowed by the worker's operator: the request arrives there, with the worker's key.
    expect(foreign.requests.length).toBeGreaterThan(0);
    expect(foreign.requests[0]!.headers.authorization).toBe(`Bearer ${WORKER_KEY}`);
  });

  it('reads its allowlists from worker: in $RHO_HOME/config.yaml, flags replacing a key', async () => {
    const log = await startWorkerWith(
      'node-config',
      `worker:\n  allow_profiles: [readonly, developer]\n  allow_endpoints: [${foreign.url}]\n  max_approval_wait: 2h\n  allow_in_place: true\n`,
      '--labels',
      'configured',
      '--allow-profile',
      'readonly',
      '--allow-approve-on-timeout',
    );
    const started = JSON.parse(log.find((line) => line.includes('"worker_started"'))!) as {
      allow: { profiles: string[]; dirs: string[]; endpoints: string[] };
    };
    expect(started.allow).toEqual({
      profiles: ['readonly'],
      dirs: [workDir],
      endpoints: [foreign.url],
      max_approval_wait_seconds: 7200,
      approve_on_timeout: true,
      in_place: true,
    });
    const [id] = await submitFile([{ prompt: 'hello dev', labels: ['configured'], profile: 'developer' }]);
    const tasks = await final([id!]);
    expect(tasks.get(id!)!.result!.error).toContain("profile 'developer' is not allowed on this worker");
  });

  it('rho tasks roles prints the GRANT script for the queue schema, without connecting', async () => {
    const roles = await runRho(['tasks', 'roles', '--worker-role', 'nodes'], { env: { RHO_QUEUE_SCHEMA: 'jobs' } });
    expect(roles.code, roles.stderr).toBe(0);
    expect(roles.stdout).toContain('grant usage on schema jobs to rho_queue_submitter, nodes;');
    expect(roles.stdout).toContain('create policy submitter_update on jobs.rho_task');
    const bad = await runRho(['tasks', 'roles', '--submitter-role', 'x; drop table y']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('is not a lower-case SQL identifier');
  });
});
