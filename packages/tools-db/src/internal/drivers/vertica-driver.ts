import { buildFunctionCatalog } from '@rho/permissions/internal';
import type { SqlFunctionRow, SqlServerContext } from '@rho/permissions/internal';
import type { DatabaseConfig } from '../../database-config.js';
import type { DialectDriver, DriverConnection, RowSink, RunOptions, RunOutcome } from '../driver.js';
import { loadDriver } from '../load-driver.js';
import { ROW_BATCH_SIZE } from '../run-error.js';

/** A vertica-nodejs query object: an event emitter of 'row', 'end' and 'error'. */
export interface VerticaQueryLike {
  on(event: 'row', listener: (row: unknown[], result: { fields?: { name: string }[] }) => void): unknown;
  on(
    event: 'end',
    listener: (result: { fields?: { name: string }[]; command?: string; rowCount?: number | null } | undefined) => void,
  ): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** The part of a vertica-nodejs Client rho uses (a test fake implements just this). */
export interface VerticaClientLike {
  connect(): Promise<void>;
  query(text: string): Promise<{ rows: unknown[][] | Record<string, unknown>[]; fields?: { name: string }[] }>;
  query(query: VerticaQueryLike): VerticaQueryLike;
  end(): Promise<void>;
  /** The socket, paused while a slow consumer catches up. */
  connection?: { stream?: { pause(): void; resume(): void } };
}

/** The part of the vertica-nodejs module rho uses. */
export interface VerticaModuleLike {
  Client: new (config: Record<string, unknown>) => VerticaClientLike;
  Query: new (config: { text: string; rowMode: 'array' }) => VerticaQueryLike;
}

/** Where vertica-nodejs comes from; tests replace it with a fake at the driver boundary. */
export type VerticaModuleLoader = () => Promise<VerticaModuleLike>;

const loadVertica: VerticaModuleLoader = async () => {
  const module = await loadDriver<{ default?: VerticaModuleLike } & VerticaModuleLike>('vertica-nodejs', 'Vertica');
  return module.default ?? module;
};

/** A SQL string literal; Vertica keeps standard_conforming_strings on, so only quotes double. */
export function verticaLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  return `'${String(value).replace(/'/g, "''")}'`;
}

// vertica-nodejs has no server-side bind for simple queries; rho's own catalog SQL carries its
// parameters as `$n` placeholders that are replaced by literals here (model SQL has none).
function bind(sql: string, params: readonly unknown[]): string {
  return sql.replace(/\$(\d+)/g, (_match, index: string) => verticaLiteral(params[Number(index) - 1]));
}

const READ_ONLY_SESSION = 'SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY';

class VerticaConnection implements DriverConnection {
  constructor(
    private readonly vertica: VerticaModuleLike,
    private readonly client: VerticaClientLike,
  ) {}

  async run(sql: string, sink: RowSink, options: RunOptions): Promise<RunOutcome> {
    const text = options.params === undefined ? sql : bind(sql, options.params);
    if (options.readonly) await this.client.query('START TRANSACTION READ ONLY');
    try {
      return await this.stream(text, sink, options);
    } finally {
      if (options.readonly) {
        await this.client.query('ROLLBACK');
        // Vertica has no DISCARD ALL: put the read-only session default back in case the
        // statement changed it.
        await this.client.query(READ_ONLY_SESSION);
      }
    }
  }

  private stream(text: string, sink: RowSink, options: RunOptions): Promise<RunOutcome> {
    return new Promise<RunOutcome>((resolve, reject) => {
      const query = this.client.query(new this.vertica.Query({ text, rowMode: 'array' }));
      const socket = this.client.connection?.stream;
      let columnsSent = false;
      let batch: unknown[][] = [];
      let chain: Promise<void> = Promise.resolve();
      let failed = false;
      const fail = (error: unknown): void => {
        if (!failed) {
          failed = true;
          reject(error);
        }
      };
      const sendColumns = (fields: { name: string }[] | undefined): void => {
        if (columnsSent || fields === undefined || fields.length === 0) return;
        columnsSent = true;
        const names = fields.map((field) => field.name);
        chain = chain.then(() => sink.columns(names)).catch(fail);
      };
      const flush = (): void => {
        const rows = batch;
        batch = [];
        socket?.pause();
        chain = chain
          .then(() => sink.rows(rows))
          .then(() => socket?.resume())
          .catch(fail);
      };
      query.on('row', (row, result) => {
        sendColumns(result.fields);
        batch.push(row);
        if (batch.length >= ROW_BATCH_SIZE) flush();
        if (options.signal?.aborted) fail(new Error('the statement was cancelled'));
      });
      query.on('error', fail);
      query.on('end', (result) => {
        sendColumns(result?.fields);
        if (batch.length > 0) flush();
        chain.then(() => {
          if (failed) return;
          if (columnsSent) resolve({ hasResultSet: true });
          else
            resolve({
              hasResultSet: false,
              ...(typeof result?.rowCount === 'number' ? { affectedRows: result.rowCount } : {}),
            });
        }, fail);
      });
    });
  }

  async ping(): Promise<void> {
    await this.client.query('SELECT 1');
  }

