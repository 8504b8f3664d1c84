import type { SqlDecision, SqlDialect } from '../../check-sql.js';
import {
  builtinPostgresCatalog,
  judgePostgresFunction,
  judgePostgresRow,
  judgeVerticaFunction,
} from './function-policy.js';
import type { PostgresObjects, PostgresTypeRow, SqlFunctionCatalog, SqlServerContext } from './function-policy.js';
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
// The whole server context of the current walk (operators, casts, relations, the profile's functions).
let activeContext: SqlServerContext = {};

/** Why something a statement uses may not run: a rule and a phrase naming the chain that reaches it. */
interface Finding {
  rule: string;
  text: string;
}

/**
 * Verdicts on catalog objects, computed once per server context (a context is never changed
 * once read; a connection whose catalog changed reads a new one): functions, operators and
 * relations by oid, and whether an implicit cast may run a refused function.
 */
interface Verdicts {
  functions: Map<number, Finding | null>;
  operators: Map<number, Finding | null>;
  definitions: Map<string, Finding | null>;
  implicit?: Finding | null;
}
const verdictCache = new WeakMap<SqlServerContext, Verdicts>();

function verdicts(): Verdicts {
  let known = verdictCache.get(activeContext);
  if (known === undefined) {
    known = { functions: new Map(), operators: new Map(), definitions: new Map() };
    verdictCache.set(activeContext, known);
  }
  return known;
}

function functionFinding(oid: number): Finding | null {
  const cache = verdicts().functions;
  const known = cache.get(oid);
  if (known !== undefined) return known;
  const catalog = activeCatalog ?? builtinPostgresCatalog();
  const row = catalog.byOid.get(oid);
  let finding: Finding | null;
  if (row === undefined) {
    finding = {
      rule: 'sql.unknown-function',
      text: `a function (oid ${oid}) that is not in the catalog rho read for this connection`,
    };
  } else {
    const refusal = judgePostgresRow(row, catalog, activeContext.allowedFunctions);
    finding =
      refusal === undefined
        ? null
        : { rule: refusal.rule, text: `${row.schema}.${row.name}(), which may not be called: ${refusal.why}` };
  }
  cache.set(oid, finding);
  return finding;
}

function operatorFinding(objects: PostgresObjects, oid: number): Finding | null {
  const cache = verdicts().operators;
  const known = cache.get(oid);
  if (known !== undefined) return known;
  const operator = objects.operatorsByOid.get(oid);
  let finding: Finding | null = null;
  if (operator === undefined) {
    finding = {
      rule: 'sql.unknown-function',
      text: `an operator (oid ${oid}) that is not in the catalog rho read for this connection`,
    };
  } else {
    for (const fn of operator.functions) {
      const inner = functionFinding(fn);
      if (inner !== null) {
        finding = {
          rule: inner.rule,
          text: `the operator ${operator.schema}.${operator.name}, which runs ${inner.text}`,
        };
        break;
      }
    }
  }
  cache.set(oid, finding);
  return finding;
}

/** Rows named `name` that an unqualified name may resolve to (the search path), or in `schema`. */
function resolvable<T extends { schema: string }>(rows: readonly T[] | undefined, schema: string | undefined): T[] {
  const path = (activeCatalog ?? builtinPostgresCatalog()).searchPath;
  return (rows ?? []).filter((row) =>
    schema === undefined ? path.includes(row.schema) || row.schema.startsWith('pg_temp') : row.schema === schema,
  );
}

/** A cast to the type (any source) or the domain's constraints may run a refused function. */
function typeFinding(
  objects: PostgresObjects,
  schema: string | undefined,
  name: string,
  dialect: SqlDialect,
): Finding | null {
  for (const type of resolvable(objects.typesByName.get(name), schema)) {
    const finding = typeRowFinding(type, dialect);
    if (finding !== null) return finding;
  }
  return null;
}

function typeRowFinding(type: PostgresTypeRow, dialect: SqlDialect): Finding | null {
  if (type.kind === 'domain') {
    const inner = definitionFinding(`domain:${type.schema}.${type.name}`, type.definition, dialect);
    return inner === null
      ? null
      : { rule: inner.rule, text: `the domain ${type.schema}.${type.name}, whose CHECK constraints use ${inner.text}` };
  }
  for (const fn of type.functions) {
    const inner = functionFinding(fn);
    if (inner !== null)
      return {
        rule: inner.rule,
        text: `the cast from ${type.source ?? 'another type'} to ${type.schema}.${type.name}, which calls ${inner.text}`,
      };
  }
  return null;
}

