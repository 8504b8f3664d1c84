import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, defineTool } from '@rho/core';
import { createScriptedModelClient, startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

// Known secrets never reach the model, the trace or an export: a tool that prints rho's API key,
// a database password of $RHO_HOME/databases.yaml or an MCP server's env value is redacted before
// the next model request is made and before the trace is written.

const here = dirname(fileURLToPath(import.meta.url));
const everythingServer = join(
  here,
  '..',
  'node_modules',
  '@modelcontextprotocol',
  'server-everything',
  'dist',
  'index.js',
);

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function project(): { home: string; work: string } {
  return {
    home: mkdtempSync(join(tmpdir(), 'rho-redact-home-')),
    work: realpathSync(mkdtempSync(join(tmpdir(), 'rho-redact-work-'))),
  };
}

/** A model that calls `tool` with `args`, then answers `done`. */
function callThenDone(tool: string, args: Record<string, unknown>) {
  return [
    { type: 'response' as const, toolCalls: [{ name: tool, arguments: JSON.stringify(args) }] },
    { type: 'response' as const, text: 'done' },
  ];
}

/**
 * Every file of the session's directory (trace, meta.json, config.yaml, control files) read
 * whole, but secrets.json: the owner-only file that keeps what config.yaml must not.
 */
function sessionFiles(home: string): { id: string; text: string; names: string[] } {
  const [id] = readdirSync(join(home, 'sessions'));
  const directory = join(home, 'sessions', id!);
  const names = readdirSync(directory).filter((name) => statSync(join(directory, name)).isFile());
  const text = names
    .filter((name) => name !== 'secrets.json')
    .map((name) => readFileSync(join(directory, name), 'utf8'))
    .join('\n');
  return { id: id!, names, text };
}

/** The tool result the model was sent in its second request. */
function toolResult(loopback: LoopbackServer): string {
  const messages = loopback.requests[1]?.body.messages as { role: string; content: string }[];
  return messages.findLast((message) => message.role === 'tool')?.content ?? '';
}

async function checkNowhere(secret: string, home: string, loopback: LoopbackServer): Promise<string> {
  const result = toolResult(loopback);
  expect(JSON.stringify(loopback.requests.map((request) => request.body))).not.toContain(secret);
  const { id, text, names } = sessionFiles(home);
  expect(names).toContain('trace.jsonl');
  expect(text).not.toContain(secret);
  const exported = await runRho(['export', id], { env: { RHO_HOME: home } });
  expect(exported.code).toBe(0);
  expect(exported.stdout).not.toContain(secret);
  return result;
}

describe('known secrets never reach the model (through the real CLI)', () => {
  it('redacts the model API key a bash command prints, split across two writes, from the next request, the trace and the export', async () => {
    const { home, work } = project();
    const key = 'sk-proj-Zq81nV0cR4t7Kp2Lm9Xw';
    writeFileSync(join(work, 'notes.txt'), `the key: ${key}\n`);
    server = await startLoopbackServer({
      steps: callThenDone('bash', {
        command: `printf '%s' "\${OPENAI_API_KEY:0:12}"; sleep 0.3; printf '%s\\n' "\${OPENAI_API_KEY:12}"; cat notes.txt`,
      }),
    });
    const run = await runRho(['--base-url', server.url, '--profile', 'unrestricted', '-y', 'print the key'], {
      env: { RHO_HOME: home, OPENAI_API_KEY: key },
      cwd: work,
    });
    expect(run.stderr).not.toContain(key);
    expect(run.code).toBe(0);
    const result = await checkNowhere(key, home, server);
    expect(result).toContain('[REDACTED:OPENAI_API_KEY]');
    expect(result).toContain('the key: [REDACTED:OPENAI_API_KEY]');
    // No piece of the key is left where the two writes met.
    expect(result).not.toContain(key.slice(0, 12));
  }, 60_000);

  it('redacts the key rho loaded from .env when a readonly tool reads that file', async () => {
    const { home, work } = project();
    const key = 'sk-dotenv-Hq3Lm8Zt2Vx61';
    writeFileSync(join(work, '.env'), `OPENAI_API_KEY=${key}\n`);
    server = await startLoopbackServer({ steps: callThenDone('read', { path: '.env' }) });
    const run = await runRho(['--base-url', server.url, 'read .env'], { env: { RHO_HOME: home }, cwd: work });
    expect(run.code).toBe(0);
    // The key did reach the model server as the client's credential (rho loaded it from .env)...
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${key}`);
    // ...but never as content.
    await checkNowhere(key, home, server);
  }, 60_000);

  it('redacts a database password of $RHO_HOME/databases.yaml that a tool prints', async () => {
    const { home, work } = project();
    const password = 'pg-Secret-4411-kestrel';
    writeFileSync(
      join(home, 'databases.yaml'),
      `databases:\n  shop:\n    type: postgres\n    host: 127.0.0.1\n    user: postgres\n    password: ${password}\n    database: postgres\n`,
    );
    server = await startLoopbackServer({
      steps: callThenDone('bash', { command: `cat ${JSON.stringify(join(home, 'databases.yaml'))}` }),
    });
    // Run on this machine, where $RHO_HOME can be read (a sandbox may hide it).
    const run = await runRho(
      ['--base-url', server.url, '--profile', 'unrestricted', '--backend', 'local', '-y', 'show the config'],
      {
        env: { RHO_HOME: home, OPENAI_API_KEY: 'sk-test-0000' },
        cwd: work,
      },
    );
    expect(run.code).toBe(0);
    const result = await checkNowhere(password, home, server);
    expect(result).toContain('password: [REDACTED:databases.shop.password]');
  }, 60_000);

  it("redacts an MCP server's env value that its tool prints, and keeps it out of the saved config.yaml", async () => {
    const { home, work } = project();
    const token = 'mcp-tok-7Hq2Wz91Lx';
    const config = join(work, 'agent.yaml');
    writeFileSync(
      config,
      [
        'mcp_servers:',
        '  everything:',
        `    command: ${JSON.stringify(process.execPath)}`,
        `    args: [${JSON.stringify(everythingServer)}, stdio]`,
        '    env:',
        `      SERVICE_TOKEN: ${token}`,
        '',
      ].join('\n'),
    );
    server = await startLoopbackServer({ steps: callThenDone('everything__get-env', {}) });
    const run = await runRho(
      ['--base-url', server.url, '--config', config, '--profile', 'unrestricted', '-y', 'show the env'],
      { env: { RHO_HOME: home, OPENAI_API_KEY: 'sk-test-0000' }, cwd: work },
    );
    expect(run.code).toBe(0);
    const result = await checkNowhere(token, home, server);
    expect(result).toContain('[REDACTED:mcp_servers.everything.env.SERVICE_TOKEN]');
    const { id, names } = sessionFiles(home);
    // What config.yaml lost waits, readable by its owner only, for a resume.
    expect(names).toContain('secrets.json');
    expect(statSync(join(home, 'sessions', id, 'secrets.json')).mode & 0o077).toBe(0);

    // A resume starts the server from the saved config with its token put back, and redacts again.
    await server.close();
    server = await startLoopbackServer({ steps: callThenDone('everything__get-env', {}) });
    const resumed = await runRho(['--base-url', server.url, '--resume', id, '-y', 'again'], {
      env: { RHO_HOME: home, OPENAI_API_KEY: 'sk-test-0000' },
      cwd: work,
    });
    expect(resumed.stderr).not.toContain(token);
    expect(resumed.code).toBe(0);
    expect(await checkNowhere(token, home, server)).toContain('[REDACTED:mcp_servers.everything.env.SERVICE_TOKEN]');
  }, 60_000);

  it('rho export redacts a trace written before rho redacted its records', async () => {
    const { home, work } = project();
    const key = 'sk-old-trace-5Tz8Qa2Wm';
    const directory = join(home, 'sessions', 'old12345');
    mkdirSync(directory, { recursive: true });
    const client = createScriptedModelClient({
      steps: [{ toolCalls: [{ id: 'c1', name: 'env', arguments: {} }] }, { text: `The key is ${key}.` }],
    });
    const env = defineTool({
      name: 'env',
      description: 'Prints the environment.',
      parameters: { type: 'object', properties: {} },
      async handle() {
        return { content: `OPENAI_API_KEY=${key}`, success: true };
      },
    });
    await new Agent({ tools: [env], client }).createSession({ id: 'old12345', directory }).run(`Use ${key}`);
    expect(readFileSync(join(directory, 'trace.jsonl'), 'utf8')).toContain(key);
    const exported = await runRho(['export', 'old12345'], { env: { RHO_HOME: home, OPENAI_API_KEY: key }, cwd: work });
    expect(exported.code).toBe(0);
    expect(exported.stdout).not.toContain(key);
    expect(exported.stdout).toContain('[REDACTED:OPENAI_API_KEY]');
  });
});
