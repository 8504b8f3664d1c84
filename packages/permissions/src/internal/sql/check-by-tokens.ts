import type { SqlDecision } from '../../check-sql.js';
import { judgeSqliteFunction } from './function-policy.js';
import { isSideEffectFunction, isSideEffectTable } from './side-effect-functions.js';
import {
  ORACLE_LEXICAL_RULES,
  SQLITE_LEXICAL_RULES,
  SqlLexError,
  keyword,
  splitStatements,
  tokenizeSql,
} from './sql-lexer.js';
import type { SqlToken } from './sql-lexer.js';
import { SqlRefusal, allowedInstead, excerpt } from './sql-refusal.js';

// SQLite and Oracle are checked on tokens from a real lexer (literals, quoted identifiers and
// comments are single tokens or skipped), not on a full grammar: node-sql-parser's SQLite
// grammar rejects ordinary reads (VALUES, EXCEPT, WINDOW, FILTER, [name], EXPLAIN) and it has
// no Oracle grammar. The check is: one statement, a read keyword first, no write keyword
// anywhere (these words are reserved in both dialects, so outside literals they are keywords),
// and no call of a deny-listed function.

type TokenDialect = 'sqlite' | 'oracle';

const READ_START: Record<TokenDialect, ReadonlySet<string>> = {
  sqlite: new Set(['SELECT', 'WITH', 'VALUES']),
  oracle: new Set(['SELECT', 'WITH']),
};

// Reserved words that only ever introduce or belong to writes. `REPLACE` is handled apart: in
// SQLite `replace(x, y, z)` is a string function.
const WRITE_WORDS: Record<TokenDialect, ReadonlySet<string>> = {
  sqlite: new Set(['INSERT', 'UPDATE', 'DELETE', 'DROP', 'CREATE', 'ALTER', 'RETURNING']),
  oracle: new Set([
    'INSERT',
    'UPDATE',
    'DELETE',
    'MERGE',
    'DROP',
    'CREATE',
    'ALTER',
    'TRUNCATE',
    'GRANT',
    'REVOKE',
    'LOCK',
    'INTO',
  ]),
};

// Why a statement kind is refused, when the word alone would not tell the model.
const STATEMENT_NOTES: Record<string, string> = {
  PRAGMA: ' (some pragmas write, so no PRAGMA statement is allowed)',
  BEGIN: ' (transaction control)',
  COMMIT: ' (transaction control)',
  END: ' (transaction control)',
  ROLLBACK: ' (transaction control)',
  DECLARE: ' (a PL/SQL block)',
  EXPLAIN: ' (EXPLAIN PLAN writes into PLAN_TABLE)',
  DESCRIBE: ' (DESCRIBE is a SQL*Plus command, not SQL; query ALL_TAB_COLUMNS instead)',
  DESC: ' (DESCRIBE is a SQL*Plus command, not SQL; query ALL_TAB_COLUMNS instead)',
};

function isPunct(token: SqlToken | undefined, text: string): boolean {
  return token?.kind === 'punct' && token.text === text;
}

/** Components a name is read back to: no dialect has more than database.schema.package.function. */
const MAX_NAME_PARTS = 4;

/**
 * The dotted name ending at `index` (a word or quoted identifier), first component first, at most
 * {@link MAX_NAME_PARTS} components: every word before `.` or `(` is visited as the end of a name,
 * so a longer chain loses nothing, and `"a"."b"."a"...` (50,000 components) no longer takes
 * quadratic time per word (it held the event loop for minutes).
 */
function qualifiedName(tokens: readonly SqlToken[], index: number): string[] {
  const parts: string[] = [];
  let position = index;
  while (position >= 0 && parts.length < MAX_NAME_PARTS) {
    const token = tokens[position];
    if (token === undefined || (token.kind !== 'word' && token.kind !== 'quoted')) break;
    parts.push(token.text);
    if (!isPunct(tokens[position - 1], '.')) break;
    position -= 2;
  }
  return parts.reverse();
}

// SQLite keywords that may be followed by `(` without being a function call.
const SQLITE_NOT_CALLS = new Set([
  'IN',
  'EXISTS',
  'AS',
  'OVER',
  'FILTER',
  'USING',
  'ON',
  'AND',
  'OR',
  'NOT',
  'WHERE',
  'FROM',
  'JOIN',
  'SELECT',
  'UNION',
  'INTERSECT',
  'EXCEPT',
  'ALL',
  'DISTINCT',
  'CASE',
  'WHEN',
  'THEN',
  'ELSE',
  'LIKE',
  'GLOB',
  'MATCH',
  'REGEXP',
  'BETWEEN',
  'IS',
  'BY',
  'VALUES',
  'WITH',
  'RECURSIVE',
  'ESCAPE',
  'LIMIT',
  'OFFSET',
  'HAVING',
  'END',
  'ORDER',
  'GROUP',
  'PARTITION',
  'RANGE',
  'ROWS',
  'GROUPS',
  'PRECEDING',
  'FOLLOWING',
  'COLLATE',
  'ASC',
  'DESC',
  'NULLS',
  'LATERAL',
  'MATERIALIZED',
]);

