import type BetterSqlite3 from 'better-sqlite3';
import { loadDriver } from '../load-driver.js';

/** One prepared SQLite statement, whatever the engine. */
export interface SqliteStatement {
  /** Whether the statement returns rows. */
  readonly reader: boolean;
  /** Whether SQLite says the statement cannot write (`sqlite3_stmt_readonly`); undefined when the engine cannot tell. */
  readonly readonly: boolean | undefined;
  columns(): string[];
  /** Rows as arrays, integers as bigint. */
  iterate(params: readonly unknown[]): IterableIterator<unknown[]>;
  run(params: readonly unknown[]): { changes: number };
}

/** An open SQLite database, whatever the engine. */
export interface SqliteDatabase {
  /** `better-sqlite3` or `node:sqlite`. */
  readonly engine: SqliteEngineName;
  /** Compiles exactly one statement (a second one is an error, never run). */
  prepare(sql: string): SqliteStatement;
  exec(sql: string): void;
  readonly inTransaction: boolean;
  close(): void;
}

/** The SQLite engines rho can drive. */
export type SqliteEngineName = 'better-sqlite3' | 'node:sqlite';

/** Options of {@link openSqlite}. */
export interface OpenSqliteOptions {
  readonly: boolean;
  fileMustExist: boolean;
  timeoutMs: number;
}

/**
 * Which engine runs SQLite here. better-sqlite3 everywhere it is safe; on Node 24 and later
 * Node's built-in `node:sqlite`, because there a better-sqlite3 object that the garbage collector
 * reclaims aborts the process (`node::ObjectWrap`'s destructor in Node 24's headers removes an
 * environment cleanup hook, which asserts when the GC runs it outside a JavaScript context).
 */
export function sqliteEngine(version: string = process.versions.node): SqliteEngineName {
  const major = Number(version.split('.')[0]);
  return major >= 24 ? 'node:sqlite' : 'better-sqlite3';
}

/** Opens a database file with the engine of this Node version. */
export async function openSqlite(
  path: string,
  options: OpenSqliteOptions,
  engine: SqliteEngineName = sqliteEngine(),
): Promise<SqliteDatabase> {
  return engine === 'node:sqlite' ? openNodeSqlite(path, options) : openBetterSqlite(path, options);
}

async function openBetterSqlite(path: string, options: OpenSqliteOptions): Promise<SqliteDatabase> {
  const module = await loadDriver<{ default: typeof BetterSqlite3 }>('better-sqlite3', 'SQLite');
  const database = new module.default(path, {
    readonly: options.readonly,
    fileMustExist: options.fileMustExist,
    timeout: options.timeoutMs,
  });
  database.defaultSafeIntegers(true);
  return {
    engine: 'better-sqlite3',
    prepare(sql) {
      const statement = database.prepare(sql);
      return {
        reader: statement.reader,
        readonly: statement.readonly,
        columns: () => statement.columns().map((column) => column.name),
        iterate: (params) => {
          statement.raw(true);
          return statement.iterate(...params) as IterableIterator<unknown[]>;
        },
        run: (params) => ({ changes: Number(statement.run(...params).changes) }),
      };
    },
    exec: (sql) => void database.exec(sql),
    get inTransaction() {
      return database.inTransaction;
    },
    close: () => void database.close(),
  };
}

interface NodeStatementSync {
  columns(): { name: string }[];
  iterate(...params: unknown[]): IterableIterator<unknown[]>;
  run(...params: unknown[]): { changes: number | bigint };
  setReturnArrays(enabled: boolean): void;
  setReadBigInts(enabled: boolean): void;
}

interface NodeDatabaseSync {
  prepare(sql: string): NodeStatementSync;
  exec(sql: string): void;
  readonly isTransaction: boolean;
  close(): void;
}

async function openNodeSqlite(path: string, options: OpenSqliteOptions): Promise<SqliteDatabase> {
  const { existsSync } = await import('node:fs');
  if (options.fileMustExist && !existsSync(path)) {
    throw Object.assign(new Error(`unable to open database file: ${path} does not exist`), { code: 'SQLITE_CANTOPEN' });
  }
  // A variable specifier: @types/node 20 does not know the module (it exists from Node 22.5).
  const specifier = 'node:sqlite';
  const { DatabaseSync } = (await import(specifier)) as unknown as {
    DatabaseSync: new (path: string, options: Record<string, unknown>) => NodeDatabaseSync;
  };
  const database = new DatabaseSync(path, { readOnly: options.readonly, timeout: options.timeoutMs });
  return {
    engine: 'node:sqlite',
    prepare(sql) {
      // sqlite3_prepare compiles the first statement only; refuse a tail rather than ignore it.
      if (hasSecondStatement(sql)) throw new Error('The supplied SQL string contains more than one statement');
      const statement = database.prepare(sql);
      statement.setReturnArrays(true);
      statement.setReadBigInts(true);
      const columns = statement.columns();
      return {
        reader: columns.length > 0,
        readonly: undefined,
        columns: () => columns.map((column) => column.name),
        iterate: (params) => statement.iterate(...params),
        run: (params) => ({ changes: Number(statement.run(...params).changes) }),
      };
    },
    exec: (sql) => database.exec(sql),
    get inTransaction() {
      return database.isTransaction;
    },
    close: () => database.close(),
  };
}

/**
 * Whether SQL text holds anything but comments and whitespace after its first statement's `;`,
 * skipping string literals, quoted identifiers and comments.
 */
export function hasSecondStatement(sql: string): boolean {
  let index = 0;
  let ended = false;
  while (index < sql.length) {
    const character = sql[index]!;
    const next = sql[index + 1];
    if (character === '-' && next === '-') {
      const end = sql.indexOf('\n', index);
      index = end === -1 ? sql.length : end + 1;
    } else if (character === '/' && next === '*') {
      const end = sql.indexOf('*/', index + 2);
      index = end === -1 ? sql.length : end + 2;
    } else if (character === "'" || character === '"' || character === '`' || character === '[') {
      if (ended) return true;
      const close = character === '[' ? ']' : character;
      let position = index + 1;
      for (;;) {
        const found = sql.indexOf(close, position);
        if (found === -1) return false;
        if (close !== ']' && sql[found + 1] === close) {
          position = found + 2;
          continue;
        }
        index = found + 1;
        break;
      }
    } else if (character === ';') {
      ended = true;
      index += 1;
    } else if (/\s/.test(character)) {
      index += 1;
    } else {
      if (ended) return true;
      index += 1;
    }
  }
  return false;
}
