/** Behaviour of `createLocalBackend()` (in `@rho/core`) that the tools rely on. */
import { chmod, mkdir, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLocalBackend } from '@rho/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { temporaryDirectory } from './test-support/harness.js';

const backend = createLocalBackend();
let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory());
});
afterEach(async () => {
  await cleanup();
});

async function collect(stream: NodeJS.ReadableStream | null): Promise<string> {
  if (stream === null) return '';
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return text;
}

describe('createLocalBackend', () => {
  it('creates exclusively and never overwrites', async () => {
    await backend.createExclusive(join(dir, 'a'), Buffer.from('one'));
    await expect(backend.createExclusive(join(dir, 'a'), Buffer.from('two'))).rejects.toMatchObject({ code: 'EEXIST' });
    await symlink('target', join(dir, 'dangling'));
    await expect(backend.createExclusive(join(dir, 'dangling'), Buffer.from('x'))).rejects.toMatchObject({
      code: 'EEXIST',
    });
    expect(await readFile(join(dir, 'a'), 'utf8')).toBe('one');
  });

  it('replaces atomically, keeping the mode, through symlinks, leaving no temporary file', async () => {
    await writeFile(join(dir, 'f'), 'old');
    await chmod(join(dir, 'f'), 0o640);
    await symlink('f', join(dir, 'link'));
    await backend.writeFileAtomic(join(dir, 'link'), Buffer.from('new'));
    expect(await readFile(join(dir, 'f'), 'utf8')).toBe('new');
    expect((await stat(join(dir, 'f'))).mode & 0o777).toBe(0o640);
    expect((await readdir(dir)).sort()).toEqual(['f', 'link']);
  });

  it('reads positionally, refuses directories, and bounds whole-file reads', async () => {
    await writeFile(join(dir, 'f'), '0123456789');
    const handle = await backend.openRead(join(dir, 'f'));
    const buffer = new Uint8Array(4);
    expect(await handle.read(buffer, 6, 4)).toBe(4);
    expect(Buffer.from(buffer).toString()).toBe('6789');
    expect(await handle.read(buffer, 10, 4)).toBe(0);
    await handle.close();
    await mkdir(join(dir, 'd'));
    await expect(backend.openRead(join(dir, 'd'))).rejects.toMatchObject({ code: 'EISDIR' });
    await expect(backend.readFile(join(dir, 'f'), { maxBytes: 5 })).rejects.toMatchObject({ code: 'EFBIG' });
    expect(Buffer.from(await backend.readFile(join(dir, 'f'), { maxBytes: 10 })).toString()).toBe('0123456789');
  });

  it('reports file types without following the last symlink in lstat', async () => {
    await symlink('.', join(dir, 'self'));
    expect((await backend.lstat(join(dir, 'self'))).type).toBe('symlink');
    expect((await backend.stat(join(dir, 'self'))).type).toBe('directory');
    expect(await backend.readlink(join(dir, 'self'))).toBe('.');
  });

  it('spawns without a shell, merges stderr on request, and reports spawn errors', async () => {
    const child = backend.spawn({
      argv: ['sh', '-c', 'echo out; echo err >&2', 'ignored'],
      cwd: dir,
      stderr: 'stdout',
    });
    expect(child.stderr).toBeNull();
    const text = await collect(child.stdout);
    expect(text.split('\n').sort()).toEqual(['', 'err', 'out']);
    expect(await child.exited).toEqual({ exitCode: 0, signal: null });
    const literal = backend.spawn({ argv: ['echo', '$HOME', '*'], cwd: dir });
    expect(await collect(literal.stdout)).toBe('$HOME *\n');
    const missing = backend.spawn({ argv: ['no-such-program-rho'], cwd: dir });
    expect((await missing.exited).spawnError?.code).toBe('ENOENT');
  });

  it('pipes one process into another and gives an early-exiting reader SIGPIPE semantics', async () => {
    const writer = backend.spawn({ argv: ['yes'], cwd: dir, stderr: 'pipe' });
    const reader = backend.spawn({ argv: ['head', '-n', '2'], cwd: dir, stdin: writer.stdout ?? 'ignore' });
    expect(await collect(reader.stdout)).toBe('y\ny\n');
    const [writerExit, writerErrors] = await Promise.all([writer.exited, collect(writer.stderr)]);
    expect(writerExit.signal).toBe('SIGPIPE');
    expect(writerErrors).toBe('');
  });
});
