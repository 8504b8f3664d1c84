import { createLocalBackend } from '@rho/core';
import { afterEach, describe, expect, it } from 'vitest';
import { McpServers } from './mcp-tools.js';
import { parseMcpServers } from './server-config.js';
import type { McpServerConfig } from './server-config.js';

// Issue 33's MCP waits: a server that never answers `initialize` or `tools/list` held a run for
// the ten-minute call timeout, in silence; a reply that is not JSON-RPC waited for the whole
// timeout too. Start-up now has its own short timeout, and such a reply fails at once. The
// servers below are real processes speaking (or failing to speak) MCP over stdio.

const open: McpServers[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((servers) => servers.close()));
});

/** A stdio server scripted in a few lines of Node: `answer(message)` returns the lines to write. */
function scripted(name: string, answer: string, options: Partial<McpServerConfig> = {}): McpServerConfig {
  const program = `
    const readline = require('node:readline');
    const lines = readline.createInterface({ input: process.stdin });
    const initialize = (id) => JSON.stringify({ jsonrpc: '2.0', id, result: {
      protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'hostile', version: '1' } } });
    const tools = (id) => JSON.stringify({ jsonrpc: '2.0', id, result: { tools: [
      { name: 'probe', description: 'probe', inputSchema: { type: 'object', properties: {} } }] } });
    lines.on('line', (line) => {
      const message = JSON.parse(line);
      const out = (${answer})(message, { initialize, tools });
      for (const text of out) process.stdout.write(text + '\\n');
    });
  `;
  return {
    name,
    transport: 'stdio',
    command: process.execPath,
    args: ['-e', program],
    env: {},
    // The call timeout is the old default: a test that waited for it would time out itself.
    timeoutMs: 600_000,
    ...options,
  } as McpServerConfig;
}

function servers(...configs: McpServerConfig[]): { mcp: McpServers; warnings: string[] } {
  const warnings: string[] = [];
  const mcp = new McpServers(configs, { onWarning: (message) => warnings.push(message) });
  open.push(mcp);
  return { mcp, warnings };
}

describe('MCP start-up and replies that are not JSON-RPC', () => {
  it('a server that never answers initialize is given up after startup_timeout, not the call timeout', async () => {
    const { mcp, warnings } = servers(scripted('mute', '() => []', { startupTimeoutMs: 500 }));
    expect(await mcp.tools()).toEqual([]);
    expect(warnings[0]).toContain('MCP server mute could not be started');
    expect(warnings[0]).toContain('no answer within 0.5 s (startup_timeout; raise it in mcp_servers.mute');
  });

  it('says "starting MCP server X..." once a start takes more than a second', async () => {
    const { mcp, warnings } = servers(scripted('slow', '() => []', { startupTimeoutMs: 1_500 }));
    expect(await mcp.tools()).toEqual([]);
    expect(warnings[0]).toBe('starting MCP server slow... (waiting up to 1.5 s: startup_timeout in mcp_servers.slow)');
    expect(warnings[1]).toContain('no answer within 1.5 s');
  });

  it('a server that answers initialize but never tools/list is given up after startup_timeout', async () => {
    const { mcp, warnings } = servers(
      scripted(
        'halfmute',
        "(message, { initialize }) => message.method === 'initialize' ? [initialize(message.id)] : []",
        { startupTimeoutMs: 500 },
      ),
    );
    expect(await mcp.tools()).toEqual([]);
    expect(warnings[0]).toContain('MCP server halfmute did not list its tools: no answer within 0.5 s');
  });

  it('a reply of JSON that is not JSON-RPC fails start-up at once, whatever the timeouts', async () => {
    const { mcp, warnings } = servers(
      scripted('shapeless', '(message) => [JSON.stringify({ hello: message.id })]', { startupTimeoutMs: 600_000 }),
    );
    expect(await mcp.tools()).toEqual([]);
    expect(warnings[0]).toContain('it answered with a reply that is not JSON-RPC (JSON of another shape)');
  });

  it('a torn JSON reply to a tool call fails the call at once; a log line on stdout is still skipped', async () => {
    const { mcp } = servers(
      scripted(
        'torn',
        `(message, { initialize, tools }) =>
          message.method === 'initialize' ? ['a log line the server printed', initialize(message.id)]
          : message.method === 'tools/list' ? [tools(message.id)]
          : message.method === 'tools/call' ? ['{"jsonrpc":"2.0","id":' + message.id + ',"result":{"content":[']
          : []`,
      ),
    );
    const [probe] = await mcp.tools();
    expect(probe?.name).toBe('torn__probe');
    const result = await probe!.handle(
      { callId: 'c1', toolName: 'torn__probe', arguments: {} },
      {
        signal: new AbortController().signal,
        sessionId: 'test',
        workingDir: process.cwd(),
        backend: createLocalBackend(),
      },
    );
    expect(JSON.stringify(result)).toContain('answered the call of probe with a reply that is not JSON-RPC');
  });

  it('startup_timeout is read from the config, checked, and defaults to 30 seconds', () => {
    const [configured] = parseMcpServers({ a: { command: 'x', startup_timeout: 5 } });
    expect(configured).toMatchObject({ startupTimeoutMs: 5_000, timeoutMs: 600_000 });
    const [defaulted] = parseMcpServers({ a: { url: 'http://127.0.0.1:1/mcp' } });
    expect(defaulted).toMatchObject({ startupTimeoutMs: 30_000 });
    expect(() => parseMcpServers({ a: { command: 'x', startup_timeout: 0 } })).toThrow(
      /startup_timeout.*must be a number of seconds between 1 and 3600/,
    );
  });
});
