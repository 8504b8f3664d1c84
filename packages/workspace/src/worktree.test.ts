import { chmodSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  applyWorkspace,
  createWorkspace,
  diffWorkspace,
  discardWorkspace,
  formatChangeStats,
  readAppliedDiff,
  readWorkspace,
  WorkspaceConflictError,
  WorkspaceUsageError,
} from './index.js';
import { binary, cleanUp, put, repository, sh, tempDir, treeHash } from './test-support/files.js';

afterAll(cleanUp);

function project(): string {
  const root = repository({
    '.gitignore': '*.log\n',
    'a.txt': 'one\ntwo\n',
    'b.txt': 'b1\n',
    'del.txt': 'to delete\n',
    'sub/c.txt': 'c1\nc2\nc3\n',
    'script.sh': 'echo hi\n',
    'bin.dat': binary(1),
    'keep.txt': 'keep\n',
  });
  // Uncommitted: staged, unstaged, untracked, deleted; and an ignored file that stays behind.
  writeFileSync(join(root, 'a.txt'), 'one\ntwo\nstaged\n');
  sh(root, 'add', 'a.txt');
  writeFileSync(join(root, 'b.txt'), 'b1\nb2 unstaged\n');
  writeFileSync(join(root, 'new.txt'), 'untracked\n');
  rmSync(join(root, 'del.txt'));
  writeFileSync(join(root, 'ignored.log'), 'ignored\n');
  return root;
}

/** The agent's work in the workspace: edit, add, delete, rename, chmod +x, a binary file, new folders. */
function agentWorks(path: string): void {
  writeFileSync(join(path, 'a.txt'), 'one\nTWO\nstaged\n');
  writeFileSync(join(path, 'added.txt'), 'hello\n');
  rmSync(join(path, 'b.txt'));
  renameSync(join(path, 'sub/c.txt'), join(path, 'sub/moved.txt'));
  chmodSync(join(path, 'script.sh'), 0o755);
  writeFileSync(join(path, 'bin.dat'), binary(2));
  put(path, 'deep/x/y/z.txt', 'z\n');
}

