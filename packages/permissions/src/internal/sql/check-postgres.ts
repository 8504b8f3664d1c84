import type { SqlDecision, SqlDialect } from '../../check-sql.js';
import { builtinPostgresCatalog, judgePostgresFunction, judgeVerticaFunction } from './function-policy.js';
import type { SqlFunctionCatalog, SqlServerContext } from './function-policy.js';
import { sensitivePostgresRelation } from './sensitive-relations.js';
import { SqlRefusal, allowedInstead, excerpt } from './sql-refusal.js';

type PgNode = Record<string, unknown>;
interface PgParser {
  parseSync(query: string): { stmts?: { stmt?: PgNode }[] };
  scanSync(query: string): { tokens: { start: number; end: number; text: string; tokenName: string }[] };
}

/** The parser, loaded on first use (for readers besides the check). */
export function postgresParser(): Promise<PgParser> {
  return loadedParser === undefined ? loadParser() : Promise.resolve(loadedParser);
}

// The catalog the current (synchronous) walk judges function calls against.
let activeCatalog: SqlFunctionCatalog | undefined;

let parserPromise: Promise<PgParser> | undefined;
let loadedParser: PgParser | undefined;

// The WASM module is loaded on the first PostgreSQL or Vertica check, never at import time.
function loadParser(): Promise<PgParser> {
  parserPromise ??= import('libpg-query').then(async (module) => {
    await module.loadModule();
    loadedParser = module as unknown as PgParser;
    return loadedParser;
  });
  return parserPromise;
}

const STATEMENT_NAMES: Record<string, string> = {
  InsertStmt: 'INSERT',
  UpdateStmt: 'UPDATE',
  DeleteStmt: 'DELETE',
  MergeStmt: 'MERGE',
  CopyStmt: 'COPY',
  TransactionStmt: 'transaction control (BEGIN/COMMIT/ROLLBACK/SAVEPOINT)',
  VariableSetStmt: 'SET/RESET',
  LockStmt: 'LOCK TABLE',
  CallStmt: 'CALL',
  DoStmt: 'DO',
  ExecuteStmt: 'EXECUTE',
  PrepareStmt: 'PREPARE',
  DeallocateStmt: 'DEALLOCATE',
  ListenStmt: 'LISTEN',
  UnlistenStmt: 'UNLISTEN',
  NotifyStmt: 'NOTIFY',
  GrantStmt: 'GRANT/REVOKE',
  GrantRoleStmt: 'GRANT/REVOKE of a role',
  TruncateStmt: 'TRUNCATE',
  VacuumStmt: 'VACUUM/ANALYZE',
  CreateTableAsStmt: 'CREATE TABLE AS / SELECT INTO',
  AlterSystemStmt: 'ALTER SYSTEM',
  CheckPointStmt: 'CHECKPOINT',
  DeclareCursorStmt: 'DECLARE CURSOR',
  FetchStmt: 'FETCH/MOVE',
  ClosePortalStmt: 'CLOSE',
  DiscardStmt: 'DISCARD',
  LoadStmt: 'LOAD',
  ReindexStmt: 'REINDEX',
  ClusterStmt: 'CLUSTER',
  RefreshMatViewStmt: 'REFRESH MATERIALIZED VIEW',
  CommentStmt: 'COMMENT ON',
  VariableShowStmt: 'SHOW',
};

const MODIFYING = new Set(['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt']);

function statementName(key: string): string {
  return (
    STATEMENT_NAMES[key] ??
    key
      .replace(/Stmt$/, '')
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .toUpperCase()
  );
}

function stringParts(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((item) => (item as { String?: { sval?: string } }).String?.sval ?? '');
}

