import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { builtinProfile, readView, sandboxWrapper } from '@rho/permissions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBashTool } from './bash-tool.js';
import { developerSandbox } from './developer-sandbox.js';
import { createGlobTool } from './glob-tool.js';
import { createGrepTool } from './grep-tool.js';
import { createListTool } from './list-tool.js';
import { restrictedShellGate } from './restricted-shell-gate.js';
import { call, contextFor, temporaryDirectory } from './test-support/harness.js';

// The file tools and both shells decide on the one read view of @rho/permissions.

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory());
});
afterEach(async () => {
  await cleanup();
});

describe('the read view in the file tools', () => {
  it('grep never shows a secret-named file, glob and list leave out a hidden directory', async () => {
    const rho = join(dir, 'rho-home');
    await mkdir(join(rho, 'sessions'), { recursive: true });
    await writeFile(join(rho, 'sessions', 'trace.jsonl'), 'needle in a trace\n');
    await writeFile(join(dir, '.env.production'), 'needle=secret\n');
    await writeFile(join(dir, 'notes.txt'), 'needle in notes\n');
    const view = () => readView({ workingDir: dir, rhoHome: rho });
    const grep = createGrepTool({ view });
    const found = await call(grep, { pattern: 'needle', path: '.' }, contextFor(dir));
    expect(found.content).toContain('notes.txt');
    expect(found.content).not.toContain('secret');
    expect(found.content).not.toContain('trace');
    expect((await call(grep, { pattern: 'needle', path: 'rho-home' }, contextFor(dir))).content).toMatch(
      /^Refused: .*hidden from every session/,
    );
    const globbed = await call(createGlobTool({ view }), { pattern: '**/*' }, contextFor(dir));
    expect(globbed.content).toContain('notes.txt');
    expect(globbed.content).not.toContain('trace.jsonl');
    const listed = await call(createListTool({ view }), { path: '.', show_hidden: true }, contextFor(dir));
    expect(listed.content).toContain('notes.txt');
    expect(listed.content).not.toContain('rho-home');
  });

  it('the restricted shell refuses `< FILE` of a masked file (rho opens it itself)', async () => {
    await writeFile(join(dir, '.env'), 'KEY=secret\n');
    const bash = createBashTool({ mode: 'restricted', gate: restrictedShellGate(builtinProfile('readonly')!) });
    const result = await call(bash, { command: 'cat < .env' }, contextFor(dir));
    expect(result.success).toBe(false);
    expect(result.content).toMatch(/^Command blocked: < .*\.env: .*named like a file that holds secrets/);
  });
});

describe('developerSandbox', () => {
  const developer = builtinProfile('developer')!;
  const view = (cwd: string) => readView({ workingDir: cwd });

  it('refuses the developer shell where bubblewrap is missing, and is absent under sandbox: off', async () => {
    const confine = developerSandbox(developer, { view, sandboxLookup: { searchPath: '/nonexistent' } });
    const bash = createBashTool({ mode: 'unrestricted', ...(confine ? { confine } : {}) });
    const result = await call(bash, { command: 'echo ran' }, contextFor(dir));
    expect(result.success).toBe(false);
    expect(result.content).toMatch(/^Command blocked: no sandbox: profile developer runs its shell inside the sandbox/);
    expect(developerSandbox(developer, { view, sandbox: 'off' })).toBeUndefined();
    expect(developerSandbox(builtinProfile('unrestricted')!, { view })).toBeUndefined();
  });

  it('writes the working directory only, and has no network by default', async (test) => {
    // Skipped only on a machine without bubblewrap; CI installs it, and there a missing one fails.
    if (!(await sandboxWrapper()).available) {
      if (process.env['CI'] === 'true') throw new Error('CI must run the developer sandbox test: install bubblewrap');
      return test.skip('bubblewrap is not available here');
    }
    const confine = developerSandbox(developer, { view })!;
    const bash = createBashTool({ mode: 'unrestricted', confine });
    const result = await call(
      bash,
      { command: 'echo in > made.txt && cat made.txt; touch /usr/x 2>&1; ls /home 2>&1; cat /proc/net/dev | wc -l' },
      contextFor(dir),
    );
    const output = (JSON.parse(result.content) as { output: string }).output;
    expect(output).toContain('in\n');
    expect(output).toMatch(/Read-only file system/);
    expect(output).toMatch(/No such file or directory/);
    // Only the loopback interface (two header lines and lo).
    expect(output.trim().split('\n').at(-1)).toBe('3');
  });
});
