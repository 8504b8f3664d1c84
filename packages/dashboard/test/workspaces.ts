import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionStore } from '@rho/core';
import { updateSessionMeta } from '@rho/core/internal';
import { createWorkspace, diffWorkspace } from '@rho/workspace';
import type { WorkspaceRecord } from '@rho/workspace';

/** Runs git in `cwd` (a test's repository), with an identity of its own. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@localhost', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  });
}

/** A new git repository in a temporary folder, its files committed. */
export function repository(files: Record<string, string | Buffer>): string {
  const root = mkdtempSync(join(tmpdir(), 'rho-dashboard-repo-'));
  git(root, 'init', '--quiet', '--initial-branch=main');
  for (const [path, content] of Object.entries(files)) write(root, path, content);
  git(root, 'add', '-A');
  git(root, 'commit', '--quiet', '-m', 'start');
  return root;
}

/** Writes a file (and its folders). */
export function write(root: string, path: string, content: string | Buffer): void {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), content);
}

/** A session of `sessions` with an isolated workspace (the library's worktree) of `repo`. */
export async function isolatedSession(
  sessions: string,
  repo: string,
): Promise<{ id: string; directory: string; record: WorkspaceRecord }> {
  const { id, directory } = new SessionStore(sessions).create({ model: 'gpt-4o-mini', workingDir: repo });
  const home = mkdtempSync(join(tmpdir(), 'rho-dashboard-home-'));
  const { record } = await createWorkspace({ sessionId: id, sessionDir: directory, workingDir: repo, home });
  return { id, directory, record };
}

/** Ends the session as a finished isolated run does: `completed`, its workspace's totals in meta.json. */
export async function finish(directory: string, record: WorkspaceRecord): Promise<void> {
  const diff = await diffWorkspace(record);
  updateSessionMeta(directory, { status: 'completed', changes: diff.stats });
}
