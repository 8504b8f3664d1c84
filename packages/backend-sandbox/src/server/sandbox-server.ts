// The server of the sandbox backend: runs inside the bubblewrap container (started by
// createSandboxBackend, never imported), reads requests on stdin and answers on stdout, one JSON
// object per line (protocol.ts). Every file operation and process runs here, so paths resolve in
// the container's mount namespace: what the container cannot write, no tool can.
// It runs the local backend of @rho/core inside the container, so the semantics (atomic
// replace, exclusive create, process groups, SIGPIPE) are the local backend's by construction.
import { homedir } from 'node:os';
import { PassThrough, type Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import type { BackendProcess, ReadHandle } from '@rho/core';
import { createLocalBackend } from '@rho/core/local-backend';
import type { Command, ProcessEvent, Reply, Request, WireError } from '../protocol.js';

const backend = createLocalBackend({ ripgrepPath: 'rg' });
/** What each process a tool starts runs under (`prlimit --as=...` when no memory cgroup holds the container). */
const processPrefix = process.argv[2] === undefined ? [] : (JSON.parse(process.argv[2]) as string[]);
const handles = new Map<number, ReadHandle>();
let nextHandle = 1;
const processes = new Map<
  number,
  { process: BackendProcess; stdin?: PassThrough; forwarded: boolean; dropped: boolean; groupGone: boolean }
>();

/**
 * Holds a stdout stream until it is forwarded or piped: Node discards the output of a child that
 * exits while nobody listens to its stdout (child_process flushStdio), so a listener must be there
 * from the start; a `readable` listener keeps the data buffered without reading it.
 */
const holders = new WeakMap<Readable, () => void>();
function hold(stream: Readable | null): void {
  if (stream === null) return;
  const holder = (): void => {};
  holders.set(stream, holder);
  stream.on('readable', holder);
}
function release(stream: Readable): void {
  const holder = holders.get(stream);
  if (holder === undefined) return;
  holders.delete(stream);
  stream.off('readable', holder);
}

/** Forgets a process once its group is gone and its stdout was forwarded, dropped or never piped. */
function forgetWhenDone(proc: number): void {
  const entry = processes.get(proc);
  if (entry === undefined || !entry.groupGone) return;
  if (entry.process.stdout === null || entry.forwarded || entry.dropped) processes.delete(proc);
}

let blocked: (() => void)[] = [];
function send(message: Reply | ProcessEvent): boolean {
  return process.stdout.write(`${JSON.stringify(message)}\n`);
}
process.stdout.on('drain', () => {
  const waiting = blocked;
  blocked = [];
  for (const resume of waiting) resume();
});

function wireError(error: unknown): WireError {
  const failure = error as NodeJS.ErrnoException;
  return {
    message: failure?.message ?? String(error),
    ...(typeof failure?.code === 'string' ? { code: failure.code } : {}),
    ...(typeof failure?.path === 'string' ? { path: failure.path } : {}),
  };
}

async function answer(request: Request): Promise<unknown> {
  switch (request.op) {
    case 'stat':
    case 'lstat':
    case 'realpath':
    case 'readlink':
    case 'readdir':
      return backend[request.op](request.path);
    case 'readFile':
      return Buffer.from(await backend.readFile(request.path, { maxBytes: request.maxBytes })).toString('base64');
    case 'writeFileAtomic':
    case 'createExclusive':
      return backend[request.op](request.path, Buffer.from(request.data, 'base64'));
    case 'mkdir':
      return backend.mkdir(request.path, { recursive: request.recursive });
    case 'open': {
      const handle = await backend.openRead(request.path);
      const id = nextHandle++;
      handles.set(id, handle);
      return { handle: id, size: handle.size };
    }
    case 'read': {
      const handle = handles.get(request.handle);
      if (handle === undefined) throw Object.assign(new Error('EBADF: bad file handle'), { code: 'EBADF' });
      const buffer = Buffer.alloc(request.length);
      const count = await handle.read(buffer, request.position, request.length);
      return buffer.subarray(0, count).toString('base64');
    }
    case 'close': {
      const handle = handles.get(request.handle);
      handles.delete(request.handle);
      await handle?.close();
      return null;
    }
    case 'ping':
      return null;
  }
}

/** Forwards a stream's chunks as events, holding the stream while the client's pipe is full. */
function forward(proc: number, stream: Readable | null, name: 'stdout' | 'stderr'): void {
  if (stream === null) return;
  stream.on('data', (chunk: Buffer) => {
    if (!send({ event: 'data', proc, stream: name, data: chunk.toString('base64') })) {
      stream.pause();
      blocked.push(() => stream.resume());
    }
  });
  stream.once('end', () => send({ event: 'end', proc, stream: name }));
  stream.once('error', () => send({ event: 'end', proc, stream: name }));
}

/** Tells the client once every process of the group is gone, polling less and less often. */
function watchGroup(proc: number, child: BackendProcess): void {
  let pause = 2;
  const check = (): void => {
    if (child.groupAlive?.() !== true) {
      send({ event: 'group-gone', proc });
      const entry = processes.get(proc);
      if (entry !== undefined) entry.groupGone = true;
      forgetWhenDone(proc);
      return;
    }
    pause = Math.min(pause * 2, 200);
    setTimeout(check, pause).unref();
  };
  check();
}

function command(message: Command): void {
  switch (message.op) {
    case 'spawn': {
      let stdin: 'ignore' | Readable = 'ignore';
      let pipe: PassThrough | undefined;
      if (message.stdin === 'pipe') {
        pipe = new PassThrough();
        stdin = pipe;
      } else if (typeof message.stdin === 'object') {
        const source = processes.get(message.stdin.from);
        if (source?.process.stdout) {
          source.forwarded = true;
          release(source.process.stdout);
          stdin = source.process.stdout;
        }
      }
      const child = backend.spawn({
        argv: [...processPrefix, ...message.argv],
        cwd: message.cwd,
        // Only what the tool passed, else the container's own clean environment.
        env: message.env ?? process.env,
        stdin,
        stdout: message.stdout,
        stderr: message.stderr,
      });
      processes.set(message.proc, {
        process: child,
        ...(pipe === undefined ? {} : { stdin: pipe }),
        forwarded: false,
        dropped: false,
        groupGone: false,
      });
      hold(child.stdout);
      send({ event: 'spawned', proc: message.proc, pid: child.pid });
      forward(message.proc, child.stderr, 'stderr');
      void child.exited.then((exit) => {
        send({
          event: 'exit',
          proc: message.proc,
          exitCode: exit.exitCode,
          signal: exit.signal,
          ...(exit.spawnError === undefined ? {} : { spawnError: wireError(exit.spawnError) }),
        });
        watchGroup(message.proc, child);
      });
      return;
    }
    case 'stdin':
      processes.get(message.proc)?.stdin?.write(Buffer.from(message.data, 'base64'));
      return;
    case 'stdin-end':
      processes.get(message.proc)?.stdin?.end();
      return;
    case 'forward': {
      const entry = processes.get(message.proc);
      if (entry === undefined || entry.forwarded) return;
      entry.forwarded = true;
      if (entry.process.stdout !== null) release(entry.process.stdout);
      forward(message.proc, entry.process.stdout, 'stdout');
      entry.process.stdout?.resume();
      forgetWhenDone(message.proc);
      return;
    }
    case 'drop': {
      const entry = processes.get(message.proc);
      if (entry !== undefined && !entry.forwarded) {
        entry.dropped = true;
        entry.process.stdout?.destroy();
        forgetWhenDone(message.proc);
      }
      return;
    }
    case 'kill':
      processes.get(message.proc)?.process.kill(message.signal);
      return;
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  const message = JSON.parse(line) as Request | Command;
  if ('id' in message) {
    answer(message).then(
      (result) => send({ id: message.id, ok: true, result: result ?? null }),
      (error: unknown) => send({ id: message.id, ok: false, error: wireError(error) }),
    );
  } else {
    command(message);
  }
});
// The client went away: end, and with this process the container and everything in it.
lines.once('close', () => process.exit(0));
send({ event: 'ready', home: homedir(), pid: process.pid });
