import { chmod, mkdir, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEditTool } from './edit-tool.js';
import type { WritePathCheck } from './write-path-check.js';
import { createWriteTool } from './write-tool.js';
import { call, contextFor, temporaryDirectory } from './test-support/harness.js';

/** A small stand-in policy: refuses any path with a `secret` component. */
const checkPath: WritePathCheck = async (path) =>
  path.split('/').includes('secret')
    ? { allowed: false, reason: `Cannot write to sensitive location: ${path}.` }
    : { allowed: true, realPath: path };

const createOnly = createWriteTool({ mode: 'create-only', checkPath });
const full = createWriteTool({ mode: 'full', checkPath });
const edit = createEditTool({ checkPath });
let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory());
});
afterEach(async () => {
  await cleanup();
});

describe('write', () => {
  it('shows what the model sees', () => {
    for (const tool of [createOnly, full]) {
      expect({ name: tool.name, description: tool.description, parameters: tool.parameters }).toMatchSnapshot();
    }
    // A create-only write only adds; a full write may replace (the agent's policy reads this).
    expect(createOnly.annotations).toEqual({ destructive: false });
    expect(full.annotations).toEqual({ destructive: true });
  });

  it('creates files and parent directories, counting bytes and lines', async () => {
    const result = await call(createOnly, { path: 'a/b/new.txt', content: 'héllo\nworld' }, contextFor(dir));
    expect(result).toEqual({
      content: `Created ${join(dir, 'a/b/new.txt')} (12 bytes, 2 lines)`,
      success: true,
      metadata: { path: join(dir, 'a/b/new.txt'), size_bytes: 12, lines: 2, overwrote: false },
    });
    expect(await readFile(join(dir, 'a/b/new.txt'), 'utf8')).toBe('héllo\nworld');
    expect((await call(createOnly, { path: 'two.txt', content: 'x\ny\n' }, contextFor(dir))).content).toContain(
      '(4 bytes, 2 lines)',
    );
    expect((await call(createOnly, { path: 'empty.txt', content: '' }, contextFor(dir))).content).toContain(
      '(0 bytes, 0 lines)',
    );
  });

  it('never overwrites in create-only mode, also through a symlink', async () => {
    await writeFile(join(dir, 'old.txt'), 'keep');
    await symlink('old.txt', join(dir, 'link.txt'));
    for (const path of ['old.txt', 'link.txt']) {
      expect(await call(createOnly, { path, content: 'new' }, contextFor(dir))).toEqual({
        content: `File already exists: ${join(dir, path)}. Use a different path or delete the existing file first.`,
        success: false,
      });
    }
    expect(await readFile(join(dir, 'old.txt'), 'utf8')).toBe('keep');
  });

  it('overwrites atomically in full mode, keeping the permission bits', async () => {
    await writeFile(join(dir, 'old.sh'), 'echo 1\n');
    await chmod(join(dir, 'old.sh'), 0o750);
    const result = await call(full, { path: 'old.sh', content: 'echo 2\n' }, contextFor(dir));
    expect(result.content).toBe(`Overwrote ${join(dir, 'old.sh')} (7 bytes, 1 lines)`);
    expect(await readFile(join(dir, 'old.sh'), 'utf8')).toBe('echo 2\n');
    expect((await stat(join(dir, 'old.sh'))).mode & 0o777).toBe(0o750);
    expect(await readdir(dir)).toEqual(['old.sh']);
  });

  it('reports empty arguments, policy refusals and directories', async () => {
    expect((await call(createOnly, { path: '', content: 'x' }, contextFor(dir))).content).toBe('No path provided');
    expect(
      (await call(createOnly, { path: 'x', content: undefined as unknown as string }, contextFor(dir))).content,
    ).toBe('No content provided');
    expect(await call(full, { path: 'secret/key', content: 'x' }, contextFor(dir))).toEqual({
      content: `Cannot write to sensitive location: ${join(dir, 'secret/key')}.`,
      success: false,
      metadata: { path: join(dir, 'secret/key') },
    });
    await mkdir(join(dir, 'folder'));
    expect((await call(full, { path: 'folder', content: 'x' }, contextFor(dir))).content).toBe(
      `Error writing file: ${join(dir, 'folder')} is a directory`,
    );
    await writeFile(join(dir, 'plain'), '');
    expect((await call(full, { path: 'plain/child', content: 'x' }, contextFor(dir))).content).toMatch(
      /^Error writing file: cannot create the directory .*plain: EEXIST/,
    );
  });
});

