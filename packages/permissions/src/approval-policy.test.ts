import { Agent } from '@rho/core';
import { createScriptedModelClient } from '@rho/core/testing';
import { describe, expect, test } from 'vitest';
import { approvalPolicy, BUILTIN_TOOL_NAMES, everyCallNeedsApproval, type ApprovalSubject } from './approval-policy.js';
import { builtinProfile } from './builtin-profiles.js';
import { parseProfile, type PermissionProfile } from './permission-profile.js';

function profile(name: string): PermissionProfile {
  const found = builtinProfile(name);
  if (!found) throw new Error(`no profile ${name}`);
  return found;
}

const tool = (name: string, annotations?: ApprovalSubject['annotations']): ApprovalSubject => ({
  name,
  ...(annotations === undefined ? {} : { annotations }),
});
const decide = (
  chosen: PermissionProfile,
  name: string,
  args: Record<string, unknown> = {},
  annotations?: ApprovalSubject['annotations'],
) => approvalPolicy(chosen)(tool(name, annotations), args);

/** A third-party tool that declares it only reads, one that declares nothing, one that reaches the network. */
const readOnlyTool = { readOnly: true } as const;
const openWorldTool = { readOnly: true, openWorld: true } as const;

describe('approvalPolicy: built-in profiles keep the original behaviour', () => {
  test('readonly (dangerous): bash, write, edit, database tools and delegate need approval; readers do not', () => {
    const readonly = profile('readonly');
    expect(decide(readonly, 'bash', { command: 'ls' })).toEqual({
      required: true,
      reason:
        'bash is a dangerous tool and profile readonly requires approval for dangerous tools (approval: dangerous)',
    });
    for (const name of ['write', 'edit', 'sqlite', 'postgres', 'mysql', 'oracle', 'vertica', 'delegate'])
      expect(decide(readonly, name).required, name).toBe(true);
    for (const name of ['read', 'grep', 'glob', 'list', 'read_excel'])
      expect(decide(readonly, name, { path: 'a.txt' }), name).toEqual({ required: false });
  });

  test('developer (granular): only the required tools and dangerous patterns', () => {
    const developer = profile('developer');
    expect(decide(developer, 'bash', { command: 'ls -la' })).toEqual({ required: false });
    expect(decide(developer, 'write', { path: 'a.txt', content: 'x' })).toEqual({ required: false });
    expect(decide(developer, 'sqlite', { operation: 'query', sql: 'select 1' })).toEqual({ required: false });
    expect(decide(developer, 'delegate', { instruction: 'look around' })).toEqual({ required: false });
    expect(decide(developer, 'mysql', {})).toEqual({
      required: true,
      reason: 'profile developer requires approval for mysql (approval.required_tools)',
    });
    const destructive = decide(developer, 'bash', { command: 'rm  -RF build' });
    expect(destructive).toEqual({
      required: true,
      reason: 'the arguments contain the dangerous pattern "rm -rf" (approval.dangerous_patterns of profile developer)',
      dangerous: 'rm -rf',
    });
    expect(decide(developer, 'postgres', { sql: 'drop table users' }).required).toBe(true);
    // A tool that always asks still names the dangerous pattern its call matched.
    expect(decide(developer, 'mysql', { sql: 'DROP  TABLE users' })).toMatchObject({
      required: true,
      reason: 'profile developer requires approval for mysql (approval.required_tools)',
      dangerous: 'DROP TABLE',
    });
  });

  test('dangerous patterns are found in nested arguments, for any tool', () => {
    const developer = profile('developer');
    expect(decide(developer, 'delegate', { steps: [{ text: 'then TRUNCATE logs' }] }).required).toBe(true);
    expect(decide(developer, 'word_count', { path: 'DROP TABLE x' }, readOnlyTool).required).toBe(true);
  });

  test('unrestricted (none): nothing, not even dangerous patterns or undeclared tools', () => {
    const unrestricted = profile('unrestricted');
    expect(decide(unrestricted, 'bash', { command: 'rm -rf /' })).toEqual({ required: false });
    expect(decide(unrestricted, 'stamp', {})).toEqual({ required: false });
  });

  test('all: everything, read-only tools included', () => {
    const all = parseProfile({ approval: 'all' });
    expect(decide(all, 'read', {})).toEqual({
      required: true,
      reason: 'profile custom requires approval for every tool call (approval: all)',
    });
    expect(decide(all, 'word_count', {}, readOnlyTool).required).toBe(true);
  });

  test('granular with a custom list: what it names, whatever the tool', () => {
    const custom = parseProfile({
      approval: { mode: 'granular', required_tools: ['write', 'word_count'], dangerous_patterns: [] },
    });
    expect(decide(custom, 'write', {}).required).toBe(true);
    expect(decide(custom, 'bash', { command: 'rm -rf x' }).required).toBe(false);
    expect(decide(custom, 'word_count', {}, readOnlyTool)).toEqual({
      required: true,
      reason: 'profile custom requires approval for word_count (approval.required_tools)',
    });
  });
});

