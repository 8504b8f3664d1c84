/**
 * `@rho/workspace`: isolated workspaces of rho sessions (a git worktree on `rho/<session-id>`, or
 * a copy of a plain directory), their review (diff), their outcome (apply whole, or discard), the
 * sweep of workspaces whose session is gone, and checkpoints of in-place runs with undo. Git runs
 * as a child process with a timeout and bounded output; nothing here prints.
 * See contributing/workspaces.md.
 */
export { applyWorkspace, diffWorkspace, discardWorkspace } from './apply.js';
export { CheckpointStore, MAX_CHECKPOINT_FILE_BYTES, MAX_CHECKPOINT_FILES } from './checkpoints.js';
export type { CheckpointStoreOptions } from './checkpoints.js';
export { createWorkspace } from './create.js';
export type { CreatedWorkspace, CreateWorkspaceOptions } from './create.js';
export { MAX_PATCH_BYTES } from './diff.js';
export { WorkspaceConflictError, WorkspaceError, WorkspaceUsageError } from './errors.js';
export type { WorkspaceErrorOptions } from './errors.js';
export { APPLIED_FILE, formatChangeStats, readAppliedDiff, readWorkspace, WORKSPACE_FILE } from './record.js';
export { sweepWorkspaces } from './sweep.js';
export type { SweepOptions, SweepResult } from './sweep.js';
export type {
  ChangedFile,
  ChangeStats,
  Checkpoint,
  UndoPlan,
  WorkspaceDiff,
  WorkspaceKind,
  WorkspaceMode,
  WorkspaceRecord,
} from './types.js';
