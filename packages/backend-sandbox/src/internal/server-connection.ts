import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type { BackendProcess, ProcessExit, SpawnOptions } from '@rho/core';
import type { Command, ProcessEvent, Reply, Request, WireError } from '../protocol.js';

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };
type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

/** A process of the sandbox, as rho's side sees it. */
interface RemoteProcess {
  pid: number | undefined;
  stdout: Readable | null;
  stderr: Readable | null;
  resolveExit: (exit: ProcessExit) => void;
  exited: boolean;
  groupGone: boolean;
}

/** A Node-style error from one that crossed the wire. */
export function errorFromWire(error: WireError): NodeJS.ErrnoException {
  return Object.assign(new Error(error.message), {
    ...(error.code === undefined ? {} : { code: error.code }),
    ...(error.path === undefined ? {} : { path: error.path }),
  });
}

/**
 * The client end of the server protocol over the server's stdin and stdout: calls with replies,
 * processes with their streams and exits. Everything in flight fails once the server is gone.
 */
export class ServerConnection {
  private nextId = 1;
  private nextProc = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly processes = new Map<number, RemoteProcess>();
  /** Which process wrote each stdout stream, so it can be the stdin of another one inside the server. */
  private readonly stdoutOwners = new WeakMap<Readable, number>();
  /** Stdout streams connected to another process inside the server: nothing is read from them here. */
  private readonly connected = new WeakSet<Readable>();
  private gone: Error | undefined;
  /** Settles with the server's greeting. */
  readonly ready: Promise<{ home: string; pid: number }>;

  constructor(
    private readonly child: ChildProcess,
    private readonly describeExit: () => string,
  ) {
    let greet: (value: { home: string; pid: number }) => void = () => {};
    let refuse: (error: Error) => void = () => {};
    this.ready = new Promise((resolve, reject) => {
      greet = resolve;
      refuse = reject;
    });
    const lines = createInterface({ input: child.stdout!, crlfDelay: Infinity });
    lines.on('line', (line) => {
      const message = JSON.parse(line) as Reply | ProcessEvent;
      if ('id' in message) this.reply(message);
      else if (message.event === 'ready') greet({ home: message.home, pid: message.pid });
      else this.event(message);
    });
    child.once('exit', () => {
      this.gone = Object.assign(new Error(`The sandbox has stopped: ${this.describeExit()}`), { code: 'EPIPE' });
      refuse(this.gone);
      for (const waiting of this.pending.values()) waiting.reject(this.gone);
      this.pending.clear();
      for (const remote of this.processes.values()) this.finish(remote, { exitCode: null, signal: 'SIGKILL' });
      this.processes.clear();
    });
    // A write after the server died fails with EPIPE; the exit handler above reports it.
    child.stdin!.on('error', () => {});
  }

  /** Why the server is gone (its container exited), or undefined while it runs. */
  get stoppedBecause(): Error | undefined {
    return this.gone;
  }

