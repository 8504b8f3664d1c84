import { existsSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  applyWorkspace,
  createWorkspace,
  diffWorkspace,
  discardWorkspace,
  readWorkspace,
  WorkspaceConflictError,
  WorkspaceUsageError,
} from './index.js';
import { binary, cleanUp, put, tempDir, treeHash } from './test-support/files.js';

afterAll(cleanUp);

function plain(): string {
  const root = tempDir('rho-ws-plain-');
  put(root, 'a.txt', 'one\ntwo\n');
  put(root, 'gone.txt', 'gone\n');
  put(root, 'node_modules/dep.js', 'dep\n');
  put(root, '.gitignore', 'node_modules/\n');
  put(root, 'bin.dat', binary(3));
  return root;
}

describe('a workspace of a plain directory', () => {
  it('is a copy with its snapshot in the session directory: diff, conflict, apply, discard', async () => {
    const original = plain();
    const home = tempDir('rho-ws-home-');
    const sessionDir = join(home, 'sessions', 'p1');
    const before = treeHash(original);
    const { record, notes } = await createWorkspace({ sessionId: 'p1', sessionDir, workingDir: original, home });
    expect(record).toMatchObject({
      kind: 'copy',
      gitDir: join(sessionDir, 'workspace.git'),
      path: record.root,
      carried: [],
    });
    expect(notes.join(' ')).toMatch(/copy of .*only \.git directories are left out/);
    expect(treeHash(record.root)).toBe(before);

    writeFileSync(join(record.path, 'a.txt'), 'one\n2\nthree\n');
    rmSync(join(record.path, 'gone.txt'));
    writeFileSync(join(record.path, 'bin.dat'), binary(4));
    writeFileSync(join(record.path, 'node_modules/dep.js'), 'dep 2\n'); // ignore files do not apply to a copy
    put(record.path, 'new/dir/n.txt', 'n\n');
    symlinkSync('a.txt', join(record.path, 'link'));
    const diff = await diffWorkspace(record);
    expect(diff.files.map((file) => `${file.status} ${file.path}`)).toEqual([
      'modified a.txt',
      'modified bin.dat',
      'deleted gone.txt',
      'added link',
      'added new/dir/n.txt',
      'modified node_modules/dep.js',
    ]);
    expect(diff.stats).toEqual({ files: 6, additions: 5, deletions: 3 });
    const expected = treeHash(record.path);

    writeFileSync(join(original, 'gone.txt'), 'changed by the person\n');
    const changed = treeHash(original);
    const refused = await applyWorkspace(record, sessionDir).catch((error: unknown) => error);
    expect(WorkspaceConflictError.isInstance(refused)).toBe(true);
    expect((refused as WorkspaceConflictError).files).toEqual(['gone.txt']);
    expect(treeHash(original)).toBe(changed);

    writeFileSync(join(original, 'gone.txt'), 'gone\n');
    put(original, 'elsewhere.txt', 'the person wrote this\n');
    await applyWorkspace(record, sessionDir);
    rmSync(join(original, 'elsewhere.txt'));
    expect(treeHash(original)).toBe(expected);
    expect(readlinkSync(join(original, 'link'))).toBe('a.txt');
    expect(readWorkspace(sessionDir)).toMatchObject({ state: 'applied' });
    expect(existsSync(record.root)).toBe(false);
    expect(existsSync(record.gitDir!)).toBe(false);
  });

  it('discards the copy and its store; refuses what makes no sense', async () => {
    const original = plain();
    const home = tempDir('rho-ws-home-');
    const sessionDir = join(home, 'p2');
    const { record } = await createWorkspace({ sessionId: 'p2', sessionDir, workingDir: original, home });
    const empty = await applyWorkspace(record, sessionDir).catch((error: unknown) => error);
    expect((empty as Error).message).toMatch(/the session changed no file/);
    const taken = await createWorkspace({ sessionId: 'p2', sessionDir, workingDir: original, home }).catch(
      (error: unknown) => error,
    );
    expect(WorkspaceUsageError.isInstance(taken)).toBe(true);
    await discardWorkspace(record, sessionDir);
    expect(existsSync(record.root)).toBe(false);
    expect(existsSync(record.gitDir!)).toBe(false);
    expect(readFileSync(join(sessionDir, 'workspace.json'), 'utf8')).toContain('"discarded"');
    expect(treeHash(original)).toBe(treeHash(plain()));
  });

  it("refuses a working directory that holds rho's home", async () => {
    const original = plain();
    const error = await createWorkspace({
      sessionId: 'p3',
      sessionDir: join(original, '.rho', 's'),
      workingDir: original,
      home: join(original, '.rho'),
    }).catch((caught: unknown) => caught);
    expect(WorkspaceUsageError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/set RHO_HOME to a directory outside it/);
  });
});
