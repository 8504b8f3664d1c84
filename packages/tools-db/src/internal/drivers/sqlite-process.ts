import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ConfigError } from '@rho/core';
import { StatementError } from '../run-error.js';
import type { SqliteEngineName } from './sqlite-engine.js';
import type { ChildReply, ParentRequest } from './sqlite-protocol.js';

/** Processes alive now, killed when rho exits (a statement must not outlive it). */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}

/**
 * The child's entry point: the built `sqlite-child.js` next to this module, or, when this module
 * runs from its TypeScript source (the package's own tests), `sqlite-child.ts` through tsx.
 */
function childEntry(): { script: string; execArgv: string[] } {
  const here = import.meta.url;
  if (here.endsWith('.ts')) {
    const tsx = pathToFileURL(createRequire(here).resolve('tsx')).href;
    return { script: fileURLToPath(new URL('./sqlite-child.ts', here)), execArgv: ['--import', tsx] };
  }
  return { script: fileURLToPath(new URL('./sqlite-child.js', here)), execArgv: [] };
}

/** The environment of the SQLite process: what SQLite and Node need, none of rho's secrets. */
function childEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'TMPDIR', 'SQLITE_TMPDIR', 'LD_LIBRARY_PATH', 'TZ', 'LANG', 'LC_ALL']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** A failure the SQLite process reported, as the error it was over there. */
function replyError(reply: Extract<ChildReply, { type: 'error' }>): Error {
  if (reply.name === 'ConfigError') return new ConfigError({ code: reply.code, message: reply.message });
  if (reply.name === 'StatementError') return new StatementError(reply.message);
  return Object.assign(new Error(reply.message), reply.code === undefined ? {} : { code: reply.code });
}

/** What stops a request before its answer: the statement timeout, or the caller's signal. */
export interface RequestLimits {
  /** Kill the process when the answer has not come within this many milliseconds. */
  timeoutMs?: number;
  /** The statement timeout as configured, for the message (`timeoutMs` is what is left of it). */
  statementTimeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * One SQLite connection held by a child process. A request that outlives its limit kills the
 * process, which is the only way to stop a statement inside SQLite's step; the connection is
 * then broken and the tool opens a new one for the next call.
 */
export class SqliteProcess {
  private waiting: ((reply: ChildReply) => void) | undefined;
  private exited: Error | undefined;
  private stderr = '';

  private constructor(private readonly child: ChildProcess) {
    live.add(child);
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-2000);
    });
    child.on('message', (reply: ChildReply) => {
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.(reply);
    });
    child.on('exit', (code, signal) => {
      live.delete(child);
      const detail = this.stderr.trim() === '' ? '' : `: ${this.stderr.trim().split('\n').at(-1)}`;
      this.exited ??= new StatementError(
        `the SQLite process ended (${signal ?? `exit code ${code}`})${detail}; the next call opens the database again`,
      );
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.({ type: 'error', name: 'StatementError', message: this.exited.message });
    });
    // The process could not start (or be signalled): no `exit` may follow, so answer here.
    child.on('error', (error) => {
      live.delete(child);
      this.exited ??= new StatementError(`the SQLite process failed: ${error.message}`);
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.({ type: 'error', name: 'StatementError', message: this.exited.message });
    });
    this.idle();
  }

  /** Starts a process and opens `path` in it. */
  static async open(options: {
    path: string;
    readonly: boolean;
    fileMustExist: boolean;
    timeoutMs: number;
  }): Promise<{ process: SqliteProcess; engine: SqliteEngineName }> {
    installExitHook();
    const { script, execArgv } = childEntry();
    const child = fork(script, [], {
      execArgv,
      env: childEnvironment(),
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const sqlite = new SqliteProcess(child);
    try {
      const reply = await sqlite.request({ op: 'open', ...options }, {});
      if (reply.type !== 'opened') throw new StatementError(`unexpected answer to open: ${reply.type}`);
      return { process: sqlite, engine: reply.engine };
    } catch (error) {
      sqlite.kill();
      throw error;
    }
  }

  /** Whether the process is gone (killed at a limit, or crashed): the connection cannot be used. */
  get broken(): boolean {
    return this.exited !== undefined;
  }

  /**
   * Sends one request and waits for its answer. An `error` answer rejects; reaching a limit
   * kills the process and rejects with a message that names the limit.
   */
  request(request: ParentRequest, limits: RequestLimits): Promise<ChildReply> {
    if (this.exited !== undefined) return Promise.reject(this.exited);
    if (limits.signal?.aborted === true) return Promise.reject(new StatementError('the statement was cancelled'));
    return new Promise<ChildReply>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const stop = (error: StatementError): void => {
        this.exited ??= error;
        this.kill();
      };
      const onAbort = (): void => stop(new StatementError('the statement was cancelled'));
      if (limits.timeoutMs !== undefined) {
        // The alias's timeout as configured, not what was left of it when this request was sent.
        const seconds = (limits.statementTimeoutMs ?? limits.timeoutMs) / 1000;
        timer = setTimeout(
          () =>
            stop(
              new StatementError(
                `the statement ran longer than the ${seconds} s statement timeout (statement_timeout of the alias in databases.yaml) and was stopped`,
              ),
            ),
          limits.timeoutMs,
        );
      }
      limits.signal?.addEventListener('abort', onAbort, { once: true });
      this.busy();
      this.waiting = (reply) => {
        if (timer !== undefined) clearTimeout(timer);
        limits.signal?.removeEventListener('abort', onAbort);
        this.idle();
        if (reply.type === 'error') reject(this.exited ?? replyError(reply));
        else resolve(reply);
      };
      this.child.send(request, (error) => {
        if (error !== null && error !== undefined)
          stop(new StatementError(`the SQLite process is gone: ${error.message}`));
      });
    });
  }

  /** Kills the process now (never throws). */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  /** Closes the database and lets the process end (kills it if it does not answer). */
  async close(): Promise<void> {
    if (this.exited !== undefined) return;
    const ended = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.exited = new StatementError('the connection is closed');
    this.busy();
    this.child.send({ op: 'close' } satisfies ParentRequest, () => undefined);
    const timer = setTimeout(() => this.kill(), 2000);
    await ended;
    clearTimeout(timer);
  }

  // An idle process does not keep rho alive; one that is answering does.
  private idle(): void {
    this.child.unref();
    (this.child.channel as { unref?: () => void } | undefined)?.unref?.();
  }

  private busy(): void {
    this.child.ref();
    (this.child.channel as { ref?: () => void } | undefined)?.ref?.();
  }
}