describe('a workspace in a git repository', () => {
  const original = project();
  const home = tempDir('rho-ws-home-');
  const sessionDir = join(home, 'sessions', 's1');
  const before = treeHash(original);
  const status = sh(original, 'status', '--porcelain');

  it('is a worktree on rho/<id> with the uncommitted changes carried, the original untouched', async () => {
    const { record, notes } = await createWorkspace({ sessionId: 's1', sessionDir, workingDir: original, home });
    expect(record).toMatchObject({ kind: 'git-worktree', branch: 'rho/s1', repository: original, state: 'active' });
    expect(record.root).toBe(join(home, 'workspaces', 's1'));
    expect(record.path).toBe(record.root);
    expect(record.carried.sort()).toEqual(['a.txt', 'b.txt', 'del.txt', 'new.txt']);
    expect(notes.join(' ')).toMatch(/4 uncommitted files .* carried .* rho\/s1/);
    expect(readFileSync(join(record.path, 'a.txt'), 'utf8')).toBe('one\ntwo\nstaged\n');
    expect(readFileSync(join(record.path, 'b.txt'), 'utf8')).toBe('b1\nb2 unstaged\n');
    expect(readFileSync(join(record.path, 'new.txt'), 'utf8')).toBe('untracked\n');
    expect(existsSync(join(record.path, 'del.txt'))).toBe(false);
    expect(existsSync(join(record.path, 'ignored.log'))).toBe(false);
    expect(treeHash(original)).toBe(before);
    expect(sh(original, 'status', '--porcelain')).toBe(status);
    expect(sh(original, 'log', '-1', '--format=%an <%ae> %s', record.base)).toMatch(
      /^rho <rho@localhost> rho: uncommitted changes of /,
    );
    expect(readWorkspace(sessionDir)).toEqual(record);
    // Nothing changed yet: the diff is empty, whatever was carried.
    expect((await diffWorkspace(record)).files).toEqual([]);
  });

  it("diffs exactly the agent's changes, and applies them only where nothing conflicts", async () => {
    const record = readWorkspace(sessionDir)!;
    agentWorks(record.path);
    // The worktree's own index and branch are the agent's business: a commit there changes nothing.
    sh(record.path, 'add', 'added.txt', 'b.txt');
    sh(record.path, 'commit', '-q', '-m', 'the agent committed');
    writeFileSync(join(record.path, 'staged-only.txt'), 'x\n');
    sh(record.path, 'add', 'staged-only.txt');
    rmSync(join(record.path, 'staged-only.txt'));
    const diff = await diffWorkspace(record);
    expect(diff.files.map(({ path, status, oldPath, binary: isBinary }) => [path, status, oldPath, isBinary])).toEqual([
      ['a.txt', 'modified', undefined, false],
      ['added.txt', 'added', undefined, false],
      ['b.txt', 'deleted', undefined, false],
      ['bin.dat', 'modified', undefined, true],
      ['deep/x/y/z.txt', 'added', undefined, false],
      ['script.sh', 'mode', undefined, false],
      ['sub/moved.txt', 'renamed', 'sub/c.txt', false],
    ]);
    expect(diff.stats).toEqual({ files: 7, additions: 3, deletions: 3 });
    expect(formatChangeStats(diff.stats)).toBe('7 files changed, +3/-3');
    expect(diff.patch).toContain('GIT binary patch');
    const expected = treeHash(record.path);

    // The person changed a.txt where the agent did: refused whole, nothing changed.
    writeFileSync(join(original, 'a.txt'), 'ONE\ntwo\nstaged\n');
    const conflicted = treeHash(original);
    const refused = await applyWorkspace(record, sessionDir).catch((error: unknown) => error);
    expect(WorkspaceConflictError.isInstance(refused)).toBe(true);
    expect((refused as WorkspaceConflictError).files).toEqual(['a.txt']);
    expect((refused as Error).message).toMatch(/a\.txt.*Nothing was changed.*rho diff s1/);
    expect(treeHash(original)).toBe(conflicted);
    expect(readWorkspace(sessionDir)!.state).toBe('active');

    // Put back; a change elsewhere does not stand in the way.
    writeFileSync(join(original, 'a.txt'), 'one\ntwo\nstaged\n');
    writeFileSync(join(original, 'keep.txt'), 'keep, edited by the person\n');
    const applied = await applyWorkspace(record, sessionDir);
    expect(applied.stats).toEqual(diff.stats);
    expect(readFileSync(join(original, 'keep.txt'), 'utf8')).toBe('keep, edited by the person\n');
    writeFileSync(join(original, 'keep.txt'), 'keep\n');
    rmSync(join(original, 'ignored.log'));
    expect(treeHash(original)).toBe(expected);
    expect(readWorkspace(sessionDir)!.state).toBe('applied');
    // Applied, it leaves no branch, worktree or folder behind.
    expect(sh(original, 'branch', '--list', 'rho/*')).toBe('');
    expect(sh(original, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
    expect(existsSync(record.root)).toBe(false);
    // What was applied stays readable in the session directory (diff, export).
    expect(readAppliedDiff(sessionDir)).toEqual(applied);
    expect(readAppliedDiff(join(sessionDir, 'elsewhere'))).toBeUndefined();

    const again = await applyWorkspace(record, sessionDir).catch((error: unknown) => error);
    expect(WorkspaceUsageError.isInstance(again)).toBe(true);
    expect((again as Error).message).toMatch(/was applied/);
    expect((again as Error).message).not.toContain('\n');
  });

  it('discards: no branch, no worktree, no folder; then refuses to apply or discard again', async () => {
    const dir = join(home, 'sessions', 's2');
    const { record } = await createWorkspace({ sessionId: 's2', sessionDir: dir, workingDir: original, home });
    writeFileSync(join(record.path, 'a.txt'), 'discarded work\n');
    const empty = await createWorkspace({
      sessionId: 's3',
      sessionDir: join(home, 'sessions', 's3'),
      workingDir: original,
      home,
    });
    const nothing = await applyWorkspace(empty.record, join(home, 'sessions', 's3')).catch((error: unknown) => error);
    expect(WorkspaceUsageError.isInstance(nothing)).toBe(true);
    expect((nothing as Error).message).toMatch(/^Nothing to apply: the session changed no file[^\n]*$/);
    await discardWorkspace(empty.record, join(home, 'sessions', 's3'));
    await discardWorkspace(record, dir);
    expect(sh(original, 'branch', '--list', 'rho/*')).toBe('');
    expect(sh(original, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
    expect(existsSync(record.root)).toBe(false);
    expect(readWorkspace(dir)).toMatchObject({ state: 'discarded' });
    for (const attempt of [applyWorkspace(record, dir), discardWorkspace(record, dir), diffWorkspace(record)]) {
      const error = await attempt.catch((caught: unknown) => caught);
      expect(WorkspaceUsageError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(/^Cannot \w+ the workspace of session s2: it was discarded at [^\n]+$/);
    }
  });
});

describe('a workspace of a subfolder of a repository', () => {
  it('works in the same subfolder and diffs relative to it', async () => {
    const top = repository({ 'sub/c.txt': 'c\n', 'top.txt': 'top\n' });
    const original = join(top, 'sub');
    const home = tempDir('rho-ws-home-');
    const sessionDir = join(home, 's');
    const { record } = await createWorkspace({ sessionId: 'sub1', sessionDir, workingDir: original, home });
    expect(record.path).toBe(join(record.root, 'sub'));
    expect(record.carried).toEqual([]);
    writeFileSync(join(record.path, 'c.txt'), 'c changed\n');
    put(record.path, 'd/new.txt', 'new\n');
    writeFileSync(join(record.root, 'top.txt'), 'outside the working directory\n');
    const diff = await diffWorkspace(record);
    expect(diff.files.map((file) => file.path)).toEqual(['c.txt', 'd/new.txt']);
    // A conflict is named relative to the working directory too.
    writeFileSync(join(original, 'c.txt'), 'c, the person\n');
    const refused = await applyWorkspace(record, sessionDir).catch((error: unknown) => error);
    expect((refused as WorkspaceConflictError).files).toEqual(['c.txt']);
    expect(existsSync(join(original, 'd'))).toBe(false);
    writeFileSync(join(original, 'c.txt'), 'c\n');
    await applyWorkspace(record, sessionDir);
    expect(readFileSync(join(original, 'c.txt'), 'utf8')).toBe('c changed\n');
    expect(readFileSync(join(original, 'd/new.txt'), 'utf8')).toBe('new\n');
    expect(readFileSync(join(top, 'top.txt'), 'utf8')).toBe('top\n');
  });

  it('is a copy in a repository without a commit', async () => {
    const original = tempDir('rho-ws-empty-repo-');
    sh(original, 'init', '-q');
    put(original, 'f.txt', 'f\n');
    const home = tempDir('rho-ws-home-');
    const { record, notes } = await createWorkspace({
      sessionId: 'nc',
      sessionDir: join(home, 's'),
      workingDir: original,
      home,
    });
    expect(record.kind).toBe('copy');
    expect(notes[0]).toMatch(/has no commit yet/);
    writeFileSync(join(record.path, 'f.txt'), 'f changed\n');
    expect((await diffWorkspace(record)).files).toEqual([
      { path: 'f.txt', status: 'modified', additions: 1, deletions: 1, binary: false },
    ]);
    await applyWorkspace(record, join(home, 's'));
    expect(readFileSync(join(original, 'f.txt'), 'utf8')).toBe('f changed\n');
  });

  it('sees a same-size edit made right after checkout, however late the diff runs', async () => {
    // Git trusts a file's size and time against its index unless the file is as new as the index
    // ("racily clean"): the diff's copy of the index must keep the index's time, or an edit of the
    // same size made in the checkout's instant disappears from every later diff, and from apply.
    const original = repository({ 'same.txt': 'one\n' });
    const home = tempDir('rho-ws-home-');
    const sessionDir = join(home, 'sessions', 'racy');
    const { record } = await createWorkspace({ sessionId: 'racy', sessionDir, workingDir: original, home });
    writeFileSync(join(record.path, 'same.txt'), 'two\n');
    const expected = [{ path: 'same.txt', status: 'modified', additions: 1, deletions: 1, binary: false }];
    expect((await diffWorkspace(record)).files).toEqual(expected);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await diffWorkspace(record)).files).toEqual(expected);
    await applyWorkspace(record, sessionDir);
    expect(readFileSync(join(original, 'same.txt'), 'utf8')).toBe('two\n');
  });
});
