import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WorkspaceError } from './errors.js';
import type { ChangeStats, WorkspaceDiff, WorkspaceRecord } from './types.js';

/** The record's file in a session directory. */
export const WORKSPACE_FILE = 'workspace.json';

const STATES = new Set(['active', 'applied', 'discarded']);
const KINDS = new Set(['git-worktree', 'copy']);

function corrupt(file: string, why: string, cause?: unknown): WorkspaceError {
  return new WorkspaceError('workspace_corrupt', {
    message: `${file} is not a readable workspace record (${why}). Its workspace is under rho's home in workspaces/; remove the file to forget it.`,
    cause,
  });
}

/** The session's workspace record; `undefined` when it has none. Throws `workspace_corrupt` on a bad file. */
export function readWorkspace(sessionDir: string): WorkspaceRecord | undefined {
  const file = join(sessionDir, WORKSPACE_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw corrupt(file, (error as Error).message, error);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw corrupt(file, 'not JSON', error);
  }
  const record = value as Partial<WorkspaceRecord> | null;
  if (typeof record !== 'object' || record === null || Array.isArray(record)) throw corrupt(file, 'not an object');
  if (record.version !== 1) throw corrupt(file, `version ${String(record.version)}, expected 1`);
  for (const key of ['sessionId', 'original', 'path', 'root', 'base', 'createdAt'] as const)
    if (typeof record[key] !== 'string' || record[key] === '') throw corrupt(file, `no ${key}`);
  if (!KINDS.has(record.kind as string)) throw corrupt(file, `kind ${String(record.kind)}`);
  if (!STATES.has(record.state as string)) throw corrupt(file, `state ${String(record.state)}`);
  if (!Array.isArray(record.carried) || record.carried.some((item) => typeof item !== 'string'))
    throw corrupt(file, 'carried is not a list of paths');
  if (record.kind === 'git-worktree' && (typeof record.repository !== 'string' || typeof record.branch !== 'string'))
    throw corrupt(file, 'a worktree without its repository or branch');
  if (record.kind === 'copy' && typeof record.gitDir !== 'string') throw corrupt(file, 'a copy without its git store');
  return record as WorkspaceRecord;
}

/** Writes the record whole: a temporary file renamed into place. */
export function writeWorkspace(sessionDir: string, record: WorkspaceRecord): void {
  mkdirSync(sessionDir, { recursive: true, mode: 0o700 });
  const file = join(sessionDir, WORKSPACE_FILE);
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, file);
}

/** What was applied, kept in the session directory once the workspace is gone: `rho diff` and export still show it. */
export const APPLIED_FILE = 'workspace-applied.json';

/** Keeps the diff an apply wrote to the original (a temporary file renamed into place). */
export function writeAppliedDiff(sessionDir: string, diff: WorkspaceDiff): void {
  const file = join(sessionDir, APPLIED_FILE);
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(diff)}\n`, { mode: 0o600 });
  renameSync(temporary, file);
}

/**
 * The diff that `applyWorkspace` applied to the original, kept in the session directory (the
 * workspace itself is removed by the apply); `undefined` for a session that applied nothing.
 * Throws `workspace_corrupt` on a file that is not one.
 */
export function readAppliedDiff(sessionDir: string): WorkspaceDiff | undefined {
  const file = join(sessionDir, APPLIED_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw corrupt(file, (error as Error).message, error);
  }
  try {
    const diff = JSON.parse(text) as Partial<WorkspaceDiff> | null;
    if (diff !== null && Array.isArray(diff.files) && typeof diff.patch === 'string' && typeof diff.stats === 'object')
      return diff as WorkspaceDiff;
  } catch (error) {
    throw corrupt(file, 'not JSON', error);
  }
  throw corrupt(file, 'not a diff (files, stats, patch)');
}

/** Sets the record's state (and `decidedAt`) and writes it. */
export function decide(record: WorkspaceRecord, sessionDir: string, state: 'applied' | 'discarded'): void {
  record.state = state;
  record.decidedAt = new Date().toISOString();
  writeWorkspace(sessionDir, record);
}

/** `3 files changed, +12/-4`, `1 file changed, +1/-0`, `no changes`. */
export function formatChangeStats(stats: ChangeStats): string {
  if (stats.files === 0) return 'no changes';
  return `${stats.files} ${stats.files === 1 ? 'file' : 'files'} changed, +${stats.additions}/-${stats.deletions}`;
}
