import type { SqlDecision } from '../../check-sql.js';
import { judgeMysqlFunction } from './function-policy.js';
import type { SqlServerContext } from './function-policy.js';
import { canonicalMysql, lexMysql } from './mysql-lexer.js';
import type { MysqlLexMode, MysqlLexResult, MysqlToken } from './mysql-lexer.js';
import { sensitiveMysqlTable } from './sensitive-relations.js';
import { isSideEffectFunction } from './side-effect-functions.js';
import { SqlLexError, keyword, splitStatements } from './sql-lexer.js';
import { SqlRefusal, allowedInstead, excerpt } from './sql-refusal.js';

type AstNode = Record<string, unknown>;
interface NodeSqlParser {
  parse(sql: string, options: { database: string }): { ast: unknown; tableList: string[] };
}

let parsersPromise: Promise<{ name: string; parser: NodeSqlParser }[]> | undefined;

// Only the MySQL and MariaDB grammars are loaded (not the package's all-dialect bundle), on the
// first MySQL check.
function loadParsers(): Promise<{ name: string; parser: NodeSqlParser }[]> {
  parsersPromise ??= Promise.all([
    import('node-sql-parser/build/mysql.js'),
    import('node-sql-parser/build/mariadb.js'),
  ]).then(([mysql, mariadb]) => {
    const construct = (module: unknown): NodeSqlParser => {
      const exports = module as { Parser?: new () => NodeSqlParser; default?: { Parser: new () => NodeSqlParser } };
      const Parser = exports.Parser ?? exports.default?.Parser;
      if (Parser === undefined) throw new Error('node-sql-parser exports no Parser');
      return new Parser();
    };
    // MariaDB's grammar first: it parses the same reads in half the time (31 us against
    // 71 us for SELECT 1); MySQL's is the fallback for what only it knows.
    return [
      { name: 'mariadb', parser: construct(mariadb) },
      { name: 'mysql', parser: construct(mysql) },
    ];
  });
  return parsersPromise;
}

const STATEMENT_NAMES: Record<string, string> = {
  insert: 'INSERT',
  replace: 'REPLACE',
  update: 'UPDATE',
  delete: 'DELETE',
  create: 'CREATE',
  drop: 'DROP',
  alter: 'ALTER',
  truncate: 'TRUNCATE',
  rename: 'RENAME',
  set: 'SET',
  lock: 'LOCK TABLES',
  unlock: 'UNLOCK TABLES',
  grant: 'GRANT',
  revoke: 'REVOKE',
  call: 'CALL',
  load_data: 'LOAD DATA',
  transaction: 'transaction control (START TRANSACTION/COMMIT/ROLLBACK)',
  use: 'USE',
};

// Keywords that start a statement the grammar may not know; named in the refusal so the model
// learns what was refused even when the parser gives up.
const WRITE_KEYWORDS = new Set([
  'INSERT',
  'REPLACE',
  'UPDATE',
  'DELETE',
  'CREATE',
  'DROP',
  'ALTER',
  'TRUNCATE',
  'RENAME',
  'SET',
  'RESET',
  'LOCK',
  'UNLOCK',
  'GRANT',
  'REVOKE',
  'CALL',
  'DO',
  'LOAD',
  'HANDLER',
  'PREPARE',
  'EXECUTE',
  'DEALLOCATE',
  'START',
  'BEGIN',
  'COMMIT',
  'ROLLBACK',
  'SAVEPOINT',
  'RELEASE',
  'XA',
  'FLUSH',
  'KILL',
  'SHUTDOWN',
  'INSTALL',
  'UNINSTALL',
  'PURGE',
  'OPTIMIZE',
  'REPAIR',
  'ANALYZE',
  'CHECK',
  'CHECKSUM',
  'CACHE',
  'USE',
  'IMPORT',
  'CLONE',
  'RESTART',
  'CHANGE',
  'STOP',
  'BINLOG',
]);

function functionName(node: AstNode): string[] {
  const name = node.name;
  if (typeof name === 'string') return [name];
  const parts = (name as { name?: { value?: unknown }[] } | undefined)?.name;
  if (Array.isArray(parts)) return parts.map((part) => String(part.value ?? ''));
  return [];
}

