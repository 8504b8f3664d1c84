/** Removing a workspace's files: the worktree, its branch and its entry, or the copy and its store. */
import { existsSync, lstatSync, rmSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { git } from './git.js';
import type { WorkspaceRecord } from './types.js';

/** Removes a linked worktree (`--git-dir` of its repository) and its branch, leaving no entry. */
export async function removeWorktree(gitDir: string, root: string, branch: string | undefined): Promise<void> {
  const options = { cwd: '/', env: { GIT_DIR: gitDir } };
  if (existsSync(root))
    await git(['worktree', 'remove', '--force', '--force', root], { ...options, allowFailure: true });
  // What git could not remove (files it does not own), and the entry of a root already gone.
  rmSync(root, { recursive: true, force: true });
  await git(['worktree', 'prune'], options);
  if (branch === undefined) return;
  const exists = await git(['rev-parse', '--verify', '-q', `refs/heads/${branch}`], { ...options, allowFailure: true });
  if (exists.code === 0) await git(['branch', '-D', '--quiet', branch], options);
}

/** The git directory shared by a linked worktree's repository (its `.git`), or undefined for a plain folder. */
export async function commonDirOf(root: string): Promise<string | undefined> {
  try {
    if (!lstatSync(join(root, '.git')).isFile()) return undefined;
  } catch {
    return undefined;
  }
  const found = await git(['rev-parse', '--git-common-dir'], { cwd: root, allowFailure: true });
  if (found.code !== 0) return undefined;
  const path = found.stdout.toString('utf8').trim();
  return isAbsolute(path) ? path : join(root, path);
}

/** Removes what `record` made; nothing is left: no files, no branch, no worktree entry, no store. */
export async function removeWorkspace(record: WorkspaceRecord): Promise<void> {
  if (record.kind === 'git-worktree' && record.repository !== undefined && existsSync(record.repository)) {
    const gitDir = (await commonDirOf(record.root)) ?? join(record.repository, '.git');
    if (existsSync(gitDir)) return removeWorktree(gitDir, record.root, record.branch);
  }
  rmSync(record.root, { recursive: true, force: true });
  if (record.gitDir !== undefined) rmSync(record.gitDir, { recursive: true, force: true });
}
