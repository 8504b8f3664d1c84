// The process that runs SQLite for one connection of the sqlite tool (see sqlite-process.ts).
// SQLite's step cannot be interrupted from JavaScript (better-sqlite3 exposes no
// sqlite3_interrupt, and a worker thread stuck in a native step ignores `terminate()`), so the
// statements run here and the parent kills this process when the statement timeout passes.
import { Worker } from 'node:worker_threads';
import { ROW_BATCH_SIZE, StatementError } from '../run-error.js';
import type { SqliteDatabase } from './sqlite-engine.js';
import { openSqlite } from './sqlite-engine.js';
import type { ChildReply, ParentRequest } from './sqlite-protocol.js';

let database: SqliteDatabase | undefined;
/** The rows of a statement whose first batch was sent, waiting for `more`. */
let pending: IterableIterator<unknown[]> | undefined;

function send(reply: ChildReply): void {
  process.send!(reply);
}

function errorReply(error: unknown): ChildReply {
  const value = error as { name?: unknown; message?: unknown; code?: unknown };
  return {
    type: 'error',
    name: typeof value.name === 'string' ? value.name : 'Error',
    message: typeof value.message === 'string' ? value.message : String(error),
    ...(typeof value.code === 'string' ? { code: value.code } : {}),
  };
}

/** Ends the statement in progress and any transaction it left open. */
function finish(): void {
  const rows = pending;
  pending = undefined;
  rows?.return?.();
  // A statement may leave a transaction open (BEGIN, SAVEPOINT): never carry it into the next
  // call, where it would pin an old snapshot or hold a lock.
  if (database?.inTransaction === true) database.exec('ROLLBACK');
}

/** Sends the next batch of `rows`: the last one ends the statement, another waits for `more`. */
function nextBatch(rows: IterableIterator<unknown[]>, columns: string[] | undefined): void {
  const batch: unknown[][] = [];
  for (;;) {
    const next = rows.next();
    if (next.done === true) {
      finish();
      send({ type: 'done', hasResultSet: true, ...(columns === undefined ? {} : { columns }), rows: batch });
      return;
    }
    batch.push(next.value);
    if (batch.length >= ROW_BATCH_SIZE) {
      pending = rows;
      send({ type: 'rows', ...(columns === undefined ? {} : { columns }), rows: batch });
      return;
    }
  }
}

function run(sql: string, params: unknown[], readonly: boolean): void {
  if (database === undefined) throw new StatementError('the database is not open');
  // prepare() compiles exactly one statement and throws on a second one.
  const statement = database.prepare(sql);
  // better-sqlite3 reports sqlite3_stmt_readonly; node:sqlite cannot, and relies on the
  // read-only connection and query_only alone.
  if (readonly && statement.readonly === false) {
    throw new StatementError(
      'the statement would write to the database; only read-only statements run in read-only mode',
    );
  }
  if (!statement.reader) {
    const info = statement.run(params);
    finish();
    send({ type: 'done', hasResultSet: false, affectedRows: info.changes });
    return;
  }
  nextBatch(statement.iterate(params), statement.columns());
}

async function handle(request: ParentRequest): Promise<void> {
  try {
    switch (request.op) {
      case 'open':
        database = await openSqlite(request.path, {
          readonly: request.readonly,
          fileMustExist: request.fileMustExist,
          timeoutMs: request.timeoutMs,
        });
        if (request.readonly) database.exec('PRAGMA query_only = ON');
        send({ type: 'opened', engine: database.engine });
        return;
      case 'run':
        run(request.sql, request.params, request.readonly);
        return;
      case 'more':
        if (pending === undefined) throw new StatementError('no statement is in progress');
        nextBatch(pending, undefined);
        return;
      case 'ping':
        for (const row of database!.prepare('SELECT 1').iterate([])) void row;
        send({ type: 'pong' });
        return;
      case 'close':
        database?.close();
        process.exit(0);
    }
  } catch (error) {
    try {
      finish();
    } catch {
      // the error below is the one worth reporting
    }
    send(errorReply(error));
  }
}

// Requests are handled one at a time, in order (the parent sends the next only after a reply).
let queue = Promise.resolve();
process.on('message', (request: ParentRequest) => {
  queue = queue.then(() => handle(request));
});
// The parent closed the channel (it exited, or closed the connection): nothing is left to do.
process.on('disconnect', () => process.exit(0));

// While a statement runs, this thread is inside SQLite and cannot notice that the parent died.
// A watchdog thread can: once this process is orphaned it kills it, so that a statement never
// outlives rho (a parent killed by a signal runs no clean-up of its own).
const parent = process.ppid;
const watchdog = new Worker(
  `const { parentPort, workerData } = require('node:worker_threads');
setInterval(() => { if (process.ppid !== workerData) process.kill(process.pid, 'SIGKILL'); }, 500);`,
  { eval: true, workerData: parent },
);
watchdog.unref();
