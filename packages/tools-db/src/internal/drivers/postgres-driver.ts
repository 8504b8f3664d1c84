import type { Sql } from 'postgres';
import { buildFunctionCatalog, buildPostgresObjects } from '@rho/permissions/internal';
import type {
  PostgresOperatorRow,
  PostgresRelationRow,
  PostgresTypeRow,
  SqlFunctionRow,
  SqlServerContext,
} from '@rho/permissions/internal';
import type { DatabaseConfig } from '../../database-config.js';
import type { DialectDriver, DriverConnection, RowSink, RunOptions, RunOutcome } from '../driver.js';
import { loadDriver } from '../load-driver.js';
import { ROW_BATCH_SIZE, StatementError } from '../run-error.js';

type PostgresFactory = typeof import('postgres');

// Date and time values are passed through as the server's text: parsing them into JS Dates
// would shift `timestamp without time zone` by the local offset and lose microseconds.
const DATE_TIME_OIDS = [1082, 1083, 1114, 1184, 1266];

// Extended-protocol flag: postgres.js 3.4.9 honours it but leaves it out of its types. The
// extended protocol makes the server reject multi-statement text ("cannot insert multiple
// commands into a prepared statement"); the simple protocol would run `commit; insert ...`.
const EXTENDED_PROTOCOL = { simple: false } as unknown as Parameters<Sql['unsafe']>[2];

// A user-defined function's body: its source text, or (PostgreSQL 14 and later) its SQL-standard body.
const FUNCTION_BODY = `CASE WHEN p.prosrc <> '' OR pg_catalog.current_setting('server_version_num')::int < 140000 THEN p.prosrc
  ELSE pg_catalog.pg_get_function_sqlbody(p.oid) END`;

// The catalogs whose rows decide what a statement runs, as row counts and sums of row versions
// (xmin) of the objects created after initdb (oid 16384 and up, FirstNormalObjectId, read
// through each catalog's oid index): creating, replacing or altering a function, operator,
// cast, type, domain constraint, view, policy or schema changes it, as does a change of the
// search path. Objects of initdb itself change only by a superuser's hand.
const CATALOG_FINGERPRINT = `SELECT pg_catalog.concat_ws(',', pg_catalog.array_to_string(pg_catalog.current_schemas(true), ' '),
  ${[
    'pg_proc',
    'pg_operator',
    'pg_cast',
    'pg_type',
    'pg_class',
    'pg_rewrite',
    'pg_policy',
    'pg_constraint',
    'pg_namespace',
  ]
    .map(
      (table) =>
        `(SELECT count(*) || ':' || COALESCE(sum(xmin::text::int8), 0) FROM pg_catalog.${table} WHERE oid >= 16384)`,
    )
    .join(',\n  ')})`;

// Casts whose function is not a non-volatile pg_catalog one, and the CHECK constraints of
// domains (their own and their base domains') outside pg_catalog and information_schema, printed
// as one query.
const TYPES_WITH_FUNCTIONS = `WITH RECURSIVE chain(domain, member) AS (
    SELECT oid, oid FROM pg_catalog.pg_type WHERE typtype = 'd'
    UNION ALL
    SELECT c.domain, b.oid FROM chain c JOIN pg_catalog.pg_type t ON t.oid = c.member
      JOIN pg_catalog.pg_type b ON b.oid = t.typbasetype WHERE b.typtype = 'd'),
  checks AS (
    SELECT c.domain, 'SELECT ' || pg_catalog.string_agg('(' || pg_catalog.pg_get_expr(k.conbin, 0) || ')', ', ') AS definition
      FROM chain c JOIN pg_catalog.pg_constraint k ON k.contypid = c.member AND k.contype = 'c' AND k.conbin IS NOT NULL
      GROUP BY c.domain)
  SELECT 'cast', tn.nspname, t.typname, c.castcontext::text, pg_catalog.format_type(c.castsource, NULL),
      ARRAY[c.castfunc::oid::int8], NULL
    FROM pg_catalog.pg_cast c JOIN pg_catalog.pg_type t ON t.oid = c.casttarget
    JOIN pg_catalog.pg_namespace tn ON tn.oid = t.typnamespace
    JOIN pg_catalog.pg_proc p ON p.oid = c.castfunc JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
    WHERE c.castfunc <> 0 AND (pn.nspname <> 'pg_catalog' OR p.provolatile = 'v')
  UNION ALL
  SELECT 'domain', n.nspname, t.typname, NULL, NULL, '{}'::int8[], k.definition
    FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
    JOIN checks k ON k.domain = t.oid
    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')`;

