import { checkByTokens } from './internal/sql/check-by-tokens.js';
import type { SqlServerContext } from './internal/sql/function-policy.js';
import { SqlRefusal } from './internal/sql/sql-refusal.js';

/** The SQL dialects rho's database tools speak. */
export type SqlDialect = 'sqlite' | 'postgres' | 'mysql' | 'oracle' | 'vertica';

/** What the readonly SQL policy decided for one statement. */
export type SqlDecision =
  | {
      /** The statement is a single read. */
      allowed: true;
      /** The rule that decided (`sql.read`). */
      rule: string;
      /** What kind of read it is: `SELECT`, `VALUES`, `SHOW`, `DESCRIBE`, `EXPLAIN`, ... */
      statementType: string;
    }
  | {
      /** The statement was refused. */
      allowed: false;
      /** The rule that refused it, for example `sql.stacked-statements` or `sql.side-effect-function`. */
      rule: string;
      /** For the model: what was refused and what is allowed instead. */
      reason: string;
      /** The kind of statement, when it was recognised. */
      statementType?: string;
    };

// The parser-backed checkers load on first use. Once loaded they are kept here, so that a
// check does not pay a dynamic import() (an asynchronous module-map lookup) on every call.
let postgresChecker: typeof import('./internal/sql/check-postgres.js') | undefined;
let mysqlChecker: typeof import('./internal/sql/check-mysql.js') | undefined;

/**
 * The statement-type check of the readonly database mode: allows exactly one read (SELECT,
 * WITH without data-modifying parts, VALUES, SHOW, EXPLAIN of a read, DESCRIBE on MySQL) and
 * refuses everything else with a reason the model can act on. Decided on a parse (PostgreSQL,
 * Vertica, MySQL) or on a lexer's tokens (SQLite, Oracle), never on substrings, so words in
 * literals, quoted identifiers and comments never cause a refusal. What cannot be parsed is
 * refused. This is the model-facing layer; the database tools also run every statement in a
 * read-only session or transaction of the database itself. Parsers load on the first call.
 *
 * Function calls are allowed by an allowlist: on PostgreSQL the server's catalog in
 * `context.functions` (read once per connection by @rho/tools-db; without it, PostgreSQL's own
 * pg_catalog functions as shipped with rho), on MySQL/MariaDB and SQLite their read-only
 * built-ins. `context` also carries the lexical settings the server reads with
 * (standard_conforming_strings, sql_mode); when one is unknown, a statement that the settings
 * would split differently is refused.
 */
export async function checkSql(sql: string, dialect: SqlDialect, context: SqlServerContext = {}): Promise<SqlDecision> {
  try {
    switch (dialect) {
      case 'postgres':
      case 'vertica': {
        postgresChecker ??= await import('./internal/sql/check-postgres.js');
        return await postgresChecker.checkPostgres(sql, dialect, context);
      }
      case 'mysql': {
        mysqlChecker ??= await import('./internal/sql/check-mysql.js');
        return await mysqlChecker.checkMysql(sql, context);
      }
      case 'sqlite':
      case 'oracle':
        return checkByTokens(sql, dialect);
      default: {
        const unknown: never = dialect;
        return {
          allowed: false,
          rule: 'sql.dialect',
          reason: `Refused: unknown SQL dialect '${String(unknown)}'; expected sqlite, postgres, mysql, oracle or vertica.`,
        };
      }
    }
  } catch (error) {
    if (error instanceof SqlRefusal) {
      return error.statementType === undefined
        ? { allowed: false, rule: error.rule, reason: error.reason }
        : { allowed: false, rule: error.rule, reason: error.reason, statementType: error.statementType };
    }
    // A parser or a walk of the tree that runs out of stack: the statement was not checked, so it does not run.
    if (error instanceof RangeError) {
      return {
        allowed: false,
        rule: 'sql.too-complex',
        reason: `Refused: the statement is too long or too deeply nested to check (${error.message}). Split it into smaller queries.`,
      };
    }
    throw error;
  }
}
