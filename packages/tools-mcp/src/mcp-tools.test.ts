import { getEventListeners } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalBackend, type AnyTool, type ToolContext } from '@rho/core';
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import { McpServers } from './mcp-tools.js';
import { CANCEL_PROBE, everythingStdio, filesystemStdio, startEverythingHttp } from './test-support/servers.js';

const open: McpServers[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((servers) => servers.close()));
});

function servers(...configs: ConstructorParameters<typeof McpServers>[0]): McpServers {
  const made = new McpServers(configs, { restartBaseDelayMs: 10 });
  open.push(made);
  return made;
}

function context(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal, sessionId: 'test', workingDir: process.cwd(), backend: createLocalBackend() };
}

function named(tools: readonly AnyTool[], name: string): AnyTool {
  const tool = tools.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no tool ${name} among ${tools.map((t) => t.name).join(', ')}`);
  return tool;
}

async function call(tool: AnyTool, args: Record<string, unknown>, signal?: AbortSignal) {
  return tool.handle({ callId: 'c1', toolName: tool.name, arguments: args }, context(signal));
}

/** Resolves once `check` holds, polling the condition on the event loop (no fixed sleeps). */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setImmediate(resolve));
}

describe('server-everything over stdio', () => {
  it('lists its tools as server__tool with schemas and annotations, and starts only when asked', async () => {
    const mcp = servers(everythingStdio());
    expect(mcp.connection('everything')?.starts).toBe(0);
    const tools = await mcp.tools();
    expect(mcp.connection('everything')?.starts).toBe(1);
    const echo = named(tools, 'everything__echo');
    expect(echo.parameters).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });
    expect(echo.description).toContain('MCP server everything, tool echo');
    expect((echo as { mcp?: unknown }).mcp).toEqual(expect.objectContaining({ server: 'everything', tool: 'echo' }));
    // Hyphenated MCP names are valid rho names and pass unchanged.
    expect(tools.map((tool) => tool.name)).toContain('everything__get-sum');
    const longRunning = named(tools, 'everything__trigger-long-running-operation');
    expect(longRunning.annotations).toEqual({ readOnly: true, destructive: false, openWorld: false });
  });

  it('calls tools and maps text, images and structured content', async () => {
    const tools = await servers(everythingStdio()).tools();
    expect(await call(named(tools, 'everything__echo'), { message: 'hello rho' })).toMatchObject({
      success: true,
      content: 'Echo: hello rho',
    });
    expect((await call(named(tools, 'everything__get-sum'), { a: 2, b: 40 })).content).toContain('42');
    const image = await call(named(tools, 'everything__get-tiny-image'), {});
    expect(image.success).toBe(true);
    expect(image.content).toMatch(
      /\[image \(image\/png, \d+ bytes\) returned by the tool; images are not shown to the model\]/,
    );
    expect(image.metadata).toMatchObject({ images: 1 });
    const structured = await call(named(tools, 'everything__get-structured-content'), { location: 'New York' });
    expect(structured.success).toBe(true);
    expect(structured.metadata?.structuredContent).toMatchObject({
      temperature: expect.any(Number),
      conditions: expect.any(String),
    });
    expect(structured.content).toContain('"temperature"');
  });

  it("offers the server's resources as one read tool", async () => {
    const tools = await servers(everythingStdio()).tools();
    const read = named(tools, 'everything__read_resource');
    expect(read.annotations).toEqual({ readOnly: true, destructive: false, openWorld: false });
    expect(read.description).toContain('demo://resource/static/document/features.md');
    const result = await call(read, { uri: 'demo://resource/static/document/features.md' });
    expect(result.success).toBe(true);
    expect(result.content.length).toBeGreaterThan(100);
    const missing = await call(read, { uri: 'demo://no/such/resource' });
    expect(missing.success).toBe(false);
    expect(missing.content).toMatch(/^Reading demo:\/\/no\/such\/resource from MCP server everything failed: /);
  });

  it('leaves no listener on a run signal shared by many calls', async () => {
    const echo = named(await servers(everythingStdio()).tools(), 'everything__echo');
    const run = new AbortController();
    for (let index = 0; index < 15; index += 1)
      expect((await call(echo, { message: `m${index}` }, run.signal)).success).toBe(true);
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
  });

  it('turns a call the server rejects into an unsuccessful result the model can read', async () => {
    const tools = await servers(everythingStdio()).tools();
    const result = await call(named(tools, 'everything__get-sum'), { a: 'not a number', b: 1 });
    expect(result.success).toBe(false);
    expect(result.content.length).toBeGreaterThan(0);
  });

  it('fails the call in flight when the server is killed, and restarts it for the next call', async () => {
    const mcp = servers(everythingStdio());
    const tools = await mcp.tools();
    const connection = mcp.connection('everything');
    const pid = connection?.pid;
    expect(pid).toBeGreaterThan(0);
    const pending = call(named(tools, 'everything__trigger-long-running-operation'), { duration: 60, steps: 60 });
    process.kill(pid as number, 'SIGKILL');
    const crashed = await pending;
    expect(crashed.success).toBe(false);
    expect(crashed.content).toMatch(
      /MCP server everything stopped during the call of trigger-long-running-operation.*restarted on the next call/,
    );
    const again = await call(named(tools, 'everything__echo'), { message: 'back' });
    expect(again).toMatchObject({ success: true, content: 'Echo: back' });
    expect(connection?.starts).toBe(2);
    expect(connection?.pid).not.toBe(pid);
  });

  it('stops the server process on close', async () => {
    const mcp = new McpServers([everythingStdio()]);
    await mcp.tools();
    const pid = mcp.connection('everything')?.pid as number;
    await mcp.close();
    await until(() => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    });
    const tools = await mcp.tools().catch(() => []);
    expect(tools).toEqual([]);
  });
});

describe('cancellation', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rho-mcp-cancel-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reaches the server as notifications/cancelled when the tool signal aborts', async () => {
    const probe = join(dir, 'probe.txt');
    const mcp = servers({
      name: 'probe',
      transport: 'stdio',
      command: process.execPath,
      args: [CANCEL_PROBE],
      env: { PROBE_FILE: probe },
      timeoutMs: 60_000,
    });
    const wait = named(await mcp.tools(), 'probe__wait');
    const controller = new AbortController();
    const pending = call(wait, {}, controller.signal);
    await until(async () => (await readFile(probe, 'utf8').catch(() => '')) === 'started');
    controller.abort();
    const result = await pending;
    expect(result).toMatchObject({ success: false, metadata: { cancelled: true } });
    await until(async () => (await readFile(probe, 'utf8')) === 'cancelled');
  });

  it('ends a long call of server-everything at once', async () => {
    const tools = await servers(everythingStdio()).tools();
    const controller = new AbortController();
    const pending = call(
      named(tools, 'everything__trigger-long-running-operation'),
      { duration: 600, steps: 2 },
      controller.signal,
    );
    controller.abort();
    expect(await pending).toMatchObject({ success: false, metadata: { cancelled: true } });
  });
});

describe('server-filesystem over stdio', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'rho-mcp-fs-'));
    await writeFile(join(root, 'notes.txt'), 'alpha\nbeta\n');
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('reads a file in its root and reports an error outside it', async () => {
    const tools = await servers(filesystemStdio(root)).tools();
    const read = named(tools, 'fs__read_text_file');
    expect(read.annotations?.readOnly).toBe(true);
    expect(named(tools, 'fs__write_file').annotations?.readOnly).toBe(false);
    // server-filesystem has no resources capability: no read_resource tool.
    expect(tools.map((tool) => tool.name)).not.toContain('fs__read_resource');
    const ok = await call(read, { path: join(root, 'notes.txt') });
    expect(ok).toMatchObject({ success: true });
    expect(ok.content).toContain('alpha\nbeta');
    const outside = await call(read, { path: '/etc/hostname' });
    expect(outside.success).toBe(false);
    expect(outside.content).toMatch(/denied|outside|not allowed/i);
  });
});

describe('server-everything over streamable HTTP', () => {
  let http: Awaited<ReturnType<typeof startEverythingHttp>>;
  beforeAll(async () => {
    http = await startEverythingHttp();
  });
  afterAll(async () => {
    await http.stop();
  });

  it('lists and calls tools, with configured headers sent', async () => {
    const mcp = servers({
      name: 'web',
      transport: 'http',
      url: http.url,
      headers: { 'X-Rho-Test': 'yes' },
      timeoutMs: 60_000,
    });
    const tools = await mcp.tools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['web__echo', 'web__get-sum']));
    expect(await call(named(tools, 'web__echo'), { message: 'over http' })).toMatchObject({
      success: true,
      content: 'Echo: over http',
    });
  });

  it('cancels a long call', async () => {
    const tools = await servers({
      name: 'web',
      transport: 'http',
      url: http.url,
      headers: {},
      timeoutMs: 60_000,
    }).tools();
    const controller = new AbortController();
    const pending = call(
      named(tools, 'web__trigger-long-running-operation'),
      { duration: 600, steps: 2 },
      controller.signal,
    );
    controller.abort();
    expect(await pending).toMatchObject({ success: false, metadata: { cancelled: true } });
  });

  it('fails the call in flight when the HTTP server dies, and connects again once it is back', async () => {
    const own = await startEverythingHttp();
    const mcp = new McpServers([{ name: 'web', transport: 'http', url: own.url, headers: {}, timeoutMs: 60_000 }], {
      restartBaseDelayMs: 10,
    });
    open.push(mcp);
    const tools = await mcp.tools();
    const pending = call(named(tools, 'web__trigger-long-running-operation'), { duration: 60, steps: 60 });
    await own.stop();
    const failed = await pending;
    expect(failed.success).toBe(false);
    expect(failed.content).toMatch(/MCP tool trigger-long-running-operation of server web failed: MCP server web/);
    const back = await startEverythingHttp(own.port);
    try {
      expect(await call(named(tools, 'web__echo'), { message: 'again' })).toMatchObject({
        success: true,
        content: 'Echo: again',
      });
      expect(mcp.connection('web')?.starts).toBe(2);
    } finally {
      await mcp.close();
      await back.stop();
    }
  });

  it('warns and offers nothing for a server that is not there', async () => {
    const warnings: string[] = [];
    const mcp = new McpServers(
      [{ name: 'gone', transport: 'http', url: 'http://127.0.0.1:9/mcp', headers: {}, timeoutMs: 5_000 }],
      { onWarning: (message) => warnings.push(message) },
    );
    open.push(mcp);
    expect(await mcp.tools()).toEqual([]);
    expect(warnings[0]).toMatch(
      /the tools of MCP server gone are not offered: MCP server gone could not be started \(http:\/\/127\.0\.0\.1:9\/mcp\)/,
    );
  });
});