// Views (outside pg_catalog and information_schema) with their definitions, foreign tables,
// tables with a foreign table among their partitions or children (kind `F`: reading the parent
// reads them), and tables with row-level security policies with the policies that apply to reads.
const RELATIONS_THAT_RUN_CODE = `WITH RECURSIVE below(parent, child) AS (
    SELECT inhparent, inhrelid FROM pg_catalog.pg_inherits
    UNION
    SELECT b.parent, i.inhrelid FROM below b JOIN pg_catalog.pg_inherits i ON i.inhparent = b.child),
  foreign_parents AS (
    SELECT DISTINCT b.parent FROM below b JOIN pg_catalog.pg_class f ON f.oid = b.child WHERE f.relkind = 'f')
  SELECT c.oid::int8, n.nspname, c.relname,
    CASE WHEN c.relkind IN ('r', 'p') AND c.oid IN (SELECT parent FROM foreign_parents) THEN 'F' ELSE c.relkind::text END,
    CASE WHEN c.relkind = 'v' THEN pg_catalog.pg_get_viewdef(c.oid)
      WHEN c.relkind IN ('r', 'p') THEN (
        SELECT 'SELECT ' || pg_catalog.string_agg('(' || pg_catalog.pg_get_expr(p.polqual, p.polrelid) || ')', ', ')
          FROM pg_catalog.pg_policy p WHERE p.polrelid = c.oid AND p.polcmd IN ('r', '*') AND p.polqual IS NOT NULL) END
  FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
    AND (c.relkind IN ('v', 'f')
      OR c.oid IN (SELECT parent FROM foreign_parents)
      OR (c.relkind IN ('r', 'p') AND c.relrowsecurity AND EXISTS (SELECT 1 FROM pg_catalog.pg_policy p WHERE p.polrelid = c.oid)))`;

/**
 * A connection of the tools: one server session, used by one call at a time (the alias cache
 * queues calls). After a read-only statement the session is rolled back and reset; that runs
 * after the result has been returned, and the next statement waits for it.
 */
class PostgresConnection implements DriverConnection {
  private broken: Error | undefined;
  /** The rollback and reset after the last read-only statement; settles once the session is clean. */
  private reset: Promise<void> = Promise.resolve();

  constructor(
    private readonly sql: Sql,
    private readonly socket: { closed: boolean },
  ) {}

  isBroken(): boolean {
    return this.broken !== undefined || this.socket.closed;
  }

