// `rho eval sql --queue`: each question becomes a task of the queue; workers run its session with
// `rho eval sql-task` (the same session code as a local run) and report the outcome, which the
// submitter grades as a local run does.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { SqlDataset, SqlQuestion, SqlSessionOutcome, SqlSessionRunner } from '@rho/eval';
import type { SqlEvalTask, TaskQueue, TaskRecord, TaskSpec } from '@rho/queue';
import type { Terminal } from '../terminal.js';
import type { QueueConnectionArguments } from './queue-commands.js';

/** What `rho eval sql --queue` puts in each question's task besides the question. */
export interface QueuedEvalSettings {
  dataset: SqlDataset;
  /** Whether the dataset is a bundled one loaded without --db-dir (workers use their own copy). */
  bundled: boolean;
  /** `--worker-db-dir`: the databases folder on the workers. */
  workerDatabasesDir?: string;
  model: string;
  labels: readonly string[];
  priority?: number;
  maxTurns: number;
  maxTokens?: number;
  maxCost?: number;
  questionTimeoutSeconds: number;
  queryTimeoutSeconds: number;
  systemPrompt?: string;
  /** `--base-url` only: without it, each worker uses its own OPENAI_BASE_URL. */
  baseUrl?: string;
  reasoningEffort?: string;
  firstByteTimeout?: number;
  idleTimeout?: number;
  maxRetries?: number;
}

/** The task of one question. */
export function questionTask(question: SqlQuestion, prompt: string, settings: QueuedEvalSettings): TaskSpec {
  const where: Partial<Pick<SqlEvalTask, 'databases_dir' | 'dataset'>> =
    settings.workerDatabasesDir !== undefined
      ? { databases_dir: settings.workerDatabasesDir }
      : settings.bundled
        ? { dataset: settings.dataset.name }
        : { databases_dir: settings.dataset.databasesDir };
  const optional = <K extends string, V>(key: K, value: V | undefined) =>
    value === undefined ? {} : ({ [key]: value } as Record<K, V>);
  return {
    prompt,
    model: settings.model,
    labels: [...new Set(['eval', ...settings.labels])].sort(),
    ...optional('priority', settings.priority),
    max_turns: settings.maxTurns,
    ...optional('max_tokens', settings.maxTokens),
    ...optional('max_cost', settings.maxCost),
    sql_eval: {
      question_id: question.id,
      db_id: question.dbId,
      ...where,
      question_timeout: settings.questionTimeoutSeconds,
      query_timeout: settings.queryTimeoutSeconds,
      ...optional('system_prompt', settings.systemPrompt),
      ...optional('base_url', settings.baseUrl),
      ...optional('reasoning_effort', settings.reasoningEffort),
      ...optional('first_byte_timeout', settings.firstByteTimeout),
      ...optional('idle_timeout', settings.idleTimeout),
      ...optional('max_retries', settings.maxRetries),
    },
  };
}

interface Waiting {
  question: SqlQuestion;
  onSession(sessionId: string): void;
  started: boolean;
  resolve(outcome: SqlSessionOutcome | undefined): void;
  reject(error: unknown): void;
}

/** A runner submitting questions as tasks and following them; see {@link createQueuedSqlRunner}. */
export interface QueuedSqlRunner {
  runSession: SqlSessionRunner;
  /** Tasks submitted so far. */
  submitted(): number;
  /** Stops following (cancelling what is still queued or running when `cancel`) and closes the queue. */
  close(options?: { cancel?: boolean }): Promise<void>;
}

/**
 * Submits each question handed to `runSession` as a task (those asked for in the same tick in one
 * transaction), follows them with one poll for all, and answers each with its session's outcome
 * as the worker reported it. Aborting the signal cancels every task not final yet.
 */