describe('edit', () => {
  it('shows what the model sees', () => {
    expect({ name: edit.name, description: edit.description, parameters: edit.parameters }).toMatchSnapshot();
  });

  it('edits with each strategy and writes atomically', async () => {
    const path = join(dir, 'code.py');
    await writeFile(path, 'def f():  \n    return 1\n');
    expect(
      (await call(edit, { path: 'code.py', old_string: 'def f', new_string: 'def g' }, contextFor(dir))).content,
    ).toBe(`Edited ${path}: exact match`);
    expect(
      (
        await call(
          edit,
          { path: 'code.py', old_string: 'def g():\n    return 1', new_string: 'def g():\n    return 2' },
          contextFor(dir),
        )
      ).content,
    ).toBe(`Edited ${path}: whitespace-normalized match`);
    expect(
      (await call(edit, { path: 'code.py', old_string: 'return 2', new_string: '' }, contextFor(dir))).success,
    ).toBe(true);
    expect(await readFile(path, 'utf8')).toBe('def g():\n    \n');
    expect(await readdir(dir)).toEqual(['code.py']);
  });

  it('leaves the file untouched on every failure, with the original messages', async () => {
    const path = join(dir, 'a.txt');
    await writeFile(path, 'x x\n');
    const before = await stat(path);
    expect((await call(edit, { path: 'a.txt', old_string: 'x', new_string: 'y' }, contextFor(dir))).content).toBe(
      'old_string appears 2 times (must be unique). Add more context.',
    );
    expect((await call(edit, { path: 'a.txt', old_string: 'zzz', new_string: 'y' }, contextFor(dir))).content).toBe(
      'old_string not found in file. Check for typos or add more context.',
    );
    expect(await readFile(path, 'utf8')).toBe('x x\n');
    expect((await stat(path)).mtimeMs).toBe(before.mtimeMs);
    expect((await call(edit, { path: '', old_string: 'x', new_string: 'y' }, contextFor(dir))).content).toBe(
      'No path provided',
    );
    expect((await call(edit, { path: 'a.txt', old_string: '', new_string: 'y' }, contextFor(dir))).content).toBe(
      'No old_string provided',
    );
    expect((await call(edit, { path: 'nope', old_string: 'x', new_string: 'y' }, contextFor(dir))).content).toBe(
      `File not found: ${join(dir, 'nope')}`,
    );
    await mkdir(join(dir, 'sub'));
    expect((await call(edit, { path: 'sub', old_string: 'x', new_string: 'y' }, contextFor(dir))).content).toBe(
      `Not a file: ${join(dir, 'sub')}`,
    );
    await writeFile(join(dir, 'bin.txt'), Buffer.from([0x61, 0xff, 0x0a]));
    expect((await call(edit, { path: 'bin.txt', old_string: 'a', new_string: 'b' }, contextFor(dir))).content).toBe(
      `Error reading file: ${join(dir, 'bin.txt')} is not valid UTF-8 text`,
    );
    await mkdir(join(dir, 'secret'));
    await writeFile(join(dir, 'secret/k'), 'x');
    expect((await call(edit, { path: 'secret/k', old_string: 'x', new_string: 'y' }, contextFor(dir))).content).toBe(
      `Cannot write to sensitive location: ${join(dir, 'secret/k')}.`,
    );
    await symlink('loop2', join(dir, 'loop1'));
    await symlink('loop1', join(dir, 'loop2'));
    expect((await call(edit, { path: 'loop1', old_string: 'x', new_string: 'y' }, contextFor(dir))).content).toMatch(
      /^Error reading file: ELOOP/,
    );
  });

  it('edits the file a symlink points to and keeps the link', async () => {
    await writeFile(join(dir, 'real.txt'), 'one\n');
    await symlink('real.txt', join(dir, 'link.txt'));
    await call(edit, { path: 'link.txt', old_string: 'one', new_string: 'two' }, contextFor(dir));
    expect(await readFile(join(dir, 'real.txt'), 'utf8')).toBe('two\n');
    await expect((await import('node:fs/promises')).readlink(join(dir, 'link.txt'))).resolves.toBe('real.txt');
  });
});