  async run(text: string, sink: RowSink, options: RunOptions): Promise<RunOutcome> {
    // A statement never runs on a session whose previous reset has not finished: a failed
    // reset marks the connection broken, and the statement is refused rather than run on it.
    await this.reset;
    if (this.broken !== undefined) throw this.broken;
    // A cancel that came while the connection opened (or its catalog was read) fired before
    // the listener below existed, and postgres.js cannot cancel a query it has not sent yet.
    if (options.signal?.aborted === true) throw new StatementError('the statement was cancelled');
    const sql = this.sql;
    // BEGIN and the statement are pipelined (written together): no round trip waits on BEGIN.
    const begin = options.readonly ? sql.unsafe('BEGIN READ ONLY').execute() : undefined;
    begin?.catch(() => undefined);
    const query = sql.unsafe(text, (options.params ?? []) as never[], EXTENDED_PROTOCOL).values();
    const abort = (): void => {
      void query.cancel();
    };
    options.signal?.addEventListener('abort', abort, { once: true });
    let columnsSent = false;
    let outcome: RunOutcome;
    const sendColumns = async (columns: { name: string }[] | null | undefined): Promise<void> => {
      if (columnsSent || columns === null || columns === undefined || columns.length === 0) return;
      columnsSent = true;
      await sink.columns(columns.map((column) => column.name));
    };
    // postgres.js awaits the callback for every batch but the last (it calls it from
    // CommandComplete without awaiting), so batches are chained here to run strictly in order
    // and the last one is awaited below.
    let chain: Promise<void> = Promise.resolve();
    let lastBatch: unknown;
    const onBatch = (rows: unknown): Promise<void> => {
      lastBatch = rows;
      const step = chain.then(async () => {
        await sendColumns((rows as { columns?: { name: string }[] | null }).columns);
        await sink.rows(rows as unknown[][]);
      });
      step.catch(() => undefined);
      chain = step;
      return step;
    };
    try {
      let result: unknown;
      if (options.backpressure === true) {
        result = await query.cursor(ROW_BATCH_SIZE, onBatch as never);
      } else {
        // A cursor costs one more round trip (its final Sync); a fast sink does not need one.
        let batch: unknown[][] & { columns?: { name: string }[] | null } = [];
        const statement = query as unknown as { statement?: { columns?: { name: string }[] | null } };
        result = await query.forEach((row) => {
          batch.push(row as unknown[]);
          if (batch.length >= ROW_BATCH_SIZE) {
            batch.columns = statement.statement?.columns ?? null;
            void onBatch(batch);
            batch = [];
          }
        });
        if (batch.length > 0) {
          batch.columns = statement.statement?.columns ?? null;
          void onBatch(batch);
          lastBatch = undefined;
        }
      }
      await chain;
      // Utility statements (EXPLAIN, SHOW) report no row count, and postgres.js then skips the
      // callback for their rows: they arrive only as the final result.
      const final = result as unknown as (unknown[][] & { columns?: { name: string }[] | null }) | undefined;
      if (final !== undefined && final !== lastBatch && final.length > 0) {
        await sendColumns(final.columns);
        await sink.rows(final);
      }
      const statementColumns = (query as unknown as { statement?: { columns?: { name: string }[] | null } }).statement
        ?.columns;
      await sendColumns(final?.columns ?? statementColumns);
      const count = (result as unknown as { count?: number | null })?.count;
      outcome = columnsSent
        ? { hasResultSet: true }
        : { hasResultSet: false, ...(typeof count === 'number' ? { affectedRows: count } : {}) };
      await begin;
    } catch (error) {
      // Let a batch still being written finish before the caller cleans up after the error.
      await chain.catch(() => undefined);
      throw error;
    } finally {
      options.signal?.removeEventListener('abort', abort);
      if (options.readonly) {
        // Always roll back, then reset everything a statement may have left on the session
        // (settings, prepared statements, LISTEN, advisory locks, temp objects) before reuse.
        // The result is already complete, so the call does not wait for this round trip; the
        // next statement does.
        const rollback = sql.unsafe('ROLLBACK').execute();
        const discard = sql.unsafe('DISCARD ALL').execute();
        this.reset = Promise.all([rollback, discard]).then(
          () => undefined,
          (error: unknown) => {
            this.broken = Object.assign(new Error(`the session could not be reset (${(error as Error).message})`), {
              code: 'CONNECTION_CLOSED',
            });
            void this.close();
          },
        );
      }
    }
    return outcome;
  }

  async ping(): Promise<void> {
    await this.reset;
    if (this.broken !== undefined) throw this.broken;
    await this.sql.unsafe('SELECT 1');
  }

  /** The catalog fingerprint the last server context was read under (see serverContextChanged). */
  private fingerprint: string | undefined;

