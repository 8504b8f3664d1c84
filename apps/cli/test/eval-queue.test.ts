// `rho eval sql --queue` with real `rho worker` processes on two simulated nodes (own host name
// and RHO_HOME each, as in queue.test.ts) against the shared PostgreSQL (a random schema, dropped
// after) and a loopback model whose answers are scripted per question: the queued run must report
// exactly what a local run of the same answers reports. Waits are on conditions, never on time.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer, LoopbackStep, RecordedRequest } from '@rho/core/testing';
import type { SqlEvalReport } from '@rho/eval';
import { loadSqlDataset } from '@rho/eval';
import { probePostgres } from '@rho/fleet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetHome } from './support/fleet.js';
import { dropSchemas, killWorkers, POSTGRES_URL, startWorker as startQueueWorker, waitFor } from './support/queue.js';
import type { WorkerProcess } from './support/queue.js';
import { runRho } from './support/run-rho.js';

const { available } = await probePostgres(POSTGRES_URL);
const schema = `rho_queue_eval_${randomBytes(5).toString('hex')}`;
/** The fleet the workers' sessions register with (in $RHO_HOME/config.yaml, the queue's database). */
const fleetSchema = `rho_fleet_eval_${randomBytes(5).toString('hex')}`;
const chinook = loadSqlDataset('chinook');
const byQuestion = new Map(chinook.questions.map((question) => [question.question, question]));
/** Questions answered wrongly (every third), so the report has failures to compare. */
const wrong = new Set(chinook.questions.filter((_, index) => index % 3 === 1).map((question) => question.id));

