export { DATABASE_TYPES, loadDatabaseConfig, parseDatabaseConfig, resolveDatabaseConfig } from './database-config.js';
export type {
  DatabaseConfig,
  DatabaseConfigSource,
  DatabaseType,
  LoadDatabaseConfigOptions,
  ParseDatabaseConfigOptions,
  ResolvedDatabaseConfig,
} from './database-config.js';
export { closeDbTools, dbTools } from './db-tools.js';
export type { DatabaseWarning, DbToolsOptions } from './db-tools.js';
export { probeDatabase } from './database-probe.js';
export type { DatabaseProbe, DatabaseProbeStatus, ProbeDatabaseOptions } from './database-probe.js';
export { ACCOUNT_CHECK_TYPES, checkDatabaseAccount } from './account-check.js';
export type { AccountCheck, AccountFinding, CheckDatabaseAccountOptions } from './account-check.js';
