import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ApprovalRequest, SessionEvent } from '@rho/core';
import { createScriptedModelClient } from '@rho/core/testing';
import { parseProfile } from '@rho/permissions';
import { describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import { createToolset } from './create-toolset.js';

// The real server-everything (a devDependency), over stdio.
const everything = {
  command: process.execPath,
  args: [
    fileURLToPath(new URL('../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url)),
    'stdio',
  ],
};
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
const workingDir = () => mkdtempSync(join(tmpdir(), 'rho-agent-mcp-'));

// Under a profile that promises no changes (readonly) only tools named in mcp.read_only are
// offered (see @rho/tools-mcp's mcp-permissions tests): these tests use one that may write files,
// where MCP tools are allowed, asked about or denied by the mcp: patterns.
describe('createToolset with mcp_servers', () => {
  it('offers MCP tools under a profile that may change things, each call needing approval; denied tools are not offered', async () => {
    const profile = parseProfile({
      profile: 'careful',
      file_write: 'create-only',
      mcp: { allow: ['everything/echo'], deny: ['everything/trigger-*', 'everything/get-env'] },
    });
    const toolset = await createToolset({ profile, workingDir: workingDir(), mcpServers: { everything } });
    try {
      const names = toolset.tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['read', 'everything__echo', 'everything__get-sum']));
      expect(names.filter((name) => name.startsWith('everything__trigger-') || name === 'everything__get-env')).toEqual(
        [],
      );
      expect(toolset.withheld).toEqual(
        expect.arrayContaining([
          {
            name: 'everything__get-env',
            reason: 'profile careful denies MCP tool get-env of server everything (mcp.deny: everything/get-env)',
          },
        ]),
      );
      const tool = (name: string) => toolset.tools.find((candidate) => candidate.name === name)!;
      expect(toolset.approvalPolicy(tool('everything__echo'), { message: 'hi' })).toEqual({ required: false });
      expect(toolset.approvalPolicy(tool('everything__get-sum'), { a: 1, b: 2 })).toMatchObject({
        required: true,
        reason: expect.stringContaining('does not allow MCP tool get-sum of server everything by name'),
      });
      expect(toolset.mcp?.connection('everything')?.starts).toBe(1);
    } finally {
      await toolset.close();
    }
  });

  it('does not offer MCP tools that need approval where nobody can approve', async () => {
    const profile = parseProfile({
      profile: 'careful',
      file_write: 'create-only',
      mcp: { allow: ['everything/echo'] },
    });
    const toolset = await createToolset({
      profile,
      workingDir: workingDir(),
      mcpServers: { everything },
      approvals: 'none',
    });
    try {
      const mcpNames = toolset.tools.map((tool) => tool.name).filter((name) => name.startsWith('everything__'));
      expect(mcpNames).toEqual(['everything__echo']);
    } finally {
      await toolset.close();
    }
  });

  it('runs an MCP tool in a session: the approver is asked, the trace names server and tool, close stops the server', async () => {
    const toolset = await createToolset({
      profile: parseProfile({ profile: 'careful', file_write: 'create-only' }),
      workingDir: workingDir(),
      mcpServers: { everything },
    });
    const client = createScriptedModelClient({
      steps: [
        { toolCalls: [{ id: 'e', name: 'everything__echo', arguments: { message: 'from the model' } }] },
        { text: 'done' },
      ],
    });
    const agent = new Agent({ toolset, client });
    const asked: ApprovalRequest[] = [];
    const events: SessionEvent[] = [];
    const session = agent.createSession({
      approver: (request) => (asked.push(request), true),
      onEvent: (event) => events.push(event),
    });
    const pid = toolset.mcp?.connection('everything')?.pid as number;
    try {
      expect((await session.run('echo something')).status).toBe('completed');
    } finally {
      await agent.close();
    }
    expect(asked.map((request) => request.toolName)).toEqual(['everything__echo']);
    expect(asked[0]?.reason).toMatch(/profile careful does not allow MCP tool echo of server everything by name/);
    const toolEnd = events.find((event) => event.type === 'tool_end') as
      Extract<SessionEvent, { type: 'tool_end' }> | undefined;
    expect(toolEnd).toMatchObject({
      tool_name: 'everything__echo',
      success: true,
      metadata: { mcp: { server: 'everything', tool: 'echo' } },
    });
    expect(
      session.state.messages.filter((message) => message.role === 'tool').map((message) => String(message.content)),
    ).toEqual(['Echo: from the model']);
    // The server process ends with the agent (waited for as an event, not a sleep).
    while (alive(pid)) await new Promise((resolve) => setImmediate(resolve));
  });

  it('defers a server: only search_tools and call_mcp_tool are listed, each call decided as the tool it names', async () => {
    const profile = parseProfile({
      profile: 'careful',
      file_write: 'create-only',
      mcp: { allow: ['everything/echo'], deny: ['everything/get-env'] },
    });
    const toolset = await createToolset({
      profile,
      workingDir: workingDir(),
      mcpServers: { everything: { ...everything, defer: true } },
    });
    const client = createScriptedModelClient({
      steps: [
        { toolCalls: [{ id: 's', name: 'search_tools', arguments: { query: 'echo' } }] },
        {
          toolCalls: [
            {
              id: 'e',
              name: 'call_mcp_tool',
              arguments: { tool: 'everything__echo', arguments: { message: 'deferred' } },
            },
          ],
        },
        {
          toolCalls: [
            { id: 'g', name: 'call_mcp_tool', arguments: { tool: 'everything__get-sum', arguments: { a: 1, b: 2 } } },
          ],
        },
        { toolCalls: [{ id: 'v', name: 'search_tools', arguments: { query: 'env' } }] },
        { text: 'done' },
      ],
    });
    const agent = new Agent({ toolset, client });
    const asked: ApprovalRequest[] = [];
    const session = agent.createSession({ approver: (request) => (asked.push(request), true) });
    try {
      const names = toolset.tools.map((tool) => tool.name);
      expect(names).toContain('search_tools');
      expect(names).toContain('call_mcp_tool');
      expect(names.filter((name) => name.startsWith('everything__'))).toEqual([]);
      const [context] = toolset.mcpContext;
      expect(context).toMatchObject({ server: 'everything', deferred: true, listedTokens: 0 });
      expect(context?.fullTokens).toBeGreaterThan(500);
      // Every tool of the server but the denied get-env, plus everything__read_resource (its resources).
      const serverTools = await toolset.mcp!.connection('everything')!.listTools();
      expect(context?.tools).toBe(serverTools.length - 1 + 1);
      expect((await session.run('use the tools')).status).toBe('completed');
    } finally {
      await agent.close();
    }
    const results = session.state.messages
      .filter((message) => message.role === 'tool')
      .map((message) => String(message.content));
    expect(results[0]).toContain('## everything__echo');
    expect(results[0]).toContain('"message"');
    // echo is allowed by name: no question. get-sum is not: the approver is asked, about get-sum.
    expect(results[1]).toBe('Echo: deferred');
    expect(results[2]).toContain('3');
    expect(asked.map((request) => [request.toolName, request.reason])).toEqual([
      [
        'call_mcp_tool',
        'profile careful does not allow MCP tool get-sum of server everything by name (mcp.allow), so it asks before it runs (the server says it is read-only, which rho does not take on trust)',
      ],
    ]);
    expect(results).toHaveLength(4);
    // The denied tool cannot be found.
    expect(results[3]).not.toContain('everything__get-env');
  });

  it('lists each server with its context cost when not deferred', async () => {
    const toolset = await createToolset({
      profile: 'unrestricted',
      workingDir: workingDir(),
      mcpServers: { everything },
    });
    try {
      const [context] = toolset.mcpContext;
      expect(context).toMatchObject({ server: 'everything', deferred: false });
      expect(context?.listedTokens).toBe(context?.fullTokens);
      expect(context?.tools).toBe(toolset.tools.filter((tool) => tool.name.startsWith('everything__')).length);
    } finally {
      await toolset.close();
    }
  });

  it('rejects a bad mcp_servers entry with a ConfigError', async () => {
    await expect(createToolset({ workingDir: workingDir(), mcpServers: { broken: { args: ['x'] } } })).rejects.toThrow(
      /^MCP servers: 'mcp_servers\.broken' needs command/,
    );
  });
});
