import type { DatabaseConfig } from '../../database-config.js';
import type { DialectDriver, DriverConnection, RowSink, RunOptions, RunOutcome } from '../driver.js';
import { StatementError, leadingKeyword } from '../run-error.js';
import { SqliteProcess } from './sqlite-process.js';

// Statements that change the connection or write files even on a read-only connection:
// ATTACH/DETACH swap databases in, PRAGMA changes settings, VACUUM INTO writes a new file.
const REFUSED_IN_READONLY = new Set(['ATTACH', 'DETACH', 'PRAGMA', 'VACUUM']);

/**
 * A connection whose statements run in a child process (see sqlite-process.ts): SQLite's step
 * cannot be interrupted from this thread, so the statement timeout and cancellation kill that
 * process, and the next call opens the database again.
 */
class SqliteConnection implements DriverConnection {
  constructor(
    private readonly database: SqliteProcess,
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
    // One deadline for the whole statement, rows handed to the sink included (as before).
    const deadline = Date.now() + this.timeoutMs;
    const limits = () => ({
      timeoutMs: Math.max(1, deadline - Date.now()),
      statementTimeoutMs: this.timeoutMs,
      signal: options.signal,
    });
    let reply = await this.database.request(
      { op: 'run', sql, params: options.params ?? [], readonly: options.readonly },
      limits(),
    );
    let columnsSent = false;
    try {
      for (;;) {
        if (reply.type !== 'rows' && reply.type !== 'done') {
          throw new StatementError(`unexpected answer from the SQLite process: ${reply.type}`);
        }
        if (reply.type === 'done' && !reply.hasResultSet) {
          return {
            hasResultSet: false,
            ...(reply.affectedRows === undefined ? {} : { affectedRows: reply.affectedRows }),
          };
        }
        if (!columnsSent) {
          await sink.columns(reply.columns ?? []);
          columnsSent = true;
        }
        if (reply.rows !== undefined && reply.rows.length > 0) await sink.rows(reply.rows);
        if (reply.type === 'done') return { hasResultSet: true };
        if (options.signal?.aborted === true) throw new StatementError('the statement was cancelled');
        reply = await this.database.request({ op: 'more' }, limits());
      }
    } catch (error) {
      // A sink that failed (a full disk) leaves the statement open over there: end the process
      // rather than leave rows pending; the next call opens the database again.
      if (reply.type === 'rows') this.database.kill();
      throw error;
    }
  }

  isBroken(): boolean {
    return this.database.broken;
  }

  async ping(): Promise<void> {
    await this.database.request({ op: 'ping' }, { timeoutMs: this.timeoutMs });
  }

  async writeAccess(): Promise<string | undefined> {
    // The file is opened read-only by SQLite itself, which is a real guarantee for this tool.
    return undefined;
  }

  async close(): Promise<void> {
    await this.database.close();
  }
}

/**
 * SQLite through better-sqlite3 (or Node's built-in `node:sqlite` on Node 24+, see sqlite-engine.ts),
 * in a child process per connection.
 */
export const sqliteDriver: DialectDriver = {
  type: 'sqlite',
  label: 'SQLite',
  async connect(config: DatabaseConfig, settings: { readonly: boolean }): Promise<DriverConnection> {
    const { process: child } = await SqliteProcess.open({
      path: config.path ?? '',
      readonly: settings.readonly,
      fileMustExist: true,
      timeoutMs: Math.round(config.statementTimeoutSeconds * 1000),
    });
    return new SqliteConnection(child, config.statementTimeoutSeconds * 1000, settings.readonly);
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
