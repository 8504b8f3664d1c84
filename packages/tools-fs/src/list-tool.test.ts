import { mkdir, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createListTool, formatMode, formatSize } from './list-tool.js';
import { call, contextFor, temporaryDirectory } from './test-support/harness.js';

const list = createListTool();
let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory());
});
afterEach(async () => {
  await cleanup();
});

const time = new Date(2024, 0, 2, 3, 4);

describe('list', () => {
  it('shows what the model sees', () => {
    expect({ name: list.name, description: list.description, parameters: list.parameters }).toMatchSnapshot();
  });

  it('lists directories first, then names case-insensitively, with mode, size and time', async () => {
    await writeFile(join(dir, 'b.txt'), 'x'.repeat(2048), { mode: 0o644 });
    await writeFile(join(dir, 'A.txt'), 'hi', { mode: 0o600 });
    await mkdir(join(dir, 'zdir'), { mode: 0o755 });
    await writeFile(join(dir, '.hidden'), '');
    await symlink('b.txt', join(dir, 'link'));
    await symlink('zdir', join(dir, 'dirlink'));
    for (const name of ['b.txt', 'A.txt', 'zdir']) await utimes(join(dir, name), time, time);
    const result = await call(list, { path: '.' }, contextFor(dir));
    const lines = result.content.split('\n');
    expect(lines[0]).toMatch(/^lrwxrwxrwx {9}- {2}\d{4}-\d\d-\d\d \d\d:\d\d {2}dirlink\/$/);
    expect(lines[1]).toBe('drwxr-xr-x         -  2024-01-02 03:04  zdir/');
    expect(lines[2]).toBe('-rw-------        2B  2024-01-02 03:04  A.txt');
    expect(lines[3]).toBe('-rw-r--r--     2.0KB  2024-01-02 03:04  b.txt');
    expect(lines[4]).toMatch(/ {2}link -> b\.txt$/);
    expect(lines).toHaveLength(5);
    expect(result.metadata).toEqual({ path: dir, recursive: false, item_count: 5 });
    const hidden = await call(list, { path: '.', show_hidden: true }, contextFor(dir));
    expect(hidden.content).toContain('  .hidden');
  });

  it('truncates at 200 entries', async () => {
    await Promise.all(
      Array.from({ length: 205 }, (_, index) => writeFile(join(dir, `f${String(index).padStart(3, '0')}`), '')),
    );
    const result = await call(list, { path: dir }, contextFor(dir));
    expect(result.content.endsWith('f199\n\n[Truncated at 200 entries]')).toBe(true);
    expect(result.metadata).toMatchObject({ item_count: 200 });
  });

  it('draws a tree to max_depth and never follows symlink loops', async () => {
    await mkdir(join(dir, 'a/b/c/d/e'), { recursive: true });
    await writeFile(join(dir, 'a/file.txt'), 'hello');
    await writeFile(join(dir, 'top.txt'), '');
    await symlink('.', join(dir, 'a/self'));
    const result = await call(list, { path: '.', recursive: true }, contextFor(dir));
    expect(result.content).toBe(
      [
        '├── a/',
        '│   ├── b/',
        '│   │   └── c/',
        '│   │       └── d/',
        '│   ├── self/ -> .',
        '│   └── file.txt (5B)',
        '└── top.txt (0B)',
      ].join('\n'),
    );
    expect(result.metadata).toEqual({ path: dir, recursive: true, item_count: 7 });
    const shallow = await call(list, { path: '.', recursive: true, max_depth: 0 }, contextFor(dir));
    expect(shallow.content).toBe('├── a/\n└── top.txt (0B)');
  });

  it('reports empty directories and every error of the original', async () => {
    expect((await call(list, { path: '.' }, contextFor(dir))).content).toBe('(empty directory)');
    expect((await call(list, { path: '.', recursive: true }, contextFor(dir))).content).toBe('(empty directory)');
    expect(await call(list, { path: '' }, contextFor(dir))).toEqual({ content: 'No path provided', success: false });
    expect((await call(list, { path: 'nope' }, contextFor(dir))).content).toBe(
      `Directory not found: ${join(dir, 'nope')}`,
    );
    await writeFile(join(dir, 'f'), '');
    expect((await call(list, { path: 'f' }, contextFor(dir))).content).toBe(`Not a directory: ${join(dir, 'f')}`);
    await symlink('loop2', join(dir, 'loop1'));
    await symlink('loop1', join(dir, 'loop2'));
    expect((await call(list, { path: 'loop1' }, contextFor(dir))).content).toMatch(/^Error listing directory: ELOOP/);
  });

  it('formats modes and sizes like the original', () => {
    expect(formatMode(0o104755)).toBe('-rwsr-xr-x');
    expect(formatMode(0o041777)).toBe('drwxrwxrwt');
    expect(formatMode(0o120777)).toBe('lrwxrwxrwx');
    expect(formatSize(1023)).toBe('1023B');
    expect(formatSize(1536)).toBe('1.5KB');
    expect(formatSize(5 * 1024 ** 3)).toBe('5.0GB');
    expect(formatSize(3 * 1024 ** 4)).toBe('3.0TB');
  });
});