describe('approvalPolicy: tools rho does not know are judged by their annotations, deny by default', () => {
  test('under dangerous and granular, a third-party tool needs approval unless it declares readOnly', () => {
    for (const chosen of [profile('readonly'), profile('developer')]) {
      expect(decide(chosen, 'word_count', { path: 'README.md' }, readOnlyTool), chosen.name).toEqual({
        required: false,
      });
      expect(decide(chosen, 'stamp', {}), chosen.name).toEqual({
        required: true,
        reason: `stamp is not declared read-only (annotations.readOnly), so profile ${chosen.name} asks before it runs`,
      });
      expect(decide(chosen, 'wipe', {}, { readOnly: true, destructive: true }).reason, chosen.name).toBe(
        `wipe is declared destructive, so profile ${chosen.name} asks before it runs`,
      );
      expect(decide(chosen, 'fetch_url', {}, openWorldTool).reason, chosen.name).toBe(
        `fetch_url reaches beyond this machine (annotations.openWorld), so profile ${chosen.name} asks before it runs`,
      );
    }
  });

  test("rho's own tools are named by the profile, not judged by annotations; isBuiltinTool and describeTool refine that", () => {
    expect(BUILTIN_TOOL_NAMES).toContain('delegate');
    const developer = profile('developer');
    // bash has no readOnly annotation in unrestricted mode, yet developer runs it without asking.
    expect(decide(developer, 'bash', { command: 'make' })).toEqual({ required: false });
    const byIdentity = approvalPolicy(developer, {
      isBuiltinTool: () => false,
      describeTool: (subject) => `${subject.name} (from tool package ./fake.mjs)`,
    });
    expect(byIdentity(tool('bash'), { command: 'make' })).toEqual({
      required: true,
      reason:
        'bash (from tool package ./fake.mjs) is not declared read-only (annotations.readOnly), so profile developer asks before it runs',
    });
  });

  test("is core's ApprovalPolicy: an Agent built with it asks the way the profile says", () => {
    const agent = new Agent({
      client: createScriptedModelClient({ steps: [] }),
      approvalPolicy: approvalPolicy(profile('readonly')),
    });
    const bash = {
      name: 'bash',
      description: 'Runs commands.',
      parameters: { type: 'object' as const, properties: {} },
      handle: async () => ({ content: '', success: true }),
    };
    expect(agent.approvalFor(bash, { command: 'ls' }).required).toBe(true);
    expect(agent.approvalFor({ ...bash, name: 'read' }, { path: 'a' }).required).toBe(false);
  });
});

describe('everyCallNeedsApproval', () => {
  test('is true only where no argument could avoid approval', () => {
    const readonly = profile('readonly');
    expect(everyCallNeedsApproval(readonly, tool('delegate'))).toBe(true);
    expect(everyCallNeedsApproval(readonly, tool('bash'))).toBe(true);
    expect(everyCallNeedsApproval(readonly, tool('read'))).toBe(false);
    const developer = profile('developer');
    // Only some bash commands (dangerous patterns) need approval: bash stays usable.
    expect(everyCallNeedsApproval(developer, tool('bash'))).toBe(false);
    expect(everyCallNeedsApproval(developer, tool('mysql'))).toBe(true);
    expect(everyCallNeedsApproval(developer, tool('stamp'))).toBe(true);
    expect(everyCallNeedsApproval(developer, tool('word_count', readOnlyTool))).toBe(false);
    expect(everyCallNeedsApproval(profile('unrestricted'), tool('stamp'))).toBe(false);
    expect(everyCallNeedsApproval(parseProfile({ approval: 'all' }), tool('read'))).toBe(true);
  });
});