// Words that may stand before `(` without calling a function (MariaDB syntax).
const NOT_CALLS = new Set([
  'IN',
  'EXISTS',
  'AS',
  'OVER',
  'USING',
  'ON',
  'AND',
  'OR',
  'NOT',
  'XOR',
  'WHERE',
  'FROM',
  'JOIN',
  'SELECT',
  'UNION',
  'INTERSECT',
  'EXCEPT',
  'ALL',
  'ANY',
  'SOME',
  'DISTINCT',
  'DISTINCTROW',
  'CASE',
  'WHEN',
  'THEN',
  'ELSE',
  'LIKE',
  'RLIKE',
  'REGEXP',
  'BETWEEN',
  'IS',
  'BY',
  'VALUES',
  'VALUE',
  'WITH',
  'RECURSIVE',
  'LIMIT',
  'OFFSET',
  'HAVING',
  'ROW',
  'AGAINST',
  'MATCH',
  'DIV',
  'KEY',
  'INDEX',
  'FORCE',
  'IGNORE',
  'USE',
  'PARTITION',
  'COLUMNS',
  'WITHIN',
  'GROUP',
  'ORDER',
  'LATERAL',
  'ESCAPE',
  'SEPARATOR',
  'INTERVAL',
  'RETURNING',
  'NESTED',
  'PATH',
  'FOR',
  'SET',
  'ROLLUP',
  'TABLE',
  'EXPLAIN',
  'DESCRIBE',
  'DESC',
  'SHOW',
  'STRAIGHT_JOIN',
  'LEFT',
  'RIGHT',
  'INNER',
  'OUTER',
  'CROSS',
  'NATURAL',
  'ASC',
  'NULL',
  'TRUE',
  'FALSE',
  'BINARY',
  'COLLATE',
  'CHARACTER',
  'WINDOW',
  'ROWS',
  'RANGE',
  'PRECEDING',
  'FOLLOWING',
  'UNBOUNDED',
  'CURRENT',
  'SQL_CALC_FOUND_ROWS',
  // FOR SYSTEM_TIME AS OF (...), FROM ... TO (...).
  'OF',
  'TO',
  // Type names with a length or precision (CAST(x AS DECIMAL(10, 2)), JSON_TABLE columns).
  'DECIMAL',
  'DEC',
  'NUMERIC',
  'FIXED',
  'VARCHAR',
  'NCHAR',
  'NVARCHAR',
  'VARBINARY',
  'FLOAT',
  'DOUBLE',
  'REAL',
  'DATETIME',
  'INT',
  'INTEGER',
  'BIGINT',
  'SMALLINT',
  'TINYINT',
  'MEDIUMINT',
  'BIT',
  'TEXT',
  'BLOB',
  'SIGNED',
  'UNSIGNED',
]);

/**
 * A backstop under the grammar: every `name (` in the server's tokens that is a call must be a
 * read-only built-in, whatever node the grammar makes of it. (`LEFT(`, `RIGHT(`, `INTERVAL(`
 * and the like are built-ins the grammar judges; a CTE's column list `t (a) AS (` is no call.)
 */
function refuseUnknownCalls(tokens: readonly { kind: string; text: string }[]): void {
  tokens.forEach((token, index) => {
    const next = tokens[index + 1];
    if (!(next?.kind === 'punct' && next.text === '(')) return;
    if (token.kind !== 'word' && token.kind !== 'quoted') return;
    if (token.kind === 'word' && NOT_CALLS.has(token.text.toUpperCase())) return;
    let depth = 0;
    for (let position = index + 1; position < tokens.length; position += 1) {
      const current = tokens[position];
      if (current?.kind === 'punct' && current.text === '(') depth += 1;
      if (current?.kind === 'punct' && current.text === ')') {
        depth -= 1;
        if (depth === 0) {
          const after = tokens[position + 1];
          const then = tokens[position + 2];
          if (
            after?.kind === 'word' &&
            after.text.toUpperCase() === 'AS' &&
            then?.kind === 'punct' &&
            then.text === '('
          )
            return;
          break;
        }
      }
    }
    const previous = tokens[index - 1];
    const qualifier = previous?.kind === 'punct' && previous.text === '.' ? tokens[index - 2]?.text : undefined;
    const name = qualifier === undefined ? [token.text] : [qualifier, token.text];
    const refusal = judgeMysqlFunction(name);
    if (refusal !== undefined) {
      throw new SqlRefusal(
        refusal.rule,
        `Refused: ${name.join('.')}() may not be called: ${refusal.why}. Query without it. ${allowedInstead('mysql')}`,
      );
    }
  });
}

