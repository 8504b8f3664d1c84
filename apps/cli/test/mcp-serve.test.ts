import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startLoopbackServer, type LoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServeSetup } from './support/mcp-serve.js';
import { connectServe, ps, recordedStatus, serveClients as clients, serveSetup, until } from './support/mcp-serve.js';
import { bin } from './support/run-rho.js';

// Issue 39: `rho mcp serve` over stdio, driven by the official SDK's client against the built CLI,
// the model being the loopback server.
let model: LoopbackServer | undefined;
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
  await model?.close();
  model = undefined;
});

const setup = (config = ''): ServeSetup => serveSetup(config, model?.url);
const connect = (s: ServeSetup, name?: string): Promise<Client> => connectServe(s, name);

describe('rho mcp serve (stdio)', () => {
  it('run_task with wait returns the answer, with progress and structured content; the session carries the client label', async () => {
    model = await startLoopbackServer({ steps: [{ type: 'response', text: 'The answer is 42.' }] });
    const s = setup();
    const client = await connect(s, 'claude-test');
    const tools = await client.listTools();
    const byName = new Map(tools.tools.map((tool) => [tool.name, tool]));
    expect([...byName.keys()].sort()).toEqual(
      [
        'answer_approval',
        'cancel_session',
        'list_sessions',
        'policy_check',
        'run_task',
        'send_directive',
        'session_output',
        'session_status',
      ].sort(),
    );
    for (const tool of tools.tools) {
      expect(tool.outputSchema, tool.name).toBeDefined();
      expect(tool.annotations?.openWorldHint, tool.name).toBe(false);
    }
    for (const name of ['session_status', 'session_output', 'list_sessions', 'policy_check'])
      expect(byName.get(name)!.annotations?.readOnlyHint, name).toBe(true);
    for (const name of ['run_task', 'cancel_session', 'send_directive', 'answer_approval'])
      expect(byName.get(name)!.annotations?.readOnlyHint, name).toBe(false);
    const progress: string[] = [];
    const result = await client.callTool(
      { name: 'run_task', arguments: { prompt: 'What is it?', wait: true } },
      undefined,
      {
        onprogress: (note) => progress.push(note.message ?? ''),
        timeout: 60_000,
      },
    );
    expect(result.isError).toBeFalsy();
    const out = result.structuredContent as Record<string, unknown>;
    expect(out).toMatchObject({
      status: 'completed',
      answer: 'The answer is 42.',
      waited: true,
      profile: 'readonly',
      working_dir: s.work,
    });
    expect(progress.some((message) => message.includes('turn 1'))).toBe(true);
    expect(progress.some((message) => /tokens in/.test(message))).toBe(true);
    const listed = ps(s).find((session) => session.id === out.session_id)!;
    expect(listed.labels).toEqual({ mcp: '', 'mcp-client:claude-test': '' });
    const list = await client.callTool({ name: 'list_sessions', arguments: { label: 'mcp-client:claude-test' } });
    expect((list.structuredContent as { sessions: { id: string; started_by_mcp: boolean }[] }).sessions).toEqual([
      expect.objectContaining({ id: out.session_id, started_by_mcp: true }),
    ]);
  }, 90_000);

  it('without wait returns the session id; status is followed to completed; output has the answer and the tool calls', async () => {
    model = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'read', arguments: JSON.stringify({ path: 'notes.txt' }) }] },
        { type: 'response', text: 'The notes say hello.' },
      ],
    });
    const s = setup();
    writeFileSync(join(s.work, 'notes.txt'), 'hello\n');
    const client = await connect(s);
    const started = await client.callTool({ name: 'run_task', arguments: { prompt: 'Read notes.txt' } });
    const { session_id: id, status } = started.structuredContent as { session_id: string; status: string };
    expect(status).toBe('running');
    await until(async () => {
      const reply = await client.callTool({ name: 'session_status', arguments: { session_id: id } });
      const now = (reply.structuredContent as { status: string }).status;
      return now === 'completed' ? now : undefined;
    }, 60_000);
    const output = await client.callTool({ name: 'session_output', arguments: { session_id: id } });
    expect(output.structuredContent).toMatchObject({
      session_id: id,
      status: 'completed',
      answer: 'The notes say hello.',
      tool_calls: [{ name: 'read', calls: 1, failed: 0, refused: 0 }],
    });
  }, 90_000);

  it('cancelling a waiting run_task cancels the session', async () => {
    model = await startLoopbackServer({ steps: [{ type: 'hang' }] });
    const s = setup();
    const client = await connect(s);
    const abort = new AbortController();
    const call = client.callTool({ name: 'run_task', arguments: { prompt: 'Hang.', wait: true } }, undefined, {
      signal: abort.signal,
      timeout: 60_000,
    });
    call.catch(() => {});
    const id = await until(() => (ps(s)[0]?.status === 'running' ? String(ps(s)[0]!.id) : undefined), 30_000);
    abort.abort();
    await expect(call).rejects.toThrow();
    await until(() => (recordedStatus(s, id) === 'cancelled' ? true : undefined), 30_000);
  }, 90_000);

  it('refuses a profile or a directory outside the allowlist, and starts nothing', async () => {
    const s = setup();
    const client = await connect(s);
    const profile = await client.callTool({ name: 'run_task', arguments: { prompt: 'x', profile: 'unrestricted' } });
    expect(profile.isError).toBe(true);
    expect(JSON.stringify(profile.content)).toContain('it allows: readonly');
    const directory = await client.callTool({ name: 'run_task', arguments: { prompt: 'x', working_dir: s.root } });
    expect(directory.isError).toBe(true);
    expect(JSON.stringify(directory.content)).toContain(s.work);
    expect(ps(s)).toEqual([]);
  }, 60_000);

  it('policy_check answers as rho policy check --json does', async () => {
    const s = setup(`mcp_serve:\n  profiles: [readonly, developer]\n`);
    const client = await connect(s);
    const cases: [Record<string, string>, string[]][] = [
      [{ shell: 'rm -rf /' }, ['--shell', 'rm -rf /']],
      [{ sql: 'DELETE FROM t', dialect: 'sqlite' }, ['--sql', 'DELETE FROM t', '--dialect', 'sqlite']],
      [{ write: 'out.txt', profile: 'developer' }, ['--write', 'out.txt', '--profile', 'developer']],
    ];
    for (const [args, flags] of cases) {
      const reply = await client.callTool({ name: 'policy_check', arguments: args });
      let printed: string;
      try {
        printed = execFileSync(process.execPath, [bin, 'policy', 'check', '--json', ...flags], {
          env: s.env,
          cwd: s.work,
          encoding: 'utf8',
        });
      } catch (error) {
        printed = (error as { stdout: string }).stdout;
      }
      expect(reply.structuredContent, JSON.stringify(args)).toEqual(JSON.parse(printed));
    }
  }, 60_000);

  it('on_disconnect cancel: closing the client cancels its running session', async () => {
    model = await startLoopbackServer({ steps: [{ type: 'hang' }] });
    const s = setup('mcp_serve:\n  on_disconnect: cancel\n');
    const client = await connect(s);
    const started = await client.callTool({ name: 'run_task', arguments: { prompt: 'Hang.' } });
    const id = (started.structuredContent as { session_id: string }).session_id;
    await until(() => (ps(s).find((session) => session.id === id)?.status === 'running' ? true : undefined));
    await client.close();
    await until(() => (ps(s).find((session) => session.id === id)?.status === 'cancelled' ? true : undefined), 30_000);
  }, 90_000);
});