  /** Calls `op` in the server. */
  call<T>(request: DistributiveOmit<Request, 'id'>): Promise<T> {
    if (this.gone !== undefined) return Promise.reject(this.gone);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.write({ ...request, id } as Request);
    });
  }

  /** Starts a process in the server. */
  spawn(options: SpawnOptions): BackendProcess {
    const proc = this.nextProc++;
    let resolveExit: (exit: ProcessExit) => void = () => {};
    const exited = new Promise<ProcessExit>((resolve) => {
      resolveExit = resolve;
    });
    const stdoutOption = options.stdout ?? 'pipe';
    const stderrOption = options.stderr ?? 'pipe';
    const remote: RemoteProcess = {
      pid: undefined,
      stdout: stdoutOption === 'pipe' ? this.outputStream(proc, true) : null,
      stderr: stderrOption === 'pipe' ? this.outputStream(proc, false) : null,
      resolveExit,
      exited: false,
      groupGone: false,
    };
    if (remote.stdout !== null) this.stdoutOwners.set(remote.stdout, proc);
    if (this.gone !== undefined) {
      this.finish(remote, { exitCode: null, signal: null, spawnError: this.gone });
      return this.handle(proc, remote, exited);
    }
    this.processes.set(proc, remote);
    const source = options.stdin ?? 'ignore';
    const from = source === 'ignore' ? undefined : this.stdoutOwners.get(source);
    if (from !== undefined && source !== 'ignore') this.connected.add(source);
    this.write({
      op: 'spawn',
      proc,
      argv: options.argv,
      cwd: options.cwd,
      ...(options.env === undefined ? {} : { env: definedOnly(options.env) }),
      stdin: source === 'ignore' ? 'ignore' : from !== undefined ? { from } : 'pipe',
      stdout: stdoutOption,
      stderr: stderrOption,
    });
    if (source !== 'ignore' && from === undefined) {
      source.on('data', (chunk: Buffer) =>
        this.write({ op: 'stdin', proc, data: Buffer.from(chunk).toString('base64') }),
      );
      source.once('end', () => this.write({ op: 'stdin-end', proc }));
      source.once('error', () => this.write({ op: 'stdin-end', proc }));
    }
    return this.handle(proc, remote, exited);
  }

  private handle(proc: number, remote: RemoteProcess, exited: Promise<ProcessExit>): BackendProcess {
    return {
      get pid() {
        return remote.pid;
      },
      stdout: remote.stdout,
      stderr: remote.stderr,
      exited,
      kill: (signal) => {
        if (!remote.groupGone) this.write({ op: 'kill', proc, signal });
      },
      groupAlive: () => !remote.groupGone,
    };
  }

  /** A stream of a process's output; the server starts sending stdout only once it is read here. */
  private outputStream(proc: number, isStdout: boolean): Readable {
    let started = !isStdout;
    const stream: Readable = new Readable({
      read: () => {
        if (started) return;
        started = true;
        // Connected to another process inside the server instead: nothing comes here.
        if (this.connected.has(stream)) return;
        this.write({ op: 'forward', proc });
      },
      destroy: (error, callback) => {
        if (isStdout && !started) this.write({ op: 'drop', proc });
        callback(error);
        setImmediate(() => {
          const remote = this.processes.get(proc);
          if (remote !== undefined) this.forgetWhenDone(proc, remote);
        });
      },
    });
    return stream;
  }

  private reply(message: Reply): void {
    const waiting = this.pending.get(message.id);
    if (waiting === undefined) return;
    this.pending.delete(message.id);
    if (message.ok) waiting.resolve(message.result);
    else waiting.reject(errorFromWire(message.error));
  }

  private event(message: Exclude<ProcessEvent, { event: 'ready' }>): void {
    const remote = this.processes.get(message.proc);
    if (remote === undefined) return;
    switch (message.event) {
      case 'spawned':
        remote.pid = message.pid;
        return;
      case 'data': {
        const stream = message.stream === 'stdout' ? remote.stdout : remote.stderr;
        if (stream !== null && !stream.destroyed) stream.push(Buffer.from(message.data, 'base64'));
        return;
      }
      case 'end': {
        const stream = message.stream === 'stdout' ? remote.stdout : remote.stderr;
        if (stream !== null && !stream.destroyed) stream.push(null);
        this.forgetWhenDone(message.proc, remote);
        return;
      }
      case 'exit':
        remote.exited = true;
        remote.resolveExit({
          exitCode: message.exitCode,
          signal: message.signal,
          ...(message.spawnError === undefined ? {} : { spawnError: errorFromWire(message.spawnError) }),
        });
        if (message.spawnError !== undefined) {
          for (const stream of [remote.stdout, remote.stderr])
            if (stream !== null && !stream.destroyed) stream.push(null);
        }
        return;
      case 'group-gone':
        remote.groupGone = true;
        this.forgetWhenDone(message.proc, remote);
        return;
    }
  }

  /**
   * Forgets a process once nothing more can come for it: its group is gone and each of its output
   * streams has ended, was dropped here, or feeds another process. (Output can still be on its way
   * after the group is gone: it is forwarded only once read here.)
   */
  private forgetWhenDone(proc: number, remote: RemoteProcess): void {
    const done = (stream: Readable | null) =>
      stream === null || stream.readableEnded || stream.destroyed || this.connected.has(stream);
    if (remote.groupGone && done(remote.stdout) && done(remote.stderr)) this.processes.delete(proc);
  }

  private finish(remote: RemoteProcess, exit: ProcessExit): void {
    remote.groupGone = true;
    for (const stream of [remote.stdout, remote.stderr]) if (stream !== null && !stream.destroyed) stream.push(null);
    if (!remote.exited) {
      remote.exited = true;
      remote.resolveExit(exit);
    }
  }

  private write(message: Request | Command): void {
    if (this.gone !== undefined || this.child.stdin === null || this.child.stdin.destroyed) return;
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }
}

function definedOnly(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) result[name] = value;
  return result;
}
