import type { DatabaseConfig } from '../../database-config.js';
import type { DialectDriver, DriverConnection, RowSink, RunOptions, RunOutcome } from '../driver.js';
import { ROW_BATCH_SIZE, StatementError, leadingKeyword } from '../run-error.js';
import type { SqliteDatabase } from './sqlite-engine.js';
import { openSqlite } from './sqlite-engine.js';

// Statements that change the connection or write files even on a read-only connection:
// ATTACH/DETACH swap databases in, PRAGMA changes settings, VACUUM INTO writes a new file.
const REFUSED_IN_READONLY = new Set(['ATTACH', 'DETACH', 'PRAGMA', 'VACUUM']);

class SqliteConnection implements DriverConnection {
  constructor(
    private readonly database: SqliteDatabase,
    private readonly timeoutMs: number,
    private readonly readonly: boolean,
  ) {}

  async run(sql: string, sink: RowSink, options: RunOptions): Promise<RunOutcome> {
    if (options.readonly && !this.readonly) {
      throw new StatementError('this connection was opened for writing; reopen it read-only');
    }
    if (options.readonly && REFUSED_IN_READONLY.has(leadingKeyword(sql))) {
      throw new StatementError(`${leadingKeyword(sql)} is not allowed in read-only mode`);
    }
    try {
      return await this.runStatement(sql, sink, options);
    } finally {
      // A statement may leave a transaction open (BEGIN, SAVEPOINT): never carry it into the
      // next call, where it would pin an old snapshot or hold a lock.
      if (this.database.inTransaction) this.database.exec('ROLLBACK');
    }
  }

  private async runStatement(sql: string, sink: RowSink, options: RunOptions): Promise<RunOutcome> {
    // prepare() compiles exactly one statement and throws on a second one.
    const statement = this.database.prepare(sql);
    // better-sqlite3 reports sqlite3_stmt_readonly; node:sqlite cannot, and relies on the
    // read-only connection and query_only (below) alone.
    if (options.readonly && statement.readonly === false) {
      throw new StatementError(
        'the statement would write to the database; only read-only statements run in read-only mode',
      );
    }
    const params = options.params ?? [];
    if (!statement.reader) {
      const info = statement.run(params);
      return { hasResultSet: false, affectedRows: info.changes };
    }
    await sink.columns(statement.columns());
    const started = Date.now();
    let batch: unknown[][] = [];
    // better-sqlite3 runs on this thread and cannot be interrupted mid-step, so the timeout and
    // abort are checked between rows: they bound long scans, not a single slow aggregate step.
    for (const row of statement.iterate(params)) {
      batch.push(row);
      if (batch.length >= ROW_BATCH_SIZE) {
        await sink.rows(batch);
        batch = [];
        if (options.signal?.aborted) throw new StatementError('the statement was cancelled');
        if (Date.now() - started > this.timeoutMs) {
          throw new StatementError(`the statement ran longer than the ${this.timeoutMs / 1000} s statement timeout`);
        }
      }
    }
    if (batch.length > 0) await sink.rows(batch);
    return { hasResultSet: true };
  }

  /** A local file: open until rho closes it. */
  isBroken(): boolean {
    return false;
  }

  async ping(): Promise<void> {
    for (const row of this.database.prepare('SELECT 1').iterate([])) void row;
  }

  async writeAccess(): Promise<string | undefined> {
    // The file is opened read-only by SQLite itself, which is a real guarantee for this tool.
    return undefined;
  }

  async close(): Promise<void> {
    try {
      this.database.close();
    } catch {
      // already closed
    }
  }
}

/** SQLite through better-sqlite3 (or Node's built-in `node:sqlite` on Node 24+, see sqlite-engine.ts). */
export const sqliteDriver: DialectDriver = {
  type: 'sqlite',
  label: 'SQLite',
  async connect(config: DatabaseConfig, settings: { readonly: boolean }): Promise<DriverConnection> {
    const database = await openSqlite(config.path ?? '', {
      readonly: settings.readonly,
      fileMustExist: true,
      timeoutMs: Math.round(config.statementTimeoutSeconds * 1000),
    });
    if (settings.readonly) database.exec('PRAGMA query_only = ON');
    return new SqliteConnection(database, config.statementTimeoutSeconds * 1000, settings.readonly);
  },
  listTables(pattern) {
    return {
      sql: "SELECT name AS table_name, type FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' AND name LIKE ? ORDER BY type, name",
      params: [pattern],
    };
  },
  describeColumns(table) {
    return {
      sql: "SELECT name, type, CASE WHEN \"notnull\" = 1 OR pk > 0 AND type = 'INTEGER' THEN 'NO' ELSE 'YES' END, dflt_value FROM pragma_table_info(?) ORDER BY cid",
      params: [table],
    };
  },
  describePrimaryKey(table) {
    return { sql: 'SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk', params: [table] };
  },
  describeForeignKeys(table) {
    return {
      sql: 'SELECT \'fk_\' || id, "from", "table", "to" FROM pragma_foreign_key_list(?) ORDER BY id, seq',
      params: [table],
    };
  },
  describeIndexes(table) {
    return {
      sql: "SELECT il.name, CASE WHEN il.\"unique\" THEN 'UNIQUE' ELSE 'NONUNIQUE' END, (SELECT group_concat(ii.name, ', ') FROM pragma_index_info(il.name) ii) FROM pragma_index_list(?) il ORDER BY il.name",
      params: [table],
    };
  },
};