  /**
   * What the SQL policy judges a statement against: every pg_proc row (volatility, language,
   * origin: pg_catalog, an extension's or user-defined, with the body of user-defined ones),
   * every operator with the functions it may run, the casts and domains that run functions, the
   * relations whose reading runs something (views, foreign tables, tables with row-level
   * security policies) with what they depend on, the search path and standard_conforming_strings.
   */
  async serverContext(): Promise<SqlServerContext> {
    await this.reset;
    if (this.broken !== undefined) throw this.broken;
    // The fingerprint is read first: a change committed while the rest is read shows as a
    // different fingerprint at the next statement, which then reads everything again.
    const [fingerprint, functions, operators, types, relations, settings] = await Promise.all([
      this.sql.unsafe(CATALOG_FINGERPRINT).values(),
      // An aggregate is always marked immutable, whatever its support functions are: it takes
      // the worst volatility of its transition, final, combine and (de)serial functions
      // ('i' < 's' < 'v', so the greatest letter is the worst).
      this.sql
        .unsafe(
          `SELECT p.oid::int8, n.nspname, p.proname, GREATEST(p.provolatile::text, COALESCE(agg.vol, 'i')), l.lanname, l.lanpltrusted,
            CASE WHEN n.nspname IN ('pg_catalog', 'information_schema') THEN 'builtin'
                 WHEN ext.objid IS NOT NULL THEN 'extension' ELSE 'user' END,
            CASE WHEN n.nspname NOT IN ('pg_catalog', 'information_schema') AND ext.objid IS NULL
                 THEN ${FUNCTION_BODY} END
        FROM pg_catalog.pg_proc p
        JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
        JOIN pg_catalog.pg_language l ON l.oid = p.prolang
        LEFT JOIN (SELECT DISTINCT objid FROM pg_catalog.pg_depend
            WHERE classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND deptype = 'e') ext ON ext.objid = p.oid
        LEFT JOIN (SELECT a.aggfnoid, max(f.provolatile::text) AS vol FROM pg_catalog.pg_aggregate a
            CROSS JOIN LATERAL unnest(ARRAY[a.aggtransfn, a.aggfinalfn, a.aggcombinefn, a.aggserialfn, a.aggdeserialfn,
              a.aggmtransfn, a.aggminvtransfn, a.aggmfinalfn]::oid[]) AS s(fn)
            JOIN pg_catalog.pg_proc f ON f.oid = s.fn
            GROUP BY a.aggfnoid) agg ON agg.aggfnoid = p.oid`,
        )
        .values(),
      // Every operator with its function and those of its commutator and negator (the planner
      // may swap an operator for either).
      this.sql
        .unsafe(
          `SELECT o.oid::int8, n.nspname, o.oprname,
            ARRAY(SELECT f::int8 FROM unnest(ARRAY[o.oprcode::oid, c.oprcode::oid, g.oprcode::oid]) AS u(f)
              WHERE f IS NOT NULL AND f <> 0)
          FROM pg_catalog.pg_operator o JOIN pg_catalog.pg_namespace n ON n.oid = o.oprnamespace
          LEFT JOIN pg_catalog.pg_operator c ON c.oid = o.oprcom
          LEFT JOIN pg_catalog.pg_operator g ON g.oid = o.oprnegate`,
        )
        .values(),
      this.sql.unsafe(TYPES_WITH_FUNCTIONS).values(),
      this.sql.unsafe(RELATIONS_THAT_RUN_CODE).values(),
      this.sql
        .unsafe(
          `SELECT pg_catalog.array_to_string(pg_catalog.current_schemas(true), ','), pg_catalog.current_setting('standard_conforming_strings')`,
        )
        .values(),
    ]);
    const rows: SqlFunctionRow[] = (
      functions as unknown as [string, string, string, string, string, boolean, string, string | null][]
    ).map(([oid, schema, name, volatility, language, trusted, origin, body]) => ({
      oid: Number(oid),
      schema,
      name,
      volatility: volatility === 'i' || volatility === 's' ? volatility : 'v',
      language,
      trusted,
      origin: origin === 'builtin' || origin === 'extension' ? origin : 'user',
      ...(body === null ? {} : { body }),
    }));
    const operatorRows: PostgresOperatorRow[] = (operators as unknown as [string, string, string, string[]][]).map(
      ([oid, schema, name, fns]) => ({ oid: Number(oid), schema, name, functions: fns.map(Number) }),
    );
    const typeRows: PostgresTypeRow[] = (
      types as unknown as [string, string, string, string | null, string | null, string[], string | null][]
    ).map(([kind, schema, name, context, source, fns, definition]) => ({
      kind: kind === 'cast' ? 'cast' : 'domain',
      schema,
      name,
      ...(context === 'i' || context === 'a' || context === 'e' ? { context } : {}),
      ...(source === null ? {} : { source }),
      functions: fns.map(Number),
      ...(definition === null ? {} : { definition }),
    }));
    const relationRows: PostgresRelationRow[] = (
      relations as unknown as [string, string, string, string, string | null][]
    ).map(([oid, schema, name, kind, definition]) => ({
      oid: Number(oid),
      schema,
      name,
      kind,
      ...(definition === null ? {} : { definition }),
    }));
    const [path, conforming] = (settings as unknown as [string, string][])[0] ?? ['', 'off'];
    this.fingerprint = String((fingerprint as unknown as [string][])[0]?.[0] ?? '');
    return {
      functions: buildFunctionCatalog(
        rows,
        path.split(',').filter((schema) => schema !== ''),
      ),
      objects: buildPostgresObjects(operatorRows, typeRows, relationRows),
      standardConformingStrings: conforming === 'on',
    };
  }