export function createQueuedSqlRunner(
  queue: TaskQueue,
  settings: QueuedEvalSettings,
  hooks: { onSubmitted?: (ids: string[]) => void; onWarning?: (message: string) => void; pollMs?: number } = {},
): QueuedSqlRunner {
  const batch: { spec: TaskSpec; waiting: Waiting }[] = [];
  let flushing: Promise<void> | undefined;
  const following = new Map<string, Waiting>();
  let polling: Promise<void> | undefined;
  let count = 0;
  let closed = false;
  let cancelling: Promise<void> | undefined;

  const cancelAll = (): Promise<void> => {
    cancelling ??= (async () => {
      closed = true;
      await flushing?.catch(() => undefined);
      for (const { waiting } of batch.splice(0)) waiting.resolve(undefined);
      const ids = [...following.keys()];
      await Promise.all(ids.map((id) => queue.cancel(id).catch(() => undefined)));
      for (const id of ids) {
        following.get(id)?.resolve(undefined);
        following.delete(id);
      }
    })();
    return cancelling;
  };

  const flush = async () => {
    const taken = batch.splice(0);
    if (taken.length === 0) return;
    try {
      const ids = await queue.submit(taken.map((entry) => entry.spec));
      count += ids.length;
      ids.forEach((id, index) => following.set(id, taken[index]!.waiting));
      hooks.onSubmitted?.(ids);
    } catch (error) {
      for (const { waiting } of taken) waiting.reject(error);
      return;
    }
    polling ??= poll();
  };

  const poll = async () => {
    const pollMs = hooks.pollMs ?? 1000;
    let failingSince: number | undefined;
    while (following.size > 0 && !closed) {
      let tasks: TaskRecord[] = [];
      try {
        tasks = await queue.list({ ids: [...following.keys()] });
        failingSince = undefined;
      } catch (error) {
        failingSince ??= Date.now();
        hooks.onWarning?.(`the queue did not answer (${(error as Error).message}); trying again`);
        if (Date.now() - failingSince > 120_000) {
          for (const [id, waiting] of following) {
            following.delete(id);
            waiting.reject(error);
          }
          return;
        }
      }
      for (const task of tasks) {
        const waiting = following.get(task.id);
        if (waiting === undefined || closed) continue;
        if (!waiting.started && task.session_id !== undefined) {
          waiting.started = true;
          waiting.onSession(task.session_id);
        }
        if (task.state === 'queued' || task.state === 'running') continue;
        following.delete(task.id);
        if (!waiting.started && task.session_id !== undefined) waiting.onSession(task.session_id);
        waiting.resolve(outcomeOf(task));
      }
      if (following.size > 0) await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
    polling = undefined;
  };

  let listening = false;
  return {
    runSession: (question, context) =>
      new Promise<SqlSessionOutcome | undefined>((resolve, reject) => {
        if (context.signal?.aborted === true || closed) {
          resolve(undefined);
          return;
        }
        if (!listening && context.signal !== undefined) {
          listening = true;
          context.signal.addEventListener('abort', () => void cancelAll(), { once: true });
        }
        batch.push({
          spec: questionTask(question, context.prompt, settings),
          waiting: { question, onSession: context.onSession, started: false, resolve, reject },
        });
        // Every question asked for in this tick goes in one submission.
        if (batch.length === 1)
          setImmediate(() => {
            flushing = (flushing ?? Promise.resolve()).then(flush);
          });
      }),
    submitted: () => count,
    async close(options = {}) {
      if (options.cancel === true) await cancelAll();
      closed = true;
      await polling?.catch(() => undefined);
      await queue.close().catch(() => undefined);
    },
  };
}

/** A final task as the outcome of its question's session. */
function outcomeOf(task: TaskRecord): SqlSessionOutcome {
  const result = task.result;
  const reported = result?.output as SqlSessionOutcome | undefined;
  const host = result?.host ?? task.host;
  if (reported !== undefined && typeof reported === 'object' && typeof reported.run_status === 'string')
    return { ...reported, ...(host === undefined ? {} : { host }) };
  // No outcome: the task never ran its session to the end (cancelled, expired, lost, crashed, or
  // a worker that could not start it). A failed session to the grading, so --resume runs it again.
  const why =
    result?.error ??
    (task.state === 'done'
      ? 'the session ended without an eval outcome (is rho on that worker older than here?)'
      : (result?.status ?? task.state));
  return {
    session_id: task.session_id ?? result?.session_id ?? '',
    trace_path: '',
    run_status: 'error',
    text: '',
    error: `task ${task.id} ${task.state}${host === undefined ? '' : ` on ${host}`}: ${why}`,
    usage: { input_tokens: 0, output_tokens: 0, cached_tokens: 0, reasoning_tokens: 0, cost_usd: 0 },
    duration_ms: 0,
    ...(host === undefined ? {} : { host }),
  };
}

/** Arguments of the hidden `rho eval sql-task`. */
export interface SqlTaskArguments {
  task: string;
}

/**
 * `rho eval sql-task --task JSON` (hidden; what `rho worker` runs for a `sql_eval` task): runs the
 * question's session as `rho eval sql` does, on this machine, and prints JSON lines the worker
 * reads: `run_start` (the session id), the final `message`, `task_output` (the outcome, for the
 * submitter to grade) and `run_end`. Exit code as a run's: 0 completed, 1 failed, 3 limit, 130
 * cancelled (SIGTERM or SIGINT cancel the session).
 */
export async function sqlTaskCommand(
  argv: SqlTaskArguments,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const { parseTaskSpec } = await import('@rho/queue');
  const evaluation = await import('@rho/eval');
  const { rhoHome, ConfigError } = await import('@rho/core');
  const { loadUserConfig } = await import('@rho/core/internal');
  const { UsageError } = await import('../exit-codes.js');
  const { loadDotenv } = await import('../dotenv.js');
  let raw: unknown;
  try {
    raw = JSON.parse(argv.task);
  } catch (error) {
    throw new UsageError({ message: `--task must be a task as JSON: ${(error as Error).message}` });
  }
  const spec = parseTaskSpec(raw, 'rho eval sql-task --task');
  const task = spec.sql_eval;
  if (task === undefined) throw new UsageError({ message: '--task has no sql_eval: it is not an eval question.' });
  loadDotenv(env);
  const bundled = (evaluation.BUNDLED_SQL_DATASETS as readonly string[]).includes(task.dataset ?? '');
  if (task.databases_dir === undefined && !bundled)
    throw new ConfigError({
      message: `Question ${task.question_id} names the dataset '${task.dataset ?? ''}', which this rho does not bundle; submit it with --worker-db-dir DIR.`,
    });
  const databasesDir =
    task.databases_dir ??
    join(
      evaluation.bundledSqlDatasetDir(task.dataset as (typeof evaluation.BUNDLED_SQL_DATASETS)[number]),
      'dev_databases',
    );
  const databasePath = join(databasesDir, task.db_id, `${task.db_id}.sqlite`);
  if (!existsSync(databasePath))
    throw new ConfigError({
      message: `The database of question ${task.question_id} is not on this worker: ${databasePath}. Copy the dataset's databases here, or tell rho eval sql --queue where the workers have them with --worker-db-dir DIR.`,
    });
  const text = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim());
  const model = spec.model ?? text(env.OPENAI_MODEL) ?? 'gpt-5-mini';
  const baseURL = text(task.base_url) ?? text(env.OPENAI_BASE_URL);
  const apiKey = text(env.OPENAI_API_KEY);
  // The worker refused a task whose endpoint it does not allow; this session checks again before
  // it sends the worker's key: to its own OPENAI_BASE_URL, or an endpoint `rho worker` allows.
  if (text(task.base_url) !== undefined) {
    const { endpointAllowed, normalEndpoint } = await import('@rho/queue');
    let endpoints: string[] = [];
    try {
      const parsed: unknown = JSON.parse(env.RHO_WORKER_ALLOW_ENDPOINTS ?? '[]');
      if (Array.isArray(parsed)) endpoints = parsed.filter((item): item is string => typeof item === 'string');
    } catch {
      // Unreadable: no endpoint is allowed.
    }
    const own = text(env.OPENAI_BASE_URL);
    const ownEndpoint = own === undefined ? undefined : normalEndpoint(own);
    if (!endpointAllowed(task.base_url!, { endpoints, ...(ownEndpoint === undefined ? {} : { ownEndpoint }) }))
      throw new ConfigError({
        message: `Question ${task.question_id} names the endpoint ${task.base_url}, which this worker does not allow: it never sends its key to an endpoint it did not configure (rho worker --allow-endpoint).`,
      });
  }
  if (baseURL === undefined && apiKey === undefined)
    throw new UsageError({
      message:
        'Missing API key on this worker. Set OPENAI_API_KEY (or OPENAI_BASE_URL to an endpoint that needs no key).',
    });
  const home = rhoHome(env);
  const id = env.RHO_TASK_ID;
  const attempt = Number(env.RHO_TASK_ATTEMPT ?? '1');
  const queued =
    id === undefined || id === '' ? undefined : { id, attempt: Number.isInteger(attempt) && attempt > 0 ? attempt : 1 };

  // The session registers with the worker's fleet, as any task's session does.
  const { fleetSources } = await import('../fleet/fleet-source.js');
  const sources = fleetSources({ env, home });
  const { startFleetLink } = await import('../fleet/run-fleet.js');
  const warn = (message: string) => terminal.stderr.write(`rho: ${message}\n`);
  const link =
    sources === undefined
      ? undefined
      : await startFleetLink(sources, { userConfig: loadUserConfig(home).fleet }, undefined, { onWarning: warn });

  const write = (record: Record<string, unknown>) => terminal.stdout.write(`${JSON.stringify(record)}\n`);
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  let outcome: SqlSessionOutcome | undefined;
  try {
    outcome = await evaluation.runSqlQuestionSession({
      redactor: await (await import('../known-secrets.js')).processSecretsRedactor(env, home),
      questionId: task.question_id,
      dbId: task.db_id,
      databasePath,
      prompt: spec.prompt,
      model,
      clientOptions: {
        ...(baseURL === undefined ? {} : { baseURL }),
        apiKey: apiKey ?? 'no-key',
        ...(task.reasoning_effort === undefined ? {} : { reasoningEffort: task.reasoning_effort }),
        ...(task.first_byte_timeout === undefined ? {} : { firstByteTimeoutMs: task.first_byte_timeout * 1000 }),
        ...(task.idle_timeout === undefined ? {} : { idleTimeoutMs: task.idle_timeout * 1000 }),
        ...(task.max_retries === undefined ? {} : { maxRetries: task.max_retries }),
      },
      ...(task.system_prompt === undefined ? {} : { systemPrompt: task.system_prompt }),
      budgets: {
        maxTurns: spec.max_turns ?? 20,
        ...(spec.max_tokens === undefined ? {} : { maxTokens: spec.max_tokens }),
        ...(spec.max_cost === undefined ? {} : { maxCostUsd: spec.max_cost }),
      },
      questionTimeoutMs: (task.question_timeout ?? 300) * 1000,
      queryTimeoutMs: (task.query_timeout ?? 30) * 1000,
      sessionsDir: join(home, 'sessions'),
      signal: controller.signal,
      ...(queued === undefined ? {} : { task: queued }),
      ...(link === undefined
        ? {}
        : {
            sessionOptions: (session: { id: string; directory: string; workingDir: string }) =>
              link.sessionOptions(
                { id: session.id, model, profile: 'readonly', cwd: session.workingDir, firstPrompt: spec.prompt },
                session.directory,
              ),
          }),
      onSession: (sessionId) => write({ type: 'run_start', session_id: sessionId }),
    });
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    await link?.close();
  }
  if (outcome === undefined) {
    write({ type: 'run_end', status: 'cancelled' });
    return 130;
  }
  if (outcome.text !== '') write({ type: 'message', role: 'assistant', content: outcome.text });
  if (outcome.error !== undefined) write({ type: 'error', content: outcome.error });
  write({ type: 'task_output', output: outcome });
  write({ type: 'run_end', status: outcome.run_status, usage: outcome.usage });
  return outcome.run_status === 'completed'
    ? 0
    : outcome.run_status === 'limit'
      ? 3
      : outcome.run_status === 'cancelled'
        ? 130
        : 1;
}

/** Opens the queue of `rho eval sql --queue` (the fleet's database, as `rho submit` finds it). */
export async function openEvalQueue(argv: QueueConnectionArguments, env: NodeJS.ProcessEnv): Promise<TaskQueue> {
  const { openQueue } = await import('./queue-actions.js');
  return openQueue(argv, env);
}