/** Whether `word (` at `index` is a call: not a keyword, and not a CTE name with its column list (`t(a, b) AS (...)`). */
function isSqliteCall(tokens: readonly SqlToken[], index: number): boolean {
  const word = keyword(tokens[index]);
  if (word !== undefined && SQLITE_NOT_CALLS.has(word)) return false;
  let depth = 0;
  for (let position = index + 1; position < tokens.length; position += 1) {
    if (isPunct(tokens[position], '(')) depth += 1;
    if (isPunct(tokens[position], ')')) {
      depth -= 1;
      if (depth === 0) {
        const after = tokens[position + 2];
        return !(
          keyword(tokens[position + 1]) === 'AS' &&
          (isPunct(after, '(') || ['NOT', 'MATERIALIZED'].includes(keyword(after) ?? ''))
        );
      }
    }
  }
  return true;
}

function inspect(tokens: readonly SqlToken[], dialect: TokenDialect): void {
  tokens.forEach((token, index) => {
    const word = keyword(token);
    const next = tokens[index + 1];
    if (word !== undefined) {
      if (dialect === 'sqlite' && word === 'REPLACE' && !isPunct(next, '(')) {
        throw new SqlRefusal(
          'sql.statement-type',
          `Refused: REPLACE writes rows. ${allowedInstead(dialect)}`,
          'REPLACE',
        );
      }
      if (WRITE_WORDS[dialect].has(word)) {
        const previous = keyword(tokens[index - 1]);
        if (word === 'UPDATE' && previous === 'FOR') {
          throw new SqlRefusal(
            'sql.locking-clause',
            `Refused: FOR UPDATE takes row locks. Remove the locking clause. ${allowedInstead(dialect)}`,
          );
        }
        if (word === 'INTO') {
          throw new SqlRefusal(
            'sql.select-into',
            `Refused: INTO writes (SELECT ... INTO, INSERT INTO, MERGE INTO). Drop the INTO clause to read the rows. ${allowedInstead(dialect)}`,
          );
        }
        throw new SqlRefusal(
          'sql.data-modifying-cte',
          `Refused: the statement contains ${word}, which writes or changes the schema. ${allowedInstead(dialect)}`,
          word,
        );
      }
      if (dialect === 'oracle' && word === 'WITH' && ['FUNCTION', 'PROCEDURE'].includes(keyword(next) ?? '')) {
        throw new SqlRefusal(
          'sql.side-effect-function',
          `Refused: WITH ${keyword(next)} declares PL/SQL inline. ${allowedInstead(dialect)}`,
        );
      }
      if (dialect === 'oracle' && (word === 'NEXTVAL' || word === 'CURRVAL') && isPunct(tokens[index - 1], '.')) {
        throw new SqlRefusal(
          'sql.side-effect-function',
          `Refused: sequence.${word} advances or depends on a sequence. ${allowedInstead(dialect)}`,
        );
      }
    }
    // name@link reaches another database through a database link: outside what was configured,
    // and the remote side's effects are unknown.
    if (
      dialect === 'oracle' &&
      isPunct(token, '@') &&
      (tokens[index - 1]?.kind === 'word' || tokens[index - 1]?.kind === 'quoted')
    ) {
      throw new SqlRefusal(
        'sql.database-link',
        `Refused: ${tokens[index - 1]!.text}@${next?.text ?? ''} goes through a database link to another database. Query the configured database only. ${allowedInstead(dialect)}`,
      );
    }
    if (
      dialect === 'sqlite' &&
      (token.kind === 'word' || token.kind === 'quoted') &&
      isSideEffectTable(token.text) &&
      !isPunct(next, '(')
    ) {
      // Used as a table: after FROM, JOIN or a comma, possibly qualified by a schema name.
      const before = isPunct(tokens[index - 1], '.') ? tokens[index - 3] : tokens[index - 1];
      if (['FROM', 'JOIN'].includes(keyword(before) ?? '') || isPunct(before, ',')) {
        throw new SqlRefusal(
          'sql.side-effect-function',
          `Refused: ${token.text} is a table-valued function that reads the file system or raw database pages. Query without it. ${allowedInstead(dialect)}`,
        );
      }
    }
    if (
      dialect === 'sqlite' &&
      (token.kind === 'word' || token.kind === 'quoted') &&
      isPunct(next, '(') &&
      isSqliteCall(tokens, index)
    ) {
      const name = qualifiedName(tokens, index);
      const refusal = judgeSqliteFunction(name);
      if (refusal !== undefined) {
        throw new SqlRefusal(
          refusal.rule,
          `Refused: ${name.join('.')}() may not be called: ${refusal.why}. Query without it. ${allowedInstead(dialect)}`,
        );
      }
    }
    if (
      (token.kind === 'word' || token.kind === 'quoted') &&
      (isPunct(next, '(') || (dialect === 'oracle' && isPunct(next, '.')))
    ) {
      const name = qualifiedName(tokens, index);
      if (isSideEffectFunction(dialect, name)) {
        throw new SqlRefusal(
          'sql.side-effect-function',
          `Refused: ${name.join('.')}${isPunct(next, '(') ? '()' : ''} has side effects (files, extensions, network, locks, sequences or sessions). Query without it. ${allowedInstead(dialect)}`,
        );
      }
    }
  });
}

