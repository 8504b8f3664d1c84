import { spawn as spawnChild, type StdioOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants, promises as fs, readdirSync, readFileSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import type {
  BackendProcess,
  ExecutionBackend,
  FileInfo,
  ProcessExit,
  ReadHandle,
  SpawnOptions,
} from './execution-backend.js';

/** Options of {@link createLocalBackend}. */
export interface LocalBackendOptions {
  /**
   * Where `rg` is. Defaults to the `RHO_RIPGREP_PATH` environment variable, else `rg` on `PATH`.
   * (Tool packages that bundle ripgrep pass their binary here.)
   */
  ripgrepPath?: string | (() => Promise<string>);
}

/**
 * The default {@link ExecutionBackend}: processes and files on this machine. Each process is
 * started as the leader of its own process group, so `kill()` reaches everything it spawned.
 */
export function createLocalBackend(options: LocalBackendOptions = {}): ExecutionBackend {
  return {
    name: 'local',
    spawn: spawnLocal,
    async ripgrepPath() {
      const configured = options.ripgrepPath;
      if (typeof configured === 'function') return configured();
      return configured ?? process.env['RHO_RIPGREP_PATH'] ?? 'rg';
    },
    stat: async (path) => toFileInfo(await fs.stat(path)),
    lstat: async (path) => toFileInfo(await fs.lstat(path)),
    realpath: (path) => fs.realpath(path),
    readlink: (path) => fs.readlink(path),
    readdir: (path) => fs.readdir(path),
    homeDir: async () => homedir(),
    openRead,
    readFile,
    writeFileAtomic,
    createExclusive,
    async mkdir(path, mkdirOptions) {
      await fs.mkdir(path, { recursive: mkdirOptions?.recursive ?? false });
    },
  };
}

function toFileInfo(stats: Stats): FileInfo {
  const type = stats.isFile()
    ? 'file'
    : stats.isDirectory()
      ? 'directory'
      : stats.isSymbolicLink()
        ? 'symlink'
        : 'other';
  return { type, size: stats.size, mode: stats.mode, mtimeMs: stats.mtimeMs };
}

/** Which process writes each stdout stream, to signal it when its reader goes away. */
const writerPids = new WeakMap<Readable, number>();

function spawnLocal(options: SpawnOptions): BackendProcess {
  const stdinOption = options.stdin ?? 'ignore';
  const stdoutOption = options.stdout ?? 'pipe';
  const stderrOption = options.stderr ?? 'pipe';
  const stdio: StdioOptions = [
    stdinOption === 'ignore' ? 'ignore' : 'pipe',
    stdoutOption === 'ignore' ? 'ignore' : 'pipe',
    stderrOption === 'ignore' ? 'ignore' : 'pipe',
  ];
  const [command, ...args] = options.argv;
  let resolveExit: (exit: ProcessExit) => void = () => {};
  const exited = new Promise<ProcessExit>((resolve) => {
    resolveExit = resolve;
  });
  if (command === undefined) {
    const error: NodeJS.ErrnoException = Object.assign(new Error('Empty argv: nothing to run'), { code: 'EINVAL' });
    resolveExit({ exitCode: null, signal: null, spawnError: error });
    return { pid: undefined, stdout: null, stderr: null, exited, kill() {}, groupAlive: () => false };
  }
  // detached: the child leads a new process group, which kill() signals as a whole.
  const child = spawnChild(command, args, {
    cwd: options.cwd,
    env: (options.env ?? process.env) as NodeJS.ProcessEnv,
    stdio,
    detached: true,
  });
  let settled = false;
  child.once('error', (error: NodeJS.ErrnoException) => {
    if (settled) return;
    settled = true;
    resolveExit({ exitCode: null, signal: null, spawnError: error });
  });
  child.once('exit', (code, signal) => {
    if (settled) return;
    settled = true;
    resolveExit({ exitCode: code, signal });
  });

  if (stdinOption !== 'ignore' && child.stdin) {
    const stdin = child.stdin;
    const source = stdinOption;
    // A reader that exits early (`head`) closes its end. In a shell the writer then gets SIGPIPE at
    // its next write; Node's pipes are socket pairs, where it would get ECONNRESET and complain,
    // or block forever if nobody read. So the writer gets SIGPIPE here when it writes again.
    let stopped = false;
    const stopSource = (): void => {
      if (stopped) return;
      stopped = true;
      source.unpipe(stdin);
      if (source.readableEnded) return;
      source.once('data', () => {
        const writer = writerPids.get(source);
        if (writer !== undefined) {
          try {
            process.kill(writer, 'SIGPIPE');
          } catch {
            // Already gone.
          }
        }
        source.destroy();
      });
      source.resume();
    };
    stdin.on('error', stopSource);
    stdin.once('close', stopSource);
    source.on('error', () => stdin.destroy());
    source.pipe(stdin);
  }

  let stdout: Readable | null = child.stdout;
  let stderr: Readable | null = child.stderr;
  if (stderrOption === 'stdout') {
    stdout = mergeStreams(child.stdout, child.stderr);
    stderr = null;
  }
  const pid = child.pid;
  if (stdout !== null && pid !== undefined) writerPids.set(stdout, pid);
  return {
    pid,
    stdout,
    stderr,
    exited,
    kill(signal) {
      if (pid === undefined) return;
      try {
        process.kill(-pid, signal);
      } catch {
        // The group is already gone; fall back to the leader in case it changed groups.
        try {
          child.kill(signal);
        } catch {
          // Nothing left to signal.
        }
      }
    },
    groupAlive: () => pid !== undefined && processGroupAlive(pid),
  };
}

/**
 * Whether process group `pgid` has a member that is still running. Signal 0 tells whether the
 * group has any member at all, the leader gone or not; on Linux, members that are only zombies
 * (exited, waiting for a parent that does not reap them, as some container inits never do) do
 * not count, which `/proc` tells.
 */
export function processGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    // EPERM: a member exists but changed user; it is still there.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (process.platform !== 'linux') return true;
  const members = processGroupMembers(pgid);
  // An unreadable /proc tells nothing: the group is there (signal 0 said so).
  return members === undefined || members.length > 0;
}

