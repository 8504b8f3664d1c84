import { dirname, join } from 'node:path';
import type { Budgets, ModelClient, ModelClientOptions, RunResult } from '@rho/core';
import { Agent, ConfigError, SessionStore } from '@rho/core';
import { builtinProfile } from '@rho/permissions';
import { closeDbTools, dbTools, parseDatabaseConfig } from '@rho/tools-db';
import type { CompareResultSetsOptions } from './compare-result-sets.js';
import { compareResultSets } from './compare-result-sets.js';
import { createSubmitSqlTool, extractSqlAnswer } from './sql-answer.js';
import type { SqlDataset, SqlDifficulty, SqlQuestion } from './sql-dataset.js';
import type { SqlEvalReport } from './sql-eval-report.js';
import { buildSqlEvalReport } from './sql-eval-report.js';
import type { SqlExecutor } from './sql-executor.js';
import { createSqlExecutor } from './sql-executor.js';
import { SQL_EVAL_SYSTEM_PROMPT, sqlQuestionPrompt } from './sql-eval-prompt.js';
import type { SqlQuestionResult, SqlResultsWriter, SqlRunHeader } from './sql-results-file.js';
import { createSqlResultsFile, readSqlResults, reopenSqlResultsFile, SQL_RESULTS_FORMAT } from './sql-results-file.js';

/** Progress of a run, for a progress bar: plain objects discriminated on `type`. */
export type SqlEvalEvent =
  | {
      type: 'eval_start';
      /** Questions selected for the run. */
      total: number;
      /** Questions already finished in the results file (a resumed run), not run again. */
      done: number;
      /** Correct among those. */
      correct: number;
      /** Their cost in USD. */
      cost_usd: number;
      /** Questions in flight at once. */
      concurrency: number;
      /** The results file. */
      results_path: string;
    }
  | {
      type: 'question_start';
      /** The question. */
      question_id: string;
      /** Its session's id. */
      session_id: string;
    }
  | {
      type: 'question_end';
      /** The line just appended to the results file. */
      result: SqlQuestionResult;
      /** Finished so far, resumed ones included. */
      done: number;
      /** Questions selected for the run. */
      total: number;
      /** Correct so far. */
      correct: number;
      /** Running accuracy over the finished questions. */
      accuracy: number;
      /** Running cost in USD, resumed ones included. */
      cost_usd: number;
    }
  | {
      type: 'eval_end';
      /** The report of the run (incomplete when interrupted). */
      report: SqlEvalReport;
      /** Whether `signal` stopped the run before every question was done. */
      interrupted: boolean;
    };

/** Options of {@link runSqlEval}. */
export interface SqlEvalOptions {
  /** The questions, from {@link loadSqlDataset}. */
  dataset: SqlDataset;
  /** The model name (sent to the endpoint, and priced by it). */
  model: string;
  /** How to reach an OpenAI-compatible endpoint (base URL, key, timeouts, retries). */
  clientOptions?: Omit<ModelClientOptions, 'model'>;
  /** A model client per question instead (tests, in-process engines); wins over `clientOptions`. */
  createClient?: (question: SqlQuestion) => ModelClient;
  /** The system prompt; default {@link SQL_EVAL_SYSTEM_PROMPT}. */
  systemPrompt?: string;
  /** Give BIRD's evidence (hint) with each question (default true). */
  useEvidence?: boolean;
  /** The results JSONL: created (never overwritten), or continued with `resume`. */
  resultsPath: string;
  /** Continue `resultsPath`: questions it already has are not run again, except `agent_error` ones. */
  resume?: boolean;
  /** Where each question's session directory goes (the CLI uses `$RHO_HOME/sessions`). */
  sessionsDir: string;
  /** Only the first N questions of the dataset (a resumed run keeps its own unless this is given). */
  limit?: number;
  /** Only questions of this difficulty, taken before `limit` (a resumed run keeps its own). */
  difficulty?: SqlDifficulty;
  /** Questions in flight at once (default 4). */
  concurrency?: number;
  /** Time for one question's session, in milliseconds (default 300 000). */
  questionTimeoutMs?: number;
  /** Time for one evaluation query, predicted or gold, in milliseconds (default 30 000). */
  queryTimeoutMs?: number;
  /** Budgets of each question's session (default: at most 20 model calls). */
  budgets?: Budgets;
  /** How result sets are compared (default: BIRD's set equality, reals to 6 decimals). */
  comparison?: CompareResultSetsOptions;
  /** Aborting stops the run: questions in flight are cancelled and not recorded, so a resume reruns them. */
  signal?: AbortSignal;
  /** Receives progress events. */
  onEvent?: (event: SqlEvalEvent) => void;
}

