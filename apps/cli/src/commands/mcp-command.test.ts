import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readdirSync, readFileSync } from 'node:fs';
import { startLoopbackServer } from '@rho/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRho } from '../../test/support/run-rho.js';
import { main } from '../main.js';
import type { Terminal } from '../terminal.js';

const script = (pkg: string) =>
  fileURLToPath(new URL(`../../node_modules/@modelcontextprotocol/${pkg}/dist/index.js`, import.meta.url));

function fakeTerminal(): { terminal: Terminal; stdout: () => string; stderr: () => string } {
  const written = { stdout: '', stderr: '' };
  const stream = (name: 'stdout' | 'stderr') =>
    ({
      isTTY: false,
      write(chunk: string | Uint8Array) {
        written[name] += chunk.toString();
        return true;
      },
    }) as unknown as Terminal['stdout'];
  return {
    terminal: { stdout: stream('stdout'), stderr: stream('stderr'), color: false },
    stdout: () => written.stdout,
    stderr: () => written.stderr,
  };
}

async function rho(args: string[], env: NodeJS.ProcessEnv = {}) {
  const { terminal, stdout, stderr } = fakeTerminal();
  const code = await main(args, terminal, { ...process.env, RHO_HOME: home, ...env });
  return { code, stdout: stdout(), stderr: stderr() };
}

