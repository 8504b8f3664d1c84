/**
 * `@rho/permissions/internal`: the halves of the shell and SQL policies that rho's own tools apply
 * (the bash tool's hardening and sandbox plumbing, the database tools' function catalog and SQL
 * reading) and the restricted environment bench uses. No semver promise: names here change or go
 * without notice. Lint allows importing this entry only from `packages/*`, `apps/*`, `bench/` and
 * `test/`.
 */
export { hardenPlan, scrubEnvironment } from '../harden-plan.js';
export type { HardenedPlan } from '../harden-plan.js';
export { commandNeedsNetwork, sandboxModeOf, sandboxOffWarning } from '../sandbox-wrapper.js';
export type { SandboxLookupOptions } from '../sandbox-wrapper.js';
export { bubblewrapBoundsTmpfs } from '../sandbox-limits.js';
export { buildFunctionCatalog, buildPostgresObjects } from './sql/function-policy.js';
export type {
  PostgresObjects,
  PostgresOperatorRow,
  PostgresRelationRow,
  PostgresTypeRow,
  SqlFunctionCatalog,
  SqlFunctionRow,
  SqlServerContext,
} from './sql/function-policy.js';
export { readSql } from '../sql-reading.js';
export type { SqlReading, SqlSpan } from '../sql-reading.js';