/**
 * Runs a BIRD-style execution-accuracy evaluation. Each question is its own session (profile
 * `readonly`, the `sqlite` tool on that question's database alone, and `submit_sql`), with its
 * own time limit and budgets; up to `concurrency` run at once. When a session ends, the answer is
 * taken by the convention of {@link extractSqlAnswer}, the predicted and gold queries run
 * read-only with a timeout, and their rows are compared as BIRD does. Each result is appended
 * to the results file as the question finishes, so a crashed or interrupted run resumes where
 * it stopped. Returns the report.
 */
export async function runSqlEval(options: SqlEvalOptions): Promise<SqlEvalReport> {
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 4));
  if (options.limit !== undefined && (!Number.isInteger(options.limit) || options.limit < 1))
    throw new ConfigError({ message: `limit must be a whole number of questions, 1 or more (got ${options.limit}).` });
  // Made first: it fails at once when no SQLite engine is installed, before a results file exists.
  const executor = createSqlExecutor({ timeoutMs: options.queryTimeoutMs ?? 30_000, maxProcesses: concurrency });
  const { header, finished, writer } = openResults(options);
  // A resumed run keeps the limit it was started with, unless one is given again.
  const limit = options.limit ?? header.limit;
  const difficulty = options.difficulty ?? header.difficulty;
  const eligible =
    difficulty === undefined
      ? options.dataset.questions
      : options.dataset.questions.filter((question) => question.difficulty === difficulty);
  const selected = limit === undefined ? eligible : eligible.slice(0, limit);
  const selectedIds = new Set(selected.map((question) => question.id));
  // A session that failed (model API, key, network) says nothing about the model: a resume runs
  // such questions again, and their new line supersedes the old one.
  const results = new Map(
    finished
      .filter((result) => selectedIds.has(result.question_id) && result.status !== 'agent_error')
      .map((result) => [result.question_id, result]),
  );
  const pending = selected.filter((question) => !results.has(question.id));
  const store = new SessionStore(options.sessionsDir);
  const tally = {
    correct: [...results.values()].filter((result) => result.correct).length,
    cost: [...results.values()].reduce((sum, result) => sum + result.usage.cost_usd, 0),
  };
  options.onEvent?.({
    type: 'eval_start',
    total: selected.length,
    done: results.size,
    correct: tally.correct,
    cost_usd: tally.cost,
    concurrency,
    results_path: options.resultsPath,
  });

  // A failure of the runner itself (a session directory that cannot be made) stops the other
  // workers from taking new questions; those in flight finish and are recorded first.
  let fatal: { error: unknown } | undefined;
  try {
    let next = 0;
    const worker = async () => {
      while (options.signal?.aborted !== true && fatal === undefined) {
        const question = pending[next];
        next += 1;
        if (question === undefined) return;
        let result: SqlQuestionResult | undefined;
        try {
          result = await runQuestion(question, options, store, executor);
        } catch (error) {
          fatal ??= { error };
          return;
        }
        if (result === undefined) return; // interrupted: not recorded
        writer.append(result);
        results.set(result.question_id, result);
        if (result.correct) tally.correct += 1;
        tally.cost += result.usage.cost_usd;
        options.onEvent?.({
          type: 'question_end',
          result,
          done: results.size,
          total: selected.length,
          correct: tally.correct,
          accuracy: tally.correct / results.size,
          cost_usd: tally.cost,
        });
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, pending.length)) }, worker));
  } finally {
    writer.close();
    await executor.close();
  }
  if (fatal !== undefined) throw fatal.error;
  const ordered = selected
    .map((question) => results.get(question.id))
    .filter((result): result is SqlQuestionResult => result !== undefined);
  const report = buildSqlEvalReport(header, ordered, { resultsPath: options.resultsPath, planned: selected.length });
  options.onEvent?.({ type: 'eval_end', report, interrupted: options.signal?.aborted === true });
  return report;
}

