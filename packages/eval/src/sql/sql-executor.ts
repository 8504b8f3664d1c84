import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { ConfigError } from '@rho/core';
import type { SqlValue } from './compare-result-sets.js';
import { QUERY_WORKER_SOURCE } from './internal/query-worker-source.js';

/** The outcome of one query run by a {@link SqlExecutor}. */
export type SqlQueryOutcome =
  { ok: true; columns: string[]; rows: SqlValue[][] } | { ok: false; kind: 'timeout' | 'error'; message: string };

/** Options of {@link createSqlExecutor}. */
export interface SqlExecutorOptions {
  /** Longest a query may run, in milliseconds (default 30 000, BIRD's and the original's 30 s). */
  timeoutMs?: number;
  /** Query processes at most (default 2); more queries wait for one. */
  maxProcesses?: number;
  /** A query returning more rows than this fails (default 200 000), so a runaway join cannot exhaust memory. */
  maxRows?: number;
}

/** Runs evaluation queries on SQLite files, read-only and with a timeout. */
export interface SqlExecutor {
  /** Runs one statement on the database file at `path`. Never throws for a bad query: the outcome says. */
  run(path: string, sql: string): Promise<SqlQueryOutcome>;
  /** Stops every query process. */
  close(): Promise<void>;
}

interface Worker {
  child: ChildProcess;
  busy: boolean;
  /** Resolves when the process has loaded SQLite (false when it died first). */
  ready: Promise<boolean>;
}

/**
 * Where better-sqlite3 is (resolved here, where it is a peer, and passed by path to the query
 * processes); empty on Node 24 and later, which use `node:sqlite`.
 */
function resolveBetterSqlite(): string {
  if (Number(process.versions.node.split('.')[0]) >= 24) return '';
  try {
    return createRequire(import.meta.url).resolve('better-sqlite3');
  } catch (error) {
    throw new ConfigError({
      message: `Evaluating SQL needs SQLite: install better-sqlite3 next to rho (npm install better-sqlite3), or use Node 24 or newer, which has node:sqlite. (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`,
      cause: error,
    });
  }
}

/**
 * Creates an executor whose queries run in separate Node processes, each holding read-only
 * connections (SQLite's read-only open plus `PRAGMA query_only`; one statement per query, and
 * statements that could write are refused). SQLite cannot interrupt a running step from another
 * thread through these bindings, so a query that outlives its timeout is ended by killing its
 * process; the next query gets a fresh one. Throws a `ConfigError` when no SQLite engine is
 * installed (better-sqlite3 before Node 24).
 */
export function createSqlExecutor(options: SqlExecutorOptions = {}): SqlExecutor {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxProcesses = Math.max(1, options.maxProcesses ?? 2);
  const maxRows = options.maxRows ?? 200_000;
  const workers = new Set<Worker>();
  const waiting: ((worker: Worker) => void)[] = [];
  let nextId = 0;
  let closed = false;
  const betterSqlitePath = resolveBetterSqlite();

  function spawnWorker(): Worker {
    const child = spawn(process.execPath, ['-e', QUERY_WORKER_SOURCE, betterSqlitePath], {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    // Drained so a chatty process cannot block on a full pipe; kept for error messages.
    child.stderr?.resume();
    const ready = new Promise<boolean>((resolve) => {
      const onMessage = (message: { ready?: boolean }) => {
        if (message.ready !== true) return;
        child.off('message', onMessage);
        resolve(true);
      };
      child.on('message', onMessage);
      child.once('exit', () => resolve(false));
    });
    const worker: Worker = { child, busy: false, ready };
    workers.add(worker);
    child.once('exit', () => workers.delete(worker));
    return worker;
  }

  function acquire(): Promise<Worker> {
    for (const worker of workers) {
      if (!worker.busy && worker.child.exitCode === null && worker.child.connected) {
        worker.busy = true;
        return Promise.resolve(worker);
      }
    }
    if (workers.size < maxProcesses) {
      const worker = spawnWorker();
      worker.busy = true;
      return Promise.resolve(worker);
    }
    return new Promise((resolve) => waiting.push(resolve));
  }

  function release(worker: Worker, alive: boolean): void {
    if (!alive) {
      workers.delete(worker);
      worker.child.kill('SIGKILL');
    }
    const next = waiting.shift();
    if (next === undefined) {
      worker.busy = false;
      return;
    }
    if (alive) {
      next(worker);
      return;
    }
    const fresh = spawnWorker();
    fresh.busy = true;
    next(fresh);
  }

  return {
    async run(path, sql) {
      if (closed) return { ok: false, kind: 'error', message: 'the executor is closed' };
      const worker = await acquire();
      const id = nextId++;
      // The timeout is the query's own: it starts once the process can run it.
      if (!(await worker.ready)) {
        release(worker, false);
        return {
          ok: false,
          kind: 'error',
          message: 'the query process could not start SQLite (is better-sqlite3 installed?)',
        };
      }
      return new Promise<SqlQueryOutcome>((resolve) => {
        const { child } = worker;
        let settled = false;
        const finish = (outcome: SqlQueryOutcome, alive: boolean) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          child.off('message', onMessage);
          child.off('exit', onExit);
          release(worker, alive);
          resolve(outcome);
        };
        const onMessage = (message: {
          id: number;
          ok: boolean;
          columns?: string[];
          rows?: SqlValue[][];
          message?: string;
        }) => {
          if (message.id !== id) return;
          finish(
            message.ok
              ? { ok: true, columns: message.columns ?? [], rows: message.rows ?? [] }
              : { ok: false, kind: 'error', message: message.message ?? 'unknown error' },
            true,
          );
        };
        const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
          finish(
            {
              ok: false,
              kind: 'error',
              message: `the query process ended (${signal ?? `exit code ${code}`}) before answering`,
            },
            false,
          );
        };
        const timer = setTimeout(
          () =>
            finish({ ok: false, kind: 'timeout', message: `the query ran longer than ${timeoutMs / 1000} s` }, false),
          timeoutMs,
        );
        child.on('message', onMessage);
        child.once('exit', onExit);
        child.send({ id, path, sql, maxRows }, (error) => {
          if (error !== null)
            finish({ ok: false, kind: 'error', message: `cannot reach the query process: ${error.message}` }, false);
        });
      });
    },
    async close() {
      closed = true;
      const exits = [...workers].map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.child.exitCode !== null || worker.child.signalCode !== null) return resolve();
            worker.child.once('exit', () => resolve());
            worker.child.kill('SIGKILL');
          }),
      );
      workers.clear();
      await Promise.all(exits);
    },
  };
}
