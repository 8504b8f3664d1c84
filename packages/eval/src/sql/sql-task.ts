// The worker's side of a queued eval question (`rho eval sql-task --task JSON`, what `rho worker`
// runs for a task with `sql_eval`): the question's session as `runSqlQuestionSession` options,
// checked against what this worker has and allows, and what the worker reads when it ends.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '@rho/core';
import { endpointAllowed, normalEndpoint, taskClientOptions } from '@rho/queue';
import type { TaskSpec } from '@rho/queue';
import type { QueuedSqlClientOptions } from './queued-sql-eval.js';
import { BUNDLED_SQL_DATASETS, bundledSqlDatasetDir } from './sql-dataset.js';
import type { SqlQuestionSessionOptions, SqlSessionOutcome } from './sql-question-session.js';

/** What the worker brings to a queued question: see {@link sqlTaskSession}. */
export interface SqlTaskWorker {
  /**
   * The worker's own model client options, resolved by the caller (for `rho`: `OPENAI_BASE_URL`
   * and `OPENAI_API_KEY` of its environment). The task's endpoint settings (`base_url`, reasoning
   * effort, timeouts, retries) apply over them; the key is always the worker's.
   */
  clientOptions: QueuedSqlClientOptions & { apiKey?: string };
  /** The model when the task names none. */
  defaultModel: string;
  /** Endpoints a task may name besides the worker's own (`rho worker --allow-endpoint`); default none. */
  allowedEndpoints?: readonly string[];
}

/** A queued question's session, ready for `runSqlQuestionSession` once the caller adds where and how it runs. */
export type SqlTaskSession = Pick<
  SqlQuestionSessionOptions,
  | 'questionId'
  | 'dbId'
  | 'databasePath'
  | 'prompt'
  | 'model'
  | 'clientOptions'
  | 'systemPrompt'
  | 'budgets'
  | 'questionTimeoutMs'
  | 'queryTimeoutMs'
> & { model: string };

/**
 * The session of a task with `sql_eval` (checked by `parseTaskSpec` of `@rho/queue`), as it runs
 * on this worker: the database found where the task says (its `databases_dir`, or this worker's
 * copy of a bundled dataset), the model client options of the worker with the task's settings
 * over them, the budgets and timeouts of the task. Run it with `runSqlQuestionSession`, as a local
 * `rho eval sql` runs a question, and report with {@link sqlTaskReport}.
 *
 * @throws ConfigError when the task is not an eval question, names a dataset this worker does not
 * bundle, a database it does not have, or an endpoint it does not allow (the worker never sends
 * its key to an endpoint it did not configure), or when no key and no endpoint are configured.
 */
export function sqlTaskSession(spec: TaskSpec, worker: SqlTaskWorker): SqlTaskSession {
  const task = spec.sql_eval;
  if (task === undefined) throw new ConfigError({ message: 'The task has no sql_eval: it is not an eval question.' });
  const bundled = (BUNDLED_SQL_DATASETS as readonly string[]).includes(task.dataset ?? '');
  if (task.databases_dir === undefined && !bundled)
    throw new ConfigError({
      message: `Question ${task.question_id} names the dataset '${task.dataset ?? ''}', which this rho does not bundle; submit it with --worker-db-dir DIR.`,
    });
  const databasesDir =
    task.databases_dir ??
    join(bundledSqlDatasetDir(task.dataset as (typeof BUNDLED_SQL_DATASETS)[number]), 'dev_databases');
  const databasePath = join(databasesDir, task.db_id, `${task.db_id}.sqlite`);
  if (!existsSync(databasePath))
    throw new ConfigError({
      message: `The database of question ${task.question_id} is not on this worker: ${databasePath}. Copy the dataset's databases here, or tell rho eval sql --queue where the workers have them with --worker-db-dir DIR.`,
    });
  const text = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim());
  const own = worker.clientOptions;
  const named = text(task.base_url);
  // The worker refused a task whose endpoint it does not allow; the session checks again before it
  // sends the worker's key: to its own endpoint, or one the worker allows.
  if (named !== undefined) {
    const ownEndpoint = text(own.baseURL) === undefined ? undefined : normalEndpoint(text(own.baseURL)!);
    if (
      !endpointAllowed(task.base_url!, {
        endpoints: worker.allowedEndpoints ?? [],
        ...(ownEndpoint === undefined ? {} : { ownEndpoint }),
      })
    )
      throw new ConfigError({
        message: `Question ${task.question_id} names the endpoint ${task.base_url}, which this worker does not allow: it never sends its key to an endpoint it did not configure (rho worker --allow-endpoint).`,
      });
  }
  const baseURL = named ?? text(own.baseURL);
  const apiKey = text(own.apiKey);
  if (baseURL === undefined && apiKey === undefined)
    throw new ConfigError({
      message:
        'Missing API key on this worker. Set OPENAI_API_KEY (or OPENAI_BASE_URL to an endpoint that needs no key).',
    });
  return {
    questionId: task.question_id,
    dbId: task.db_id,
    databasePath,
    prompt: spec.prompt,
    model: spec.model ?? worker.defaultModel,
    clientOptions: {
      ...(baseURL === undefined ? {} : { baseURL }),
      // Local servers (vLLM, Ollama, llama.cpp) need no key, but the client requires one.
      apiKey: apiKey ?? 'no-key',
      ...taskClientOptions(task, own),
    },
    ...(task.system_prompt === undefined ? {} : { systemPrompt: task.system_prompt }),
    budgets: {
      maxTurns: spec.max_turns ?? 20,
      ...(spec.max_tokens === undefined ? {} : { maxTokens: spec.max_tokens }),
      ...(spec.max_cost === undefined ? {} : { maxCostUsd: spec.max_cost }),
    },
    questionTimeoutMs: (task.question_timeout ?? 300) * 1000,
    queryTimeoutMs: (task.query_timeout ?? 30) * 1000,
  };
}

/**
 * What a queued question's session reports to its worker once it ended, as `--json` lines the
 * worker reads (the final `message`, an `error`, `task_output` with the outcome, which the
 * submitter grades, and `run_end`), and the exit code of a run that ended so: 0 completed, 1
 * failed, 3 limit, 130 cancelled (also when the session was stopped: `outcome` undefined). The
 * session's id goes first, as `{"type": "run_start", "session_id": ...}`, once it is known.
 */
export function sqlTaskReport(outcome: SqlSessionOutcome | undefined): {
  records: Record<string, unknown>[];
  exitCode: number;
} {
  if (outcome === undefined) return { records: [{ type: 'run_end', status: 'cancelled' }], exitCode: 130 };
  const records: Record<string, unknown>[] = [];
  if (outcome.text !== '') records.push({ type: 'message', role: 'assistant', content: outcome.text });
  if (outcome.error !== undefined) records.push({ type: 'error', content: outcome.error });
  records.push({ type: 'task_output', output: outcome });
  records.push({ type: 'run_end', status: outcome.run_status, usage: outcome.usage });
  const exitCode =
    outcome.run_status === 'completed'
      ? 0
      : outcome.run_status === 'limit'
        ? 3
        : outcome.run_status === 'cancelled'
          ? 130
          : 1;
  return { records, exitCode };
}