function openResults(options: SqlEvalOptions): {
  header: SqlRunHeader;
  finished: SqlQuestionResult[];
  writer: SqlResultsWriter;
} {
  if (options.resume === true) {
    const { header, results, wholeLength } = readSqlResults(options.resultsPath);
    if (header.dataset !== options.dataset.name) {
      throw new ConfigError({
        message: `${options.resultsPath} is a run of the dataset '${header.dataset}', not '${options.dataset.name}'. Resume it with --dataset ${header.dataset === 'chinook' ? 'chinook' : header.dataset_path}.`,
      });
    }
    if (header.model !== options.model) {
      throw new ConfigError({
        message: `${options.resultsPath} is a run of the model '${header.model}', not '${options.model}': mixing models would make its accuracy meaningless. Resume it with --model ${header.model}, or start a new run.`,
      });
    }
    const known = new Set(options.dataset.questions.map((question) => question.id));
    const stranger = results.find((result) => !known.has(result.question_id));
    if (stranger !== undefined)
      throw new ConfigError({
        message: `${options.resultsPath} has question ${stranger.question_id}, which the dataset ${options.dataset.path} does not: it belongs to another version of the dataset.`,
      });
    return { header, finished: results, writer: reopenSqlResultsFile(options.resultsPath, wholeLength) };
  }
  const header: SqlRunHeader = {
    type: 'run',
    format: SQL_RESULTS_FORMAT,
    dataset: options.dataset.name,
    dataset_path: options.dataset.path,
    databases_dir: options.dataset.databasesDir,
    model: options.model,
    started_at: new Date().toISOString(),
    ...(options.limit === undefined ? {} : { limit: options.limit }),
    ...(options.difficulty === undefined ? {} : { difficulty: options.difficulty }),
  };
  return { header, finished: [], writer: createSqlResultsFile(options.resultsPath, header) };
}

