import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CheckpointStore, WorkspaceConflictError, WorkspaceError, WorkspaceUsageError } from './index.js';
import { binary, cleanUp, put, repository, sh, tempDir, treeHash } from './test-support/files.js';

afterAll(cleanUp);

/** Turns that write: each returns nothing; the test records the tree after each. */
const turns: Array<(root: string) => void> = [
  (root) => {
    writeFileSync(join(root, 'a.txt'), 'a, turn 1\n');
    put(root, 'bin.dat', binary(7));
  },
  (root) => {
    rmSync(join(root, 'b.txt'));
    renameSync(join(root, 'c.txt'), join(root, 'moved/c.txt'));
  },
  (root) => {
    put(root, 'new/deep/dir/n.txt', 'n\n');
    chmodSync(join(root, 'run.sh'), 0o755);
    symlinkSync('a.txt', join(root, 'link'));
  },
  () => {
    // A turn that writes nothing.
  },
  (root) => {
    writeFileSync(join(root, 'bin.dat'), binary(9));
    rmSync(join(root, 'link'));
    symlinkSync('moved/c.txt', join(root, 'link'));
    chmodSync(join(root, 'run.sh'), 0o644);
  },
];

function start(): { root: string; sessionDir: string } {
  const root = tempDir('rho-cp-work-');
  put(root, 'a.txt', 'a\n');
  put(root, 'b.txt', 'b\n');
  put(root, 'c.txt', 'c\n');
  put(root, 'run.sh', 'echo run\n');
  put(root, '.gitignore', 'build/\n');
  put(root, 'build/out.o', 'ignored\n');
  mkdirSync(join(root, 'moved'));
  return { root, sessionDir: join(tempDir('rho-cp-session-'), 's') };
}

