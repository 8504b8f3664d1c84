import { RhoError, type RhoErrorOptions } from '@rho/model-client';

/** Bad configuration or input from the user: a profile, a YAML file, a flag. Exit code 2 in the CLI. */
export class ConfigError extends RhoError {
  /** The file the problem was found in, if any. */
  readonly file: string | undefined;
  /** The field or key at fault, if any. */
  readonly field: string | undefined;
  /** The 1-based line of the field in the file, when the file was read as text. */
  readonly line: number | undefined;

  constructor(options: RhoErrorOptions & { file?: string; field?: string; line?: number; code?: string }) {
    super(options.code ?? 'config_error', options);
    this.name = 'ConfigError';
    this.file = options.file;
    this.field = options.field;
    this.line = options.line;
  }

  static override isInstance(error: unknown): error is ConfigError {
    // Subclasses keep their own name; they are configuration problems all the same.
    return RhoError.isInstance(error) && (error.name === 'ConfigError' || error.name === 'BackendUnavailableError');
  }
}

/** A session or session directory was not found, or a prefix was ambiguous. */
export class SessionNotFoundError extends RhoError {
  /** Candidate ids when a prefix matched several sessions. */
  readonly candidates: string[];

  constructor(options: RhoErrorOptions & { candidates?: string[] }) {
    super('session_not_found', options);
    this.name = 'SessionNotFoundError';
    this.candidates = options.candidates ?? [];
  }

  static override isInstance(error: unknown): error is SessionNotFoundError {
    return RhoError.isInstance(error) && error.code === 'session_not_found';
  }
}

/** A trace file could not be read. */
export class TraceError extends RhoError {
  /** 1-based line number of the offending record. */
  readonly line: number | undefined;

  constructor(options: RhoErrorOptions & { line?: number }) {
    super('trace_error', options);
    this.name = 'TraceError';
    this.line = options.line;
  }

  static override isInstance(error: unknown): error is TraceError {
    return RhoError.isInstance(error) && error.code === 'trace_error';
  }
}

/** A bug in rho: an invariant was broken. Please report it. */
export class InternalError extends RhoError {
  constructor(options: RhoErrorOptions) {
    super('internal_error', options);
    this.name = 'InternalError';
  }

  static override isInstance(error: unknown): error is InternalError {
    return RhoError.isInstance(error) && error.code === 'internal_error';
  }
}

/**
 * A session was asked to do something while a run of it is in progress (a second `run()`, or
 * `compact()`). It is a mistake of the calling code, not of its input or of rho: await the run,
 * or `cancel()` it, before starting another. Never retry it blindly.
 */
export class SessionBusyError extends RhoError {
  /** What was asked of the busy session. */
  readonly operation: 'run' | 'compact';

  constructor(options: RhoErrorOptions & { operation: 'run' | 'compact' }) {
    super('session_busy', options);
    this.name = 'SessionBusyError';
    this.operation = options.operation;
  }

  static override isInstance(error: unknown): error is SessionBusyError {
    return RhoError.isInstance(error) && error.code === 'session_busy';
  }
}

/** What an errno means, in words a person can act on. */
const ERRNO_MEANINGS: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exhausted',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'the path is a directory',
  EIO: 'an input/output error',
  EMFILE: 'too many open files',
};

/**
 * A session file (the trace, the lock, meta.json) could not be written. The run stops: records
 * that cannot be written cannot be resumed from. The message names the file and the errno.
 */
export class SessionWriteError extends RhoError {
  /** The file that could not be written. */
  readonly path: string;
  /** The errno code (ENOSPC, EROFS, EACCES, ...). */
  readonly errno: string;

  constructor(options: RhoErrorOptions & { path: string; errno: string }) {
    super('session_write_failed', options);
    this.name = 'SessionWriteError';
    this.path = options.path;
    this.errno = options.errno;
  }

  /** Wraps a failed file operation on `path`: `Cannot write <path>: ENOSPC (no space left on the device). <hint>` */
  static from(path: string, error: unknown, hint = ''): SessionWriteError {
    const errno =
      typeof (error as NodeJS.ErrnoException | undefined)?.code === 'string'
        ? (error as NodeJS.ErrnoException).code!
        : 'EUNKNOWN';
    const meaning = ERRNO_MEANINGS[errno] ?? (error instanceof Error ? error.message : String(error));
    return new SessionWriteError({
      message: `Cannot write ${path}: ${errno} (${meaning}).${hint === '' ? '' : ` ${hint}`}`,
      path,
      errno,
      cause: error,
    });
  }

  static override isInstance(error: unknown): error is SessionWriteError {
    return RhoError.isInstance(error) && error.code === 'session_write_failed';
  }
}

/** Another process is running the session (it holds the session's lock). */
export class SessionLockedError extends RhoError {
  /** The owner's pid, host and since when it holds the lock, as recorded in the lock file. */
  readonly owner: { pid: number; hostname: string; since: string };

  constructor(options: RhoErrorOptions & { owner: { pid: number; hostname: string; since: string } }) {
    super('session_locked', options);
    this.name = 'SessionLockedError';
    this.owner = options.owner;
  }

  static override isInstance(error: unknown): error is SessionLockedError {
    return RhoError.isInstance(error) && error.code === 'session_locked';
  }
}

/**
 * An execution backend that cannot be used: unknown by name, missing its package, unable to start
 * here (bubblewrap not installed), or given options it does not take. A configuration problem:
 * exit code 2 in the CLI, raised before the first model call.
 */
export class BackendUnavailableError extends ConfigError {
  /** The backend asked for. */
  readonly backend: string;

  constructor(options: RhoErrorOptions & { backend: string; file?: string; field?: string }) {
    super({ ...options, code: 'backend_unavailable' });
    this.name = 'BackendUnavailableError';
    this.backend = options.backend;
  }

  static override isInstance(error: unknown): error is BackendUnavailableError {
    return RhoError.isInstance(error) && error.name === 'BackendUnavailableError';
  }
}

/**
 * The execution backend stopped during a run (its container exited, its remote sandbox is gone):
 * nothing more can run there, so the run ends with this error instead of going on with every tool
 * call failing. Exit 1.
 */
export class BackendStoppedError extends RhoError {
  /** The backend that stopped. */
  readonly backend: string;

  constructor(options: RhoErrorOptions & { backend: string }) {
    super('backend_stopped', options);
    this.name = 'BackendStoppedError';
    this.backend = options.backend;
  }

  static override isInstance(error: unknown): error is BackendStoppedError {
    return RhoError.isInstance(error) && error.name === 'BackendStoppedError';
  }
}
