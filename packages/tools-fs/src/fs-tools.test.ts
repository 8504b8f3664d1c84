import { readFile, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { approvalPolicy, builtinProfile, loadProfile, type PermissionProfile } from '@rho/permissions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnyTool } from '@rho/core';
import { fsTools } from './fs-tools.js';
import { call, contextFor, temporaryDirectory } from './test-support/harness.js';

let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory());
});
afterEach(async () => {
  await cleanup();
});

const profile = (name: string): PermissionProfile => {
  const found = builtinProfile(name);
  if (found === undefined) throw new Error(`no built-in profile ${name}`);
  return found;
};
const names = (tools: AnyTool[]): string[] => tools.map((tool) => tool.name).sort();
const byName = (tools: AnyTool[], name: string): AnyTool => {
  const tool = tools.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no tool ${name}`);
  return tool;
};
/** What the agent built from this profile decides (the tools declare, they do not decide). */
const needsApproval = (chosen: PermissionProfile, tool: AnyTool, args: Record<string, unknown>): boolean => {
  expect(tool).not.toHaveProperty('requiresApproval');
  return approvalPolicy(chosen)(tool, args).required;
};

describe('fsTools', () => {
  it('gives readonly the restricted shell and the readers, nothing that writes', async () => {
    const tools = fsTools({ profile: profile('readonly'), workingDir: dir });
    expect(names(tools)).toEqual(['bash', 'glob', 'grep', 'list', 'read', 'read_excel']);
    const bash = byName(tools, 'bash');
    expect(bash.description).toContain('read-only');
    expect(needsApproval(profile('readonly'), bash, { command: 'ls' })).toBe(true);
    expect(needsApproval(profile('readonly'), byName(tools, 'read'), { path: 'x' })).toBe(false);
    expect(bash.annotations).toEqual({ destructive: false });
    const refused = await call(bash, { command: `rm -rf ${dir}` }, contextFor(dir));
    expect(refused.content).toMatch(/^Command blocked: /);
    await writeFile(join(dir, 'a.txt'), 'hello\n');
    const allowed = await call(bash, { command: 'cat a.txt | wc -l' }, contextFor(dir));
    expect((JSON.parse(allowed.content) as { output: string }).output.trim()).toBe('1');
    for (const tool of tools.filter((candidate) => candidate.name !== 'bash'))
      expect(tool.annotations?.readOnly).toBe(true);
  });

  it('gives developer the unrestricted shell, write and edit', async () => {
    const tools = fsTools({ profile: profile('developer'), workingDir: dir });
    expect(names(tools)).toEqual(['bash', 'edit', 'glob', 'grep', 'list', 'read', 'read_excel', 'write']);
    const bash = byName(tools, 'bash');
    expect(needsApproval(profile('developer'), bash, { command: 'ls' })).toBe(false);
    expect(needsApproval(profile('developer'), bash, { command: 'rm -rf build' })).toBe(true);
    expect(bash.annotations).toEqual({ destructive: true, openWorld: true });
    expect(byName(tools, 'write').annotations).toEqual({ destructive: true });
    expect(byName(tools, 'edit').annotations).toEqual({ destructive: true });
    const result = await call(bash, { command: 'echo hi > made.txt && cat made.txt' }, contextFor(dir));
    expect((JSON.parse(result.content) as { output: string }).output).toBe('hi\n');
    const write = byName(tools, 'write');
    expect((await call(write, { path: 'made.txt', content: 'over' }, contextFor(dir))).content).toBe(
      `Overwrote ${join(dir, 'made.txt')} (4 bytes, 1 lines)`,
    );
    expect(
      (
        await call(
          byName(tools, 'edit'),
          { path: 'made.txt', old_string: 'over', new_string: 'edited' },
          contextFor(dir),
        )
      ).success,
    ).toBe(true);
    expect(await readFile(join(dir, 'made.txt'), 'utf8')).toBe('edited');
  });

  it('gives developer-bash-only bash alone', async () => {
    const tools = fsTools({ profile: await loadProfile('developer-bash-only'), workingDir: dir });
    expect(names(tools)).toEqual(['bash']);
  });

  it('gives create-only profiles a write that never overwrites and no edit, judged on real paths', async () => {
    const createOnly: PermissionProfile = {
      ...profile('readonly'),
      name: 'create-only-test',
      fileWrite: 'create-only',
    };
    const tools = fsTools({ profile: createOnly, workingDir: dir });
    expect(names(tools)).toEqual(['bash', 'glob', 'grep', 'list', 'read', 'read_excel', 'write']);
    const write = byName(tools, 'write');
    expect((await call(write, { path: 'new.txt', content: 'x' }, contextFor(dir))).success).toBe(true);
    expect((await call(write, { path: 'new.txt', content: 'y' }, contextFor(dir))).content).toMatch(
      /^File already exists: /,
    );
    await symlink('/etc', join(dir, 'etc-link'));
    const sneaky = await call(write, { path: 'etc-link/rho-test', content: 'x' }, contextFor(dir));
    expect(sneaky.success).toBe(false);
    expect(sneaky.content).toMatch(/etc-link/);
    await expect(readFile('/etc/rho-test')).rejects.toMatchObject({ code: 'ENOENT' });
    const sensitive = await call(write, { path: '.ssh/authorized_keys', content: 'x' }, contextFor(dir));
    expect(sensitive.content).toMatch(/^Cannot write to sensitive location: /);
    const outside = await call(write, { path: join(homedir(), '.ssh', 'rho-test'), content: 'x' }, contextFor(dir));
    expect(outside.success).toBe(false);
  });

  it('runs commands in the profile shell_working_dir', async () => {
    const custom: PermissionProfile = { ...profile('developer'), shellWorkingDir: dir };
    const bash = byName(fsTools({ profile: custom }), 'bash');
    const result = await call(bash, { command: 'pwd' }, contextFor('/'));
    expect((JSON.parse(result.content) as { output: string }).output).toBe(`${dir}\n`);
  });
});

describe('rho’s own files', () => {
  it('write and edit never reach rho’s home or a session’s files, even inside the working directory', async () => {
    // $RHO_HOME inside the project: an agent could otherwise answer its own waiting call.
    const rhoHome = join(dir, '.rho-home');
    const approvals = join(rhoHome, 'sessions', 'abc', 'approvals');
    await import('node:fs/promises').then((fs) => fs.mkdir(approvals, { recursive: true }));
    await writeFile(join(rhoHome, 'sessions', 'abc', 'cancel'), '');
    const tools = fsTools({ profile: profile('developer'), workingDir: dir, rhoHome });
    const written = await call(
      byName(tools, 'write'),
      { path: '.rho-home/sessions/abc/approvals/answer.json', content: '{"decision":"approve"}' },
      contextFor(dir),
    );
    expect(written.content).toMatch(/hidden from every session/);
    await expect(readFile(join(approvals, 'answer.json'), 'utf8')).rejects.toThrow();
    const edited = await call(
      byName(tools, 'edit'),
      { path: '.rho-home/sessions/abc/cancel', old_string: '', new_string: 'x' },
      contextFor(dir),
    );
    expect(edited.success).toBe(false);
    // The rest of the working directory is written as before.
    const ok = await call(byName(tools, 'write'), { path: 'notes.txt', content: 'fine\n' }, contextFor(dir));
    expect(ok.success, ok.content).toBe(true);
  });
});