/** SHOW statements that print password hashes or other sessions' statements. */
function refuseSensitiveShow(statement: readonly { kind: string; text: string }[]): void {
  const words = statement.slice(0, 4).map((token) => keyword(token as never) ?? '');
  if (words[0] !== 'SHOW') return;
  const rest = words.slice(1).join(' ');
  if (
    /^(FULL )?PROCESSLIST|^CREATE USER|^(BINLOG|RELAYLOG) EVENTS|^GRANTS|^ENGINE \S+ STATUS|^(EXPLAIN|ANALYZE) FOR/.test(
      rest,
    )
  ) {
    throw new SqlRefusal(
      'sql.sensitive-catalog',
      `Refused: SHOW ${rest.trim()} exposes account secrets or other sessions' statements. ${allowedInstead('mysql')}`,
      'SHOW',
    );
  }
}

/** Walks every node of a read, refusing writes hidden inside it. */
function inspectRead(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) inspectRead(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const record = node as AstNode;
  const type = record.type;
  if (typeof type === 'string') {
    if (
      type !== 'select' &&
      STATEMENT_NAMES[type] !== undefined &&
      ('table' in record || 'expr' in record || 'keyword' in record)
    ) {
      throw new SqlRefusal(
        'sql.data-modifying-cte',
        `Refused: the query contains a ${STATEMENT_NAMES[type]}. ${allowedInstead('mysql')}`,
      );
    }
    if (type === 'assign') {
      throw new SqlRefusal(
        'sql.variable-assignment',
        `Refused: assigning a user variable (:=) changes session state. Select the expression without assigning it. ${allowedInstead('mysql')}`,
      );
    }
    if (type === 'function' || type === 'aggr_func') {
      const name = functionName(record);
      const refusal = judgeMysqlFunction(name);
      if (refusal !== undefined) {
        throw new SqlRefusal(
          refusal.rule,
          `Refused: ${name.join('.')}() may not be called: ${refusal.why}. Query without it. ${allowedInstead('mysql')}`,
        );
      }
    }
  }
  const into = record.into as { position?: unknown; expr?: unknown; keyword?: unknown } | null | undefined;
  if (type === 'select' && into && (into.position || into.expr || into.keyword)) {
    throw new SqlRefusal(
      'sql.select-into',
      `Refused: SELECT ... INTO writes a file (OUTFILE/DUMPFILE) or variables. Drop the INTO clause to read the rows. ${allowedInstead('mysql')}`,
    );
  }
  if (type === 'select' && record.locking_read) {
    throw new SqlRefusal(
      'sql.locking-clause',
      `Refused: ${String(record.locking_read)} takes row locks. Remove the locking clause. ${allowedInstead('mysql')}`,
    );
  }
  for (const value of Object.values(record)) inspectRead(value);
}

// MariaDB's combination modes change its grammar and lexer beyond the two flags modelled here.
const UNSUPPORTED_MODES = ['ORACLE', 'MSSQL', 'DB2', 'POSTGRESQL', 'MAXDB'];
const ALL_MODES: MysqlLexMode[] = [
  { backslashEscapes: true, ansiQuotes: false },
  { backslashEscapes: false, ansiQuotes: false },
  { backslashEscapes: true, ansiQuotes: true },
  { backslashEscapes: false, ansiQuotes: true },
];

function signature(result: MysqlLexResult): string {
  return (
    result.tokens.map((token) => `${token.kind}:${token.start}:${token.end}`).join(' ') +
    `|${result.comments.map((comment) => `${comment.start}:${comment.end}`).join(' ')}`
  );
}

/**
 * Tokens as the server reads them: under its sql_mode when known; when not, the reading of
 * every mode must agree, or the statement is refused.
 */
