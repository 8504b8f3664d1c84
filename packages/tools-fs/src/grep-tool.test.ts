import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createLocalBackend, type ExecutionBackend } from '@rho/core';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGlobTool } from './glob-tool.js';
import { createGrepTool } from './grep-tool.js';
import { call, contextFor, temporaryDirectory } from './test-support/harness.js';

const grep = createGrepTool();
let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory());
});
afterEach(async () => {
  await cleanup();
});

describe('grep', () => {
  it('shows what the model sees', () => {
    expect({ name: grep.name, description: grep.description, parameters: grep.parameters }).toMatchSnapshot();
    expect(grep.annotations).toEqual({ readOnly: true });
  });

  it('finds matches with file and line, and counts them', async () => {
    await writeFile(join(dir, 'a.txt'), 'alpha\nbeta\nalphabet\n');
    const result = await call(grep, { pattern: 'alpha', path: '.' }, contextFor(dir));
    expect(result).toEqual({
      content: `${join(dir, 'a.txt')}:1:alpha\n${join(dir, 'a.txt')}:3:alphabet\n\n[2 matches]`,
      success: true,
      metadata: { matches: 2, truncated: false },
    });
  });

  it('tells matches from context lines even when names and text contain ":" and "-"', async () => {
    await writeFile(join(dir, 'x-1:2.txt'), 'a-1-b\nneedle: here\nc:3:d\n');
    const result = await call(grep, { pattern: 'needle', path: '.', context_lines: 1 }, contextFor(dir));
    const file = join(dir, 'x-1:2.txt');
    expect(result.content).toBe(`${file}-1-a-1-b\n${file}:2:needle: here\n${file}-3-c:3:d\n\n[1 match]`);
    expect(result.metadata).toEqual({ matches: 1, truncated: false });
  });

  it('truncates at max_matches', async () => {
    await writeFile(join(dir, 'many.txt'), 'hit\n'.repeat(50));
    const result = await call(grep, { pattern: 'hit', path: 'many.txt', max_matches: 10 }, contextFor(dir));
    expect(
      result.content
        .split('\n')
        .slice(0, 10)
        .every((line) => line.endsWith(':hit')),
    ).toBe(true);
    expect(result.content.endsWith('\n\n[Showing 10 of 11+ matches, truncated]')).toBe(true);
    expect(result.metadata).toEqual({ matches: 10, truncated: true });
  });

  it('honours ignore_case and glob, and skips the original directories', async () => {
    await writeFile(join(dir, 'a.py'), 'Token\n');
    await writeFile(join(dir, 'b.js'), 'token\n');
    for (const skipped of ['node_modules', '.venv', 'venv', '__pycache__']) {
      await mkdir(join(dir, skipped));
      await writeFile(join(dir, skipped, 'c.py'), 'token\n');
    }
    const result = await call(grep, { pattern: 'token', path: dir, ignore_case: true, glob: '*.py' }, contextFor(dir));
    expect(result.content).toBe(`${join(dir, 'a.py')}:1:Token\n\n[1 match]`);
    expect((await call(grep, { pattern: 'token', path: dir }, contextFor(dir))).content).toBe(
      `${join(dir, 'b.js')}:1:token\n\n[1 match]`,
    );
  });

  it('reports no matches, bad regexes, missing paths and empty arguments', async () => {
    await writeFile(join(dir, 'a.txt'), 'x\n');
    expect(await call(grep, { pattern: 'zzz', path: '.' }, contextFor(dir))).toEqual({
      content: 'No matches found',
      success: true,
      metadata: { matches: 0, truncated: false },
    });
    const bad = await call(grep, { pattern: '(unclosed', path: '.' }, contextFor(dir));
    expect(bad.success).toBe(false);
    expect(bad.content).toMatch(/^Search failed: .*regex parse error/s);
    expect((await call(grep, { pattern: 'x', path: 'missing' }, contextFor(dir))).content).toBe(
      `Path not found: ${join(dir, 'missing')}`,
    );
    expect((await call(grep, { pattern: '', path: '.' }, contextFor(dir))).content).toBe('No pattern provided');
  });

  it('searches the working directory when no path is given (the seeds make path optional)', async () => {
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'sub', 'a.txt'), 'needle\n');
    const expected = `${join(dir, 'sub', 'a.txt')}:1:needle\n\n[1 match]`;
    expect((await call(grep, { pattern: 'needle' }, contextFor(dir))).content).toBe(expected);
    expect((await call(grep, { pattern: 'needle', path: '' }, contextFor(dir))).content).toBe(expected);
    expect(grep.parameters.required).toEqual(['pattern']);
  });

  it('cuts a long matching line around the match, saying how much was left out on each side', async () => {
    // The case: a 30,000-character minified line with the match in the middle.
    const before = 'x'.repeat(15_000);
    const after = 'y'.repeat(14_994);
    await writeFile(join(dir, 'bundle.min.js'), `${before}needle${after}\n`);
    const result = await call(grep, { pattern: 'needle', path: '.' }, contextFor(dir));
    const line = result.content.split('\n')[0]!;
    expect(line).toBe(
      `${join(dir, 'bundle.min.js')}:1:[... 14753 chars omitted] ${'x'.repeat(247)}needle${'y'.repeat(247)} [14747 chars omitted ...]`,
    );
    // Offsets are bytes: multi-byte text before the match still centres on it.
    await writeFile(join(dir, 'wide.txt'), `${'é'.repeat(2000)}NEEDLE${'z'.repeat(10)}\n`);
    const wide = (await call(grep, { pattern: 'NEEDLE', path: 'wide.txt' }, contextFor(dir))).content.split('\n')[0]!;
    expect(wide).toBe(`${join(dir, 'wide.txt')}:1:[... 1516 chars omitted] ${'é'.repeat(484)}NEEDLE${'z'.repeat(10)}`);
  });

  it('stops once a megabyte of output is kept, whatever max_matches says', async () => {
    await writeFile(join(dir, 'wide.txt'), `hit ${'w'.repeat(1500)}\n`.repeat(2000));
    const result = await call(grep, { pattern: 'hit', path: '.', max_matches: 100_000 }, contextFor(dir));
    expect(result.success).toBe(true);
    expect(result.content).toMatch(/\n\n\[Showing \d+ matches, truncated: output exceeded 1 MB\]$/);
    expect(result.metadata).toMatchObject({ truncated: true });
    expect((result.metadata as { matches: number }).matches).toBeLessThan(2000);
  });

  it('keeps memory bounded on enormous lines', async () => {
    await writeFile(join(dir, 'min.js'), `${'a'.repeat(5_000_000)}needle\n`);
    const result = await call(grep, { pattern: 'needle', path: '.' }, contextFor(dir));
    expect(result.success).toBe(true);
    expect(result.content.length).toBeLessThan(3000);
    expect(result.content).toContain(`[... 4999506 chars omitted] ${'a'.repeat(494)}needle\n\n[1 match]`);
    // Past what one record may hold, the line is counted but not shown.
    await writeFile(join(dir, 'huge.js'), `${'b'.repeat(9_000_000)}needle\n`);
    const huge = await call(grep, { pattern: 'needle', path: 'huge.js' }, contextFor(dir));
    expect(huge.content).toBe(`${join(dir, 'huge.js')}:?:[line longer than 8 MB, not shown]\n\n[1 match]`);
  });

  it('stops when the run is cancelled', async () => {
    await writeFile(join(dir, 'a.txt'), 'x\n');
    const controller = new AbortController();
    controller.abort();
    const result = await call(grep, { pattern: 'x', path: '.' }, contextFor(dir, controller.signal));
    expect(result).toEqual({ content: 'Search cancelled', success: false });
  });

  it('times out on a search that hangs (a FIFO nobody writes to)', async () => {
    expect(spawnSync('mkfifo', [join(dir, 'pipe')]).status).toBe(0);
    const quick = createGrepTool({ timeoutSeconds: 1 });
    expect(await call(quick, { pattern: 'x', path: 'pipe' }, contextFor(dir))).toEqual({
      content: 'Search timed out after 1 seconds',
      success: false,
      metadata: { matches: 0, truncated: false },
    });
  });

  it('says how to install ripgrep when the backend has none', async () => {
    const local = createLocalBackend();
    const withoutRipgrep: ExecutionBackend = {
      ...local,
      name: 'remote-without-rg',
      ripgrepPath: async () => join(dir, 'no-rg-here'),
    };
    const message =
      'ripgrep (rg) is not installed. Install it with: brew install ripgrep (macOS) or apt install ripgrep (Linux)';
    expect(
      (await call(createGrepTool({ backend: withoutRipgrep }), { pattern: 'x', path: '.' }, contextFor(dir))).content,
    ).toBe(message);
    expect(
      (await call(createGlobTool({ backend: withoutRipgrep }), { pattern: '*', path: '.' }, contextFor(dir))).content,
    ).toBe(message);
  });
});
