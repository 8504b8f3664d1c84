import type { Connection, ConnectionOptions, FieldPacket, QueryError } from 'mysql2';
import type { SqlServerContext } from '@rho/permissions/internal';
import type { DatabaseConfig } from '../../database-config.js';
import type { DialectDriver, DriverConnection, RowSink, RunOptions, RunOutcome } from '../driver.js';
import { loadDriver } from '../load-driver.js';
import { ROW_BATCH_SIZE, StatementError } from '../run-error.js';

interface Mysql2Module {
  createConnection(options: ConnectionOptions): Connection;
}

// Privileges that cannot change data or files; anything else (ALL, INSERT, CREATE, FILE,
// EXECUTE, SUPER, ...) means the account could write.
const HARMLESS_PRIVILEGES = new Set([
  'SELECT',
  'USAGE',
  'SHOW VIEW',
  'SHOW DATABASES',
  'PROCESS',
  'REPLICATION CLIENT',
  'BINLOG MONITOR',
  'SLAVE MONITOR',
  'REPLICA MONITOR',
]);

function call<T>(start: (callback: (error: QueryError | null, result?: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    start((error, result) => (error ? reject(error) : resolve(result as T)));
  });
}

class MysqlConnection implements DriverConnection {
  private failure: Error | undefined;
  private reset: Promise<void> = Promise.resolve();

  constructor(
    private readonly connection: Connection,
    private readonly sessionSetup: string | undefined,
  ) {
    // An idle connection the server closes emits 'error' (and 'end'); remember it instead of
    // crashing, so that the alias reconnects before the next statement.
    connection.on('error', (error: Error) => {
      this.failure = error;
    });
    connection.on('end', () => {
      this.failure ??= Object.assign(new Error('the server closed the connection'), { code: 'CONNECTION_CLOSED' });
    });
  }

  isBroken(): boolean {
    return this.failure !== undefined;
  }

  private query<T = unknown>(sql: string): Promise<T> {
    return call<T>((callback) => this.connection.query(sql, callback as never));
  }

  async run(sql: string, sink: RowSink, options: RunOptions): Promise<RunOutcome> {
    if (this.failure !== undefined) throw this.failure;
    // A read-only session has autocommit off: the statement opens a transaction, read-only
    // like every transaction of the session, that nothing commits and the reset below rolls back.
    // (An explicit START TRANSACTION READ ONLY would cost a round trip of its own: mysql2 sends
    // a command only once the previous one has answered.)
    try {
      return await this.stream(sql, sink, options);
    } finally {
      if (options.readonly && this.failure === undefined) {
        // COM_RESET_CONNECTION (rolls the open transaction back, drops user variables,
        // temporary tables, prepared statements, locks and session settings), then the read-only
        // session settings again. (A ROLLBACK first would be a round trip for nothing: the reset
        // rolls back.) mysql2 runs commands in order on this one connection, so the next
        // statement waits behind them while the tool returns its already complete result; a
        // failure marks the connection broken so that it is never reused.
        const steps = [
          call<void>((callback) => this.connection.reset(callback as never)),
          ...(this.sessionSetup === undefined ? [] : [this.query(this.sessionSetup)]),
        ];
        this.reset = Promise.all(steps).then(
          () => undefined,
          (error: unknown) => {
            this.failure = error as Error;
            this.connection.destroy();
          },
        );
      }
    }
  }