describe('rho mcp serve --http', () => {
  it('refuses a missing or wrong bearer token (401) and a wrong Host (403); the right token connects', async () => {
    const s = setup();
    const tokenFile = join(s.root, 'token');
    const token = 'a-test-token-of-enough-length-1234';
    writeFileSync(tokenFile, `${token}\n`);
    const { spawn } = await import('node:child_process');
    const server = spawn(process.execPath, [bin, 'mcp', 'serve', '--http', '--port', '0', '--token-file', tokenFile], {
      env: s.env,
      cwd: s.work,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let stderr = '';
      server.stderr.setEncoding('utf8');
      server.stderr.on('data', (chunk: string) => (stderr += chunk));
      const url = await until(() => /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr)?.[1], 20_000);
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      });
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      expect((await fetch(url, { method: 'POST', headers, body })).status).toBe(401);
      expect(
        (await fetch(url, { method: 'POST', headers: { ...headers, authorization: 'Bearer wrong' }, body })).status,
      ).toBe(401);
      const { request } = await import('node:http');
      const wrongHost = await new Promise<number>((resolve, reject) => {
        const req = request(
          url,
          { method: 'POST', headers: { ...headers, authorization: `Bearer ${token}`, host: 'evil.example:80' } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      expect(wrongHost).toBe(403);
      const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
      const client = new Client({ name: 'http-client', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      clients.push(client);
      const reply = await client.callTool({ name: 'list_sessions', arguments: {} });
      expect(reply.structuredContent).toEqual({ sessions: [], total: 0 });
      expect(stderr).not.toContain(token);
    } finally {
      server.kill('SIGTERM');
    }
  }, 60_000);
});
