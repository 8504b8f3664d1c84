/**
 * The sweep: workspaces under `<home>/workspaces/` whose session is gone, or whose record was
 * decided (applied, discarded) while its files stayed (a crash halfway), are removed; a live
 * session's workspace is kept, and so is a finished session's active one (its person decides).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { git } from './git.js';
import { readWorkspace } from './record.js';
import { commonDirOf, removeWorkspace, removeWorktree } from './remove.js';
import type { WorkspaceRecord } from './types.js';

export interface SweepOptions {
  /** rho's home (`$RHO_HOME`). */
  home: string;
  /** The directory of a session, or undefined when there is no such session. */
  sessionDirOf(sessionId: string): string | undefined;
  /** Whether a process runs the session now (it holds the session's lock). */
  isLive(sessionId: string): boolean;
}

export interface SweepResult {
  /** Session ids whose workspace was removed. */
  removed: string[];
  /** Session ids whose workspace stays: live, or finished and not decided yet, or with an unreadable record. */
  kept: string[];
}

/** Removes the workspaces nobody can use any more; see the module's comment. */
export async function sweepWorkspaces(options: SweepOptions): Promise<SweepResult> {
  const directory = join(options.home, 'workspaces');
  const result: SweepResult = { removed: [], kept: [] };
  if (!existsSync(directory)) return result;
  const repositories = new Set<string>();
  for (const entry of readdirSync(directory, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (!entry.isDirectory()) continue;
    const sessionId = entry.name;
    const root = join(directory, sessionId);
    if (options.isLive(sessionId)) {
      result.kept.push(sessionId);
      continue;
    }
    const sessionDir = options.sessionDirOf(sessionId);
    let record: WorkspaceRecord | undefined;
    if (sessionDir !== undefined && existsSync(sessionDir)) {
      try {
        record = readWorkspace(sessionDir);
      } catch {
        // An unreadable record: its workspace may still hold someone's work. A person decides.
        result.kept.push(sessionId);
        continue;
      }
    }
    if (record?.state === 'active') {
      if (record.repository !== undefined) repositories.add(record.repository);
      result.kept.push(sessionId);
      continue;
    }
    if (record !== undefined) {
      // Decided, but its files stayed.
      await removeWorkspace({ ...record, root });
    } else {
      // No session any more (or one that never recorded it: a crash while it was made).
      const gitDir = await commonDirOf(root);
      if (gitDir === undefined) await removeWorkspace({ ...orphan(sessionId, root) });
      else await removeWorktree(gitDir, root, `rho/${sessionId}`);
    }
    if (record?.repository !== undefined) repositories.add(record.repository);
    result.removed.push(sessionId);
  }
  for (const repository of repositories)
    if (existsSync(repository)) await git(['worktree', 'prune'], { cwd: repository, allowFailure: true });
  return result;
}

function orphan(sessionId: string, root: string): WorkspaceRecord {
  return {
    version: 1,
    kind: 'copy',
    sessionId,
    original: root,
    path: root,
    root,
    base: '',
    carried: [],
    createdAt: '',
    state: 'discarded',
  };
}