  private stream(sql: string, sink: RowSink, options: RunOptions): Promise<RunOutcome> {
    return new Promise<RunOutcome>((resolve, reject) => {
      let hasResultSet = false;
      let affectedRows: number | undefined;
      let batch: unknown[][] = [];
      let chain: Promise<void> = Promise.resolve();
      let failed = false;
      const fail = (error: unknown): void => {
        if (failed) return;
        failed = true;
        reject(error);
      };
      const query = this.connection.query({ sql, values: options.params ?? [], rowsAsArray: true });
      const abort = (): void => {
        // Killing the query needs a second connection; dropping this one stops it as surely.
        this.failure = Object.assign(new Error('the connection was closed to cancel a statement'), {
          code: 'CONNECTION_CLOSED',
        });
        this.connection.destroy();
        fail(new StatementError('the statement was cancelled'));
      };
      options.signal?.addEventListener('abort', abort, { once: true });
      // A cancel that came while the connection opened fired before this listener existed.
      if (options.signal?.aborted === true) abort();
      const flush = (): void => {
        const rows = batch;
        batch = [];
        this.connection.pause();
        chain = chain
          .then(() => sink.rows(rows))
          .then(() => this.connection.resume())
          .catch((error: unknown) => {
            fail(error);
            this.connection.resume();
          });
      };
      // Only the first result set is shown (a CALL in mutations mode may return several).
      query.on('fields', (fields: FieldPacket[] | undefined, index?: number) => {
        // mysql2 also emits 'fields' (undefined) for statements without a result set.
        if (fields === undefined || hasResultSet || (index ?? 0) > 0) return;
        hasResultSet = true;
        const names = fields.map((field) => field.name);
        chain = chain.then(() => sink.columns(names)).catch(fail);
      });
      query.on('result', (row: unknown, index?: number) => {
        if (Array.isArray(row)) {
          if ((index ?? 0) > 0) return;
          batch.push(row);
          if (batch.length >= ROW_BATCH_SIZE) flush();
        } else if (row !== null && typeof row === 'object' && 'affectedRows' in row) {
          affectedRows = Number((row as { affectedRows: number }).affectedRows);
        }
      });
      query.on('error', (error: Error) => fail(error));
      query.on('end', () => {
        options.signal?.removeEventListener('abort', abort);
        if (batch.length > 0) flush();
        chain.then(() => {
          if (!failed)
            resolve(
              hasResultSet
                ? { hasResultSet }
                : { hasResultSet, ...(affectedRows === undefined ? {} : { affectedRows }) },
            );
        }, fail);
      });
    });
  }

  async ping(): Promise<void> {
    await this.reset;
    if (this.failure !== undefined) throw this.failure;
    await call<void>((callback) => this.connection.ping(callback as never));
  }

  /** The session's sql_mode (it decides how strings and comments are read) and current database. */
  async serverContext(): Promise<SqlServerContext> {
    await this.reset;
    if (this.failure !== undefined) throw this.failure;
    const rows = await this.query<Record<string, string | null>[]>(
      'SELECT @@SESSION.sql_mode AS mode, DATABASE() AS db',
    );
    const row = rows[0] ?? {};
    return { sqlMode: row.mode ?? '', ...(typeof row.db === 'string' ? { database: row.db } : {}) };
  }

  async writeAccess(): Promise<string | undefined> {
    const rows = await this.query<Record<string, string>[]>('SHOW GRANTS FOR CURRENT_USER()');
    const writable: string[] = [];
    for (const row of rows) {
      const grant = Object.values(row)[0] ?? '';
      const match = /^GRANT (.+?) ON (\S+) TO /i.exec(grant);
      if (match === null) continue;
      const privileges = (match[1] ?? '').split(',').map((privilege) =>
        privilege
          .trim()
          .replace(/\s*\(.*\)$/, '')
          .toUpperCase(),
      );
      const risky = privileges.filter((privilege) => !HARMLESS_PRIVILEGES.has(privilege));
      if (risky.length > 0) writable.push(`${risky.join(', ')} ON ${match[2]}`);
    }
    return writable.length === 0 ? undefined : `it has ${writable.join('; ')}`;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      if (this.failure !== undefined) {
        this.connection.destroy();
        resolve();
        return;
      }
      this.connection.end(() => resolve());
    });
  }
}