/** Walks every node of a read, refusing writes hidden inside it. */
function inspectRead(node: unknown, dialect: SqlDialect): void {
  if (Array.isArray(node)) {
    for (const item of node) inspectRead(item, dialect);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const record = node as PgNode;
  // for...in over the parser's plain JSON objects: no entry arrays are allocated per node.
  for (const key in record) {
    const value = record[key];
    inspectKey(key, value, dialect);
    if (value !== null && typeof value === 'object') inspectRead(value, dialect);
  }
}

/** Refuses one node of a read by its key: a hidden write, INTO, a locking clause, a side-effect function. */
function inspectKey(key: string, value: unknown, dialect: SqlDialect): void {
  if (MODIFYING.has(key)) {
    throw new SqlRefusal(
      'sql.data-modifying-cte',
      `Refused: the query contains a data-modifying ${statementName(key)} (for example in a WITH clause). ${allowedInstead(dialect)}`,
    );
  }
  if (key === 'intoClause' && value) {
    throw new SqlRefusal(
      'sql.select-into',
      `Refused: SELECT ... INTO creates a table. Drop the INTO clause to read the rows. ${allowedInstead(dialect)}`,
    );
  }
  if (key === 'lockingClause' && Array.isArray(value) && value.length > 0) {
    throw new SqlRefusal(
      'sql.locking-clause',
      `Refused: locking clauses (FOR UPDATE, FOR NO KEY UPDATE, FOR SHARE, FOR KEY SHARE) take row locks. Remove the locking clause. ${allowedInstead(dialect)}`,
    );
  }
  if (key === 'FuncCall') {
    const name = stringParts((value as { funcname?: unknown }).funcname);
    const refusal =
      dialect === 'vertica'
        ? judgeVerticaFunction(name, activeCatalog)
        : judgePostgresFunction(name, activeCatalog ?? builtinPostgresCatalog());
    if (refusal !== undefined) {
      throw new SqlRefusal(
        refusal.rule,
        `Refused: ${name.join('.')}() may not be called: ${refusal.why}. Query without it. ${allowedInstead(dialect)}`,
      );
    }
  }
  // Attribute notation calls a function too: `t.f` and `(t).f` are `f(t)` when the table has no
  // column f. Judged only when the name is a function the catalog knows (else it is a column).
  if (key === 'ColumnRef' || key === 'A_Indirection') {
    const fields = (value as { fields?: unknown; indirection?: unknown })[
      key === 'ColumnRef' ? 'fields' : 'indirection'
    ];
    const last =
      Array.isArray(fields) && (key === 'A_Indirection' || fields.length >= 2)
        ? (fields[fields.length - 1] as { String?: { sval?: string } }).String?.sval
        : undefined;
    const catalog = dialect === 'vertica' ? activeCatalog : (activeCatalog ?? builtinPostgresCatalog());
    if (last !== undefined && catalog?.byName.has(last)) {
      const refusal =
        dialect === 'vertica' ? judgeVerticaFunction([last], catalog) : judgePostgresFunction([last], catalog);
      if (refusal !== undefined) {
        throw new SqlRefusal(
          refusal.rule,
          `Refused: .${last} calls the function ${last}() (attribute notation), which may not be called: ${refusal.why}. Query without it. ${allowedInstead(dialect)}`,
        );
      }
    }
  }
  if (key === 'RangeVar') {
    const relation = value as { relname?: string; schemaname?: string };
    const secret = sensitivePostgresRelation(relation.relname ?? '');
    if (secret !== undefined) {
      throw new SqlRefusal(
        'sql.sensitive-catalog',
        `Refused: ${relation.schemaname === undefined ? '' : `${relation.schemaname}.`}${relation.relname ?? ''} exposes ${secret}; it is not readable in readonly mode. ${allowedInstead(dialect)}`,
      );
    }
  }
}

/**
 * libpg-query reads strings with standard_conforming_strings on. When the server has it off
 * (or it is unknown), a backslash in a plain '...' string ends or continues the string
 * differently on the server: the two readings agree exactly when no plain string holds one.
 */
function refuseBackslashStrings(parser: PgParser, sql: string, context: SqlServerContext, dialect: SqlDialect): void {
  let tokens: { text: string; tokenName: string }[];
  try {
    tokens = parser.scanSync(sql).tokens;
  } catch {
    return; // the parse below reports the error
  }
  // Plain '...' and U&'...' strings; E'...' reads backslashes the same way under both settings,
  // and $$...$$ never does.
  const plain = tokens.find((token) => /^(?:[uU]&)?'/.test(token.text) && token.text.includes('\\'));
  if (plain === undefined) return;
  const setting =
    context.standardConformingStrings === false
      ? 'this server has standard_conforming_strings off'
      : 'standard_conforming_strings is not known for this server';
  throw new SqlRefusal(
    'sql.ambiguous-string',
    `Refused: the string ${excerpt(plain.text, 40)} holds a backslash and ${setting}, so the server could read where it ends differently. Write escapes as E'...' or drop the backslash. ${allowedInstead(dialect)}`,
  );
}

function readType(select: PgNode): string {
  if (select.valuesLists) return 'VALUES';
  return 'SELECT';
}

/** Checks PostgreSQL (and, as a strict approximation, Vertica) with the real PostgreSQL parser. */
/** Most block-comment openers (`/*`) a statement may have: see checkPostgres. */
const MAX_BLOCK_COMMENTS = 1000;

/** How many times `part` occurs in `text` (without overlaps). */
function countOf(text: string, part: string): number {
  let count = 0;
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + part.length)) count += 1;
  return count;
}

