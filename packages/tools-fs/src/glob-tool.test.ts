import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGlobTool } from './glob-tool.js';
import { call, contextFor, temporaryDirectory } from './test-support/harness.js';

const glob = createGlobTool();
let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory());
  await mkdir(join(dir, 'src/deep'), { recursive: true });
  await mkdir(join(dir, 'node_modules'));
  await writeFile(join(dir, 'top.ts'), '');
  await writeFile(join(dir, 'src/b.ts'), '');
  await writeFile(join(dir, 'src/a.ts'), '');
  await writeFile(join(dir, 'src/deep/c.ts'), '');
  await writeFile(join(dir, 'src/deep/d.js'), '');
  await writeFile(join(dir, 'node_modules/e.ts'), '');
});
afterEach(async () => {
  await cleanup();
});

describe('glob', () => {
  it('shows what the model sees', () => {
    expect({ name: glob.name, description: glob.description, parameters: glob.parameters }).toMatchSnapshot();
  });

  it('matches basenames at any depth, sorted, relative to the root, skipping node_modules', async () => {
    expect(await call(glob, { pattern: '*.ts', path: '.' }, contextFor(dir))).toEqual({
      content: 'src/a.ts\nsrc/b.ts\nsrc/deep/c.ts\ntop.ts\n\n[4 files found]',
      success: true,
      metadata: { matches: 4, total: 4 },
    });
    expect((await call(glob, { pattern: 'src/deep/*', path: dir }, contextFor(dir))).content).toBe(
      'src/deep/c.ts\nsrc/deep/d.js\n\n[2 files found]',
    );
  });

  it('limits results and reports the total', async () => {
    expect((await call(glob, { pattern: '*.ts', path: '.', max_results: 2 }, contextFor(dir))).content).toBe(
      'src/a.ts\nsrc/b.ts\n\n[Showing 2 of 4 files]',
    );
  });

  it('lists under the working directory when no path is given (the seeds make path optional)', async () => {
    const everywhere = await call(glob, { pattern: '*.ts', path: '.' }, contextFor(dir));
    expect(everywhere.success).toBe(true);
    expect(await call(glob, { pattern: '*.ts' }, contextFor(dir))).toEqual(everywhere);
    expect(await call(glob, { pattern: '*.ts', path: '' }, contextFor(dir))).toEqual(everywhere);
    expect(glob.parameters.required).toEqual(['pattern']);
  });

  it('reports every error of the original', async () => {
    expect(await call(glob, { pattern: '*.zzz', path: '.' }, contextFor(dir))).toEqual({
      content: 'No files found matching pattern',
      success: true,
      metadata: { matches: 0, total: 0 },
    });
    expect((await call(glob, { pattern: '', path: '.' }, contextFor(dir))).content).toBe('No pattern provided');
    expect((await call(glob, { pattern: '*', path: 'nope' }, contextFor(dir))).content).toBe(
      `Directory not found: ${join(dir, 'nope')}`,
    );
    expect((await call(glob, { pattern: '*', path: 'top.ts' }, contextFor(dir))).content).toBe(
      `Not a directory: ${join(dir, 'top.ts')}`,
    );
    const bad = await call(glob, { pattern: 'src/{a', path: '.' }, contextFor(dir));
    expect(bad.success).toBe(false);
    expect(bad.content).toMatch(/^Find failed: /);
  });
});
