import { existsSync, readFileSync } from 'node:fs';
import { ConfigError } from '@rho/core';
import { table } from './internal/text-table.js';
import type { SqlEvalUsage, SqlQuestionResult, SqlResultStatus, SqlRunHeader } from './sql-results-file.js';
import { readSqlResults, SQL_RESULT_STATUSES } from './sql-results-file.js';

/** Format tag of a report. */
export const SQL_REPORT_FORMAT = 'rho-sql-eval-report/1';

/** Accuracy of a group of questions. */
export interface SqlAccuracy {
  /** Questions with a result. */
  total: number;
  /** Questions answered correctly. */
  correct: number;
  /** correct / total, 0 when there is none. */
  accuracy: number;
}

/** A question that was not answered correctly, with what is needed to see why. */
export interface SqlFailure {
  /** The dataset's `question_id`. */
  question_id: string;
  /** The dataset's `db_id`. */
  db_id: string;
  /** The difficulty label. */
  difficulty: string;
  /** The question's text. */
  question: string;
  /** How it ended. */
  status: SqlResultStatus;
  /** Why it is not correct. */
  detail?: string;
  /** The evaluated query, or null when there was none. */
  predicted_sql: string | null;
  /** The gold query. */
  gold_sql: string;
  /** The question's session id (`rho export <id>`). */
  session_id: string;
  /** The session's `trace.jsonl`. */
  trace_path: string;
  /** The queue worker's host that ran the session, for a question run through the queue. */
  host?: string;
}

/** The report of a run: accuracy, cost and failures. */
export interface SqlEvalReport {
  /** {@link SQL_REPORT_FORMAT}. */
  format: string;
  /** Dataset name. */
  dataset: string;
  /** The model the questions were put to. */
  model: string;
  /** When the run was first started (UTC ISO-8601). */
  started_at: string;
  /** The results file the report was made from. */
  results_path: string;
  /** Questions selected for the run (the dataset, or its first `--limit`). */
  planned: number;
  /** Whether every planned question has a result. */
  complete: boolean;
  /** Accuracy over the questions with a result. */
  overall: SqlAccuracy;
  /** Accuracy by difficulty label, in BIRD's order (`unlabelled` last, when present). */
  by_difficulty: Record<string, SqlAccuracy>;
  /** How many questions ended each way. */
  statuses: Record<SqlResultStatus, number>;
  /** Tokens and cost of all sessions. */
  usage: SqlEvalUsage;
  /** Sum of the questions' times, in milliseconds (more than the wall-clock time when questions ran concurrently). */
  question_time_ms: number;
  /** Every question not answered correctly. */
  failures: SqlFailure[];
  /** Every question's outcome, for comparing runs. */
  questions: { question_id: string; difficulty: string; status: SqlResultStatus; correct: boolean }[];
}

const DIFFICULTY_ORDER = ['simple', 'moderate', 'challenging'];

/** Builds the report of a run from its results. */
export function buildSqlEvalReport(
  header: SqlRunHeader,
  unordered: readonly SqlQuestionResult[],
  options: { resultsPath: string; planned?: number },
): SqlEvalReport {
  // Results are written as questions finish; reports list them by id, so two reports of the
  // same results (one returned by the run, one rebuilt from its file) are equal.
  const results = [...unordered].sort((a, b) => a.question_id.localeCompare(b.question_id, 'en', { numeric: true }));
  const planned = options.planned ?? results.length;
  const statuses = Object.fromEntries(SQL_RESULT_STATUSES.map((status) => [status, 0])) as Record<
    SqlResultStatus,
    number
  >;
  const usage: SqlEvalUsage = { input_tokens: 0, output_tokens: 0, cached_tokens: 0, reasoning_tokens: 0, cost_usd: 0 };
  const groups = new Map<string, SqlQuestionResult[]>();
  let questionTime = 0;
  for (const result of results) {
    statuses[result.status] += 1;
    usage.input_tokens += result.usage.input_tokens;
    usage.output_tokens += result.usage.output_tokens;
    usage.cached_tokens += result.usage.cached_tokens;
    usage.reasoning_tokens += result.usage.reasoning_tokens;
    usage.cost_usd += result.usage.cost_usd;
    questionTime += result.duration_ms;
    groups.set(result.difficulty, [...(groups.get(result.difficulty) ?? []), result]);
  }
  usage.cost_usd = Math.round(usage.cost_usd * 1e8) / 1e8;
  const rank = (label: string) =>
    DIFFICULTY_ORDER.includes(label) ? DIFFICULTY_ORDER.indexOf(label) : DIFFICULTY_ORDER.length;
  const labels = [...groups.keys()].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  return {
    format: SQL_REPORT_FORMAT,
    dataset: header.dataset,
    model: header.model,
    started_at: header.started_at,
    results_path: options.resultsPath,
    planned,
    complete: results.length >= planned,
    overall: accuracyOf(results),
    by_difficulty: Object.fromEntries(labels.map((label) => [label, accuracyOf(groups.get(label) ?? [])])),
    statuses,
    usage,
    question_time_ms: questionTime,
    failures: results
      .filter((result) => !result.correct)
      .map((result) => ({
        question_id: result.question_id,
        db_id: result.db_id,
        difficulty: result.difficulty,
        question: result.question,
        status: result.status,
        ...(result.detail === undefined ? {} : { detail: result.detail }),
        predicted_sql: result.predicted_sql,
        gold_sql: result.gold_sql,
        session_id: result.session_id,
        trace_path: result.trace_path,
        ...(result.host === undefined ? {} : { host: result.host }),
      })),
    questions: results.map((result) => ({
      question_id: result.question_id,
      difficulty: result.difficulty,
      status: result.status,
      correct: result.correct,
    })),
  };
}