/** An implicit cast PostgreSQL may apply in any statement, whose function may not run. */
function implicitCastFinding(objects: PostgresObjects, dialect: SqlDialect): Finding | null {
  const cache = verdicts();
  if (cache.implicit !== undefined) return cache.implicit;
  let finding: Finding | null = null;
  for (const rows of objects.typesByName.values()) {
    for (const type of rows) {
      if (type.kind !== 'cast' || type.context !== 'i') continue;
      const inner = typeRowFinding(type, dialect);
      if (inner !== null) {
        finding = {
          rule: inner.rule,
          text: `${inner.text}; PostgreSQL applies that cast implicitly wherever the types meet, so no statement on this database can be shown not to run it (allow the function in the profile or drop the cast)`,
        };
        break;
      }
    }
    if (finding !== null) break;
  }
  cache.implicit = finding;
  return finding;
}

// Views expanded inside views, at most this deep (PostgreSQL has no cycles; this bounds the work).
const MAX_EXPANSION_DEPTH = 32;
let expansionDepth = 0;

/**
 * Judges a query the server printed (a view's definition, policies, domain checks) as if the
 * statement contained it; the first refusal inside becomes a finding, its reason as the text.
 */
function definitionFinding(key: string, definition: string | undefined, dialect: SqlDialect): Finding | null {
  if (definition === undefined) return null;
  const cache = verdicts().definitions;
  const known = cache.get(key);
  if (known !== undefined) return known;
  let finding: Finding | null = null;
  if (expansionDepth >= MAX_EXPANSION_DEPTH) {
    finding = { rule: 'sql.too-complex', text: `views nested more than ${MAX_EXPANSION_DEPTH} deep` };
  } else {
    expansionDepth += 1;
    try {
      const statements = (loadedParser as PgParser).parseSync(definition).stmts ?? [];
      for (const statement of statements) inspectSelect(statement.stmt, dialect);
    } catch (error) {
      if (error instanceof SqlRefusal) {
        const suffix = ` ${allowedInstead(dialect)}`;
        let text = error.reason.replace(/^Refused: (the statement uses )?/, '');
        if (text.endsWith(suffix)) text = text.slice(0, -suffix.length);
        text = text.replace(/(\. Query without it\.|; it is not readable in readonly mode\.)$/, '');
        finding = { rule: error.rule, text };
      } else if (error instanceof RangeError) {
        throw error;
      } else {
        const message = error instanceof Error ? error.message : String(error);
        finding = { rule: 'sql.unparseable', text: `a definition rho could not parse (${message})` };
      }
    } finally {
      expansionDepth -= 1;
    }
  }
  cache.set(key, finding);
  return finding;
}

const RELATION_KINDS: Record<string, string> = {
  v: 'the view',
  f: 'the foreign table',
  F: 'the table',
  r: 'the table',
  p: 'the table',
};

/** What reading the relation runs: a view's query (expanded through the views it reads), a foreign table, RLS policies. */
function relationFinding(objects: PostgresObjects, oid: number, dialect: SqlDialect): Finding | null {
  const relation = objects.relationsByOid.get(oid);
  if (relation === undefined) return null;
  const what = `${RELATION_KINDS[relation.kind] ?? 'the relation'} ${relation.schema}.${relation.name}`;
  if (relation.kind === 'f' || relation.kind === 'F') {
    return {
      rule: 'sql.foreign-table',
      text: `${relation.kind === 'F' ? `${what}, which has a foreign table among its partitions or children, which` : `${what}, which`} reaches outside this database (another server, a file or a program through a foreign-data wrapper)`,
    };
  }
  const inner = definitionFinding(`relation:${oid}`, relation.definition, dialect);
  if (inner === null) return null;
  const via = relation.kind === 'v' ? 'whose query uses' : 'whose row-level security policies use';
  return { rule: inner.rule, text: `${what}, ${via} ${inner.text}` };
}

function refuseFinding(finding: Finding | null, dialect: SqlDialect): void {
  if (finding === null) return;
  throw new SqlRefusal(
    finding.rule,
    `Refused: the statement uses ${finding.text}. Query without it. ${allowedInstead(dialect)}`,
  );
}

/** Judges every operator named `parts` (an unqualified name: every one on the search path). */
function judgeOperator(parts: readonly string[], dialect: SqlDialect): void {
  const objects = activeContext.objects;
  if (objects === undefined || parts.length === 0 || parts.length > 2) return;
  const name = parts[parts.length - 1] ?? '';
  const schema = parts.length === 2 ? parts[0] : undefined;
  for (const operator of resolvable(objects.operatorsByName.get(name), schema))
    refuseFinding(operatorFinding(objects, operator.oid), dialect);
}

