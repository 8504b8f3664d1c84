/**
 * `@rho/tools-db/internal`: the layers under `dbTools` that bench measures apart (the bare
 * PostgreSQL driver, the tools built with test knobs such as skipping the SQL policy). No semver
 * promise: names here change or go without notice. Lint allows importing this entry only from
 * `packages/*`, `apps/*`, `bench/` and `test/`.
 */
export { createDbTools } from '../db-tools.js';
export type { DbToolsInternals } from '../db-tools.js';
export { postgresDriver } from './drivers/postgres-driver.js';
export type { DialectDriver, DriverConnection } from './driver.js';
