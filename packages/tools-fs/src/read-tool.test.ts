import { chmod, mkdir, symlink, writeFile, appendFile, open } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLocalBackend, type ExecutionBackend } from '@rho/core';
import { createReadTool } from './read-tool.js';
import { call, contextFor, temporaryDirectory } from './test-support/harness.js';

const read = createReadTool();
let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory());
});
afterEach(async () => {
  await cleanup();
});

const lines = (count: number): string =>
  Array.from({ length: count }, (_, index) => `line ${index + 1}`).join('\n') + '\n';

describe('read', () => {
  it('shows what the model sees', () => {
    expect({ name: read.name, description: read.description, parameters: read.parameters }).toMatchSnapshot();
    expect(read.annotations).toEqual({ readOnly: true });
  });

  it('numbers lines and resolves relative paths against the working directory', async () => {
    await writeFile(join(dir, 'a.txt'), 'hello  \nworld\n');
    const result = await call(read, { path: 'a.txt' }, contextFor(dir));
    expect(result).toEqual({
      content: '     1  hello\n     2  world',
      success: true,
      metadata: { path: join(dir, 'a.txt'), start_line: 1, end_line: 2, total_lines: 2 },
    });
  });

  it('reads 500 lines by default and reports the true total (the original said end+1)', async () => {
    await writeFile(join(dir, 'long.txt'), lines(1000));
    const result = await call(read, { path: 'long.txt' }, contextFor(dir));
    expect(result.content.split('\n')[499]).toBe('   500  line 500');
    expect(result.content.endsWith('\n\n[Showing lines 1-500 of 1000]')).toBe(true);
    expect(result.metadata).toMatchObject({ start_line: 1, end_line: 500, total_lines: 1000 });
  });

  it('returns at most 2000 lines whatever range is asked for', async () => {
    await writeFile(join(dir, 'long.txt'), lines(5000));
    const result = await call(read, { path: 'long.txt', start_line: 10, end_line: 1_000_000 }, contextFor(dir));
    expect(result.metadata).toMatchObject({ start_line: 10, end_line: 2009, total_lines: 5000 });
    expect(result.content.endsWith('[Showing lines 10-2009 of 5000]')).toBe(true);
  });

  it('reads a range, and counts a last line without newline', async () => {
    await writeFile(join(dir, 'r.txt'), 'a\nb\nc\nd\ne');
    const result = await call(read, { path: 'r.txt', start_line: 2, end_line: 3 }, contextFor(dir));
    expect(result.content).toBe('     2  b\n     3  c\n\n[Showing lines 2-3 of 5]');
    const tail = await call(read, { path: 'r.txt', start_line: 4 }, contextFor(dir));
    expect(tail.content).toBe('     4  d\n     5  e\n\n[Showing lines 4-5 of 5]');
  });

  it('reads the last lines with a negative start_line', async () => {
    await writeFile(join(dir, 'long.txt'), lines(10_000));
    const result = await call(read, { path: 'long.txt', start_line: -3 }, contextFor(dir));
    expect(result.content).toBe(
      '  9998  line 9998\n  9999  line 9999\n 10000  line 10000\n\n[Showing lines 9998-10000 of 10000]',
    );
  });

  it('clamps start_line to 1 and refuses a start past the end', async () => {
    await writeFile(join(dir, 'r.txt'), 'a\nb\n');
    expect((await call(read, { path: 'r.txt', start_line: 0 }, contextFor(dir))).content).toBe('     1  a\n     2  b');
    expect(await call(read, { path: 'r.txt', start_line: 5 }, contextFor(dir))).toEqual({
      content: 'Start line 5 exceeds file length (2 lines)',
      success: false,
    });
    await writeFile(join(dir, 'empty.txt'), '');
    expect((await call(read, { path: 'empty.txt' }, contextFor(dir))).content).toBe(
      'Start line 1 exceeds file length (0 lines)',
    );
    expect((await call(read, { path: 'r.txt', start_line: 2, end_line: 1 }, contextFor(dir))).success).toBe(false);
  });

  it('cuts long lines at 500 characters, counting characters not bytes, and says how many were left out', async () => {
    await writeFile(join(dir, 'wide.txt'), `${'é'.repeat(600)}\n${'x'.repeat(500)}\n${'y'.repeat(10_000_000)}\n`);
    const result = await call(read, { path: 'wide.txt' }, contextFor(dir));
    const [first, second, third] = result.content.split('\n');
    expect(first).toBe(`     1  ${'é'.repeat(500)} [100 chars omitted ...]`);
    expect(second).toBe(`     2  ${'x'.repeat(500)}`);
    // Only the line's first bytes are read: at least that many characters were left out.
    expect(third).toBe(`     3  ${'y'.repeat(500)} [1504+ chars omitted ...]`);
  });

  it('replaces invalid UTF-8 instead of failing when most of the text is valid', async () => {
    await writeFile(
      join(dir, 'bad.txt'),
      Buffer.concat([Buffer.from('a'), Buffer.from([0xff, 0xfe]), Buffer.from('b is fine\n')]),
    );
    const result = await call(read, { path: 'bad.txt' }, contextFor(dir));
    expect(result).toMatchObject({ success: true, content: '     1  a\uFFFD\uFFFDb is fine' });
    // Latin-1 text read as UTF-8: each accented letter is one invalid byte, a small share.
    await writeFile(
      join(dir, 'latin1.txt'),
      Buffer.from('Le café est fermé le lundi; la crème brûlée aussi.\n'.repeat(300), 'latin1'),
    );
    const latin1 = await call(read, { path: 'latin1.txt' }, contextFor(dir));
    expect(latin1.success).toBe(true);
    expect(latin1.content.split('\n')[0]).toBe(
      '     1  Le caf\uFFFD est ferm\uFFFD le lundi; la cr\uFFFDme br\uFFFDl\uFFFDe aussi.',
    );
  });

  it('refuses a file that is mostly invalid UTF-8 (more than 30% of its first 8 KiB), with no NUL byte', async () => {
    // Bytes 0x80-0xff never start a valid sequence here (each is followed by ASCII): 50% invalid.
    const garbage = Buffer.alloc(64 * 1024);
    for (let index = 0; index < garbage.length; index += 1)
      garbage[index] = index % 2 === 0 ? 0x80 + (index % 0x7f) : 0x41 + (index % 26);
    await writeFile(join(dir, 'mostly-invalid.log'), garbage);
    const result = await call(read, { path: 'mostly-invalid.log' }, contextFor(dir));
    expect(result).toEqual({
      content:
        `Cannot read binary file: ${join(dir, 'mostly-invalid.log')} (50% of its first 8 KiB is not valid UTF-8, so it is not text). ` +
        "Use shell commands like 'file', 'exiftool', or 'strings' for binary inspection.",
      success: false,
    });
    // A short file is judged on all of it.
    await writeFile(join(dir, 'short.txt'), Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0x41, 0xe2, 0x28, 0xa1]));
    expect((await call(read, { path: 'short.txt' }, contextFor(dir))).content).toContain(
      'of its first 8 KiB is not valid UTF-8',
    );
    // Only the first 8 KiB are sampled: a text file with binary further on is read as text.
    await writeFile(join(dir, 'text-then-garbage.log'), Buffer.concat([Buffer.from(lines(2000)), garbage]));
    expect(
      (await call(read, { path: 'text-then-garbage.log', end_line: 2 }, contextFor(dir))).content
        .split('\n')
        .slice(0, 2),
    ).toEqual(['     1  line 1', '     2  line 2']);
  });

  it('refuses binary files by extension and by content', async () => {
    await writeFile(join(dir, 'image.PNG'), 'not really');
    expect((await call(read, { path: 'image.PNG' }, contextFor(dir))).content).toBe(
      `Cannot read binary file: ${join(dir, 'image.PNG')} (.png files are not text-readable). ` +
        "Use shell commands like 'file', 'exiftool', or 'strings' for binary inspection.",
    );
    await writeFile(join(dir, 'blob'), Buffer.from([1, 2, 0, 3]));
    const result = await call(read, { path: 'blob' }, contextFor(dir));
    expect(result.success).toBe(false);
    expect(result.content).toContain(`Cannot read binary file: ${join(dir, 'blob')} (it contains NUL bytes`);
  });

  it('reports missing paths, directories, empty paths, symlink loops and unreadable files', async () => {
    expect(await call(read, { path: '' }, contextFor(dir))).toEqual({ content: 'No path provided', success: false });
    expect((await call(read, { path: 'nope.txt' }, contextFor(dir))).content).toBe(
      `File not found: ${join(dir, 'nope.txt')}`,
    );
    await mkdir(join(dir, 'sub'));
    expect((await call(read, { path: 'sub' }, contextFor(dir))).content).toBe(`Not a file: ${join(dir, 'sub')}`);
    await symlink('loop-b', join(dir, 'loop-a'));
    await symlink('loop-a', join(dir, 'loop-b'));
    expect((await call(read, { path: 'loop-a' }, contextFor(dir))).content).toBe(
      `Error reading file: ${join(dir, 'loop-a')} is a symlink loop (too many levels of symbolic links)`,
    );
  });

  it('stops scanning when the run is cancelled', async () => {
    await writeFile(join(dir, 'a.txt'), lines(10));
    const controller = new AbortController();
    controller.abort();
    expect(await call(read, { path: 'a.txt' }, contextFor(dir, controller.signal))).toEqual({
      content: 'Read cancelled',
      success: false,
    });
  });

  it('expands ~ to the home directory (hidden from a working directory elsewhere)', async () => {
    const result = await call(read, { path: '~/definitely-not-here-rho.txt' }, contextFor(dir));
    expect(result.content).toMatch(
      /^Refused: \/.*definitely-not-here-rho\.txt is inside \S+, which is hidden from every session/,
    );
  });

  it('copes with a file that grows and shrinks while it is read', async () => {
    const path = join(dir, 'moving.log');
    await writeFile(path, lines(200_000));
    const writer = (async () => {
      for (let round = 0; round < 20; round += 1) {
        await appendFile(path, lines(1000));
        if (round === 10) {
          const handle = await open(path, 'r+');
          await handle.truncate(1000);
          await handle.close();
        }
      }
    })();
    const results = await Promise.all([
      call(read, { path, start_line: -5 }, contextFor(dir)),
      call(read, { path }, contextFor(dir)),
      writer,
    ]);
    for (const result of results.slice(0, 2)) {
      expect(result).toMatchObject({ success: true });
    }
  });

  it('reads on after short reads that stop before the end (a backend may return fewer bytes than asked)', async () => {
    await writeFile(join(dir, 'short.txt'), lines(50));
    const local = createLocalBackend();
    let reads = 0;
    const backend: ExecutionBackend = {
      ...local,
      async openRead(path) {
        const handle = await local.openRead(path);
        return {
          size: handle.size,
          close: () => handle.close(),
          read: (buffer, position, length) => {
            reads += 1;
            return handle.read(buffer, position, Math.min(length, 7));
          },
        };
      },
    };
    const result = await call(read, { path: 'short.txt' }, { ...contextFor(dir), backend });
    expect(result.metadata).toMatchObject({ start_line: 1, end_line: 50, total_lines: 50 });
    expect(result.content.split('\n').at(-1)).toBe('    50  line 50');
    expect(reads).toBeGreaterThan(50);
  });

  it('reads a small file in one read: the short read that reaches its size ends the scan', async () => {
    await writeFile(join(dir, 'small.txt'), 'alpha\nbeta\n');
    const local = createLocalBackend();
    const reads: number[] = [];
    const backend: ExecutionBackend = {
      ...local,
      async openRead(path) {
        const handle = await local.openRead(path);
        return {
          size: handle.size,
          close: () => handle.close(),
          read: async (buffer, position, length) => {
            const count = await handle.read(buffer, position, length);
            reads.push(count);
            return count;
          },
        };
      },
    };
    const result = await call(read, { path: 'small.txt' }, { ...contextFor(dir), backend });
    expect(result.content).toBe('     1  alpha\n     2  beta');
    expect(reads).toEqual([11]);
  });

  it.skipIf(process.getuid?.() === 0)('reports permission denied (non-root only)', async () => {
    await writeFile(join(dir, 'secret.txt'), 'x');
    await chmod(join(dir, 'secret.txt'), 0);
    expect((await call(read, { path: 'secret.txt' }, contextFor(dir))).content).toBe(
      `Permission denied: ${join(dir, 'secret.txt')}`,
    );
  });
});
