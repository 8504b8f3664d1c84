import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { delimiter, join, posix } from 'node:path';

/**
 * bubblewrap of this machine, found on rho's own `PATH` (a sandbox's `PATH` is the sandbox's: it
 * names programs inside it).
 */
function bubblewrap(): string {
  for (const directory of (process.env['PATH'] ?? '/usr/bin:/bin').split(delimiter)) {
    const candidate = join(directory, 'bwrap');
    if (directory !== '' && existsSync(candidate)) return candidate;
  }
  return 'bwrap';
}

/** The sandbox user's home directory, as on Daytona's images. */
export const FAKE_HOME = '/home/daytona';

/** A command run in a session of the fake. */
export interface FakeCommand {
  id: string;
  command: string;
  exitCode: number | undefined;
  stdout: Buffer[];
  stderr: Buffer[];
  child: ChildProcess | undefined;
  done: Promise<void>;
}

/**
 * One sandbox of the fake: a directory of this machine plays its file system. Commands run for
 * real, under bubblewrap, with the directory's `home` bound at `/home/daytona` and its `tmp` at
 * `/tmp` (the rest of the machine read-only), so the backend sees the paths a Daytona sandbox
 * has and nothing of the machine's own `/tmp` or `/home`.
 */
export class FakeSandbox {
  /** Sessions by id, with their commands. */
  readonly sessions = new Map<string, Map<string, FakeCommand>>();
  /** Every process started (execute and session commands), to check none is left behind. */
  readonly children = new Set<ChildProcess>();
  private commandCount = 0;

  constructor(
    /** Sandbox id. */
    readonly id: string,
    /** Directory of this machine holding the sandbox's `home` and `tmp`. */
    readonly root: string,
    /** Environment of every process (the sandbox's `env`). */
    readonly env: Record<string, string>,
  ) {
    mkdirSync(join(root, 'home'), { recursive: true });
    mkdirSync(join(root, 'tmp'), { recursive: true, mode: 0o1777 });
  }

  /**
   * Where a sandbox path is on this machine: under the sandbox's directory for `/home/daytona` and
   * `/tmp`, else the machine's own path (which the sandbox sees read-only). Relative paths are
   * relative to the home directory, as on the daemon.
   */
  hostPath(path: string): string {
    const absolute = posix.resolve(FAKE_HOME, path);
    for (const [prefix, directory] of [
      [FAKE_HOME, 'home'],
      ['/tmp', 'tmp'],
    ] as const) {
      if (absolute === prefix || absolute.startsWith(`${prefix}/`)) {
        return join(this.root, directory, absolute.slice(prefix.length));
      }
    }
    return absolute;
  }

  /** Whether the sandbox may write there (its home and its /tmp only). */
  writable(path: string): boolean {
    return this.hostPath(path).startsWith(`${this.root}/`);
  }

  /** Starts `sh -c command` in the sandbox, as the leader of its own process group. */
  start(command: string, options: { cwd?: string; env?: Record<string, string> } = {}): ChildProcess {
    const cwd = posix.resolve(FAKE_HOME, options.cwd ?? FAKE_HOME);
    const child = spawn(
      bubblewrap(),
      [
        '--ro-bind',
        '/',
        '/',
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--tmpfs',
        '/home',
        '--bind',
        join(this.root, 'home'),
        FAKE_HOME,
        '--bind',
        join(this.root, 'tmp'),
        '/tmp',
        '--chdir',
        cwd,
        '--',
        'sh',
        '-c',
        command,
      ],
      { env: { ...this.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    child.once('error', () => this.children.delete(child));
    return child;
  }

  /** Runs a command in a session (the daemon's session command); resolves once it is started. */
  runInSession(sessionId: string, command: string): FakeCommand {
    const session = this.sessions.get(sessionId);
    if (session === undefined) throw new Error(`session ${sessionId} not found`);
    this.commandCount += 1;
    const id = `cmd-${this.commandCount}`;
    const child = this.start(command);
    const record: FakeCommand = {
      id,
      command,
      exitCode: undefined,
      stdout: [],
      stderr: [],
      child,
      done: Promise.resolve(),
    };
    child.stdout?.on('data', (chunk: Buffer) => record.stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => record.stderr.push(chunk));
    record.done = new Promise((resolve) => {
      child.once('close', (code, signal) => {
        // As the daemon's session shell reports it: 128 + signal number for a signalled command.
        record.exitCode = code ?? 128 + (signal === 'SIGKILL' ? 9 : 15);
        record.child = undefined;
        resolve();
      });
      child.once('error', () => {
        record.exitCode = 127;
        record.child = undefined;
        resolve();
      });
    });
    session.set(id, record);
    return record;
  }

  /** Ends a session: its running commands' process groups get SIGKILL, as when the daemon drops it. */
  deleteSession(sessionId: string): boolean {
    const session = this.sessions.get(sessionId);
    if (session === undefined) return false;
    for (const command of session.values()) killGroup(command.child);
    this.sessions.delete(sessionId);
    return true;
  }

  /**
   * The processes running in this sandbox, whatever process group or session they moved to: those
   * whose mount table holds the sandbox's directory (its home is bound there), read from `/proc`.
   */
  processes(): number[] {
    const marker = ` ${join(this.root, 'home')} `;
    const suffix = join(this.root, 'home').split('/').slice(-3).join('/');
    const found: number[] = [];
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
      let mounts: string;
      let stat: string;
      try {
        mounts = readFileSync(`/proc/${entry}/mountinfo`, 'utf8');
        stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      } catch {
        continue;
      }
      const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
      if (state === 'Z' || state === 'X') continue;
      // The bind's source shows as the mount's root: the whole path, or its end when /tmp is a tmpfs.
      if (
        mounts.includes(marker) ||
        mounts.split('\n').some((line) => line.split(' ')[3]?.endsWith(suffix) && line.split(' ')[4] === FAKE_HOME)
      ) {
        found.push(Number(entry));
      }
    }
    return found;
  }

  /** Kills everything still running (the sandbox is deleted). */
  destroy(): void {
    for (const sessionId of [...this.sessions.keys()]) this.deleteSession(sessionId);
    for (const child of this.children) killGroup(child);
    for (const pid of this.processes()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
}

function killGroup(child: ChildProcess | undefined): void {
  if (child?.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