async function runQuestion(
  question: SqlQuestion,
  options: SqlEvalOptions,
  store: SessionStore,
  executor: SqlExecutor,
): Promise<SqlQuestionResult | undefined> {
  const started = Date.now();
  const queryTimeoutMs = options.queryTimeoutMs ?? 30_000;
  const profile = builtinProfile('readonly')!;
  const workingDir = dirname(question.databasePath);
  const systemPrompt = options.systemPrompt ?? SQL_EVAL_SYSTEM_PROMPT;
  const budgets = options.budgets ?? { maxTurns: 20 };
  const databaseEntry = {
    type: 'sqlite',
    path: question.databasePath,
    statement_timeout: Math.max(1, Math.ceil(queryTimeoutMs / 1000)),
  };
  const { id, directory } = store.create({
    config: {
      model: options.model,
      profile: profile.name,
      working_dir: workingDir,
      system_prompt: systemPrompt,
      databases: { [question.dbId]: databaseEntry },
      budgets: budgetDocument(budgets),
    },
    model: options.model,
    profile: profile.name,
    workingDir,
  });
  options.onEvent?.({ type: 'question_start', question_id: question.id, session_id: id });
  const submit = createSubmitSqlTool();
  const tools = dbTools({ profile, databases: parseDatabaseConfig({ [question.dbId]: databaseEntry }), workingDir });
  const agent = new Agent({
    systemPrompt,
    model: options.model,
    tools: [...tools, submit.tool],
    workingDir,
    budgets,
    // Unattended, as the original ran BIRD with auto-approve: nobody is there to answer, and the
    // tools are read-only by construction (the database tool runs every statement in a
    // read-only connection under the readonly profile; submit_sql only records).
    approvalPolicy: () => false,
    ...(options.createClient === undefined ? {} : { client: () => options.createClient!(question) }),
    ...(options.clientOptions === undefined ? {} : { clientOptions: options.clientOptions }),
  });
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, options.questionTimeoutMs ?? 300_000);
  const stop = () => controller.abort();
  options.signal?.addEventListener('abort', stop, { once: true });
  let run: RunResult | undefined;
  let failure: string | undefined;
  try {
    // Should a tool still ask for approval of its own, the unattended run grants it.
    run = await agent
      .createSession({ id, directory, approver: () => true })
      .run(sqlQuestionPrompt(question, { evidence: options.useEvidence !== false }), { signal: controller.signal });
  } catch (error) {
    failure = error instanceof Error ? error.message : String(error);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', stop);
    await closeDbTools(tools);
  }
  if (options.signal?.aborted === true && !timedOut) return undefined;

  const usage = run?.usage ?? { input_tokens: 0, output_tokens: 0, cached_tokens: 0, reasoning_tokens: 0, cost_usd: 0 };
  const base = {
    type: 'result' as const,
    question_id: question.id,
    db_id: question.dbId,
    difficulty: question.difficulty,
    question: question.question,
    gold_sql: question.goldSql,
    session_id: id,
    trace_path: join(directory, 'trace.jsonl'),
    run_status: timedOut ? ('timeout' as const) : (run?.status ?? 'error'),
    usage: {
      input_tokens: usage.input_tokens,
      output_tokens: usage.output_tokens,
      cached_tokens: usage.cached_tokens,
      reasoning_tokens: usage.reasoning_tokens,
      cost_usd: usage.cost_usd,
    },
  };
  const finish = (
    fields: Pick<SqlQuestionResult, 'status' | 'correct' | 'predicted_sql' | 'answer_source'> & { detail?: string },
  ): SqlQuestionResult => ({
    ...base,
    ...fields,
    duration_ms: Date.now() - started,
    finished_at: new Date().toISOString(),
  });

  // The last submission counts even when the session then ran out of time or budget.
  const answer = extractSqlAnswer(run?.text ?? '', submit.submitted());
  if (answer === undefined) {
    if (timedOut)
      return finish({
        status: 'agent_timeout',
        correct: false,
        predicted_sql: null,
        answer_source: null,
        detail: `no answer within ${(options.questionTimeoutMs ?? 300_000) / 1000} s`,
      });
    if (failure !== undefined || run?.status === 'error')
      return finish({
        status: 'agent_error',
        correct: false,
        predicted_sql: null,
        answer_source: null,
        detail: failure ?? run?.error?.message ?? 'the session failed',
      });
    if (run?.status === 'limit')
      return finish({
        status: 'limit',
        correct: false,
        predicted_sql: null,
        answer_source: null,
        detail: `a budget ended the session before an answer${run.limit === undefined ? '' : ` (${run.limit})`}`,
      });
    return finish({
      status: 'no_answer',
      correct: false,
      predicted_sql: null,
      answer_source: null,
      detail: 'the agent neither called submit_sql nor ended its answer with a ```sql block',
    });
  }
  const answered = { predicted_sql: answer.sql, answer_source: answer.source };
  const gold = await executor.run(question.databasePath, question.goldSql);
  if (!gold.ok)
    return finish({
      status: 'gold_error',
      correct: false,
      ...answered,
      detail: `gold query ${gold.kind === 'timeout' ? 'timed out' : 'failed'} (a dataset problem): ${gold.message}`,
    });
  const predicted = await executor.run(question.databasePath, answer.sql);
  if (!predicted.ok)
    return finish({
      status: predicted.kind === 'timeout' ? 'predicted_timeout' : 'predicted_error',
      correct: false,
      ...answered,
      detail: predicted.message,
    });
  const comparison = compareResultSets(predicted.rows, gold.rows, options.comparison);
  return comparison.equal
    ? finish({ status: 'correct', correct: true, ...answered })
    : finish({ status: 'incorrect', correct: false, ...answered, detail: comparison.reason ?? 'the rows differ' });
}

function budgetDocument(budgets: Budgets): Record<string, number> {
  const entries = Object.entries({
    max_turns: budgets.maxTurns,
    max_tokens: budgets.maxTokens,
    max_cost_usd: budgets.maxCostUsd,
    max_duration_ms: budgets.maxDurationMs,
  });
  return Object.fromEntries(entries.filter((entry): entry is [string, number] => entry[1] !== undefined));
}