  /**
   * Whether the catalog changed since the server context was read (a function, operator, cast,
   * type, view, policy or schema created, replaced or altered by any session): one query over
   * the catalogs' row versions, run before every readonly decision.
   */
  async serverContextChanged(): Promise<boolean> {
    await this.reset;
    if (this.broken !== undefined) throw this.broken;
    if (this.fingerprint === undefined) return true;
    const [row] = await this.sql.unsafe(CATALOG_FINGERPRINT).values();
    return String((row as unknown as [string] | undefined)?.[0] ?? '') !== this.fingerprint;
  }

  async writeAccess(): Promise<string | undefined> {
    const [row] = await this.sql.unsafe(`
      SELECT r.rolsuper AS superuser,
        EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
                  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
                  AND (CASE WHEN c.relkind = 'S' THEN has_sequence_privilege(c.oid, 'UPDATE')
                            ELSE has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE') END)) AS modify,
        has_database_privilege(current_database(), 'CREATE') AS create_schema,
        EXISTS (SELECT 1 FROM pg_namespace n WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
                  AND n.nspname NOT LIKE 'pg_%' AND has_schema_privilege(n.oid, 'CREATE')) AS create_table
      FROM pg_roles r WHERE r.rolname = current_user`);
    if (row === undefined) return undefined;
    const reasons: string[] = [];
    if (row.superuser === true) reasons.push('it is a superuser');
    if (row.modify === true) reasons.push('it may INSERT, UPDATE, DELETE or TRUNCATE some tables');
    if (row.create_schema === true) reasons.push('it may create schemas');
    if (row.create_table === true) reasons.push('it may create tables in some schema');
    return reasons.length === 0 ? undefined : reasons.join('; ');
  }

  async close(): Promise<void> {
    await this.sql.end({ timeout: 1 }).catch(() => undefined);
  }
}

