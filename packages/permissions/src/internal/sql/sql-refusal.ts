import type { SqlDialect } from '../../check-sql.js';

/** Thrown inside the dialect checks to stop at the first reason for refusing. */
export class SqlRefusal extends Error {
  override name = 'SqlRefusal';

  constructor(
    readonly rule: string,
    readonly reason: string,
    readonly statementType?: string,
  ) {
    super(reason);
  }
}

const ALLOWED: Record<SqlDialect, string> = {
  postgres:
    'a single SELECT (WITH, VALUES, TABLE and set operations included), SHOW, or EXPLAIN [ANALYZE] of such a read',
  vertica: 'a single SELECT (WITH, VALUES and set operations included), SHOW, or EXPLAIN of such a read',
  mysql: 'a single SELECT (WITH and set operations included), SHOW, DESCRIBE/DESC, or EXPLAIN of a SELECT',
  sqlite:
    "a single SELECT (WITH and set operations included), VALUES, or EXPLAIN [QUERY PLAN] of such a read; for schema details query sqlite_schema or pragma table-valued functions such as SELECT * FROM pragma_table_info('Track')",
  oracle: 'a single SELECT (WITH and set operations included)',
};

/** What the model may send instead, worded for the refusal message. */
export function allowedInstead(dialect: SqlDialect): string {
  return `Only read-only queries are allowed here: ${ALLOWED[dialect]}.`;
}

/** Shortens a statement for quoting in a message. */
export function excerpt(text: string, limit = 60): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > limit ? `${flat.slice(0, limit - 1)}…` : flat;
}
