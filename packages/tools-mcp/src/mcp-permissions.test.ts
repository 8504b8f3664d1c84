import {
  approvalPolicy,
  builtinProfile,
  everyCallNeedsApproval,
  loadProfile,
  mcpToolRuling,
  parseProfile,
  type PermissionProfile,
} from '@rho/permissions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deferredMcpTools } from './deferred-tools.js';
import { McpServers, type McpRhoTool } from './mcp-tools.js';
import { everythingStdio } from './test-support/servers.js';

function profile(name: string): PermissionProfile {
  const found = builtinProfile(name);
  if (found === undefined) throw new Error(name);
  return found;
}

describe('MCP tools of server-everything under permission profiles', () => {
  let mcp: McpServers;
  let tools: McpRhoTool[];
  const tool = (name: string) => tools.find((candidate) => candidate.name === name) as McpRhoTool;
  beforeAll(async () => {
    mcp = new McpServers([everythingStdio()]);
    tools = await mcp.tools();
  });
  afterAll(async () => {
    await mcp.close();
  });

  it('in readonly, offers no MCP tool the profile does not name as read-only, even one the server calls read-only', () => {
    const longRunning = tool('everything__trigger-long-running-operation');
    expect(longRunning.annotations?.readOnly).toBe(true);
    expect(mcpToolRuling(profile('readonly'), longRunning.mcp)).toEqual({
      decision: 'deny',
      reason:
        'profile readonly changes nothing, so it offers MCP tool trigger-long-running-operation of server everything only when it names it as read-only (mcp.read_only: everything/trigger-long-running-operation) (the server says it is read-only, which rho does not take on trust)',
    });
    // mcp.allow is not enough under a profile that promises no changes: approval (and -y) cannot widen it.
    const allowed = parseProfile({ profile: 'readonly', mcp: { allow: ['everything'], default: 'allow' } });
    expect(mcpToolRuling(allowed, tool('everything__echo').mcp).decision).toBe('deny');
    const policy = approvalPolicy(profile('readonly'));
    expect(policy(tool('everything__echo'), { message: 'x' }).required).toBe(true);
    expect(everyCallNeedsApproval(profile('readonly'), tool('everything__echo'))).toBe(true);
  });

  it('runs a tool the readonly profile names as read-only without approval, and offers none of the rest', async () => {
    const readonlyWithEcho = parseProfile({
      profile: 'readonly',
      mcp: { read_only: ['everything/echo', 'everything/get-sum'] },
    });
    const policy = approvalPolicy(readonlyWithEcho);
    expect(policy(tool('everything__echo'), { message: 'x' })).toEqual({ required: false });
    expect(policy(tool('everything__get-sum'), { a: 1, b: 2 })).toEqual({ required: false });
    expect(mcpToolRuling(readonlyWithEcho, tool('everything__get-env').mcp).decision).toBe('deny');
    expect(policy(tool('everything__trigger-long-running-operation'), {}).required).toBe(true);
    // The dangerous patterns still apply to trusted MCP tools' arguments.
    expect(policy(tool('everything__echo'), { message: 'rm -rf /' }).required).toBe(true);
    // Deny still wins; approval: all still asks.
    const denied = parseProfile({ mcp: { read_only: ['everything/echo'], deny: ['everything/echo'] } });
    expect(mcpToolRuling(denied, tool('everything__echo').mcp).decision).toBe('deny');
    const all = parseProfile({ approval: 'all', mcp: { read_only: ['everything/echo'] } });
    expect(mcpToolRuling(all, tool('everything__echo').mcp).decision).toBe('ask');
  });

  it('lets deny win over allow, and a named tool win over a server-wide rule', () => {
    const rules = parseProfile({
      profile: 'developer',
      shell: 'unrestricted',
      file_write: 'full',
      approval: 'granular',
      mcp: { allow: ['everything'], ask: ['everything/get-env'], deny: ['*/trigger-*'] },
    });
    expect(mcpToolRuling(rules, { server: 'everything', tool: 'echo' }).decision).toBe('allow');
    expect(mcpToolRuling(rules, { server: 'everything', tool: 'get-env' }).decision).toBe('ask');
    expect(mcpToolRuling(rules, { server: 'everything', tool: 'trigger-long-running-operation' })).toEqual({
      decision: 'deny',
      pattern: '*/trigger-*',
      reason:
        'profile developer denies MCP tool trigger-long-running-operation of server everything (mcp.deny: */trigger-*)',
    });
    const policy = approvalPolicy(rules);
    expect(policy(tool('everything__echo'), { message: 'x' })).toEqual({ required: false });
    expect(policy(tool('everything__trigger-long-running-operation'), {}).required).toBe(true);
  });

  it('under unrestricted (approval: none) runs MCP tools unless the profile says otherwise; approval: all asks even for allowed ones', () => {
    expect(approvalPolicy(profile('unrestricted'))(tool('everything__echo'), {})).toEqual({ required: false });
    const all = parseProfile({ approval: 'all', shell: 'unrestricted', mcp: { allow: ['everything'] } });
    expect(approvalPolicy(all)(tool('everything__echo'), {}).required).toBe(true);
    const closed = parseProfile({
      approval: 'none',
      file_write: 'full',
      mcp: { default: 'deny', allow: ['everything/echo'] },
    });
    expect(mcpToolRuling(closed, { server: 'everything', tool: 'get-sum' }).decision).toBe('deny');
    expect(mcpToolRuling(closed, { server: 'everything', tool: 'echo' }).decision).toBe('allow');
  });

  it('decides call_mcp_tool of deferred loading as the tool it names, with approvalPolicy on its own', () => {
    const [, call] = deferredMcpTools(tools);
    const policy = approvalPolicy(parseProfile({ profile: 'readonly', mcp: { read_only: ['everything/echo'] } }));
    expect(policy(call!, { tool: 'everything__echo', arguments: { message: 'x' } })).toEqual({ required: false });
    expect(policy(call!, { tool: 'everything__get-sum', arguments: {} }).reason).toMatch(
      /offers MCP tool get-sum of server everything only when it names it as read-only/,
    );
    // A name that is no tool is asked about (and then fails), never let through.
    expect(policy(call!, { tool: 'nothing__here' }).required).toBe(true);
    expect(everyCallNeedsApproval(profile('readonly'), call!)).toBe(false);
  });

  it('validates the mcp section like the rest of the profile', async () => {
    expect(() => parseProfile({ mcp: { allow: ['a/b/c'] } })).toThrow(
      'Profile: \'mcp.allow[0]\' has more than one "/": write server or server/tool (got "a/b/c").',
    );
    expect(() => parseProfile({ mcp: { default: 'maybe' } })).toThrow(/'mcp\.default' must be one of allow, ask, deny/);
    expect(() => parseProfile({ mcp: { permit: [] } })).toThrow(
      /'mcp\.permit' is an unknown key; allowed keys: default, allow, ask, deny, read_only/,
    );
    expect(() => parseProfile({ mcp: { read_only: ['everything'] } })).toThrow(
      'Profile: \'mcp.read_only[0]\' must name one tool as server/tool (a whole server cannot be trusted as read-only) (got "everything").',
    );
    expect(() => parseProfile({ mcp: { read_only: ['everything/get-*'] } })).toThrow(
      /'mcp\.read_only\[0\]' must name one tool exactly: no \* or \? .*\(got "everything\/get-\*"\)/,
    );
    expect((await loadProfile('readonly')).mcp).toBeUndefined();
  });
});
