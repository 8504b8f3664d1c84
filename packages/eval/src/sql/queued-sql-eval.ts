// An eval run through the task queue (`rho eval sql --queue`): each question becomes a task; a
// worker runs its session as a local run does (see sql-task.ts) and reports the outcome, which the
// submitter grades as a local run does (`runSqlEval({ runSession })`).
import type { ModelClientOptions } from '@rho/core';
import type { SqlEvalTask, TaskQueue, TaskRecord, TaskSpec } from '@rho/queue';
import { taskClientFields } from '@rho/queue';
import type { SqlSessionRunner } from './run-sql-eval.js';
import type { SqlDataset, SqlQuestion } from './sql-dataset.js';
import type { SqlSessionOutcome } from './sql-question-session.js';

/**
 * The model client options a queued question carries to the worker, resolved by the submitter (the
 * flags it was given). Never an API key: each worker calls the model with its own key, and with its
 * own endpoint unless `baseURL` is given.
 */
export type QueuedSqlClientOptions = Pick<
  ModelClientOptions,
  'baseURL' | 'reasoningEffort' | 'firstByteTimeoutMs' | 'idleTimeoutMs' | 'maxRetries'
>;

/** What each question's task carries besides the question; see {@link createQueuedSqlRunner}. */
export interface QueuedSqlEvalSettings {
  dataset: SqlDataset;
  /** Whether the dataset is a bundled one loaded from rho's own copy (workers then use theirs). */
  bundled: boolean;
  /** The databases folder on the workers (default: the dataset's own path, for a shared or identical layout). */
  workerDatabasesDir?: string;
  model: string;
  /** Labels of the tasks besides `eval` (to route them to workers). */
  labels: readonly string[];
  /** Priority of the tasks (higher first). */
  priority?: number;
  maxTurns: number;
  maxTokens?: number;
  maxCost?: number;
  questionTimeoutSeconds: number;
  queryTimeoutSeconds: number;
  /** The system prompt's text (a path would name the submitter's file). */
  systemPrompt?: string;
  /** The model client options the workers use besides their own key (and endpoint). */
  clientOptions?: QueuedSqlClientOptions;
}

/** The task of one question (`prompt` is its task text, so `rho tasks` shows it). */
export function sqlQuestionTask(question: SqlQuestion, prompt: string, settings: QueuedSqlEvalSettings): TaskSpec {
  const where: Partial<Pick<SqlEvalTask, 'databases_dir' | 'dataset'>> =
    settings.workerDatabasesDir !== undefined
      ? { databases_dir: settings.workerDatabasesDir }
      : settings.bundled
        ? { dataset: settings.dataset.name }
        : { databases_dir: settings.dataset.databasesDir };
  const optional = <K extends string, V>(key: K, value: V | undefined) =>
    value === undefined ? {} : ({ [key]: value } as Record<K, V>);
  const client = settings.clientOptions ?? {};
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
      ...taskClientFields(client),
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

/** Hooks of {@link createQueuedSqlRunner}. */
export interface QueuedSqlRunnerHooks {
  /** Told the ids of each submission (the questions asked for in one tick). */
  onSubmitted?: (ids: string[]) => void;
  /** Told what the user should know (the queue did not answer; it is tried again). */
  onWarning?: (message: string) => void;
  /** How often the unfinished tasks are looked up, in ms (default 1,000). */
  pollMs?: number;
}

/** A runner submitting questions as tasks and following them; see {@link createQueuedSqlRunner}. */
export interface QueuedSqlRunner {
  /** Give it to `runSqlEval` as `runSession`. */
  runSession: SqlSessionRunner;
  /** Tasks submitted so far. */
  submitted(): number;
  /** Stops following (cancelling what is still queued or running when `cancel`) and closes the queue. */
  close(options?: { cancel?: boolean }): Promise<void>;
}

/**
 * Submits each question handed to `runSession` as a task (those asked for in the same tick in one
 * transaction), follows them with one poll for all, and answers each with its session's outcome
 * as the worker reported it (a task that ended without one, cancelled, expired or lost, is a
 * failed session naming the task, so `--resume` runs it again). Aborting the eval's signal cancels
 * every task not final yet. The queue is the caller's (`createTaskQueue` of `@rho/queue`); `close`
 * closes it.
 */
export function createQueuedSqlRunner(
  queue: TaskQueue,
  settings: QueuedSqlEvalSettings,
  hooks: QueuedSqlRunnerHooks = {},
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
          spec: sqlQuestionTask(question, context.prompt, settings),
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
