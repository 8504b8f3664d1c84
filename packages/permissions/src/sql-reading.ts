import type { SqlDialect } from './check-sql.js';
import type { SqlServerContext } from './internal/sql/function-policy.js';
import { lexMysql } from './internal/sql/mysql-lexer.js';
import { splitStatements } from './internal/sql/sql-lexer.js';

/** A `[start, end)` range of the statement text, in UTF-16 code units (JavaScript string offsets). */
export interface SqlSpan {
  start: number;
  end: number;
}

/** How the SQL policy reads a statement's text: the reading its decision rests on. */
export interface SqlReading {
  /** Statements in the text, or undefined when the text does not parse (PostgreSQL) or lex (MySQL). */
  statements: number | undefined;
  /**
   * What the first statement is and whether it returns rows: PostgreSQL's parse-node name
   * (`SelectStmt`, `InsertStmt`, ...) and whether it yields a result set (a SELECT without
   * INTO, EXPLAIN, SHOW, a write with RETURNING); MySQL its first keyword.
   */
  statementType?: string;
  returnsRows?: boolean;
  /** Every token (comments and whitespace excluded), in order. */
  tokens: SqlSpan[];
  /** Comments. */
  comments: SqlSpan[];
  /** String literals (with their prefix: E'', U&'', B'', X'', $tag$...$tag$ on PostgreSQL). */
  strings: SqlSpan[];
}

/**
 * The policy's own reading of `sql`: statement count, tokens, comments and strings, from the
 * same tokenizer and parser the check uses (libpg-query for PostgreSQL, MariaDB's rules for
 * MySQL under `context.sqlMode`, the default mode when unknown). The differential test compares
 * it with the real servers' reading.
 */
export async function readSql(
  sql: string,
  dialect: Extract<SqlDialect, 'postgres' | 'mysql'>,
  context: SqlServerContext = {},
): Promise<SqlReading> {
  if (dialect === 'mysql') {
    const flags = new Set((context.sqlMode ?? '').toUpperCase().split(','));
    try {
      const { tokens, comments } = lexMysql(sql, {
        backslashEscapes: !flags.has('NO_BACKSLASH_ESCAPES'),
        ansiQuotes: flags.has('ANSI_QUOTES') || flags.has('ANSI'),
      });
      return {
        statements: splitStatements(tokens).length,
        ...(tokens[0]?.kind === 'word' ? { statementType: tokens[0].text.toUpperCase() } : {}),
        tokens: tokens.map(({ start, end }) => ({ start, end })),
        comments,
        strings: tokens.filter((token) => token.kind === 'string').map(({ start, end }) => ({ start, end })),
      };
    } catch {
      return { statements: undefined, tokens: [], comments: [], strings: [] };
    }
  }
  const { postgresParser } = await import('./internal/sql/check-postgres.js');
  const parser = await postgresParser();
  // libpg-query reports UTF-8 byte offsets; map them to string offsets.
  const bytes = Buffer.from(sql, 'utf8');
  const toChar = (byte: number): number => bytes.subarray(0, byte).toString('utf8').length;
  let statements: number | undefined;
  let statementType: string | undefined;
  let returnsRows: boolean | undefined;
  try {
    const parsed = parser.parseSync(sql).stmts ?? [];
    statements = parsed.length;
    const [key, node] = Object.entries(parsed[0]?.stmt ?? {})[0] ?? [];
    if (key !== undefined) {
      const body = (node ?? {}) as { intoClause?: unknown; returningList?: unknown[] };
      statementType = key;
      returnsRows =
        (key === 'SelectStmt' && body.intoClause === undefined) ||
        key === 'ExplainStmt' ||
        key === 'VariableShowStmt' ||
        (['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt'].includes(key) &&
          (body.returningList?.length ?? 0) > 0);
    }
  } catch {
    // libpg-query refuses an empty text, which PostgreSQL reads as an empty query.
    statements = sql.trim() === '' ? 0 : undefined;
  }
  let scanned: { start: number; end: number; text: string; tokenName: string }[];
  try {
    scanned = parser.scanSync(sql).tokens;
  } catch {
    return { statements, tokens: [], comments: [], strings: [] };
  }
  const span = (token: { start: number; end: number }): SqlSpan => ({
    start: toChar(token.start),
    end: toChar(token.end),
  });
  const isComment = (name: string): boolean => name === 'SQL_COMMENT' || name === 'C_COMMENT';
  return {
    statements,
    ...(statementType === undefined ? {} : { statementType, returnsRows }),
    tokens: scanned.filter((token) => !isComment(token.tokenName)).map(span),
    comments: scanned.filter((token) => isComment(token.tokenName)).map(span),
    strings: scanned.filter((token) => /^(?:[eEbBxXnN]|[uU]&)?'|^\$/.test(token.text)).map(span),
  };
}
