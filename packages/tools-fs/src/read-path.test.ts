// Readonly audit, round three: the file tools run in rho's own process (ripgrep as its child), so
// /proc/self/environ is rho's environment. grep used to print it; read refused it only because
// the file holds NUL bytes.
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGrepTool } from './grep-tool.js';
import { createReadExcelTool } from './read-excel-tool.js';
import { createReadTool } from './read-tool.js';
import { call, contextFor, temporaryDirectory } from './test-support/harness.js';

const SECRET = 'sk-rho-read-path-test-secret';
let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory());
  process.env['RHO_READ_PATH_TEST_SECRET'] = SECRET;
});
afterEach(async () => {
  delete process.env['RHO_READ_PATH_TEST_SECRET'];
  await cleanup();
});

describe.skipIf(process.platform !== 'linux')("the file tools do not read rho's /proc", () => {
  it('grep, read and read_excel refuse /proc/self/environ, directly, by pid and through a planted link', async () => {
    await symlink('/proc/self/environ', join(dir, 'notes.txt'));
    const tools = [createGrepTool(), createReadTool(), createReadExcelTool()];
    const paths = ['/proc/self/environ', `/proc/${process.pid}/environ`, '/proc/thread-self/environ', 'notes.txt'];
    for (const tool of tools) {
      for (const path of paths) {
        const args = tool.name === 'grep' ? { pattern: 'RHO_READ_PATH_TEST', path } : { path };
        const result = await call(tool as never, args as never, contextFor(dir));
        expect(result.content).not.toContain(SECRET);
        expect(result.success, `${tool.name} ${path}`).toBe(false);
        expect(result.metadata?.['rule'], `${tool.name} ${path}`).toBe('read.proc');
        expect(result.content).toMatch(/^Refused: .*\/proc.*use the bash tool/s);
      }
    }
  });

  it('grep refuses a search of /proc itself; machine-wide files stay readable', async () => {
    const grep = await call(createGrepTool(), { pattern: 'RHO_READ_PATH_TEST', path: '/proc' }, contextFor(dir));
    expect(grep.metadata?.['rule']).toBe('read.proc');
    const cpu = await call(createReadTool(), { path: '/proc/cpuinfo' }, contextFor(dir));
    expect(cpu.success).toBe(true);
  });
});