export async function checkPostgres(
  sql: string,
  dialect: 'postgres' | 'vertica',
  context: SqlServerContext = {},
): Promise<SqlDecision> {
  if (sql.trim() === '')
    throw new SqlRefusal('sql.empty', `Refused: no SQL statement was given. ${allowedInstead(dialect)}`);
  // libpg-query's scanner (PostgreSQL's own, in WebAssembly) takes time quadratic in the number of
  // block comments left open: 10,000 `/*` took 2.4 s and 50,000 over 12 s, during which rho's event
  // loop waits. No statement a person or a model writes opens a thousand comments.
  if (countOf(sql, '/*') > MAX_BLOCK_COMMENTS)
    throw new SqlRefusal(
      'sql.too-complex',
      `Refused: the statement opens more than ${MAX_BLOCK_COMMENTS} block comments (/*), more than this check reads. Send it without them. ${allowedInstead(dialect)}`,
    );
  const parser = loadedParser ?? (await loadParser());
  if (context.standardConformingStrings !== true && sql.includes('\\'))
    refuseBackslashStrings(parser, sql, context, dialect);
  activeCatalog = context.functions;
  let statements: { stmt?: PgNode }[];
  try {
    statements = parser.parseSync(sql).stmts ?? [];
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const grammar =
      dialect === 'vertica' ? 'the PostgreSQL grammar (used as a strict approximation of Vertica)' : 'PostgreSQL';
    throw new SqlRefusal(
      'sql.unparseable',
      `Refused: could not parse the statement as ${grammar} (${message}). ${allowedInstead(dialect)}`,
    );
  }
  if (statements.length === 0)
    throw new SqlRefusal('sql.empty', `Refused: no SQL statement was given. ${allowedInstead(dialect)}`);
  if (statements.length > 1) {
    throw new SqlRefusal(
      'sql.stacked-statements',
      `Refused: ${statements.length} statements were sent; send exactly one statement per call. ${allowedInstead(dialect)}`,
    );
  }
  const statement = statements[0]?.stmt ?? {};
  const [key, body] = Object.entries(statement)[0] ?? ['', {}];
  const node = body as PgNode;

  if (key === 'SelectStmt') {
    inspectRead(node, dialect);
    return { allowed: true, rule: 'sql.read', statementType: readType(node) };
  }
  if (key === 'VariableShowStmt') return { allowed: true, rule: 'sql.read', statementType: 'SHOW' };
  if (key === 'ExplainStmt') {
    const inner = (node.query ?? {}) as PgNode;
    const [innerKey, innerBody] = Object.entries(inner)[0] ?? ['', {}];
    const analyze =
      Array.isArray(node.options) &&
      node.options.some((option) => (option as { DefElem?: { defname?: string } }).DefElem?.defname === 'analyze');
    if (innerKey !== 'SelectStmt') {
      throw new SqlRefusal(
        analyze ? 'sql.explain-analyze-write' : 'sql.explain-write',
        `Refused: EXPLAIN${analyze ? ' ANALYZE' : ''} of ${statementName(innerKey)}${analyze ? ' runs the statement' : ' is only allowed for reads'}. EXPLAIN the equivalent SELECT instead. ${allowedInstead(dialect)}`,
        'EXPLAIN',
      );
    }
    inspectRead(innerBody, dialect);
    inspectRead(node.options, dialect);
    return { allowed: true, rule: 'sql.read', statementType: analyze ? 'EXPLAIN ANALYZE' : 'EXPLAIN' };
  }
  const name = statementName(key);
  throw new SqlRefusal(
    'sql.statement-type',
    `Refused: ${name} is not a read (statement: "${excerpt(sql)}"). ${allowedInstead(dialect)}`,
    name,
  );
}