  /**
   * Vertica keeps no catalog of its built-in functions; its user-defined functions (SQL macros
   * and UDxs, `v_catalog.user_functions`) are read so that a VOLATILE one is refused.
   */
  async serverContext(): Promise<SqlServerContext> {
    const result = await this.client.query(
      'SELECT schema_name, function_name, volatility FROM v_catalog.user_functions',
    );
    const rows: SqlFunctionRow[] = result.rows.map((row) => {
      const [schema, name, volatility] = (Array.isArray(row) ? row : Object.values(row)).map((value) =>
        String(value ?? ''),
      );
      const level = (volatility ?? '').toUpperCase();
      return {
        schema: (schema ?? '').toLowerCase(),
        name: (name ?? '').toLowerCase(),
        volatility: level === 'IMMUTABLE' ? 'i' : level === 'STABLE' ? 's' : 'v',
        language: 'udx',
        trusted: true,
      };
    });
    return { functions: buildFunctionCatalog(rows, []) };
  }

  async writeAccess(): Promise<string | undefined> {
    const result = await this.client.query(
      `SELECT u.is_super_user, (SELECT COUNT(*) FROM v_catalog.grants g WHERE g.grantee = CURRENT_USER()
          AND (g.privileges_description ILIKE '%INSERT%' OR g.privileges_description ILIKE '%UPDATE%'
               OR g.privileges_description ILIKE '%DELETE%' OR g.privileges_description ILIKE '%CREATE%'))
       FROM v_catalog.users u WHERE u.user_name = CURRENT_USER()`,
    );
    const row = result.rows[0] as unknown[] | Record<string, unknown> | undefined;
    if (row === undefined) return undefined;
    const values = Array.isArray(row) ? row : Object.values(row);
    const reasons: string[] = [];
    if (values[0] === true || values[0] === 't') reasons.push('it is a superuser');
    if (Number(values[1] ?? 0) > 0) reasons.push('it has INSERT, UPDATE, DELETE or CREATE grants');
    return reasons.length === 0 ? undefined : reasons.join('; ');
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }
}

/** Builds the Vertica driver; `load` is replaced by tests with a fake vertica-nodejs module. */
export function createVerticaDriver(load: VerticaModuleLoader = loadVertica): DialectDriver {
  return {
    type: 'vertica',
    label: 'Vertica',
    readsServerContext: true,
    async connect(config: DatabaseConfig, settings: { readonly: boolean }): Promise<DriverConnection> {
      const vertica = await load();
      const client = new vertica.Client({
        host: config.host ?? 'localhost',
        port: config.port ?? 5433,
        database: config.database,
        user: config.user ?? '',
        password: config.password ?? '',
        client_label: 'rho',
      });
      await client.connect();
      try {
        // RUNTIMECAP is Vertica's per-statement time limit for the session.
        await client.query(
          `SET SESSION RUNTIMECAP '${Math.max(1, Math.round(config.statementTimeoutSeconds))} SECONDS'`,
        );
        if (settings.readonly) await client.query(READ_ONLY_SESSION);
      } catch (error) {
        await client.end().catch(() => undefined);
        throw error;
      }
      return new VerticaConnection(vertica, client);
    },
    listTables(pattern, schema) {
      const schemaFilter =
        schema === undefined ? "table_schema NOT IN ('v_catalog', 'v_monitor', 'v_internal')" : 'table_schema = $2';
      return {
        sql: `SELECT table_schema, table_name, CASE WHEN is_temp_table THEN 'TEMP' ELSE 'TABLE' END AS table_type FROM v_catalog.tables
              WHERE table_name ILIKE $1 AND ${schemaFilter}
              UNION ALL SELECT table_schema, table_name, 'VIEW' FROM v_catalog.views WHERE table_name ILIKE $1 AND ${schemaFilter}
              ORDER BY 1, 2`,
        params: schema === undefined ? [pattern] : [pattern, schema],
      };
    },
    describeColumns(table, schema) {
      return {
        sql: `SELECT column_name, data_type, CASE WHEN is_nullable THEN 'YES' ELSE 'NO' END, column_default FROM v_catalog.columns
              WHERE table_name ILIKE $1 AND table_schema ILIKE COALESCE($2, CURRENT_SCHEMA()) ORDER BY ordinal_position`,
        params: [table, schema ?? null],
      };
    },
    describePrimaryKey(table, schema) {
      return {
        sql: `SELECT column_name FROM v_catalog.primary_keys
              WHERE table_name ILIKE $1 AND table_schema ILIKE COALESCE($2, CURRENT_SCHEMA()) ORDER BY ordinal_position`,
        params: [table, schema ?? null],
      };
    },
    describeForeignKeys(table, schema) {
      return {
        sql: `SELECT constraint_name, column_name, reference_table_name, reference_column_name FROM v_catalog.foreign_keys
              WHERE table_name ILIKE $1 AND table_schema ILIKE COALESCE($2, CURRENT_SCHEMA()) ORDER BY constraint_name, ordinal_position`,
        params: [table, schema ?? null],
      };
    },
    describeIndexes(table, schema) {
      // Vertica has no indexes; its projections play that part.
      return {
        sql: `SELECT projection_name, CASE WHEN is_super_projection THEN 'SUPER' ELSE 'STANDARD' END, NULL FROM v_catalog.projections
              WHERE anchor_table_name ILIKE $1 AND projection_schema ILIKE COALESCE($2, CURRENT_SCHEMA()) ORDER BY projection_name`,
        params: [table, schema ?? null],
      };
    },
  };
}

/** Vertica through vertica-nodejs. */
export const verticaDriver: DialectDriver = createVerticaDriver();