function serverTokens(sql: string, sqlMode: string | undefined): MysqlLexResult {
  const lex = (mode: MysqlLexMode): MysqlLexResult => {
    try {
      return lexMysql(sql, mode);
    } catch (error) {
      if (error instanceof SqlLexError)
        throw new SqlRefusal(
          'sql.unparseable',
          `Refused: could not parse the statement as MySQL (${error.message}). ${allowedInstead('mysql')}`,
        );
      throw error;
    }
  };
  if (sqlMode !== undefined) {
    const flags = new Set(
      sqlMode
        .toUpperCase()
        .split(',')
        .map((flag) => flag.trim()),
    );
    const unsupported = UNSUPPORTED_MODES.find((flag) => flags.has(flag));
    if (unsupported !== undefined) {
      throw new SqlRefusal(
        'sql.lexical-mode',
        `Refused: the session's sql_mode includes ${unsupported}, whose syntax rho does not read; set the account's sql_mode to the default. ${allowedInstead('mysql')}`,
      );
    }
    return lex({
      backslashEscapes: !flags.has('NO_BACKSLASH_ESCAPES'),
      ansiQuotes: flags.has('ANSI_QUOTES') || flags.has('ANSI'),
    });
  }
  const first = lex(ALL_MODES[0] as MysqlLexMode);
  const expected = signature(first);
  const agrees = (mode: MysqlLexMode): boolean => {
    try {
      return signature(lexMysql(sql, mode)) === expected;
    } catch {
      return false;
    }
  };
  if (!ALL_MODES.slice(1).every(agrees)) {
    throw new SqlRefusal(
      'sql.lexical-mode',
      `Refused: the server's sql_mode is not known here, and with NO_BACKSLASH_ESCAPES or ANSI_QUOTES the server would split this statement differently (a backslash or a double quote). Use single-quoted strings without backslashes. ${allowedInstead('mysql')}`,
    );
  }
  return first;
}

// Words that end a FOR SYSTEM_TIME expression when they stand outside parentheses.
const SYSTEM_TIME_STOP = new Set([
  'AS',
  'WHERE',
  'JOIN',
  'INNER',
  'LEFT',
  'RIGHT',
  'CROSS',
  'STRAIGHT_JOIN',
  'NATURAL',
  'FULL',
  'ON',
  'USING',
  'GROUP',
  'ORDER',
  'LIMIT',
  'HAVING',
  'WINDOW',
  'UNION',
  'EXCEPT',
  'INTERSECT',
  'FOR',
  'LOCK',
  'INTO',
  'PROCEDURE',
  'USE',
  'IGNORE',
  'FORCE',
  'PARTITION',
  'RETURNING',
]);

const isPunct = (token: MysqlToken | undefined, text: string): boolean =>
  token?.kind === 'punct' && token.text === text;

/** Index of the `)` closing the `(` at `open`, or -1. */
function closing(tokens: readonly MysqlToken[], open: number): number {
  let depth = 0;
  for (let index = open; index < tokens.length; index += 1) {
    if (isPunct(tokens[index], '(')) depth += 1;
    if (isPunct(tokens[index], ')')) {
      depth -= 1;
      if (depth === 0) return index;
    }
  }
  return -1;
}

/** A token the grammar reads as a keyword, placed apart from its neighbours in the canonical text. */
const synthetic = (kind: MysqlToken['kind'], text: string): MysqlToken => ({ kind, text, start: -2, end: -1 });

/**
 * MariaDB read syntax that node-sql-parser's grammars lack, rewritten into forms they parse:
 * `EXPLAIN FORMAT=JSON` (the format dropped), `t PARTITION (p0, p1)` (the partition names
 * dropped), `t FOR SYSTEM_TIME AS OF|BETWEEN|FROM ... | ALL` (the clause dropped, its
 * expressions returned to be checked on their own), and `JSON_TABLE(expr, path COLUMNS (...))`
 * (replaced by the derived table `(SELECT expr)`: the path and column definitions name types
 * and JSON paths, and every call among them was judged on the server's tokens already).
 */