// Operators a construct uses without naming them (BETWEEN compares with >= and <=, ...).
const BETWEEN_OPERATORS = ['>=', '<=', '<', '>'];

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
        : judgePostgresFunction(name, activeCatalog ?? builtinPostgresCatalog(), activeContext.allowedFunctions);
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
        dialect === 'vertica'
          ? judgeVerticaFunction([last], catalog)
          : judgePostgresFunction([last], catalog, activeContext.allowedFunctions);
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
    const objects = activeContext.objects;
    if (objects !== undefined) {
      for (const row of resolvable(objects.relationsByName.get(relation.relname ?? ''), relation.schemaname))
        refuseFinding(relationFinding(objects, row.oid, dialect), dialect);
    }
  }
  if (activeContext.objects === undefined) return;
  // Operators, named or implied by the construct, resolve to functions that run.
  if (key === 'A_Expr') {
    const expression = value as { kind?: string; name?: unknown };
    if (expression.kind?.startsWith('AEXPR_BETWEEN') || expression.kind?.startsWith('AEXPR_NOT_BETWEEN')) {
      for (const operator of BETWEEN_OPERATORS) judgeOperator([operator], dialect);
    } else judgeOperator(stringParts(expression.name), dialect);
  }
  if (key === 'SubLink') judgeOperator(stringParts((value as { operName?: unknown }).operName), dialect);
  if (key === 'SortBy') judgeOperator(stringParts((value as { useOp?: unknown }).useOp), dialect);
  if (key === 'CaseExpr' && (value as { arg?: unknown }).arg !== undefined) judgeOperator(['='], dialect);
  if (key === 'JoinExpr') {
    const join = value as { usingClause?: unknown[]; isNatural?: boolean };
    if (join.isNatural === true || (join.usingClause?.length ?? 0) > 0) judgeOperator(['='], dialect);
  }
  // A cast runs the cast's function, and a cast to a domain its CHECK constraints.
  if (key === 'TypeCast') {
    const names = stringParts((value as { typeName?: { names?: unknown } }).typeName?.names);
    const name = names[names.length - 1];
    if (name !== undefined && names.length <= 2)
      refuseFinding(
        typeFinding(activeContext.objects, names.length === 2 ? names[0] : undefined, name, dialect),
        dialect,
      );
  }
}

// Role views whose settings column shows other roles' settings (pg_db_role_setting's rows).
const ROLE_VIEWS = new Set(['pg_roles', 'pg_user']);
const ROLE_SETTINGS = new Set(['rolconfig', 'useconfig']);

/**
 * A read with pg_roles or pg_user may not show their settings column: not by name, not through
 * `*`, not as a whole row (`SELECT r FROM pg_roles r`, `row_to_json(r)`). Other columns stay readable.
 */
function refuseRoleSettings(tree: unknown, dialect: SqlDialect): void {
  const names = new Set<string>();
  const collect = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) collect(item);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    for (const key in node as PgNode) {
      const value = (node as PgNode)[key];
      if (key === 'RangeVar') {
        const relation = value as { relname?: string; schemaname?: string; alias?: { aliasname?: string } };
        const name = relation.relname ?? '';
        if (ROLE_VIEWS.has(name) && (relation.schemaname === undefined || relation.schemaname === 'pg_catalog')) {
          names.add(name);
          if (relation.alias?.aliasname !== undefined) names.add(relation.alias.aliasname);
        }
      }
      if (value !== null && typeof value === 'object') collect(value);
    }
  };
  collect(tree);
  if (names.size === 0) return;
  const refuse = (what: string): never => {
    throw new SqlRefusal(
      'sql.sensitive-catalog',
      `Refused: ${what} shows other roles' settings (rolconfig/useconfig, which may hold secrets); it is not readable in readonly mode. Name the columns you need, without rolconfig. ${allowedInstead(dialect)}`,
    );
  };
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    for (const key in node as PgNode) {
      const value = (node as PgNode)[key];
      if (key === 'String') {
        const text = (value as { sval?: string }).sval ?? '';
        if (ROLE_SETTINGS.has(text)) refuse(`the column ${text}`);
      }
      if (key === 'ColumnRef') {
        const fields = (value as { fields?: unknown[] }).fields ?? [];
        const only = fields.length === 1 ? (fields[0] as { String?: { sval?: string } }).String?.sval : undefined;
        if (only !== undefined && names.has(only)) refuse(`the whole row of ${only}`);
        // `*`, or `name.*` of a role view; `other.*` names another relation's columns.
        const star = fields.findIndex((field) => (field as { A_Star?: unknown }).A_Star !== undefined);
        const qualifier = star > 0 ? (fields[star - 1] as { String?: { sval?: string } }).String?.sval : undefined;
        if (star === 0 || (qualifier !== undefined && names.has(qualifier)))
          refuse(`* over ${[...names].filter((name) => ROLE_VIEWS.has(name)).join(', ')}`);
      }
      if (value !== null && typeof value === 'object') walk(value);
    }
  };
  walk(tree);
}

/** Checks a read: the walk for hidden writes and refused calls, then the role settings. */
function inspectSelect(node: unknown, dialect: SqlDialect): void {
  inspectRead(node, dialect);
  refuseRoleSettings(node, dialect);
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
  activeContext = context;
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

  if ((key === 'SelectStmt' || key === 'ExplainStmt') && context.objects !== undefined)
    refuseFinding(implicitCastFinding(context.objects, dialect), dialect);
  if (key === 'SelectStmt') {
    inspectSelect(node, dialect);
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
    inspectSelect(innerBody, dialect);
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
