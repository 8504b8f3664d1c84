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

  it('in readonly, every MCP tool needs approval, even one the server calls read-only', () => {
    const policy = approvalPolicy(profile('readonly'));
    const longRunning = tool('everything__trigger-long-running-operation');
    expect(longRunning.annotations?.readOnly).toBe(true);
    const requirement = policy(longRunning, { duration: 1 });
    expect(requirement.required).toBe(true);
    expect(requirement.reason).toBe(
      'profile readonly does not allow MCP tool trigger-long-running-operation of server everything by name (mcp.allow), so it asks before it runs (the server says it is read-only, which rho does not take on trust)',
    );
    expect(policy(tool('everything__echo'), { message: 'x' }).required).toBe(true);
    expect(everyCallNeedsApproval(profile('readonly'), tool('everything__echo'))).toBe(true);
  });

  it('runs a tool the profile allows by name without approval, and asks for the rest', async () => {
    const readonlyWithEcho = parseProfile({
      profile: 'readonly',
      mcp: { allow: ['everything/echo', 'everything/get-*'] },
    });
    const policy = approvalPolicy(readonlyWithEcho);
    expect(policy(tool('everything__echo'), { message: 'x' })).toEqual({ required: false });
    expect(policy(tool('everything__get-sum'), { a: 1, b: 2 })).toEqual({ required: false });
    expect(policy(tool('everything__trigger-long-running-operation'), {}).required).toBe(true);
    // The dangerous patterns still apply to allowed MCP tools' arguments.
    expect(policy(tool('everything__echo'), { message: 'rm -rf /' }).required).toBe(true);
  });

  it('lets deny win over allow, and a named tool win over a server-wide rule', () => {
    const rules = parseProfile({
      profile: 'developer',
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
    const all = parseProfile({ approval: 'all', mcp: { allow: ['everything'] } });
    expect(approvalPolicy(all)(tool('everything__echo'), {}).required).toBe(true);
    const closed = parseProfile({ approval: 'none', mcp: { default: 'deny', allow: ['everything/echo'] } });
    expect(mcpToolRuling(closed, { server: 'everything', tool: 'get-sum' }).decision).toBe('deny');
    expect(mcpToolRuling(closed, { server: 'everything', tool: 'echo' }).decision).toBe('allow');
  });

  it('decides call_mcp_tool of deferred loading as the tool it names, with approvalPolicy on its own', () => {
    const [, call] = deferredMcpTools(tools);
    const policy = approvalPolicy(parseProfile({ profile: 'readonly', mcp: { allow: ['everything/echo'] } }));
    expect(policy(call!, { tool: 'everything__echo', arguments: { message: 'x' } })).toEqual({ required: false });
    expect(policy(call!, { tool: 'everything__get-sum', arguments: {} }).reason).toMatch(
      /does not allow MCP tool get-sum of server everything by name/,
    );
    // A name that is no tool is asked about (and then fails), never let through.
    expect(policy(call!, { tool: 'nothing__here' }).required).toBe(true);
    expect(everyCallNeedsApproval(profile('readonly'), call!)).toBe(false);
  });

  it('validates the mcp section like the rest of the profile', async () => {
    expect(() => parseProfile({ mcp: { allow: ['a/b/c'] } })).toThrow(
      'Profile: mcp.allow pattern "a/b/c" has more than one "/": write server or server/tool.',
    );
    expect(() => parseProfile({ mcp: { default: 'maybe' } })).toThrow(/mcp\.default must be one of allow, ask, deny/);
    expect(() => parseProfile({ mcp: { permit: [] } })).toThrow(
      /unknown key mcp\.permit; allowed keys: default, allow, ask, deny/,
    );
    expect((await loadProfile('readonly')).mcp).toBeUndefined();
  });
});