function rewriteForGrammar(tokens: readonly MysqlToken[]): { tokens: MysqlToken[]; expressions: MysqlToken[][] } {
  const out: MysqlToken[] = [];
  const expressions: MysqlToken[][] = [];
  let index = 0;
  if (keyword(tokens[0]) === 'EXPLAIN') {
    out.push(tokens[0] as MysqlToken);
    index = 1;
    if (
      keyword(tokens[1]) === 'FORMAT' &&
      isPunct(tokens[2], '=') &&
      ['JSON', 'TRADITIONAL'].includes(keyword(tokens[3]) ?? '')
    )
      index = 4;
    else if (keyword(tokens[1]) === 'EXTENDED' || keyword(tokens[1]) === 'PARTITIONS') index = 2;
  }
  while (index < tokens.length) {
    const token = tokens[index] as MysqlToken;
    const word = keyword(token);
    if (word === 'PARTITION' && isPunct(tokens[index + 1], '(')) {
      const end = closing(tokens, index + 1);
      const names = tokens.slice(index + 2, end);
      if (
        end !== -1 &&
        names.length > 0 &&
        names.every((name, at) => (at % 2 === 0 ? name.kind === 'word' || name.kind === 'quoted' : isPunct(name, ',')))
      ) {
        index = end + 1;
        continue;
      }
    }
    if (word === 'FOR' && keyword(tokens[index + 1]) === 'SYSTEM_TIME') {
      let at = index + 2;
      const form = keyword(tokens[at]);
      if (form === 'ALL') {
        index = at + 1;
        continue;
      }
      if (form === 'AS' && keyword(tokens[at + 1]) === 'OF') at += 2;
      else if (form === 'BETWEEN' || form === 'FROM') at += 1;
      else {
        out.push(token);
        index += 1;
        continue;
      }
      // The expression (or the two of BETWEEN ... AND ... and FROM ... TO ...) ends at a clause
      // keyword, a comma or a closing parenthesis outside parentheses.
      const parts: MysqlToken[][] = [[]];
      let depth = 0;
      for (; at < tokens.length; at += 1) {
        const current = tokens[at] as MysqlToken;
        if (isPunct(current, '(')) depth += 1;
        if (isPunct(current, ')')) {
          if (depth === 0) break;
          depth -= 1;
        }
        if (
          depth === 0 &&
          (isPunct(current, ',') || isPunct(current, ';') || SYSTEM_TIME_STOP.has(keyword(current) ?? ''))
        )
          break;
        if (depth === 0 && form === 'FROM' && keyword(current) === 'TO') {
          parts.push([]);
          continue;
        }
        (parts[parts.length - 1] as MysqlToken[]).push(current);
      }
      for (const part of parts) {
        // TIMESTAMP and TRANSACTION say what the value is; TIMESTAMP 'literal' is a value itself.
        const body = part.filter(
          (current, position) =>
            !(
              (keyword(current) === 'TRANSACTION' ||
                (keyword(current) === 'TIMESTAMP' && part[position + 1]?.kind !== 'string')) &&
              (position === 0 || keyword(part[position - 1]) === 'AND')
            ),
        );
        if (body.length === 0) return { tokens: [...tokens], expressions: [] };
        expressions.push(body);
      }
      index = at;
      continue;
    }
    if (word === 'JSON_TABLE' && isPunct(tokens[index + 1], '(') && !isPunct(tokens[index - 1], '.')) {
      const end = closing(tokens, index + 1);
      let comma = -1;
      let depth = 0;
      for (let at = index + 1; at < end; at += 1) {
        if (isPunct(tokens[at], '(')) depth += 1;
        if (isPunct(tokens[at], ')')) depth -= 1;
        if (depth === 1 && isPunct(tokens[at], ',')) {
          comma = at;
          break;
        }
      }
      const rest = tokens.slice(comma + 1, end);
      if (
        end !== -1 &&
        comma !== -1 &&
        !rest.some((current) => ['SELECT', 'WITH', 'VALUES', 'TABLE'].includes(keyword(current) ?? ''))
      ) {
        out.push(
          synthetic('punct', '('),
          synthetic('word', 'SELECT'),
          ...tokens.slice(index + 2, comma),
          synthetic('punct', ')'),
        );
        index = end + 1;
        continue;
      }
    }
    out.push(token);
    index += 1;
  }
  return { tokens: out, expressions };
}

