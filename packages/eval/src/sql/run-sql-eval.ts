import type { Budgets, ModelClient, ModelClientOptions, SecretRedactor } from '@rho/core';
import { ConfigError } from '@rho/core';
import type { CompareResultSetsOptions } from './compare-result-sets.js';
import { compareResultSets } from './compare-result-sets.js';
import { extractSqlAnswer } from './sql-answer.js';
import type { SqlDataset, SqlDifficulty, SqlQuestion } from './sql-dataset.js';
import type { SqlEvalReport } from './sql-eval-report.js';
import { buildSqlEvalReport } from './sql-eval-report.js';
import type { SqlExecutor } from './sql-executor.js';
import { createSqlExecutor } from './sql-executor.js';
import { sqlQuestionPrompt } from './sql-eval-prompt.js';
import type { SqlSessionOutcome } from './sql-question-session.js';
import { runSqlQuestionSession } from './sql-question-session.js';
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
  /**
   * Runs a question's session somewhere else (`rho eval sql --queue`: a task for the queue's
   * workers) instead of in this process. It gets the task text and reports how the session
   * ended; the grading is the same. `undefined` means it was stopped by `signal`.
   */
  runSession?: SqlSessionRunner;
  /** Secrets the model and the traces of the questions' sessions must not see. */
  redactor?: SecretRedactor;
}

/** Runs one question's session and reports its outcome; see {@link SqlEvalOptions.runSession}. */
export type SqlSessionRunner = (
  question: SqlQuestion,
  context: {
    /** The task text (the question, its hint unless left out, the database). */
    prompt: string;
    /** Stops the run: the session is cancelled and the result is `undefined`. */
    signal?: AbortSignal;
    /** Call once the session exists (its id is shown as the question's start). */
    onSession(sessionId: string): void;
  },
) => Promise<SqlSessionOutcome | undefined>;

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
  // Grading runs a few queries at a time however many questions are in flight (a queued run has
  // them all in flight at once).
  const executor = createSqlExecutor({
    timeoutMs: options.queryTimeoutMs ?? 30_000,
    maxProcesses: Math.min(concurrency, 8),
  });
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
        const onSession = (sessionId: string) =>
          options.onEvent?.({ type: 'question_start', question_id: question.id, session_id: sessionId });
        try {
          result = await runQuestion(question, options, executor, onSession);
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

/** Runs one question's session (here, or through `runSession`), then grades its answer. */
async function runQuestion(
  question: SqlQuestion,
  options: SqlEvalOptions,
  executor: SqlExecutor,
  onSession: (sessionId: string) => void,
): Promise<SqlQuestionResult | undefined> {
  const prompt = sqlQuestionPrompt(question, { evidence: options.useEvidence !== false });
  const outcome =
    options.runSession === undefined
      ? await runSqlQuestionSession({
          questionId: question.id,
          dbId: question.dbId,
          databasePath: question.databasePath,
          prompt,
          model: options.model,
          ...(options.clientOptions === undefined ? {} : { clientOptions: options.clientOptions }),
          ...(options.createClient === undefined ? {} : { createClient: () => options.createClient!(question) }),
          ...(options.systemPrompt === undefined ? {} : { systemPrompt: options.systemPrompt }),
          budgets: options.budgets ?? { maxTurns: 20 },
          questionTimeoutMs: options.questionTimeoutMs ?? 300_000,
          queryTimeoutMs: options.queryTimeoutMs ?? 30_000,
          sessionsDir: options.sessionsDir,
          ...(options.signal === undefined ? {} : { signal: options.signal }),
          ...(options.redactor === undefined ? {} : { redactor: options.redactor }),
          onSession,
        })
      : await options.runSession(question, {
          prompt,
          onSession,
          ...(options.signal === undefined ? {} : { signal: options.signal }),
        });
  if (outcome === undefined || (options.signal?.aborted === true && outcome.run_status !== 'timeout')) return undefined;
  return gradeSqlQuestion(question, outcome, executor, options);
}

/**
 * Grades a question from its session's outcome, wherever the session ran: the answer is taken by
 * the convention of {@link extractSqlAnswer}, the gold and predicted queries run read-only with a
 * timeout, and their rows are compared as BIRD does.
 */
async function gradeSqlQuestion(
  question: SqlQuestion,
  outcome: SqlSessionOutcome,
  executor: SqlExecutor,
  options: Pick<SqlEvalOptions, 'questionTimeoutMs' | 'comparison'>,
): Promise<SqlQuestionResult> {
  const started = Date.now();
  const base = {
    type: 'result' as const,
    question_id: question.id,
    db_id: question.dbId,
    difficulty: question.difficulty,
    question: question.question,
    gold_sql: question.goldSql,
    session_id: outcome.session_id,
    trace_path: outcome.trace_path,
    ...(outcome.host === undefined ? {} : { host: outcome.host }),
    run_status: outcome.run_status,
    usage: outcome.usage,
  };
  const finish = (
    fields: Pick<SqlQuestionResult, 'status' | 'correct' | 'predicted_sql' | 'answer_source'> & { detail?: string },
  ): SqlQuestionResult => ({
    ...base,
    ...fields,
    duration_ms: outcome.duration_ms + (Date.now() - started),
    finished_at: new Date().toISOString(),
  });

  // The last submission counts even when the session then ran out of time or budget.
  const answer = extractSqlAnswer(outcome.text, outcome.submitted_sql);
  if (answer === undefined) {
    if (outcome.run_status === 'timeout')
      return finish({
        status: 'agent_timeout',
        correct: false,
        predicted_sql: null,
        answer_source: null,
        detail: `no answer within ${(options.questionTimeoutMs ?? 300_000) / 1000} s`,
      });
    if (outcome.run_status === 'error')
      return finish({
        status: 'agent_error',
        correct: false,
        predicted_sql: null,
        answer_source: null,
        detail: outcome.error ?? 'the session failed',
      });
    if (outcome.run_status === 'limit')
      return finish({
        status: 'limit',
        correct: false,
        predicted_sql: null,
        answer_source: null,
        detail: `a budget ended the session before an answer${outcome.limit === undefined ? '' : ` (${outcome.limit})`}`,
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
