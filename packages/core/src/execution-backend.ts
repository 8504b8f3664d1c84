import type { RhoError } from '@rho/model-client';
import type { Readable } from 'node:stream';

/**
 * The seam under the shell and file tools. Every tool reaches files and processes only through an
 * `ExecutionBackend`: the local backend ({@link createLocalBackend}) runs processes and touches
 * files on this machine; a remote sandbox (Daytona, a container, another host) implements the same
 * interface, and the model sees the same tool names and schemas either way.
 *
 * Paths are absolute paths on the backend's file system; tools resolve relative arguments against
 * the session's working directory before calling in. Failures reject with Node-style errors that
 * carry a `code` (`ENOENT`, `EACCES`, `EISDIR`, `ENOTDIR`, `EEXIST`, `ELOOP`, ...), so tools can turn
 * them into messages the model understands whatever the backend.
 */
export interface ExecutionBackend {
  /** `local`, or the name of a remote backend. */
  readonly name: string;

  /**
   * Why the backend can run nothing more (its container exited, its remote sandbox is gone), or
   * `undefined` while it works. A session checks it after each response's tool calls and ends the
   * run with this error (a `BackendStoppedError`), rather than going on with every call failing.
   */
  stopped?(): RhoError | undefined;

  /** Starts a process from an argv (no shell is involved). Spawn failures show in `exited`. */
  spawn(options: SpawnOptions): BackendProcess;

  /** Path of a ripgrep (`rg`) executable on the backend, or a bare name resolved on its `PATH`. */
  ripgrepPath(): Promise<string>;

  /** Information about a file, following symlinks. */
  stat(path: string): Promise<FileInfo>;
  /** Information about a file without following a final symlink. */
  lstat(path: string): Promise<FileInfo>;
  /** The canonical absolute path, with every symlink and `..` resolved. */
  realpath(path: string): Promise<string>;
  /** The target a symlink points to, as stored in the link. */
  readlink(path: string): Promise<string>;
  /** The names in a directory (not `.` or `..`), in no particular order. */
  readdir(path: string): Promise<string[]>;
  /** The user's home directory on the backend, used to expand `~`. */
  homeDir(): Promise<string>;

  /** Opens a file for positional reads, so a tool can read parts of a file of any size. */
  openRead(path: string): Promise<ReadHandle>;
  /** Reads a whole file; rejects with code `EFBIG` when it is larger than `maxBytes`. */
  readFile(path: string, options: { maxBytes: number }): Promise<Uint8Array>;
  /**
   * Replaces (or creates) a file atomically: the data goes to a temporary file in the same
   * directory, which is renamed over the target, so a crash never leaves half a file. An existing
   * file keeps its permission bits.
   */
  writeFileAtomic(path: string, data: Uint8Array): Promise<void>;
  /** Creates a file that must not exist yet (`O_EXCL`): rejects with `EEXIST`, never overwrites. */
  createExclusive(path: string, data: Uint8Array): Promise<void>;
  /** Creates a directory, and its missing parents when `recursive`. */
  mkdir(path: string, options?: { recursive?: boolean }): Promise<void>;

  /**
   * What confines the tools on this backend, when it is more than the permission profile: set by
   * backends that run everything inside a container or a remote machine (the restricted shell
   * then needs no sandbox of its own per command). Absent for `local`.
   */
  readonly isolation?: BackendIsolation;

  /**
   * The directory the session's tools work in on this backend, when the backend chose it: a remote
   * sandbox has a file system of its own, where the local working directory does not exist (the
   * daytona backend works in `/home/daytona/<name of the local directory>`). Absent: the session's
   * working directory is used as it is.
   */
  readonly workingDir?: string;

  /**
   * Releases what the backend holds (a container, a server process, a remote sandbox): every
   * process it started is ended. Idempotent; calls made afterwards fail. Backends that hold
   * nothing leave it out.
   */
  close?(): Promise<void>;
}

/** How a backend confines the tools that run on it. */
export interface BackendIsolation {
  /** What confines them, in words (`bubblewrap container`, `Daytona sandbox`). */
  description: string;
  /** Whether processes can reach the network. */
  network: boolean;
  /** Whether the working directory is writable. */
  workingDir: 'read-write' | 'read-only';
  /** The environment processes get when a tool passes none (nothing of rho's own). */
  environment: Readonly<Record<string, string>>;
}

/** What to run, where, and how its standard streams are wired. */
export interface SpawnOptions {
  /** Program and arguments; `argv[0]` is looked up on the `PATH` of `env` when it has no `/`. */
  argv: readonly string[];
  /** Working directory; must exist. */
  cwd: string;
  /** The complete environment of the process (not merged); defaults to the backend's own. */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Standard input: nothing (`ignore`, the default, reads as empty), or the output stream of another
   * process of the same backend, which is how pipelines are wired without a shell.
   */
  stdin?: 'ignore' | Readable;
  /** Standard output: captured (`pipe`, the default) or discarded (`ignore`, like `>/dev/null`). */
  stdout?: 'pipe' | 'ignore';
  /** Standard error: captured, discarded, or merged into `stdout` (like `2>&1`). */
  stderr?: 'pipe' | 'ignore' | 'stdout';
}

/** A running process. */
export interface BackendProcess {
  /** Process id on the backend, when it has one. */
  readonly pid: number | undefined;
  /** Output (with stderr merged in when asked), or null when discarded. */
  readonly stdout: Readable | null;
  /** Error output, or null when discarded or merged. */
  readonly stderr: Readable | null;
  /** Settles once the process has exited; never rejects. */
  readonly exited: Promise<ProcessExit>;
  /**
   * Sends a signal to the process and everything it started (its whole process group), so a
   * timeout or a cancellation leaves nothing running.
   */
  kill(signal: 'SIGTERM' | 'SIGKILL'): void;
  /**
   * Whether any process of its group is still there, the process itself or anything it started
   * (which outlives it when it ignores SIGTERM). Backends that cannot tell leave it out; callers
   * then wait the whole grace period before SIGKILL.
   */
  groupAlive?(): boolean;
}

/** How a process ended. */
export interface ProcessExit {
  /** Exit status, or null when a signal ended it or it never started. */
  exitCode: number | null;
  /** The signal that ended it, if one did. */
  signal: string | null;
  /** Why it could not be started (for example `ENOENT` for an unknown program). */
  spawnError?: NodeJS.ErrnoException;
  /**
   * Set when a resource limit of the backend ended it or one of its processes (`memory limit
   * reached (2 GiB): ...`): a sentence for the model and the user, naming the limit.
   */
  limitReached?: string;
}

/** What `stat`/`lstat` report. */
export interface FileInfo {
  /** Kind of the entry. */
  type: 'file' | 'directory' | 'symlink' | 'other';
  /** Size in bytes. */
  size: number;
  /** Permission and type bits as in `st_mode`. */
  mode: number;
  /** Last modification time, milliseconds since the epoch. */
  mtimeMs: number;
}

/** An open file for positional reads. Close it when done. */
export interface ReadHandle {
  /**
   * Reads up to `length` bytes at byte `position` into `buffer` (from its start); resolves the
   * number of bytes read, 0 at end of file.
   */
  read(buffer: Uint8Array, position: number, length: number): Promise<number>;
  /** Size of the file when it was opened. */
  readonly size: number;
  /** Releases the handle. */
  close(): Promise<void>;
}
