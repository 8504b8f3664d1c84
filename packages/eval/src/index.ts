export { compareResultSets } from './sql/compare-result-sets.js';
export type { CompareResultSetsOptions, ResultSetComparison, SqlValue } from './sql/compare-result-sets.js';
export { compareSqlEvalReports, formatSqlEvalComparison } from './sql/compare-sql-eval-reports.js';
export type { SqlAccuracyDelta, SqlEvalComparison, SqlFlip } from './sql/compare-sql-eval-reports.js';
export { runSqlEval } from './sql/run-sql-eval.js';
export type { SqlEvalEvent, SqlEvalOptions } from './sql/run-sql-eval.js';
export { createSubmitSqlTool, extractSqlAnswer, SUBMIT_SQL_TOOL_NAME } from './sql/sql-answer.js';
export type { SqlAnswer, SqlAnswerSource, SubmitSqlTool } from './sql/sql-answer.js';
export { BUNDLED_SQL_DATASETS, bundledSqlDatasetDir, loadSqlDataset, SQL_DIFFICULTIES } from './sql/sql-dataset.js';
export type { LoadSqlDatasetOptions, SqlDataset, SqlDifficulty, SqlQuestion } from './sql/sql-dataset.js';
export { SQL_EVAL_SYSTEM_PROMPT, sqlQuestionPrompt } from './sql/sql-eval-prompt.js';
export {
  buildSqlEvalReport,
  formatPercent,
  formatSqlEvalReport,
  loadSqlEvalReport,
  SQL_REPORT_FORMAT,
} from './sql/sql-eval-report.js';
export type { SqlAccuracy, SqlEvalReport, SqlFailure } from './sql/sql-eval-report.js';
export { createSqlExecutor } from './sql/sql-executor.js';
export type { SqlExecutor, SqlExecutorOptions, SqlQueryOutcome } from './sql/sql-executor.js';
export {
  createSqlResultsFile,
  readSqlResults,
  reopenSqlResultsFile,
  SQL_RESULT_STATUSES,
  SQL_RESULTS_FORMAT,
} from './sql/sql-results-file.js';
export type {
  SqlEvalUsage,
  SqlQuestionResult,
  SqlResultsContent,
  SqlResultsWriter,
  SqlResultStatus,
  SqlRunHeader,
} from './sql/sql-results-file.js';
