// The queued eval's two halves without a database: the submitter's runner over a task queue kept
// in memory, and the worker's task session and report. `apps/cli/test/eval-queue.test.ts` runs
// both through real `rho` processes and PostgreSQL.
import { join } from 'node:path';
import { ConfigError } from '@rho/core';
import type { TaskQueue, TaskRecord, TaskSpec } from '@rho/queue';
import { describe, expect, it } from 'vitest';
import { createQueuedSqlRunner, sqlQuestionTask } from './queued-sql-eval.js';
import type { QueuedSqlEvalSettings } from './queued-sql-eval.js';
import { bundledSqlDatasetDir, loadSqlDataset } from './sql-dataset.js';
import type { SqlSessionOutcome } from './sql-question-session.js';
import { sqlTaskReport, sqlTaskSession } from './sql-task.js';

const dataset = loadSqlDataset('chinook');
const question = dataset.questions[0]!;
const settings: QueuedSqlEvalSettings = {
  dataset,
  bundled: true,
  model: 'gpt-5-mini',
  labels: ['gpu', 'eval'],
  maxTurns: 5,
  questionTimeoutSeconds: 60,
  queryTimeoutSeconds: 10,
  clientOptions: { baseURL: 'http://127.0.0.1:9/v1', firstByteTimeoutMs: 700, maxRetries: 0 },
};

const outcome = (text: string): SqlSessionOutcome => ({
  session_id: 's1',
  trace_path: '/t',
  run_status: 'completed',
  text,
  usage: { input_tokens: 1, output_tokens: 1, cached_tokens: 0, reasoning_tokens: 0, cost_usd: 0 },
  duration_ms: 5,
});

/** A queue in memory: tasks are final once `finish` says so. */
function memoryQueue() {
  const tasks = new Map<string, TaskRecord>();
  const submissions: TaskSpec[][] = [];
  const queue: TaskQueue = {
    async submit(specs) {
      submissions.push([...specs]);
      return specs.map((spec) => {
        const id = `task-${tasks.size + 1}`;
        tasks.set(id, {
          id,
          state: 'queued',
          attempt: 0,
          labels: spec.labels ?? [],
          priority: 0,
          spec,
          submitted_at: '',
        });
        return id;
      });
    },
    async list(filter) {
      return [...tasks.values()].filter((task) => filter?.ids === undefined || filter.ids.includes(task.id));
    },
    async cancel(id) {
      const task = tasks.get(id)!;
      task.state = 'cancelled';
      return task;
    },
    async close() {},
  };
  const finish = (id: string, output: unknown) => {
    const task = tasks.get(id)!;
    Object.assign(task, {
      state: 'done',
      session_id: 's1',
      host: 'node-7',
      result: { status: 'completed', ...(output === undefined ? {} : { output }) },
    });
  };
  return { queue, tasks, submissions, finish };
}

describe('the queued eval: submitter', () => {
  it('makes a question a task with the settings, the endpoint options in seconds and never a key', () => {
    expect(sqlQuestionTask(question, 'the task text', settings)).toEqual({
      prompt: 'the task text',
      model: 'gpt-5-mini',
      labels: ['eval', 'gpu'],
      max_turns: 5,
      sql_eval: {
        question_id: question.id,
        db_id: question.dbId,
        dataset: 'chinook',
        question_timeout: 60,
        query_timeout: 10,
        base_url: 'http://127.0.0.1:9/v1',
        first_byte_timeout: 0.7,
        max_retries: 0,
      },
    });
    const elsewhere = sqlQuestionTask(question, 'x', { ...settings, workerDatabasesDir: '/data/dbs' });
    expect(elsewhere.sql_eval).toMatchObject({ databases_dir: '/data/dbs' });
    expect(elsewhere.sql_eval!.dataset).toBeUndefined();
  });

  it('submits the questions of one tick together and answers each with its worker’s outcome', async () => {
    const { queue, submissions, finish } = memoryQueue();
    const submitted: string[][] = [];
    const runner = createQueuedSqlRunner(queue, settings, { onSubmitted: (ids) => submitted.push(ids), pollMs: 10 });
    const started: string[] = [];
    const context = (id: string) => ({
      prompt: `q ${id}`,
      onSession: (session: string) => started.push(`${id}:${session}`),
    });
    const answers = [
      runner.runSession(dataset.questions[0]!, context('a')),
      runner.runSession(dataset.questions[1]!, context('b')),
    ];
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(submissions).toHaveLength(1);
    expect(submitted).toEqual([['task-1', 'task-2']]);
    finish('task-1', outcome('SELECT 1'));
    // A task that ends without an outcome (a worker whose rho predates sql-task) is a failed session.
    finish('task-2', undefined);
    const [first, second] = await Promise.all(answers);
    expect(first).toEqual({ ...outcome('SELECT 1'), host: 'node-7' });
    expect(second).toMatchObject({ run_status: 'error', host: 'node-7' });
    expect(second!.error).toMatch(/^task task-2 done on node-7: the session ended without an eval outcome/);
    expect(started).toEqual(['a:s1', 'b:s1']);
    expect(runner.submitted()).toBe(2);
    await runner.close();
  });

  it('cancels every unfinished task when the eval is stopped', async () => {
    const { queue, tasks } = memoryQueue();
    const runner = createQueuedSqlRunner(queue, settings, { pollMs: 10 });
    const controller = new AbortController();
    const answer = runner.runSession(question, { prompt: 'q', signal: controller.signal, onSession: () => {} });
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    expect(await answer).toBeUndefined();
    await runner.close({ cancel: true });
    expect([...tasks.values()].map((task) => task.state)).toEqual(['cancelled']);
  });
});

