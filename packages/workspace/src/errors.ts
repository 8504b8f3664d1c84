import { ConfigError, RhoError } from '@rho/core';

/** What every error of this package is given: what happened and what to do about it. */
export interface WorkspaceErrorOptions {
  message: string;
  cause?: unknown;
}

/**
 * A workspace operation failed: a git command (`workspace_git`: the message says the command and
 * git's standard error, bounded), an unreadable `workspace.json` (`workspace_corrupt`), or a
 * working directory too large for checkpoints (`workspace_too_large`).
 */
export class WorkspaceError extends RhoError {
  constructor(
    code: 'workspace_git' | 'workspace_corrupt' | 'workspace_too_large' | 'workspace_io',
    options: WorkspaceErrorOptions,
  ) {
    super(code, options);
    this.name = 'WorkspaceError';
  }

  static override isInstance(error: unknown): error is WorkspaceError {
    return RhoError.isInstance(error) && error.name === 'WorkspaceError';
  }
}

/**
 * Files changed on both sides: `apply` (the original changed where the agent did) or `undo`
 * (someone changed a file after the agent's last turn). Nothing was changed; `files` names them.
 */
export class WorkspaceConflictError extends RhoError {
  /** The conflicting paths, relative to the directory the operation would have changed. */
  readonly files: string[];

  constructor(options: WorkspaceErrorOptions & { files: string[] }) {
    super('workspace_conflict', options);
    this.name = 'WorkspaceConflictError';
    this.files = options.files;
  }

  static override isInstance(error: unknown): error is WorkspaceConflictError {
    return RhoError.isInstance(error) && error.code === 'workspace_conflict';
  }
}

/**
 * An operation that does not fit the session's workspace: apply, diff or discard without a
 * workspace, or of one already discarded or applied; apply of an empty diff; undo with nothing to
 * undo. A `ConfigError` (its `name` stays `ConfigError`, as the CLI's own usage errors do, so that
 * `ConfigError.isInstance` holds and the CLI exits 2); the message is one line.
 */
export class WorkspaceUsageError extends ConfigError {
  constructor(options: WorkspaceErrorOptions) {
    super({ ...options, code: 'workspace_usage' });
  }

  static override isInstance(error: unknown): error is WorkspaceUsageError {
    return RhoError.isInstance(error) && error.code === 'workspace_usage';
  }
}
