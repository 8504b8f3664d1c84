/**
 * The contract of @rho/workspace (issue 37): isolated workspaces (a git worktree on a branch
 * `rho/<session-id>`, or a copy of a plain directory), their review (diff), their outcome (apply,
 * discard), the sweep of workspaces whose session is gone, and per-turn checkpoints of in-place
 * runs with undo. Every operation runs git (2.30 or newer) as a child process with a bounded
 * output and a timeout; nothing here prints.
 */

/** How a run's files are kept: its own workspace, or the working directory itself. */
export type WorkspaceMode = 'isolated' | 'in-place';

/** What an isolated workspace is made of. */
export type WorkspaceKind = 'git-worktree' | 'copy';

/**
 * An isolated workspace, as recorded in `<session dir>/workspace.json` (written atomically; the
 * session's record of where its files are). Paths are absolute and real (symbolic links resolved).
 */
export interface WorkspaceRecord {
  version: 1;
  kind: WorkspaceKind;
  sessionId: string;
  /** The user's working directory: what `apply` changes. */
  original: string;
  /** Where the agent works (the run's working directory): `$RHO_HOME/workspaces/<session-id>`, or a subfolder of it when `original` is below its repository's top level. */
  path: string;
  /** The workspace's top folder (the worktree or the copy): what `discard` removes. */
  root: string;
  /**
   * The commit the agent's changes are measured from: for a worktree, HEAD of the repository, or
   * a commit on top of it holding the user's uncommitted changes; for a copy, the commit of the
   * snapshot in the shadow store.
   */
  base: string;
  /** `rho/<session-id>` for a worktree. */
  branch?: string;
  /** The repository's top level (worktree), for `git -C`. */
  repository?: string;
  /** The shadow git store of a copy (`<session dir>/workspace.git`). */
  gitDir?: string;
  /** Paths (relative to `original`) of uncommitted changes carried into the workspace (worktree). */
  carried: string[];
  createdAt: string;
  /**
   * Set when the agent works elsewhere (the daytona backend): this copy is what was uploaded
   * (nothing, when `empty`), and the backend brings the sandbox's changes back into it after each run.
   */
  remote?: { backend: string; empty: boolean };
  state: 'active' | 'applied' | 'discarded';
  /** When `state` changed last. */
  decidedAt?: string;
}

/** One changed file of a diff. `oldPath` is set for a rename. */
export interface ChangedFile {
  path: string;
  oldPath?: string;
  status: 'added' | 'modified' | 'deleted' | 'renamed' | 'mode' | 'type';
  additions: number;
  deletions: number;
  binary: boolean;
}

/** The totals rho keeps in meta.json (`changes`) and shows in `rho ps`: "N files changed, +a/-d". */
export interface ChangeStats {
  files: number;
  additions: number;
  deletions: number;
}

/** What the agent changed: the files, the totals, and a patch `git apply` takes (binary-safe, full index). */
export interface WorkspaceDiff {
  files: ChangedFile[];
  stats: ChangeStats;
  /** `git diff --binary --full-index` text from the base to the workspace, paths relative to `original`. Empty when nothing changed. */
  patch: string;
}

/** A checkpoint of an in-place run: the working directory's files at the end of a turn that wrote files. */
export interface Checkpoint {
  /** The turn it was taken after (0: the run's start). */
  turn: number;
  commit: string;
  createdAt: string;
  /** The files that changed since the previous checkpoint. */
  stats: ChangeStats;
  /** Set on the checkpoint an undo took: the turn whose files it wrote back (it replaces its turn's checkpoint in the list). */
  undoTo?: number;
}

/** What `undo` would do (shown before it does it), or refuses to do. */
export interface UndoPlan {
  /** The checkpoint the files go back to. */
  to: Checkpoint;
  /** Files written back to their content at `to` (modified or deleted since). */
  restore: string[];
  /** Files that did not exist at `to` and are removed. */
  remove: string[];
  /**
   * Files changed by someone else since the last checkpoint (their content is neither the
   * agent's last nor the checkpoint's): undo refuses while this is not empty.
   */
  conflicts: string[];
}
