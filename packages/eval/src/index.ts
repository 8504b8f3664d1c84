export { compareResultSets } from './sql/compare-result-sets.js';
export type { CompareResultSetsOptions, ResultSetComparison, SqlValue } from './sql/compare-result-sets.js';
export { compareSqlEvalReports, formatSqlEvalComparison } from './sql/compare-sql-eval-reports.js';
export type { SqlAccuracyDelta, SqlEvalComparison, SqlFlip } from './sql/compare-sql-eval-reports.js';
export { runSqlEval } from './sql/run-sql-eval.js';
export type { SqlEvalEvent, SqlEvalOptions, SqlSessionRunner } from './sql/run-sql-eval.js';
export { runSqlQuestionSession } from './sql/sql-question-session.js';
export type { SqlQuestionSessionOptions, SqlSessionOutcome } from './sql/sql-question-session.js';
export { BUNDLED_SQL_DATASETS, bundledSqlDatasetDir, loadSqlDataset, SQL_DIFFICULTIES } from './sql/sql-dataset.js';
export type { LoadSqlDatasetOptions, SqlDataset, SqlDifficulty, SqlQuestion } from './sql/sql-dataset.js';
export {
  buildSqlEvalReport,
  formatSqlEvalReport,
  loadSqlEvalReport,
  SQL_REPORT_FORMAT,
} from './sql/sql-eval-report.js';
export type { SqlAccuracy, SqlEvalReport, SqlFailure } from './sql/sql-eval-report.js';
export { readSqlResults, SQL_RESULT_STATUSES, SQL_RESULTS_FORMAT } from './sql/sql-results-file.js';
export type {
  SqlEvalUsage,
  SqlQuestionResult,
  SqlResultsContent,
  SqlResultStatus,
  SqlRunHeader,
} from './sql/sql-results-file.js';
export { createQueuedSqlRunner, sqlQuestionTask } from './sql/queued-sql-eval.js';
export type {
  QueuedSqlClientOptions,
  QueuedSqlEvalSettings,
  QueuedSqlRunner,
  QueuedSqlRunnerHooks,
} from './sql/queued-sql-eval.js';
export { sqlTaskReport, sqlTaskSession } from './sql/sql-task.js';
export type { SqlTaskSession, SqlTaskWorker } from './sql/sql-task.js';
