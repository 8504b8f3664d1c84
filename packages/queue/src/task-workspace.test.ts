import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { taskAllowlist } from './task-allowlist.js';
import { profileMayWrite, taskWorkspaceMode, workspaceRefusal } from './task-workspace.js';

describe('task workspaces', () => {
  const home = mkdtempSync(join(tmpdir(), 'rho-queue-ws-'));
  mkdirSync(join(home, 'profiles'));
  writeFileSync(join(home, 'profiles', 'reviewer.yaml'), 'profile: reviewer\nfile_write: {mode: off}\n');
  writeFileSync(join(home, 'profiles', 'fixer.yaml'), 'profile: fixer\nfile_write: {mode: full}\n');
  writeFileSync(join(home, 'shell.yaml'), 'profile: shell\nshell: {mode: unrestricted}\n');

  it('tells a profile that may write: built-in, custom by name or path, and one that cannot be loaded counts as writing', async () => {
    expect(await profileMayWrite('readonly', home, home)).toBe(false);
    expect(await profileMayWrite('developer', home, home)).toBe(true);
    expect(await profileMayWrite('unrestricted', home, home)).toBe(true);
    expect(await profileMayWrite('reviewer', home, home)).toBe(false);
    expect(await profileMayWrite('fixer', home, home)).toBe(true);
    expect(await profileMayWrite('shell.yaml', home, home)).toBe(true);
    expect(await profileMayWrite('no-such-profile', home, home)).toBe(true);
  });

  it('defaults to isolated for a writing profile, in place for one that does not; the task may choose', () => {
    expect(taskWorkspaceMode({ prompt: 'x' }, true)).toBe('isolated');
    expect(taskWorkspaceMode({ prompt: 'x' }, false)).toBe('in-place');
    expect(taskWorkspaceMode({ prompt: 'x', workspace: 'isolated' }, false)).toBe('isolated');
    expect(taskWorkspaceMode({ prompt: 'x', workspace: 'in-place' }, true)).toBe('in-place');
  });

  it('refuses in-place under a writing profile unless the worker allows it, naming the flag', () => {
    const strict = taskAllowlist({ profiles: ['developer'] }, home);
    const spec = { prompt: 'x', workspace: 'in-place' as const };
    expect(workspaceRefusal(spec, true, strict)).toMatch(
      /^workspace in-place is not allowed on this worker for profile 'developer', which may write files .*start the worker with --allow-in-place to allow it/,
    );
    expect(workspaceRefusal(spec, false, strict)).toBeUndefined();
    expect(workspaceRefusal({ prompt: 'x' }, true, strict)).toBeUndefined();
    expect(
      workspaceRefusal(spec, true, taskAllowlist({ profiles: ['developer'], inPlace: true }, home)),
    ).toBeUndefined();
  });
});