/** Checks SQLite or Oracle on a token stream. */
export function checkByTokens(sql: string, dialect: TokenDialect): SqlDecision {
  let tokens: SqlToken[];
  try {
    tokens = tokenizeSql(sql, dialect === 'sqlite' ? SQLITE_LEXICAL_RULES : ORACLE_LEXICAL_RULES);
  } catch (error) {
    if (error instanceof SqlLexError) {
      throw new SqlRefusal(
        'sql.unparseable',
        `Refused: could not parse the statement as ${dialect === 'sqlite' ? 'SQLite' : 'Oracle'} SQL (${error.message}). ${allowedInstead(dialect)}`,
      );
    }
    throw error;
  }
  const statements = splitStatements(tokens);
  if (statements.length === 0)
    throw new SqlRefusal('sql.empty', `Refused: no SQL statement was given. ${allowedInstead(dialect)}`);
  // PL/SQL contains semicolons of its own: name it before counting statements.
  if (dialect === 'oracle') {
    const opening = keyword(tokens[0]);
    if (opening === 'BEGIN' || opening === 'DECLARE') {
      throw new SqlRefusal(
        'sql.statement-type',
        `Refused: ${opening} is not a read (a PL/SQL block) (statement: "${excerpt(sql)}"). ${allowedInstead(dialect)}`,
        opening,
      );
    }
    if (opening === 'WITH' && ['FUNCTION', 'PROCEDURE'].includes(keyword(tokens[1]) ?? '')) {
      throw new SqlRefusal(
        'sql.side-effect-function',
        `Refused: WITH ${keyword(tokens[1])} declares PL/SQL inline. ${allowedInstead(dialect)}`,
      );
    }
  }
  if (statements.length > 1) {
    throw new SqlRefusal(
      'sql.stacked-statements',
      `Refused: ${statements.length} statements were sent; send exactly one statement per call. ${allowedInstead(dialect)}`,
    );
  }
  const statement = statements[0] ?? [];
  let start = 0;
  let statementType = 'SELECT';
  if (dialect === 'sqlite' && keyword(statement[0]) === 'EXPLAIN') {
    start = keyword(statement[1]) === 'QUERY' && keyword(statement[2]) === 'PLAN' ? 3 : 1;
    statementType = start === 3 ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN';
    const explained = keyword(statement[start]);
    if (explained === undefined || !READ_START.sqlite.has(explained)) {
      throw new SqlRefusal(
        'sql.explain-write',
        `Refused: ${statementType} is only allowed for a read, not ${explained ?? 'this statement'}. EXPLAIN the equivalent SELECT instead. ${allowedInstead(dialect)}`,
        statementType,
      );
    }
  }
  // Oracle accepts a query in parentheses; SQLite does not.
  while (dialect === 'oracle' && isPunct(statement[start], '(')) start += 1;
  const first = keyword(statement[start]);
  if (first === undefined || !READ_START[dialect].has(first)) {
    const label = first ?? excerpt(sql, 20);
    const note = (first !== undefined && STATEMENT_NOTES[first]) || '';
    throw new SqlRefusal(
      'sql.statement-type',
      `Refused: ${label} is not a read${note} (statement: "${excerpt(sql)}"). ${allowedInstead(dialect)}`,
      first,
    );
  }
  if (start === 0) statementType = first === 'VALUES' ? 'VALUES' : 'SELECT';
  inspect(statement, dialect);
  return { allowed: true, rule: 'sql.read', statementType };
}