/** PostgreSQL through postgres.js. */
export const postgresDriver: DialectDriver = {
  type: 'postgres',
  label: 'PostgreSQL',
  readsServerContext: true,
  async connect(config: DatabaseConfig, settings: { readonly: boolean }): Promise<DriverConnection> {
    const module = await loadDriver<{ default: PostgresFactory }>('postgres', 'PostgreSQL');
    const postgres = module.default;
    const connection: Record<string, string> = {
      application_name: 'rho',
      statement_timeout: String(Math.round(config.statementTimeoutSeconds * 1000)),
    };
    // Startup parameters become the session's reset values, so DISCARD ALL restores them.
    if (settings.readonly) connection.default_transaction_read_only = 'on';
    const connect = postgres as unknown as (options: Record<string, unknown>) => Sql;
    // Set when the server (or anything else) closes the session, so the alias reconnects
    // instead of sending the next statement into a closed socket.
    const socket = { closed: false };
    const sql = connect({
      host: config.host ?? 'localhost',
      port: config.port ?? 5432,
      database: config.database,
      username: config.user ?? '',
      password: config.password ?? '',
      max: 1,
      prepare: false,
      connect_timeout: 10,
      idle_timeout: 0,
      onnotice: () => undefined,
      onparameter: () => undefined,
      onclose: () => {
        socket.closed = true;
      },
      connection,
      types: {
        dateTimeText: {
          to: 1184,
          from: DATE_TIME_OIDS,
          serialize: (value: unknown) => String(value),
          parse: (value: string) => value,
        },
      },
    });
    try {
      await sql.unsafe('SELECT 1');
    } catch (error) {
      await sql.end({ timeout: 0 }).catch(() => undefined);
      throw error;
    }
    return new PostgresConnection(sql, socket);
  },
  listTables(pattern, schema) {
    const schemaFilter =
      schema === undefined
        ? "table_schema NOT IN ('pg_catalog', 'information_schema') AND table_schema NOT LIKE 'pg_toast%'"
        : 'table_schema = $2';
    return {
      sql: `SELECT table_schema, table_name, table_type FROM information_schema.tables WHERE table_name LIKE $1 AND ${schemaFilter} ORDER BY table_schema, table_name`,
      params: schema === undefined ? [pattern] : [pattern, schema],
    };
  },
  describeColumns(table, schema) {
    return {
      sql: `SELECT a.attname, format_type(a.atttypid, a.atttypmod), CASE WHEN a.attnotnull THEN 'NO' ELSE 'YES' END,
              pg_get_expr(d.adbin, d.adrelid)
            FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
            WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
      params: [qualified(table, schema)],
    };
  },
  describePrimaryKey(table, schema) {
    return {
      sql: `SELECT a.attname FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, position)
            JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
            WHERE i.indrelid = to_regclass($1) AND i.indisprimary ORDER BY k.position`,
      params: [qualified(table, schema)],
    };
  },
  describeForeignKeys(table, schema) {
    return {
      sql: `SELECT c.conname, a.attname, c.confrelid::regclass::text, fa.attname
            FROM pg_constraint c CROSS JOIN LATERAL unnest(c.conkey, c.confkey) WITH ORDINALITY AS k(attnum, fattnum, position)
            JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
            JOIN pg_attribute fa ON fa.attrelid = c.confrelid AND fa.attnum = k.fattnum
            WHERE c.conrelid = to_regclass($1) AND c.contype = 'f' ORDER BY c.conname, k.position`,
      params: [qualified(table, schema)],
    };
  },
  describeIndexes(table, schema) {
    return {
      sql: `SELECT ic.relname, CASE WHEN i.indisunique THEN 'UNIQUE' ELSE 'NONUNIQUE' END,
              (SELECT string_agg(pg_get_indexdef(i.indexrelid, k.position::int, true), ', ' ORDER BY k.position)
                 FROM generate_series(1, i.indnkeyatts) AS k(position))
            FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
            WHERE i.indrelid = to_regclass($1) ORDER BY ic.relname`,
      params: [qualified(table, schema)],
    };
  },
};

// to_regclass takes a possibly qualified name; quoting keeps mixed-case names intact.
function qualified(table: string, schema: string | undefined): string {
  const quote = (name: string): string => (/^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`);
  if (table.includes('.') && schema === undefined) return table;
  return schema === undefined ? quote(table) : `${quote(schema)}.${quote(table)}`;
}