/**
 * The running (not zombie) members of process group `pgid`, read from Linux's `/proc`;
 * `undefined` where `/proc` cannot be listed.
 */
export function processGroupMembers(pgid: number): number[] | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const members: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
    } catch {
      continue;
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') members.push(Number(entry));
  }
  return members;
}

/** Interleaves two streams into one, ending when both have ended. */
function mergeStreams(first: Readable | null, second: Readable | null): Readable {
  const merged = new PassThrough();
  const sources = [first, second].filter((stream): stream is Readable => stream !== null);
  let open = sources.length;
  if (open === 0) merged.end();
  for (const source of sources) {
    source.pipe(merged, { end: false });
    source.once('end', () => {
      open -= 1;
      if (open === 0) merged.end();
    });
    source.once('error', (error) => merged.destroy(error));
  }
  return merged;
}

async function openRead(path: string): Promise<ReadHandle> {
  const handle = await fs.open(path, constants.O_RDONLY);
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) {
      throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${path}'`), {
        code: 'EISDIR',
        path,
      });
    }
    return {
      size: stats.size,
      async read(buffer, position, length) {
        const { bytesRead } = await handle.read(buffer, 0, Math.min(length, buffer.byteLength), position);
        return bytesRead;
      },
      close: () => handle.close(),
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

async function readFile(path: string, options: { maxBytes: number }): Promise<Uint8Array> {
  const handle = await openRead(path);
  try {
    if (handle.size > options.maxBytes) throw tooLarge(path, options.maxBytes);
    const chunks: Uint8Array[] = [];
    let total = 0;
    let position = 0;
    // Read until end of file rather than trusting the size: the file may change meanwhile.
    for (;;) {
      const buffer = new Uint8Array(Math.max(64 * 1024, Math.min(handle.size, options.maxBytes + 1)));
      const count = await handle.read(buffer, position, buffer.byteLength);
      if (count === 0) break;
      chunks.push(buffer.subarray(0, count));
      total += count;
      position += count;
      if (total > options.maxBytes) throw tooLarge(path, options.maxBytes);
    }
    return Buffer.concat(chunks, total);
  } finally {
    await handle.close();
  }
}

function tooLarge(path: string, maxBytes: number): NodeJS.ErrnoException {
  return Object.assign(new Error(`EFBIG: file is larger than ${maxBytes} bytes, read '${path}'`), {
    code: 'EFBIG',
    path,
  });
}

async function writeFileAtomic(requestedPath: string, data: Uint8Array): Promise<void> {
  // Replace the file a symlink points to, not the link itself.
  const path = await fs.realpath(requestedPath).catch(() => requestedPath);
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  let mode: number | undefined;
  try {
    mode = (await fs.stat(path)).mode & 0o7777;
  } catch {
    mode = undefined;
  }
  const handle = await fs.open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode ?? 0o666);
  try {
    try {
      await handle.writeFile(data);
      if (mode !== undefined) await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temporary, path);
  } catch (error) {
    await fs.rm(temporary, { force: true });
    throw error;
  }
}

async function createExclusive(path: string, data: Uint8Array): Promise<void> {
  const handle = await fs.open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o666);
  try {
    await handle.writeFile(data);
  } catch (error) {
    await handle.close();
    await fs.rm(path, { force: true });
    throw error;
  }
  await handle.close();
}