describe('the queued eval: worker', () => {
  const spec = sqlQuestionTask(question, 'the task text', settings);
  const worker = { clientOptions: { apiKey: 'worker-key' }, defaultModel: 'fallback-model' };

  it('runs the question on the worker’s copy of a bundled dataset, with the task’s settings over its own', () => {
    const session = sqlTaskSession(spec, {
      ...worker,
      allowedEndpoints: ['http://127.0.0.1:9/v1'],
      clientOptions: { apiKey: 'worker-key', maxRetries: 4, idleTimeoutMs: 5000 },
    });
    expect(session).toEqual({
      questionId: question.id,
      dbId: question.dbId,
      databasePath: join(bundledSqlDatasetDir('chinook'), 'dev_databases', question.dbId, `${question.dbId}.sqlite`),
      prompt: 'the task text',
      model: 'gpt-5-mini',
      clientOptions: {
        baseURL: 'http://127.0.0.1:9/v1',
        apiKey: 'worker-key',
        firstByteTimeoutMs: 700,
        idleTimeoutMs: 5000,
        maxRetries: 0,
      },
      budgets: { maxTurns: 5 },
      questionTimeoutMs: 60_000,
      queryTimeoutMs: 10_000,
    });
    expect(
      sqlTaskSession({ ...spec, model: undefined }, { ...worker, allowedEndpoints: ['http://127.0.0.1:9/v1'] }).model,
    ).toBe('fallback-model');
  });

  it('refuses an endpoint the worker does not allow, a database it lacks, and a run without key or endpoint', () => {
    const refused = (run: () => unknown, message: RegExp) =>
      expect(run).toThrow(expect.objectContaining({ message: expect.stringMatching(message) }) as Error);
    refused(
      () => sqlTaskSession(spec, worker),
      /names the endpoint http:\/\/127.0.0.1:9\/v1, which this worker does not allow/,
    );
    // Its own endpoint is always allowed.
    expect(
      sqlTaskSession(spec, { ...worker, clientOptions: { baseURL: 'http://127.0.0.1:9/v1/' } }).clientOptions,
    ).toMatchObject({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'no-key' });
    const local = { ...spec, sql_eval: { ...spec.sql_eval!, base_url: undefined } };
    refused(() => sqlTaskSession(local, { clientOptions: {}, defaultModel: 'm' }), /^Missing API key on this worker/);
    refused(
      () =>
        sqlTaskSession(
          { ...local, sql_eval: { ...local.sql_eval, dataset: undefined, databases_dir: '/nowhere' } },
          worker,
        ),
      /is not on this worker: \/nowhere/,
    );
    refused(
      () => sqlTaskSession({ ...local, sql_eval: { ...local.sql_eval, dataset: 'bird' } }, worker),
      /names the dataset 'bird', which this rho does not bundle/,
    );
    expect(() => sqlTaskSession({ prompt: 'plain task' }, worker)).toThrow(ConfigError);
  });

  it('reports the outcome as the lines a worker reads, with a run’s exit code', () => {
    expect(sqlTaskReport(outcome('done'))).toEqual({
      records: [
        { type: 'message', role: 'assistant', content: 'done' },
        { type: 'task_output', output: outcome('done') },
        { type: 'run_end', status: 'completed', usage: outcome('done').usage },
      ],
      exitCode: 0,
    });
    expect(sqlTaskReport({ ...outcome(''), run_status: 'limit', error: 'budget' }).records.map((r) => r.type)).toEqual([
      'error',
      'task_output',
      'run_end',
    ]);
    expect(sqlTaskReport({ ...outcome(''), run_status: 'limit' }).exitCode).toBe(3);
    expect(sqlTaskReport({ ...outcome(''), run_status: 'timeout' }).exitCode).toBe(1);
    expect(sqlTaskReport(undefined)).toEqual({ records: [{ type: 'run_end', status: 'cancelled' }], exitCode: 130 });
  });
});