describe.skipIf(!available)('rho eval sql --queue over worker processes', { timeout: 240_000 }, () => {
  let server: LoopbackServer;
  const workers: WorkerProcess[] = [];
  /** Questions whose first model call arrived; the first calls wait until two are in (one per worker). */
  const asked = new Set<string>();
  const waiting: (() => void)[] = [];

  const clientEnv = () => ({
    RHO_QUEUE_SCHEMA: schema,
    RHO_HOME: fleetHome({ schema: fleetSchema, url: POSTGRES_URL }),
  });
  const startWorker = async (host: string, ...args: string[]) => {
    const worker = await startQueueWorker({
      host,
      args,
      home: fleetHome({ schema: fleetSchema, url: POSTGRES_URL }),
      env: {
        RHO_QUEUE_SCHEMA: schema,
        RHO_FLEET_HOST: host,
        RHO_QUEUE_LEASE: '10',
        // The model is the workers' to call: the submitter has no key.
        OPENAI_BASE_URL: server.url,
        OPENAI_API_KEY: 'test',
      },
    });
    workers.push(worker);
    return worker;
  };

  beforeAll(async () => {
    if (available) {
      const migrated = await runRho(['fleet', 'migrate'], { env: clientEnv() });
      expect(migrated.code, migrated.stderr).toBe(0);
    }
    server = await startLoopbackServer({
      respond: async (request: RecordedRequest): Promise<LoopbackStep> => {
        const messages = request.body.messages as { role: string; content: string }[];
        const first = messages.find((message) => message.role === 'user')!;
        const question = byQuestion.get(/^Question: (.*)$/m.exec(first.content)![1]!)!;
        if (messages.at(-1)!.role === 'tool')
          return { type: 'response', text: 'Submitted.', usage: { prompt_tokens: 900, completion_tokens: 10 } };
        asked.add(question.id);
        if (asked.size < 2) await new Promise<void>((resolve) => waiting.push(resolve));
        else for (const release of waiting.splice(0)) release();
        return {
          type: 'response',
          toolCalls: [
            {
              name: 'submit_sql',
              arguments: JSON.stringify({ sql: wrong.has(question.id) ? 'SELECT 1' : question.goldSql }),
            },
          ],
          usage: { prompt_tokens: 800, completion_tokens: 40 },
        };
      },
    });
  });

  afterAll(async () => {
    killWorkers(workers);
    await server?.close();
    if (available) await dropSchemas(schema, fleetSchema);
  });

  /** The report without what differs by where and when the sessions ran. */
  const comparable = (report: SqlEvalReport) => {
    const {
      results_path: _path,
      started_at: _started,
      question_time_ms: _time,
      ...rest
    } = report as SqlEvalReport & {
      results_path?: string;
      started_at?: string;
    };
    return {
      ...rest,
      failures: report.failures.map(({ session_id: _id, trace_path: _trace, host: _host, ...failure }) => failure),
    };
  };
  const printed = (stdout: string) =>
    stdout
      .split('\n')
      .filter((line) => !/^\s*(session|results|report):/.test(line))
      .join('\n');

  it('spreads the questions over two worker nodes and reports what a local run of the same answers reports', async () => {
    // The questions' --worker-db-dir lies under the temporary directory: the workers allow it.
    await Promise.all(
      ['node-a', 'node-b'].map((host) => startWorker(host, '--labels', 'eval,bench', '--allow-dir', tmpdir())),
    );
    const dir = mkdtempSync(join(tmpdir(), 'rho-eval-queue-'));
    const common = ['eval', 'sql', '--dataset', 'chinook', '--limit', '9', '--model', 'gpt-4o-mini'];
    const local = await runRho([...common, '--base-url', server.url, '--output', join(dir, 'local.jsonl')], {
      env: { RHO_HOME: join(dir, 'home'), OPENAI_API_KEY: 'test' },
    });
    expect(local.code, local.stderr).toBe(0);
    asked.clear();

    const queued = await runRho([...common, '--queue', '--label', 'bench', '--output', join(dir, 'queued.jsonl')], {
      env: clientEnv(),
    });
    expect(queued.code, queued.stderr).toBe(0);
    expect(queued.stderr).toContain("9 questions, run by the task queue's workers");
    expect(queued.stderr).toContain('Submitted 9 questions as tasks labelled eval,bench');
    expect(queued.stderr).toContain('[9/9] ');
    expect(queued.stdout).toContain('overall             9        6     66.7%');
    expect(printed(queued.stdout)).toBe(printed(local.stdout));

    const reportOf = (name: string) =>
      JSON.parse(readFileSync(join(dir, `${name}.report.json`), 'utf8')) as SqlEvalReport;
    expect(comparable(reportOf('queued'))).toEqual(comparable(reportOf('local')));

    // Both nodes ran questions; each result names its node, whose trace has the task in its run_start.
    const results = readFileSync(join(dir, 'queued.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => JSON.parse(line) as { host: string; session_id: string; trace_path: string });
    expect(new Set(results.map((result) => result.host))).toEqual(new Set(['node-a', 'node-b']));
    for (const result of results) {
      const worker = workers.find((entry) => entry.host === result.host)!;
      expect(result.trace_path).toBe(join(worker.home, 'sessions', result.session_id, 'trace.jsonl'));
      expect(JSON.parse(readFileSync(result.trace_path, 'utf8').split('\n')[0]!)).toMatchObject({
        type: 'run_start',
        task_id: expect.any(String),
        task_attempt: 1,
      });
    }
    // Each question's session is registered in the fleet by its node, as any task's session is.
    const ps = await runRho(['ps', '--json'], { env: clientEnv() });
    expect(ps.code, ps.stderr).toBe(0);
    const sessions = new Map(
      (JSON.parse(ps.stdout) as { id: string; host: string; status: string }[]).map((entry) => [entry.id, entry]),
    );
    for (const result of results)
      expect(sessions.get(result.session_id)).toMatchObject({ host: result.host, status: 'completed' });
    // The tasks carry the answer for `rho results` and the outcome the submitter graded.
    const tasks = await runRho(['results', '--label', 'bench', '--json'], { env: clientEnv() });
    const rows = tasks.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { state: string; answer: string; output: { submitted_sql?: string } });
    expect(rows).toHaveLength(9);
    expect(rows.every((row) => row.state === 'done' && row.answer === 'Submitted.')).toBe(true);
    expect(rows.filter((row) => row.output.submitted_sql === 'SELECT 1')).toHaveLength(3);
  });

  it("records a question whose database is not on the worker as the session's failure, with what to do", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rho-eval-queue-'));
    const outcome = await runRho(
      [
        'eval',
        'sql',
        '--dataset',
        'chinook',
        '--limit',
        '1',
        '--queue',
        '--label',
        'bench',
        '--worker-db-dir',
        join(dir, 'nowhere'),
        '--output',
        join(dir, 'run.jsonl'),
      ],
      { env: clientEnv() },
    );
    // Every question failed in its session: exit 1, and the result says why.
    expect(outcome.code).toBe(1);
    const [, line] = readFileSync(join(dir, 'run.jsonl'), 'utf8').trim().split('\n');
    const result = JSON.parse(line!) as { status: string; detail: string; host: string };
    expect(result.status).toBe('agent_error');
    expect(result.detail).toContain(`is not on this worker: ${join(dir, 'nowhere', 'chinook', 'chinook.sqlite')}`);
    expect(result.detail).toContain('--worker-db-dir');
    expect(['node-a', 'node-b']).toContain(result.host);
  });

  it('cancels its tasks on Ctrl+C and records nothing, so --resume runs them again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rho-eval-queue-'));
    const env = clientEnv();
    const output = join(dir, 'run.jsonl');
    let child: ChildProcess | undefined;
    // No worker serves the label "nobody": the tasks wait in the queue.
    const running = runRho(
      ['eval', 'sql', '--dataset', 'chinook', '--limit', '3', '--queue', '--label', 'nobody', '--output', output],
      { env, onSpawn: (spawned) => (child = spawned) },
    );
    const listed = async () => {
      const outcome = await runRho(['tasks', '--label', 'nobody', '--json'], { env });
      return JSON.parse(outcome.stdout) as { id: string; state: string }[];
    };
    await waitFor(async () => (await listed()).length === 3, 'three tasks submitted');
    child!.kill('SIGINT');
    const outcome = await running;
    expect(outcome.code).toBe(130);
    expect(outcome.stderr).toContain('Interrupted after 0 of 3 questions');
    expect((await listed()).map((task) => task.state)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    expect(readFileSync(output, 'utf8').trim().split('\n')).toHaveLength(1);
    expect(existsSync(join(dir, 'run.report.json'))).toBe(true);
    // Resumed with a label the workers serve, the three questions run and are graded.
    const resumed = await runRho(['eval', 'sql', '--resume', output, '--queue', '--label', 'bench'], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('overall             3        2     66.7%');
    expect(readFileSync(output, 'utf8').trim().split('\n')).toHaveLength(4);
  });
});
