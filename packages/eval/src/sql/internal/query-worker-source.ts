/**
 * The program of a query process (see `sql-executor.ts`), run with `node -e` (CommonJS, so `require` loads the SQLite engine by its resolved path).
 * It is plain JavaScript kept as text so that the same code runs from `src` under test and from
 * `dist` when installed, without a second build output. argv[1]: the resolved path of
 * better-sqlite3 (used before Node 24; from Node 24 on, Node's own `node:sqlite`, because
 * better-sqlite3 objects reclaimed by the garbage collector abort Node 24 processes).
 *
 * Messages in: `{ id, path, sql, maxRows }`. Out: `{ ready: true }` once, when it can take
 * queries; then `{ id, ok: true, columns, rows }` or `{ id, ok: false, message }` per query. Integers stay exact (bigint); the channel uses Node's advanced
 * serialization, which carries bigint and Uint8Array.
 */
export const QUERY_WORKER_SOURCE = String.raw`
const betterSqlitePath = process.argv[1];
const useNodeSqlite = Number(process.versions.node.split('.')[0]) >= 24;
const databases = new Map();

// Whether anything but blanks and comments follows the first statement's ';' (quotes skipped).
// better-sqlite3 refuses a second statement itself; node:sqlite would run the first and ignore
// the rest, so a query is refused rather than graded on its first statement.
function hasSecondStatement(sql) {
  let index = 0;
  let ended = false;
  while (index < sql.length) {
    const char = sql[index];
    if (char === "'" || char === '"' || char === '\x60' || char === '[') {
      if (ended) return true;
      const close = char === '[' ? ']' : char;
      index = sql.indexOf(close, index + 1);
      if (index === -1) return false;
      index += 1;
    } else if (char === '-' && sql[index + 1] === '-') {
      const end = sql.indexOf('\n', index);
      index = end === -1 ? sql.length : end + 1;
    } else if (char === '/' && sql[index + 1] === '*') {
      const end = sql.indexOf('*/', index + 2);
      index = end === -1 ? sql.length : end + 2;
    } else if (char === ';') {
      ended = true;
      index += 1;
    } else {
      if (ended && !/\s/.test(char)) return true;
      index += 1;
    }
  }
  return false;
}

function open(path) {
  let database = databases.get(path);
  if (database !== undefined) return database;
  if (useNodeSqlite) {
    const { DatabaseSync } = require('node:sqlite');
    const native = new DatabaseSync(path, { readOnly: true });
    native.exec('PRAGMA query_only = ON');
    database = {
      query(sql, maxRows) {
        if (hasSecondStatement(sql)) throw new Error('the query holds more than one statement; submit one');
        const statement = native.prepare(sql);
        const columns = statement.columns().map((column) => column.name);
        if (columns.length === 0) throw new Error('the statement returns no rows; only a query (SELECT or WITH ... SELECT) can be evaluated');
        statement.setReadBigInts(true);
        if (typeof statement.setReturnArrays === 'function') statement.setReturnArrays(true);
        const rows = [];
        for (const row of statement.iterate()) {
          rows.push(Array.isArray(row) ? row : Object.values(row));
          if (rows.length > maxRows) throw new Error('the query returned more than ' + maxRows + ' rows');
        }
        return { columns, rows };
      },
    };
  } else {
    const Database = require(betterSqlitePath);
    const native = new Database(path, { readonly: true, fileMustExist: true });
    native.pragma('query_only = ON');
    database = {
      query(sql, maxRows) {
        const statement = native.prepare(sql);
        if (!statement.reader) throw new Error('the statement returns no rows; only a query (SELECT or WITH ... SELECT) can be evaluated');
        if (!statement.readonly) throw new Error('the statement would write to the database');
        statement.raw(true);
        statement.safeIntegers(true);
        const columns = statement.columns().map((column) => column.name);
        const rows = [];
        for (const row of statement.iterate()) {
          rows.push(row);
          if (rows.length > maxRows) throw new Error('the query returned more than ' + maxRows + ' rows');
        }
        return { columns, rows };
      },
    };
  }
  databases.set(path, database);
  return database;
}

process.on('message', (message) => {
  let reply;
  try {
    const { columns, rows } = open(message.path).query(message.sql, message.maxRows);
    reply = { id: message.id, ok: true, columns, rows };
  } catch (error) {
    reply = { id: message.id, ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  process.send(reply);
});
process.on('disconnect', () => process.exit(0));
// Loading the engine first, so a query's timeout never counts this process's start-up.
if (!useNodeSqlite) require(betterSqlitePath);
process.send({ ready: true });
`;