function accuracyOf(results: readonly SqlQuestionResult[]): SqlAccuracy {
  const correct = results.filter((result) => result.correct).length;
  return { total: results.length, correct, accuracy: results.length === 0 ? 0 : correct / results.length };
}

/**
 * Reads a report for `--compare`: a report JSON written by `rho eval sql`, or a results JSONL
 * (whose report is rebuilt from its lines).
 */
export function loadSqlEvalReport(path: string): SqlEvalReport {
  if (!existsSync(path))
    throw new ConfigError({
      message: `Report not found: ${path}. Pass a report JSON or a results JSONL written by rho eval sql.`,
    });
  const text = readFileSync(path, 'utf8');
  const firstLine = text.slice(0, text.indexOf('\n') === -1 ? text.length : text.indexOf('\n'));
  try {
    const first = JSON.parse(firstLine) as { type?: string };
    if (first.type === 'run') {
      const { header, results } = readSqlResults(path);
      return buildSqlEvalReport(header, results, { resultsPath: path });
    }
  } catch (error) {
    if (ConfigError.isInstance(error)) throw error;
    // not one JSON line: a pretty-printed report
  }
  let report: unknown;
  try {
    report = JSON.parse(text);
  } catch {
    throw new ConfigError({ message: `${path} is neither a report JSON nor a results JSONL of rho eval sql.` });
  }
  if (typeof report !== 'object' || report === null || (report as { format?: unknown }).format !== SQL_REPORT_FORMAT) {
    throw new ConfigError({ message: `${path} is not a '${SQL_REPORT_FORMAT}' report.` });
  }
  return report as SqlEvalReport;
}

/** Percent with one decimal: `62.5%`. */
export function formatPercent(value: number): string {
  return `${(value * 100).toFixed(1)}%`;
}

/** A plain-text table of a report: accuracy by difficulty, statuses, usage and the failures. */
export function formatSqlEvalReport(report: SqlEvalReport, options: { failures?: number } = {}): string {
  const lines: string[] = [];
  lines.push(
    `rho eval sql: ${report.dataset} with ${report.model}${report.complete ? '' : ` (incomplete: ${report.overall.total} of ${report.planned} questions)`}`,
  );
  lines.push('');
  const rows = [
    ['difficulty', 'questions', 'correct', 'accuracy'],
    ...Object.entries(report.by_difficulty).map(([label, accuracy]) => [
      label,
      String(accuracy.total),
      String(accuracy.correct),
      formatPercent(accuracy.accuracy),
    ]),
    ['overall', String(report.overall.total), String(report.overall.correct), formatPercent(report.overall.accuracy)],
  ];
  lines.push(...table(rows, [false, true, true, true]));
  lines.push('');
  const counted = Object.entries(report.statuses).filter(([, count]) => count > 0);
  lines.push(`outcomes: ${counted.map(([status, count]) => `${status} ${count}`).join(', ') || 'none'}`);
  const usage = report.usage;
  lines.push(
    `tokens: ${usage.input_tokens} in (${usage.cached_tokens} cached), ${usage.output_tokens} out (${usage.reasoning_tokens} reasoning); cost $${usage.cost_usd.toFixed(4)}`,
  );
  lines.push(`results: ${report.results_path}`);
  const limit = options.failures ?? 20;
  if (report.failures.length > 0) {
    lines.push('');
    lines.push(`failures (${report.failures.length}${report.failures.length > limit ? `, first ${limit}` : ''}):`);
    for (const failure of report.failures.slice(0, limit)) {
      lines.push(
        `- [${failure.question_id}] ${failure.difficulty} ${failure.status}: ${oneLine(failure.question, 100)}`,
      );
      if (failure.detail !== undefined) lines.push(`    why:       ${oneLine(failure.detail, 160)}`);
      lines.push(`    predicted: ${failure.predicted_sql === null ? '(none)' : oneLine(failure.predicted_sql, 160)}`);
      lines.push(`    gold:      ${oneLine(failure.gold_sql, 160)}`);
      lines.push(
        `    session:   ${failure.session_id} (${failure.host === undefined ? '' : `on ${failure.host}: `}${failure.trace_path})`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 3)}...` : flat;
}