let dir: string;
let home: string;
let config: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rho-cli-mcp-'));
  home = join(dir, 'home');
  writeFileSync(join(dir, 'notes.txt'), 'hello from a file\n');
  config = join(dir, 'agent.yaml');
  writeFileSync(
    config,
    [
      'model: test-model',
      'mcp_servers:',
      '  everything:',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(script('server-everything'))}, stdio]`,
      '  files:',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(script('server-filesystem'))}, "\${NOTES_DIR}"]`,
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'careful.yaml'),
    [
      'profile: careful',
      // It may create files, so the mcp: patterns decide (a profile that changes nothing offers only mcp.read_only).
      'file_write: create-only',
      'mcp:',
      '  allow: [everything/echo, files/read_*]',
      '  deny: [everything/get-env, files/write_*]',
      '',
    ].join('\n'),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('rho mcp', () => {
  it('list shows the servers of the agent config, ${ENV} resolved', async () => {
    const result = await rho(['mcp', 'list', '--config', config], { NOTES_DIR: dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`everything  stdio: ${process.execPath} ${script('server-everything')} stdio`);
    expect(result.stdout).toContain(`files  stdio: ${process.execPath} ${script('server-filesystem')} ${dir}`);
  });

  it('list names an unset ${ENV} reference', async () => {
    const result = await rho(['mcp', 'list', '--config', config], { NOTES_DIR: '' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/'mcp_servers\.files\.args\[1\]' refers to \$\{NOTES_DIR\}, which is not set/);
  });

  it('tools lists a server with the decision of the profile for each tool', async () => {
    const readonly = await rho(['mcp', 'tools', 'everything', '--config', config, '--json'], { NOTES_DIR: dir });
    expect(readonly.code).toBe(0);
    const rows = JSON.parse(readonly.stdout) as { name: string; decision: string }[];
    // readonly changes nothing: no MCP tool it does not name in mcp.read_only, whatever the server says.
    expect(rows.find((row) => row.name === 'everything__echo')?.decision).toBe('deny');
    const developer = await rho(
      ['mcp', 'tools', 'everything', '--config', config, '--profile', 'developer', '--json'],
      {
        NOTES_DIR: dir,
      },
    );
    const developerRows = JSON.parse(developer.stdout) as { name: string; decision: string }[];
    expect(developerRows.find((row) => row.name === 'everything__echo')?.decision).toBe('ask');
    const careful = await rho(
      ['mcp', 'tools', 'everything', '--config', config, '--profile', join(dir, 'careful.yaml')],
      { NOTES_DIR: dir },
    );
    expect(careful.stdout).toMatch(/allow\s+everything__echo/);
    expect(careful.stdout).toMatch(/deny\s+everything__get-env/);
    expect(careful.stdout).toMatch(/ask\s+everything__get-sum/);
  });

  it('call runs a tool, reports a tool error with exit 1, and refuses a denied tool', async () => {
    const echo = await rho(
      [
        'mcp',
        'call',
        'everything',
        'echo',
        '--args',
        '{"message":"by hand"}',
        '--config',
        config,
        '--profile',
        'developer',
      ],
      { NOTES_DIR: dir },
    );
    expect(echo).toMatchObject({ code: 0, stdout: 'Echo: by hand\n' });
    expect(echo.stderr).toMatch(/calling it by hand counts as your approval/);
    const read = await rho(
      [
        'mcp',
        'call',
        'files',
        'read_text_file',
        '--args',
        JSON.stringify({ path: join(dir, 'notes.txt') }),
        '--config',
        config,
        '--profile',
        join(dir, 'careful.yaml'),
      ],
      { NOTES_DIR: dir },
    );
    expect(read).toMatchObject({ code: 0, stdout: 'hello from a file\n\n', stderr: '' });
    const outside = await rho(
      [
        'mcp',
        'call',
        'files',
        'read_text_file',
        '--args',
        '{"path":"/etc/hostname"}',
        '--config',
        config,
        '--profile',
        'developer',
      ],
      { NOTES_DIR: dir },
    );
    expect(outside.code).toBe(1);
    expect(outside.stderr).toContain('rho: read_text_file of files reported an error.');
    const denied = await rho(
      [
        'mcp',
        'call',
        'files',
        'write_file',
        '--args',
        '{"path":"x","content":"y"}',
        '--config',
        config,
        '--profile',
        join(dir, 'careful.yaml'),
      ],
      { NOTES_DIR: dir },
    );
    expect(denied.code).toBe(1);
    expect(denied.stderr).toBe(
      'rho: refused: profile careful denies MCP tool write_file of server files (mcp.deny: files/write_*).\n',
    );
  });

  it('list with no server configured exits 0 and says how to add one', async () => {
    const empty = await rho(['mcp', 'list']);
    expect(empty).toMatchObject({ code: 0, stdout: '' });
    expect(empty.stderr).toMatch(
      /^rho: No MCP servers configured in .*config\.yaml: add mcp_servers .*--command or --url\.\n$/,
    );
    const json = await rho(['mcp', 'list', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([]);
    // Naming a server of an empty configuration is still a usage error.
    expect((await rho(['mcp', 'tools', 'files'])).code).toBe(2);
  });

  it('rejects bad arguments with exit 2', async () => {
    const badJson = await rho(['mcp', 'call', 'everything', 'echo', '--args', '{nope', '--config', config], {
      NOTES_DIR: dir,
    });
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toMatch(/--args is not JSON/);
    const typo = await rho(['mcp', 'tools', '--url', 'http://127.0.0.1:9/mcp', '--profile', 'developr']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/^rho: Unknown profile: developr \(did you mean developer\?\)\./);
  });

  describe('over streamable HTTP', () => {
    let child: ChildProcess;
    let url: string;
    beforeAll(async () => {
      const port = await new Promise<number>((resolve) => {
        const probe = createServer().listen(0, '127.0.0.1', () => {
          const address = probe.address() as { port: number };
          probe.close(() => resolve(address.port));
        });
      });
      child = spawn(process.execPath, [script('server-everything'), 'streamableHttp'], {
        env: { ...process.env, PORT: String(port) },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      await new Promise<void>((resolve) => {
        let seen = '';
        child.stderr?.on('data', (chunk: Buffer) => {
          seen += chunk.toString();
          if (seen.includes('listening on port')) resolve();
        });
      });
      url = `http://127.0.0.1:${port}/mcp`;
    });
    afterAll(() => {
      child.kill();
    });

    it('tools and call work with --url', async () => {
      const tools = await rho(['mcp', 'tools', '--url', url, '--profile', 'developer']);
      expect(tools.code).toBe(0);
      expect(tools.stdout).toMatch(/ask\s+adhoc__echo/);
      const sum = await rho([
        'mcp',
        'call',
        'adhoc',
        'get-sum',
        '--args',
        '{"a":20,"b":22}',
        '--url',
        url,
        '--profile',
        'developer',
      ]);
      expect(sum.code).toBe(0);
      expect(sum.stdout).toContain('42');
    });
  });

  it('a headless run offers the MCP tools the profile allows, runs them, and traces server and tool', async () => {
    const server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'everything__echo', arguments: '{"message": "through rho"}' }] },
        { type: 'response', text: 'It said: Echo: through rho.' },
      ],
    });
    try {
      const runConfig = join(dir, 'run.yaml');
      writeFileSync(runConfig, `${readFileSync(config, 'utf8')}profile: ${join(dir, 'careful.yaml')}\n`);
      const outcome = await runRho(['--base-url', server.url, '--config', runConfig, '-p', 'Echo something'], {
        env: { RHO_HOME: home, NOTES_DIR: dir },
        cwd: dir,
      });
      expect(outcome.code).toBe(0);
      expect(outcome.stdout).toContain('It said: Echo: through rho.');
      const offered = ((server.requests[0]!.body as { tools?: { function: { name: string } }[] }).tools ?? []).map(
        (tool) => tool.function.name,
      );
      // Allowed by name: offered. Asked about (get-sum) or denied (get-env): not offered headless.
      expect(offered).toEqual(expect.arrayContaining(['everything__echo', 'files__read_text_file']));
      expect(offered).not.toContain('everything__get-sum');
      expect(offered).not.toContain('everything__get-env');
      const sessions = join(home, 'sessions');
      const [session] = readdirSync(sessions);
      const trace = readFileSync(join(sessions, session!, 'trace.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(trace.find((record) => record.type === 'tool_end')).toMatchObject({
        tool_name: 'everything__echo',
        success: true,
        metadata: { mcp: { server: 'everything', tool: 'echo' } },
      });
      // Saved as written, so a resume starts the same servers and no secret is written out.
      expect(readFileSync(join(sessions, session!, 'config.yaml'), 'utf8')).toContain('${NOTES_DIR}');
    } finally {
      await server.close();
    }
  });
});
