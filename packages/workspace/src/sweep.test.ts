import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createWorkspace, formatChangeStats, readWorkspace, sweepWorkspaces, WorkspaceError } from './index.js';
import { decide } from './record.js';
import { cleanUp, put, repository, sh, tempDir } from './test-support/files.js';

afterAll(cleanUp);

const worktrees = (repo: string) => sh(repo, 'worktree', 'list').trim().split('\n').length;

describe('the sweep', () => {
  it("removes the workspaces of gone sessions and of decided records; keeps live and finished sessions' ones", async () => {
    const repo = repository({ 'a.txt': 'a\n' });
    const plain = tempDir('rho-sweep-plain-');
    put(plain, 'f.txt', 'f\n');
    const home = tempDir('rho-sweep-home-');
    const dirOf = (id: string) => join(home, 'sessions', id);
    for (const id of ['gone', 'live', 'finished', 'decided'])
      await createWorkspace({ sessionId: id, sessionDir: dirOf(id), workingDir: repo, home });
    await createWorkspace({ sessionId: 'gonecopy', sessionDir: dirOf('gonecopy'), workingDir: plain, home });
    // A crash while one was made: its folder, no record.
    mkdirSync(join(home, 'workspaces', 'halfmade'));
    mkdirSync(dirOf('halfmade'), { recursive: true });
    // A crash halfway through a discard: the record says discarded, the worktree is still there.
    decide(readWorkspace(dirOf('decided'))!, dirOf('decided'), 'discarded');
    rmSync(dirOf('gone'), { recursive: true });
    rmSync(dirOf('gonecopy'), { recursive: true });
    expect(worktrees(repo)).toBe(5);

    const result = await sweepWorkspaces({ home, sessionDirOf: dirOf, isLive: (id) => id === 'live' });
    expect(result.removed.sort()).toEqual(['decided', 'gone', 'gonecopy', 'halfmade']);
    expect(result.kept.sort()).toEqual(['finished', 'live']);
    expect(worktrees(repo)).toBe(3);
    expect(sh(repo, 'branch', '--list', '--format=%(refname:short)', 'rho/*')).toBe('rho/finished\nrho/live\n');
    for (const id of result.removed) expect(existsSync(join(home, 'workspaces', id))).toBe(false);
    expect(existsSync(join(home, 'workspaces', 'finished'))).toBe(true);
    // Sweeping again changes nothing.
    expect(await sweepWorkspaces({ home, sessionDirOf: dirOf, isLive: () => false })).toEqual({
      removed: [],
      kept: ['finished', 'live'],
    });
  });

  it('finds nothing to do in a home without workspaces', async () => {
    expect(await sweepWorkspaces({ home: tempDir(), sessionDirOf: () => undefined, isLive: () => false })).toEqual({
      removed: [],
      kept: [],
    });
  });
});

describe('records and totals', () => {
  it('reads no record as undefined and a bad one as workspace_corrupt', () => {
    const dir = tempDir();
    expect(readWorkspace(dir)).toBeUndefined();
    writeFileSync(join(dir, 'workspace.json'), '{"version": 1, "kind": "copy"');
    const error = (() => {
      try {
        return readWorkspace(dir);
      } catch (caught) {
        return caught;
      }
    })();
    expect(WorkspaceError.isInstance(error)).toBe(true);
    expect((error as WorkspaceError).code).toBe('workspace_corrupt');
    expect((error as Error).message).toMatch(/workspace\.json is not a readable workspace record \(not JSON\)/);
  });

  it('says the totals as rho ps shows them', () => {
    expect(formatChangeStats({ files: 3, additions: 12, deletions: 4 })).toBe('3 files changed, +12/-4');
    expect(formatChangeStats({ files: 1, additions: 0, deletions: 2 })).toBe('1 file changed, +0/-2');
    expect(formatChangeStats({ files: 0, additions: 0, deletions: 0 })).toBe('no changes');
  });
});
