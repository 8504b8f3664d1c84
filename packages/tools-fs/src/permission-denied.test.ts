/**
 * Permission denied, for real. Root reads everything, so the tools run in a child process that
 * drops to the `nobody` user (`setpriv`) and uses the built package (`dist`) on files root made
 * unreadable. Skipped when not root (then chmod alone suffices, see read-tool.test.ts) or when
 * `setpriv` or the build is missing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { temporaryDirectory } from './test-support/harness.js';

const toolsDist = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const coreDist = fileURLToPath(new URL('../../core/dist/index.js', import.meta.url));
const canDrop = process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status === 0 && existsSync(toolsDist);

const script = `
const tools = await import(process.env.TOOLS_DIST);
const { createLocalBackend } = await import(process.env.CORE_DIST);
const dir = process.env.SCRATCH;
const context = { signal: new AbortController().signal, sessionId: 's', workingDir: dir, backend: createLocalBackend() };
const run = (tool, args) => tool.handle({ callId: 'c', toolName: tool.name, arguments: args }, context);
const allow = async (path) => ({ allowed: true, realPath: path });
const results = {
  read: await run(tools.createReadTool(), { path: 'secret.txt' }),
  list: await run(tools.createListTool(), { path: 'closed' }),
  tree: await run(tools.createListTool(), { path: '.', recursive: true }),
  write: await run(tools.createWriteTool({ mode: 'full', checkPath: allow }), { path: 'locked/new.txt', content: 'x' }),
  edit: await run(tools.createEditTool(), { path: 'locked/file.txt', old_string: 'a', new_string: 'b' }),
  editRead: await run(tools.createEditTool(), { path: 'secret.txt', old_string: 'a', new_string: 'b' }),
  excel: await run(tools.createReadExcelTool(), { path: 'secret.txt', action: 'get_info' }),
  grep: await run(tools.createGrepTool(), { pattern: 'needle', path: '.' }),
};
process.stdout.write(JSON.stringify(results));
`;

let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory());
});
afterEach(async () => {
  await cleanup();
});

describe('permission denied (as the nobody user)', () => {
  it.runIf(canDrop)(
    'reports "Permission denied" from every tool that touches an unreadable or unwritable path',
    async () => {
      await chmod(dir, 0o755);
      await writeFile(join(dir, 'secret.txt'), 'a needle');
      await chmod(join(dir, 'secret.txt'), 0o000);
      await mkdir(join(dir, 'closed'), { mode: 0o000 });
      await chmod(join(dir, 'closed'), 0o000);
      await mkdir(join(dir, 'locked'));
      await writeFile(join(dir, 'locked/file.txt'), 'a');
      await chmod(join(dir, 'locked/file.txt'), 0o644);
      await chmod(join(dir, 'locked'), 0o555);
      await writeFile(join(dir, 'open.txt'), 'needle here');
      await chmod(join(dir, 'open.txt'), 0o644);
      const child = spawnSync(
        'setpriv',
        ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '--input-type=module', '-e', script],
        {
          env: { PATH: process.env['PATH'], TOOLS_DIST: toolsDist, CORE_DIST: coreDist, SCRATCH: dir },
          encoding: 'utf8',
        },
      );
      expect(child.status, child.stderr).toBe(0);
      const results = JSON.parse(child.stdout) as Record<string, { content: string; success: boolean }>;
      expect(results['read']).toEqual({ content: `Permission denied: ${join(dir, 'secret.txt')}`, success: false });
      expect(results['list']).toEqual({ content: `Permission denied: ${join(dir, 'closed')}`, success: false });
      expect(results['tree']?.content).toContain('├── closed/\n│   [permission denied]');
      expect(results['write']).toEqual({
        content: `Permission denied: ${join(dir, 'locked/new.txt')}`,
        success: false,
      });
      expect(results['edit']).toEqual({
        content: `Permission denied: ${join(dir, 'locked/file.txt')}`,
        success: false,
      });
      expect(results['editRead']).toEqual({ content: `Permission denied: ${join(dir, 'secret.txt')}`, success: false });
      expect(results['excel']).toEqual({ content: `Permission denied: ${join(dir, 'secret.txt')}`, success: false });
      expect(results['grep']?.content).toContain(`${join(dir, 'open.txt')}:1:needle here`);
      expect(results['grep']?.content).toContain('[Some files could not be searched:');
    },
  );
});