/** Checks MySQL/MariaDB: MariaDB's own lexical rules, then node-sql-parser's grammars on the canonical text. */
export async function checkMysql(sql: string, context: SqlServerContext = {}): Promise<SqlDecision> {
  // Executable comments run their content on MySQL/MariaDB while every parser skips them as
  // comments. Refused anywhere, even inside what looks like a string.
  if (/\/\*M?!/.test(sql)) {
    throw new SqlRefusal(
      'sql.executable-comment',
      `Refused: MySQL executable comments (/*! ... */ and /*M! ... */) run their content as SQL. Send the statement without them. ${allowedInstead('mysql')}`,
    );
  }
  const { tokens } = serverTokens(sql, context.sqlMode);
  const statements = splitStatements(tokens);
  if (statements.length === 0)
    throw new SqlRefusal('sql.empty', `Refused: no SQL statement was given. ${allowedInstead('mysql')}`);
  if (statements.length > 1) {
    throw new SqlRefusal(
      'sql.stacked-statements',
      `Refused: ${statements.length} statements were sent; send exactly one statement per call. ${allowedInstead('mysql')}`,
    );
  }
  // A deny-listed name followed by `(` anywhere in the server's tokens, whatever the grammar makes of it.
  tokens.forEach((token, index) => {
    const next = tokens[index + 1];
    if (
      (token.kind === 'word' || token.kind === 'quoted') &&
      next?.kind === 'punct' &&
      next.text === '(' &&
      isSideEffectFunction('mysql', [token.text])
    ) {
      throw new SqlRefusal(
        'sql.side-effect-function',
        `Refused: ${token.text}() may not be called: it takes locks, reads server files, stalls the server or changes sequences. Query without it. ${allowedInstead('mysql')}`,
      );
    }
  });
  // LAST_INSERT_ID(expr) sets the value the session returns for LAST_INSERT_ID(): session state,
  // as an assignment with := is.
  tokens.forEach((token, index) => {
    const open = tokens[index + 1];
    const close = tokens[index + 2];
    if (
      (token.kind === 'word' || token.kind === 'quoted') &&
      token.text.toLowerCase() === 'last_insert_id' &&
      open?.kind === 'punct' &&
      open.text === '(' &&
      !(close?.kind === 'punct' && close.text === ')')
    ) {
      throw new SqlRefusal(
        'sql.variable-assignment',
        `Refused: LAST_INSERT_ID(expr) sets the session's last insert id (session state, like :=). Call LAST_INSERT_ID() without an argument to read it. ${allowedInstead('mysql')}`,
      );
    }
  });
  refuseUnknownCalls(tokens);
  refuseSensitiveShow(statements[0] ?? []);
  // SHOW only reads. Without parentheses it calls no function (SHOW ... WHERE f(x) goes through
  // the grammar below); the grammar lacks many SHOW forms (VARIABLES LIKE, TABLE STATUS, ...).
  if (keyword(tokens[0]) === 'SHOW' && !tokens.some((token) => token.kind === 'punct' && token.text === '(')) {
    return { allowed: true, rule: 'sql.read', statementType: 'SHOW' };
  }
  const rewritten = rewriteForGrammar(tokens);
  const canonical = canonicalMysql(rewritten.tokens);
  const first = keyword(statements[0]?.[0]);

  const parsers = await loadParsers();
  const parse = (text: string): { ast: unknown; tableList: string[]; failure: string } => {
    let failure = '';
    for (const { name, parser } of parsers) {
      try {
        return { ...parser.parse(text, { database: name }), failure };
      } catch (error) {
        failure ||= error instanceof Error ? error.message : String(error);
      }
    }
    return { ast: undefined, tableList: [], failure };
  };
  let { ast, tableList, failure } = parse(canonical);
  // The FOR SYSTEM_TIME expressions taken out for the grammar: each must parse and pass as a
  // select list of its own (a subquery in one is walked like any other).
  const extraSelects: unknown[] = [];
  for (const expression of ast === undefined ? [] : rewritten.expressions) {
    const extra = parse(`SELECT ${canonicalMysql(expression)}`);
    if (extra.ast === undefined) {
      ast = undefined;
      failure = extra.failure;
      break;
    }
    extraSelects.push(extra.ast);
    tableList = [...tableList, ...extra.tableList];
  }
  if (ast === undefined) {
    // The grammars lack some refusable constructs; name them rather than the parser's complaint.
    const statement = statements[0] ?? [];
    // After EXPLAIN FORMAT=JSON, the statement explained.
    const second = keyword(first === 'EXPLAIN' ? rewritten.tokens[1] : statement[1]);
    if (first === 'EXPLAIN' && second === 'ANALYZE') {
      throw new SqlRefusal(
        'sql.unparseable',
        `Refused: EXPLAIN ANALYZE cannot be checked here (the MySQL/MariaDB grammar used does not parse it); use EXPLAIN SELECT ... instead. ${allowedInstead('mysql')}`,
        'EXPLAIN',
      );
    }
    if (first === 'EXPLAIN' && second !== undefined && WRITE_KEYWORDS.has(second)) {
      throw new SqlRefusal(
        'sql.explain-write',
        `Refused: EXPLAIN is only allowed for a SELECT, not ${second}. EXPLAIN the equivalent SELECT instead. ${allowedInstead('mysql')}`,
        'EXPLAIN',
      );
    }
    const lockAt = statement.findIndex(
      (token, index) => keyword(token) === 'FOR' && ['SHARE', 'UPDATE'].includes(keyword(statement[index + 1]) ?? ''),
    );
    if (first === 'SELECT' && lockAt !== -1) {
      throw new SqlRefusal(
        'sql.locking-clause',
        `Refused: FOR ${keyword(statement[lockAt + 1])} takes row locks. Remove the locking clause. ${allowedInstead('mysql')}`,
      );
    }
    if (first !== undefined && WRITE_KEYWORDS.has(first)) {
      throw new SqlRefusal(
        'sql.statement-type',
        `Refused: ${first} is not a read (statement: "${excerpt(sql)}"). ${allowedInstead('mysql')}`,
        first,
      );
    }
    throw new SqlRefusal(
      'sql.unparseable',
      `Refused: could not parse the statement as MySQL/MariaDB (${excerpt(failure, 160)}). ${allowedInstead('mysql')}`,
    );
  }
  const list = Array.isArray(ast) ? ast : [ast];
  if (list.length !== 1) {
    throw new SqlRefusal(
      'sql.stacked-statements',
      `Refused: ${list.length} statements were sent; send exactly one statement per call. ${allowedInstead('mysql')}`,
    );
  }
  const root = list[0] as AstNode;
  for (const entry of tableList) {
    const [, database, table] = entry.split('::');
    const schema = database === undefined || database === 'null' ? context.database : database;
    const secret = sensitiveMysqlTable(schema, table ?? '');
    if (secret !== undefined) {
      // `USE mysql` lists the schema with the parser's placeholder table name "null".
      const what = table === undefined || table === 'null' ? `the ${schema ?? ''} schema` : `${schema ?? ''}.${table}`;
      throw new SqlRefusal(
        'sql.sensitive-catalog',
        `Refused: ${what} exposes ${secret}; it is not readable in readonly mode. ${allowedInstead('mysql')}`,
      );
    }
  }
  switch (root.type) {
    case 'select':
      inspectRead(root);
      inspectRead(extraSelects);
      return { allowed: true, rule: 'sql.read', statementType: 'SELECT' };
    case 'show':
      return { allowed: true, rule: 'sql.read', statementType: 'SHOW' };
    case 'desc':
      return { allowed: true, rule: 'sql.read', statementType: 'DESCRIBE' };
    case 'explain': {
      const inner = root.expr as AstNode | undefined;
      if (inner?.type !== 'select') {
        throw new SqlRefusal(
          'sql.explain-write',
          `Refused: EXPLAIN is only allowed for a SELECT. ${allowedInstead('mysql')}`,
          'EXPLAIN',
        );
      }
      inspectRead(inner);
      inspectRead(extraSelects);
      return { allowed: true, rule: 'sql.read', statementType: 'EXPLAIN' };
    }
    default: {
      const name = STATEMENT_NAMES[String(root.type)] ?? String(root.type).toUpperCase();
      throw new SqlRefusal(
        'sql.statement-type',
        `Refused: ${name} is not a read (statement: "${excerpt(sql)}"). ${allowedInstead('mysql')}`,
        name,
      );
    }
  }
}