describe('checkpoints of an in-place run', () => {
  it('takes one per turn that wrote files, and undoes to each turn byte for byte', async () => {
    const { root, sessionDir } = start();
    const store = CheckpointStore.open({ sessionDir, workingDir: root });
    const hashes = [treeHash(root)];
    expect(await store.take(0)).toMatchObject({ turn: 0 });
    for (const [index, turn] of turns.entries()) {
      turn(root);
      hashes.push(treeHash(root));
      const taken = await store.take(index + 1);
      if (index === 3) expect(taken).toBeUndefined();
      else expect(taken).toMatchObject({ turn: index + 1 });
    }
    expect((await store.list()).map((checkpoint) => checkpoint.turn)).toEqual([0, 1, 2, 3, 5]);
    expect((await store.list())[2]!.stats).toEqual({ files: 2, additions: 0, deletions: 1 });
    for (const turn of [4, 2, 1, 0]) {
      await store.undo(turn);
      expect(treeHash(root), `undo to turn ${turn}`).toBe(hashes[turn]);
      if (turn === 4) {
        // Turn 4 wrote nothing: the files are as they were after turn 3 already.
        expect(hashes[3]).toBe(hashes[4]);
        await expect(store.undo(3)).rejects.toThrow(/^Nothing to undo: the files are as they were after turn 3\.$/);
      }
    }
    // The ignored folder is never touched; the folders turn 2 and 3 made are gone, the one there at the start stays.
    expect(existsSync(join(root, 'build/out.o'))).toBe(true);
    expect(existsSync(join(root, 'new'))).toBe(false);
    expect(existsSync(join(root, 'moved'))).toBe(true);
  });

  it('diffs from a checkpoint to the files as they are now, binary-safe, with a patch that applies', async () => {
    const { root, sessionDir } = start();
    const store = CheckpointStore.open({ sessionDir, workingDir: root });
    await expect(store.diff()).rejects.toThrow(WorkspaceUsageError);
    await store.take(0);
    for (const [index, turn] of turns.slice(0, 2).entries()) {
      turn(root);
      await store.take(index + 1);
    }
    // After the last checkpoint, a change nobody checkpointed yet: the diff is of the files now.
    writeFileSync(join(root, 'a.txt'), 'a, turn 1\nand after\n');
    const whole = await store.diff();
    expect(whole.files.map((file) => [file.path, file.status]).sort()).toEqual([
      ['a.txt', 'modified'],
      ['b.txt', 'deleted'],
      ['bin.dat', 'added'],
      ['moved/c.txt', 'renamed'],
    ]);
    expect(whole.files.find((file) => file.path === 'bin.dat')!.binary).toBe(true);
    expect(whole.stats).toEqual({ files: 4, additions: 2, deletions: 2 });
    expect((await store.diff(1)).files.map((file) => file.path).sort()).toEqual(['a.txt', 'b.txt', 'moved/c.txt']);
    await expect(store.diff(-1)).rejects.toThrow(/^No checkpoint at or before turn -1: the first is of turn 0\.$/);
    // The patch takes a copy of the start to the files now, byte for byte.
    const copy = tempDir('rho-cp-apply-');
    put(copy, 'a.txt', 'a\n');
    put(copy, 'b.txt', 'b\n');
    put(copy, 'c.txt', 'c\n');
    put(copy, 'run.sh', 'echo run\n');
    put(copy, '.gitignore', 'build/\n');
    mkdirSync(join(copy, 'moved'));
    writeFileSync(join(copy, 'change.patch'), whole.patch);
    sh(copy, 'apply', '--binary', 'change.patch');
    rmSync(join(copy, 'change.patch'));
    rmSync(join(root, 'build'), { recursive: true });
    expect(treeHash(copy)).toBe(treeHash(root));

    // Between two checkpoints, from the store alone: the checkpointed turns only (not the edit
    // made after), the patch cut where asked with its whole size counted, and still readable once
    // the working directory is gone.
    const between = await store.diffBetween();
    expect(between.from.turn).toBe(0);
    expect(between.to.turn).toBe(2);
    expect(between.diff.stats).toEqual({ files: 4, additions: 1, deletions: 2 });
    const cut = await store.diffBetween({ fromTurn: 0, toTurn: 1, patchLimit: 40 });
    expect(cut.diff.files.map((file) => file.path)).toEqual(['a.txt', 'bin.dat']);
    expect(Buffer.byteLength(cut.diff.patch)).toBe(40);
    expect(cut.patchBytes).toBeGreaterThan(40);
    rmSync(root, { recursive: true });
    const gone = CheckpointStore.open({ sessionDir, workingDir: root });
    expect((await gone.diffBetween()).diff.stats).toEqual(between.diff.stats);
  });

  it('undoes the last turn by default, and a second undo goes further back', async () => {
    const { root, sessionDir } = start();
    const store = CheckpointStore.open({ sessionDir, workingDir: root });
    const hashes = [treeHash(root)];
    await store.take(0);
    for (const [index, turn] of turns.slice(0, 3).entries()) {
      turn(root);
      hashes.push(treeHash(root));
      await store.take(index + 1);
    }
    const plan = await store.plan();
    expect(plan.to.turn).toBe(2);
    expect(plan.remove.sort()).toEqual(['link', 'new/deep/dir/n.txt']);
    expect(plan.restore).toEqual(['run.sh']);
    expect(plan.conflicts).toEqual([]);
    await store.undo();
    expect(treeHash(root)).toBe(hashes[2]);
    await store.undo();
    expect(treeHash(root)).toBe(hashes[1]);
    await store.undo();
    expect(treeHash(root)).toBe(hashes[0]);
    const none = await store.undo().catch((error: unknown) => error);
    expect(WorkspaceUsageError.isInstance(none)).toBe(true);
    expect((none as Error).message).toMatch(/^Nothing to undo[^\n]*$/);
  });

  it("refuses whole when someone else changed a file after the agent's last turn", async () => {
    const { root, sessionDir } = start();
    const store = CheckpointStore.open({ sessionDir, workingDir: root });
    await store.take(0);
    turns[0]!(root);
    await store.take(1);
    writeFileSync(join(root, 'a.txt'), 'the person edited this\n');
    const before = treeHash(root);
    expect((await store.plan(0)).conflicts).toEqual(['a.txt']);
    const error = await store.undo(0).catch((caught: unknown) => caught);
    expect(WorkspaceConflictError.isInstance(error)).toBe(true);
    expect((error as WorkspaceConflictError).files).toEqual(['a.txt']);
    expect((error as Error).message).toMatch(/a\.txt changed after the agent's last turn.*Nothing was changed/);
    expect(treeHash(root)).toBe(before);
  });

  it("never writes to the user's repository, and refuses a tree over its limits", async () => {
    const root = repository({ 'a.txt': 'a\n', 'big.bin': 'x' });
    const sessionDir = join(tempDir('rho-cp-session-'), 's');
    const refs = sh(root, 'for-each-ref');
    const status = sh(root, 'status', '--porcelain');
    const store = CheckpointStore.open({ sessionDir, workingDir: root });
    await store.take(0);
    writeFileSync(join(root, 'a.txt'), 'a, changed\n');
    await store.take(1);
    await store.undo(0);
    expect(sh(root, 'for-each-ref')).toBe(refs);
    expect(sh(root, 'status', '--porcelain')).toBe(status);
    expect(sh(`${sessionDir}/checkpoints.git`, 'for-each-ref', '--format=%(refname)')).toBe(
      'refs/rho/turns/0\nrefs/rho/turns/1\n',
    );

    const few = CheckpointStore.open({
      sessionDir: join(tempDir('rho-cp-session-'), 's'),
      workingDir: root,
      maxFiles: 1,
    });
    const many = await few.take(0).catch((error: unknown) => error);
    expect(WorkspaceError.isInstance(many)).toBe(true);
    expect((many as Error).message).toMatch(/has 2 files git does not ignore, over the 1 .*turn checkpoints off/);
    writeFileSync(join(root, 'big.bin'), Buffer.alloc(2 * 1024 * 1024));
    const small = CheckpointStore.open({
      sessionDir: join(tempDir('rho-cp-session-'), 's'),
      workingDir: root,
      maxFileBytes: 1024 * 1024,
    });
    const big = await small.take(0).catch((error: unknown) => error);
    expect((big as WorkspaceError).code).toBe('workspace_too_large');
    expect((big as Error).message).toMatch(/^big\.bin is 2\.0 MiB, over the 1 MiB/);
  });

  it('sees every change from one status: odd names, touched-but-same files, new folders, limits on later turns', async () => {
    const { root, sessionDir } = start();
    const store = CheckpointStore.open({ sessionDir, workingDir: root, maxFileBytes: 1024 * 1024 });
    await store.take(0);
    // The same bytes written again: no checkpoint.
    writeFileSync(join(root, 'a.txt'), 'a\n');
    expect(await store.take(1)).toBeUndefined();
    // Names a pathspec would read as patterns, and a new folder of folders.
    put(root, 'star*.txt', 'star\n');
    put(root, ':(top)odd name.txt', 'odd\n');
    put(root, 'fresh/a/b/c.txt', 'deep\n');
    const taken = await store.take(2);
    expect(taken?.stats).toEqual({ files: 3, additions: 3, deletions: 0 });
    expect(existsSync(join(root, 'star.txt'))).toBe(false);
    const diff = await store.diff();
    expect(diff.files.map((file) => file.path).sort()).toEqual([':(top)odd name.txt', 'fresh/a/b/c.txt', 'star*.txt']);
    // A file too big inside a new folder, on a later turn: refused, and nothing taken.
    put(root, 'later/inner/huge.bin', Buffer.alloc(2 * 1024 * 1024));
    const refused = await store.take(3).catch((error: unknown) => error);
    expect((refused as WorkspaceError).code).toBe('workspace_too_large');
    expect((refused as Error).message).toMatch(/^later\/inner\/huge\.bin is 2\.0 MiB/);
    rmSync(join(root, 'later'), { recursive: true });
    // Undo goes back over all of it, byte for byte.
    const before = treeHash(root);
    await store.undo(0);
    expect(existsSync(join(root, 'fresh'))).toBe(false);
    expect(existsSync(join(root, 'star*.txt'))).toBe(false);
    expect(treeHash(root)).not.toBe(before);
    expect((await store.list()).map((checkpoint) => checkpoint.turn)).toEqual([0, 2]);
  });
});
