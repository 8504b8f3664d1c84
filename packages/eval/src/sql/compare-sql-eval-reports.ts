import type { SqlEvalReport } from './sql-eval-report.js';
import { formatPercent } from './sql-eval-report.js';
import type { SqlResultStatus } from './sql-results-file.js';
import { table } from './internal/text-table.js';

/** A question whose outcome differs between two runs. */
export interface SqlFlip {
  /** The question. */
  question_id: string;
  /** Its difficulty label. */
  difficulty: string;
  /** Outcome in the first run. */
  before: SqlResultStatus;
  /** Outcome in the second run. */
  after: SqlResultStatus;
}

/** Accuracy of one group in both runs, over the questions both runs answered. */
export interface SqlAccuracyDelta {
  /** Questions present in both runs. */
  questions: number;
  /** Accuracy of the first run. */
  before: number;
  /** Accuracy of the second run. */
  after: number;
  /** after - before, in accuracy points (0.05 = five percentage points). */
  delta: number;
}

/** How two runs differ. */
export interface SqlEvalComparison {
  /** The first run (A). */
  before: { dataset: string; model: string; results_path: string };
  /** The second run (B). */
  after: { dataset: string; model: string; results_path: string };
  /** Over the questions both runs have, so an incomplete run compares fairly. */
  overall: SqlAccuracyDelta;
  /** The same, by difficulty label. */
  by_difficulty: Record<string, SqlAccuracyDelta>;
  /** Wrong before, right after. */
  fixed: SqlFlip[];
  /** Right before, wrong after. */
  broken: SqlFlip[];
  /** Question ids only the first run has. */
  only_before: string[];
  /** Question ids only the second run has. */
  only_after: string[];
  /** Cost of each run, in USD. */
  cost_usd: { before: number; after: number };
}

/** Compares two reports question by question: flips and accuracy deltas. */
export function compareSqlEvalReports(before: SqlEvalReport, after: SqlEvalReport): SqlEvalComparison {
  const afterById = new Map(after.questions.map((question) => [question.question_id, question]));
  const beforeIds = new Set(before.questions.map((question) => question.question_id));
  const shared = before.questions
    .filter((question) => afterById.has(question.question_id))
    .map((question) => ({ before: question, after: afterById.get(question.question_id)! }));
  const delta = (pairs: typeof shared): SqlAccuracyDelta => {
    const count = pairs.length;
    const beforeAccuracy = count === 0 ? 0 : pairs.filter((pair) => pair.before.correct).length / count;
    const afterAccuracy = count === 0 ? 0 : pairs.filter((pair) => pair.after.correct).length / count;
    return { questions: count, before: beforeAccuracy, after: afterAccuracy, delta: afterAccuracy - beforeAccuracy };
  };
  const labels = [...new Set(shared.map((pair) => pair.before.difficulty))];
  const flip = (pair: (typeof shared)[number]): SqlFlip => ({
    question_id: pair.before.question_id,
    difficulty: pair.before.difficulty,
    before: pair.before.status,
    after: pair.after.status,
  });
  return {
    before: { dataset: before.dataset, model: before.model, results_path: before.results_path },
    after: { dataset: after.dataset, model: after.model, results_path: after.results_path },
    overall: delta(shared),
    by_difficulty: Object.fromEntries(
      labels.map((label) => [label, delta(shared.filter((pair) => pair.before.difficulty === label))]),
    ),
    fixed: shared.filter((pair) => !pair.before.correct && pair.after.correct).map(flip),
    broken: shared.filter((pair) => pair.before.correct && !pair.after.correct).map(flip),
    only_before: before.questions
      .filter((question) => !afterById.has(question.question_id))
      .map((question) => question.question_id),
    only_after: after.questions
      .filter((question) => !beforeIds.has(question.question_id))
      .map((question) => question.question_id),
    cost_usd: { before: before.usage.cost_usd, after: after.usage.cost_usd },
  };
}

/** A plain-text table of a comparison. */
export function formatSqlEvalComparison(comparison: SqlEvalComparison): string {
  const points = (value: number) => `${value >= 0 ? '+' : ''}${(value * 100).toFixed(1)}`;
  const lines = [
    `A: ${comparison.before.model} (${comparison.before.results_path})`,
    `B: ${comparison.after.model} (${comparison.after.results_path})`,
    '',
  ];
  const rows = [['difficulty', 'questions', 'A', 'B', 'delta (points)']];
  for (const [label, entry] of [
    ...Object.entries(comparison.by_difficulty),
    ['overall', comparison.overall] as const,
  ]) {
    rows.push([
      label,
      String(entry.questions),
      formatPercent(entry.before),
      formatPercent(entry.after),
      points(entry.delta),
    ]);
  }
  lines.push(...table(rows, [false, true, true, true, true]), '');
  lines.push(`cost: A $${comparison.cost_usd.before.toFixed(4)}, B $${comparison.cost_usd.after.toFixed(4)}`);
  lines.push(
    `fixed in B (${comparison.fixed.length}): ${comparison.fixed.map((flip) => `${flip.question_id} (${flip.before})`).join(', ') || 'none'}`,
  );
  lines.push(
    `broken in B (${comparison.broken.length}): ${comparison.broken.map((flip) => `${flip.question_id} (${flip.after})`).join(', ') || 'none'}`,
  );
  if (comparison.only_before.length > 0) lines.push(`only in A: ${comparison.only_before.join(', ')}`);
  if (comparison.only_after.length > 0) lines.push(`only in B: ${comparison.only_after.join(', ')}`);
  return `${lines.join('\n')}\n`;
}