/** MySQL and MariaDB through mysql2. */
export const mysqlDriver: DialectDriver = {
  type: 'mysql',
  label: 'MySQL',
  readsServerContext: true,
  async connect(config: DatabaseConfig, settings: { readonly: boolean }): Promise<DriverConnection> {
    const module = await loadDriver<Mysql2Module & { default?: Mysql2Module }>('mysql2', 'MySQL');
    const mysql = module.default ?? module;
    const connection = mysql.createConnection({
      host: config.host ?? 'localhost',
      port: config.port ?? 3306,
      user: config.user ?? '',
      password: config.password ?? '',
      database: config.database,
      // One statement per call at the protocol level: `select 1; drop ...` is a parse error.
      multipleStatements: false,
      dateStrings: true,
      supportBigNumbers: true,
      bigNumberStrings: true,
      charset: 'utf8mb4',
      connectTimeout: 10_000,
      // No prepared statements are used (`query`, never `execute`), and mysql2 empties its cache
      // of them on every COM_RESET_CONNECTION by filling arrays of this size: with the default
      // 16,000 that was about 75 us of every read-only call.
      maxPreparedStatements: 1,
    });
    const early: Error[] = [];
    const onEarlyError = (error: Error): void => {
      early.push(error);
    };
    connection.on('error', onEarlyError);
    try {
      await call<void>((callback) => connection.connect(callback as never));
      const [versionRow] = await call<{ version: string }[]>((callback) =>
        connection.query('SELECT VERSION() AS version', callback as never),
      );
      const mariadb = /mariadb/i.test(versionRow?.version ?? '');
      const seconds = config.statementTimeoutSeconds;
      // MariaDB's max_statement_time covers every statement; MySQL's max_execution_time only SELECT.
      const timeout = mariadb
        ? `max_statement_time = ${seconds}`
        : `max_execution_time = ${Math.round(seconds * 1000)}`;
      // Read-only mode: the session's transactions are read-only (which, unlike a START
      // TRANSACTION READ ONLY, also stops DDL, whose implicit commit would end such a
      // transaction), and autocommit is off, so every statement runs inside one of them until
      // the connection reset after it (which rolls it back).
      const readOnlyVariable = mariadb ? 'tx_read_only' : 'transaction_read_only';
      const sessionSetup = settings.readonly
        ? `SET SESSION ${readOnlyVariable} = 1, SESSION autocommit = 0, SESSION ${timeout}`
        : `SET SESSION ${timeout}`;
      await call<void>((callback) => connection.query(sessionSetup, callback as never));
      connection.off('error', onEarlyError);
      return new MysqlConnection(connection, settings.readonly ? sessionSetup : undefined);
    } catch (error) {
      connection.destroy();
      throw early[0] ?? error;
    }
  },
  listTables(pattern, schema) {
    return {
      sql: `SELECT table_name AS table_name, table_type AS table_type, table_rows AS approx_rows FROM information_schema.tables
            WHERE table_schema = COALESCE(?, DATABASE()) AND table_name LIKE ? ORDER BY table_name`,
      params: [schema ?? null, pattern],
    };
  },
  describeColumns(table, schema) {
    return {
      sql: `SELECT column_name, column_type, is_nullable, column_default FROM information_schema.columns
            WHERE table_schema = COALESCE(?, DATABASE()) AND table_name = ? ORDER BY ordinal_position`,
      params: [schema ?? null, table],
    };
  },
  describePrimaryKey(table, schema) {
    return {
      sql: `SELECT column_name FROM information_schema.key_column_usage
            WHERE table_schema = COALESCE(?, DATABASE()) AND table_name = ? AND constraint_name = 'PRIMARY' ORDER BY ordinal_position`,
      params: [schema ?? null, table],
    };
  },
  describeForeignKeys(table, schema) {
    return {
      sql: `SELECT constraint_name, column_name, referenced_table_name, referenced_column_name FROM information_schema.key_column_usage
            WHERE table_schema = COALESCE(?, DATABASE()) AND table_name = ? AND referenced_table_name IS NOT NULL
            ORDER BY constraint_name, ordinal_position`,
      params: [schema ?? null, table],
    };
  },
  describeIndexes(table, schema) {
    return {
      sql: `SELECT index_name, CASE WHEN MIN(non_unique) = 0 THEN 'UNIQUE' ELSE 'NONUNIQUE' END,
              GROUP_CONCAT(column_name ORDER BY seq_in_index SEPARATOR ', ')
            FROM information_schema.statistics WHERE table_schema = COALESCE(?, DATABASE()) AND table_name = ?
            GROUP BY index_name ORDER BY index_name`,
      params: [schema ?? null, table],
    };
  },
};
