import { mkdir, readFile, readdir, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { builtinProfile, explainPolicy, type PermissionProfile } from '@rho/permissions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEditTool } from './edit-tool.js';
import { fsTools, policyWritePathCheck } from './fs-tools.js';
import type { WritePathCheck } from './write-path-check.js';
import { createWriteTool } from './write-tool.js';
import { call, contextFor, temporaryDirectory } from './test-support/harness.js';

// The write and edit tools against a link swapped in between the policy's decision and the write
// (issue 14: full-mode write resolved the path again at write time, so such a swap redirected it).

const developer: PermissionProfile = builtinProfile('developer')!;
const createOnly: PermissionProfile = { ...builtinProfile('readonly')!, name: 'create-only', fileWrite: 'create-only' };

let dir: string;
let work: string;
let outside: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory());
  dir = await realpath(dir);
  work = join(dir, 'work');
  outside = join(dir, 'outside');
  await mkdir(join(work, 'd'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(work, 'd', 'notes.txt'), 'inside\n');
  await writeFile(join(outside, 'notes.txt'), 'original\n');
});
afterEach(async () => {
  await cleanup();
});

/** The policy check of `fsTools`, with `swap` run right after it decided: the check/use gap. */
function swappingAfterDecision(
  profile: PermissionProfile,
  swap: () => Promise<void>,
  keepHandle = true,
): WritePathCheck {
  const real = policyWritePathCheck(profile, work);
  return async (path, workingDir, writer) => {
    const decision = await real(path, workingDir, writer);
    await swap();
    if (!decision.allowed || keepHandle) return decision;
    // The old wiring: only the real path, which the tool then resolved again to write.
    return { allowed: true, realPath: decision.realPath };
  };
}

const parentToLink = async () => {
  await rename(join(work, 'd'), join(work, 'd.moved'));
  await symlink(outside, join(work, 'd'));
};
const fileToLink = async () => {
  await rm(join(work, 'd', 'notes.txt'));
  await symlink(join(outside, 'notes.txt'), join(work, 'd', 'notes.txt'));
};

const outsideUntouched = async () => {
  expect((await readdir(outside)).sort()).toEqual(['notes.txt']);
  expect(await readFile(join(outside, 'notes.txt'), 'utf8')).toBe('original\n');
};

describe('write and edit: a link swapped in after the decision', () => {
  it('proves the old effect: resolving the path again at write time wrote outside the working directory', async () => {
    const old = createWriteTool({ mode: 'full', checkPath: swappingAfterDecision(developer, parentToLink, false) });
    expect((await call(old, { path: 'd/notes.txt', content: 'agent data\n' }, contextFor(work))).success).toBe(true);
    expect(await readFile(join(outside, 'notes.txt'), 'utf8')).toBe('agent data\n');
  });

  it('full-mode write: a parent swapped for a link is refused and nothing lands outside', async () => {
    const write = createWriteTool({ mode: 'full', checkPath: swappingAfterDecision(developer, parentToLink) });
    const result = await call(write, { path: 'd/notes.txt', content: 'agent data\n' }, contextFor(work));
    expect(result.success).toBe(false);
    expect(result.content).toMatch(
      /^Error writing file: The path changed after the write was allowed: .*nothing was written\.$/,
    );
    await outsideUntouched();
    expect(await readFile(join(work, 'd.moved', 'notes.txt'), 'utf8')).toBe('inside\n');
  });

  it('full-mode write: the file swapped for a link to an outside file is refused, the outside file kept', async () => {
    const write = createWriteTool({ mode: 'full', checkPath: swappingAfterDecision(developer, fileToLink) });
    const result = await call(write, { path: 'd/notes.txt', content: 'agent data\n' }, contextFor(work));
    expect(result).toMatchObject({
      success: false,
      content: expect.stringMatching(/is now a symbolic link; nothing was written/),
    });
    await outsideUntouched();
  });

  it('full-mode write: a new file under a parent swapped for a link is refused', async () => {
    const write = createWriteTool({ mode: 'full', checkPath: swappingAfterDecision(developer, parentToLink) });
    expect((await call(write, { path: 'd/new/deeper.txt', content: 'x' }, contextFor(work))).success).toBe(false);
    await outsideUntouched();
  });

  it('create-only write: a parent swapped for a link is refused', async () => {
    const write = createWriteTool({ mode: 'create-only', checkPath: swappingAfterDecision(createOnly, parentToLink) });
    expect((await call(write, { path: 'd/new.txt', content: 'x' }, contextFor(work))).success).toBe(false);
    await outsideUntouched();
  });

  it('edit: neither reads nor replaces through a link swapped in after the decision', async () => {
    for (const swap of [parentToLink, fileToLink]) {
      await rm(work, { recursive: true, force: true });
      await mkdir(join(work, 'd'), { recursive: true });
      await writeFile(join(work, 'd', 'notes.txt'), 'inside\n');
      const edit = createEditTool({ checkPath: swappingAfterDecision(developer, swap) });
      const result = await call(
        edit,
        { path: 'd/notes.txt', old_string: 'original', new_string: 'agent' },
        contextFor(work),
      );
      expect(result.success).toBe(false);
      expect(result.content).toMatch(/nothing was written/);
      await outsideUntouched();
    }
  });
});

describe('write through fsTools when the working directory is the home', () => {
  it('refuses the start-up, git and editor files the first round missed', async () => {
    const home = work;
    await mkdir(join(home, '.git'));
    const write = fsTools({ profile: developer, workingDir: home }).find((tool) => tool.name === 'write')!;
    for (const path of [
      '.bash_aliases',
      '.gitconfig',
      '.git/config',
      '.pam_environment',
      '.vscode/tasks.json',
      '.vscode/settings.json',
      '.idea/workspace.xml',
      '.git/hooks/post-checkout',
    ]) {
      const result = await call(write, { path, content: '[core]\n\tfsmonitor = touch pwned\n' }, contextFor(home));
      expect(result.content, path).toMatch(/^Cannot write to sensitive location: /);
    }
    expect((await readdir(home)).sort()).toEqual(['.git', 'd']);
    expect(await readdir(join(home, '.git'))).toEqual([]);
  });
});

describe('rho policy check and the tools give the same answer', () => {
  const paths = [
    'notes.md',
    'd/notes.txt',
    'd/new/file.ts',
    'conftest.py',
    'Makefile',
    '.envrc',
    '.git/config',
    '.vscode/tasks.json',
    'link/x.txt',
    '../escape.txt',
    'd',
    'd/',
    '~/.bashrc',
  ];

  for (const profile of [developer, createOnly]) {
    it(`for write and edit under ${profile.name}`, async () => {
      await symlink(outside, join(work, 'link'));
      const tools = fsTools({ profile, workingDir: work });
      for (const via of ['write', 'edit'] as const) {
        const tool = tools.find((candidate) => candidate.name === via);
        for (const path of paths) {
          const explained = await explainPolicy({ profile, write: path, workingDir: work, via });
          if (tool === undefined) {
            expect(explained.allowed, `${via} ${path}`).toBe(false);
            continue;
          }
          const args =
            via === 'write' ? { path, content: 'inside\n' } : { path, old_string: 'inside', new_string: 'changed' };
          const result = await call(tool as never, args as never, contextFor(work));
          expect(result.success, `${via} ${path}: policy says ${explained.rule}, tool says ${result.content}`).toBe(
            explained.allowed,
          );
          if (!explained.allowed) {
            expect(result.metadata?.rule, `${via} ${path}`).toBe(explained.rule);
          }
        }
      }
      await outsideUntouched();
    });
  }
});
