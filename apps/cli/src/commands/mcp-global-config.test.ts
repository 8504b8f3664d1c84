import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLoopbackServer } from '@rho/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRho } from '../../test/support/run-rho.js';
import { main } from '../main.js';
import type { Terminal } from '../terminal.js';

// `$RHO_HOME/config.yaml`: MCP servers configured for the user, not for one agent.

const everything = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);
const everythingServer = [
  '  everything:',
  `    command: ${JSON.stringify(process.execPath)}`,
  `    args: [${JSON.stringify(everything)}, stdio]`,
];

async function rho(args: string[], home: string, env: NodeJS.ProcessEnv = {}) {
  const written = { stdout: '', stderr: '' };
  const stream = (name: 'stdout' | 'stderr') =>
    ({
      isTTY: false,
      write(chunk: string | Uint8Array) {
        written[name] += chunk.toString();
        return true;
      },
    }) as unknown as Terminal['stdout'];
  const terminal: Terminal = { stdout: stream('stdout'), stderr: stream('stderr'), color: false };
  const code = await main(args, terminal, { ...process.env, RHO_HOME: home, ...env });
  return { code, ...written };
}

let dir: string;
let profile: string;
let homes = 0;
/** A fresh `$RHO_HOME` whose config.yaml has these lines. */
function homeWith(lines: string[]): string {
  const home = join(dir, `home-${(homes += 1)}`);
  mkdirSync(home);
  writeFileSync(join(home, 'config.yaml'), `${lines.join('\n')}\n`);
  return home;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rho-cli-mcp-global-'));
  profile = join(dir, 'careful.yaml');
  // Changes nothing (readonly's settings) and trusts echo as read-only: the one MCP tool it offers.
  writeFileSync(profile, 'profile: careful\nmcp:\n  read_only: [everything/echo]\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('$RHO_HOME/config.yaml mcp_servers', () => {
  it('a server configured only there is listed, shown, offered in a headless run, and read again on resume', async () => {
    const home = homeWith(['mcp_servers:', ...everythingServer, '    env: {EXAMPLE_TOKEN: "${GLOBAL_SECRET}"}']);
    const env = { GLOBAL_SECRET: 'do-not-save-me' };
    const list = await rho(['mcp', 'list'], home, env);
    expect(list.code).toBe(0);
    expect(list.stdout).toBe(`everything  stdio: ${process.execPath} ${everything} stdio\n`);
    const tools = await rho(['mcp', 'tools'], home, env);
    expect(tools.code).toBe(0);
    // The default profile (readonly) names no MCP tool as read-only: none is offered.
    expect(tools.stdout).toMatch(/deny\s+everything__echo/);

    const server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'everything__echo', arguments: '{"message": "global"}' }] },
        { type: 'response', text: 'It said: Echo: global.' },
        { type: 'response', text: 'Still here.' },
      ],
    });
    try {
      const work = join(dir, 'work');
      mkdirSync(work, { recursive: true });
      const first = await runRho(['--base-url', server.url, '--profile', profile, '-p', 'Echo something'], {
        env: { RHO_HOME: home, ...env },
        cwd: work,
      });
      expect(first.code).toBe(0);
      expect(first.stdout).toContain('It said: Echo: global.');
      const offered = (index: number) =>
        ((server.requests[index]!.body as { tools?: { function: { name: string } }[] }).tools ?? []).map(
          (tool) => tool.function.name,
        );
      expect(offered(0)).toContain('everything__echo');
      expect(offered(0)).not.toContain('everything__get-sum');
      const [session] = readdirSync(join(home, 'sessions'));
      const trace = readFileSync(join(home, 'sessions', session!, 'trace.jsonl'), 'utf8');
      expect(trace).toContain('"mcp":{"server":"everything","tool":"echo"}');
      // The global servers stay global: neither they nor the secret are written into the session.
      const saved = readFileSync(join(home, 'sessions', session!, 'config.yaml'), 'utf8');
      expect(saved).not.toContain('mcp_servers');
      expect(saved).not.toContain('do-not-save-me');

      const resumed = await runRho(['--base-url', server.url, '-r', 'latest', 'Again'], {
        env: { RHO_HOME: home, ...env },
        cwd: work,
      });
      expect(resumed.code).toBe(0);
      expect(offered(2)).toContain('everything__echo');
    } finally {
      await server.close();
    }
  });

  it("the agent config's server wins by name; the replaced one is not even validated", async () => {
    const home = homeWith([
      'mcp_servers:',
      '  everything:',
      '    command: /nonexistent/global-everything',
      '    args: ["${UNSET_ONLY_IN_GLOBAL}"]',
      '  notes:',
      '    url: https://notes.example/mcp',
    ]);
    const agent = join(dir, 'agent.yaml');
    writeFileSync(agent, ['mcp_servers:', ...everythingServer, ''].join('\n'));
    const list = await rho(['mcp', 'list', '--config', agent], home);
    expect(list.code).toBe(0);
    expect(list.stdout).toBe(
      `notes  http: https://notes.example/mcp\neverything  stdio: ${process.execPath} ${everything} stdio\n`,
    );
    const tools = await rho(['mcp', 'tools', 'everything', '--config', agent], home);
    expect(tools.stderr).toBe('');
    expect(tools.code).toBe(0);
    expect(tools.stdout).toMatch(/everything__echo/);
    // Without the agent config the global one is used, and its unset variable is an error naming the file.
    const alone = await rho(['mcp', 'list'], home);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain(
      `${join(home, 'config.yaml')}: 'mcp_servers.everything.args[0]' refers to \${UNSET_ONLY_IN_GLOBAL}, which is not set`,
    );
  });

  it('warns about an unknown key with "did you mean", and runs', async () => {
    const home = homeWith([
      'telemetry: {url: "https://otel.example"}',
      'mcp-servers: {}',
      'mcp_servers:',
      '  notes: {url: "https://notes.example/mcp"}',
    ]);
    const path = join(home, 'config.yaml');
    const list = await rho(['mcp', 'list'], home);
    expect(list.code).toBe(0);
    expect(list.stdout).toBe('notes  http: https://notes.example/mcp\n');
    expect(list.stderr).toContain(
      `Warning: ${path}:1: unknown key 'telemetry' is ignored (this version knows mcp_servers, fleet, otel, hooks, worker, mcp_serve).\n`,
    );
    expect(list.stderr).toContain(
      `Warning: ${path}:2: unknown key 'mcp-servers' is ignored (did you mean 'mcp_servers'?).\n`,
    );

    const server = await startLoopbackServer({ steps: [{ type: 'response', text: 'Fine.' }] });
    try {
      const quiet = homeWith(['telemetry: {url: "https://otel.example"}']);
      const run = await runRho(['--base-url', server.url, '-p', 'Hi'], { env: { RHO_HOME: quiet }, cwd: dir });
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('Fine.');
      expect(run.stderr).toContain(`${join(quiet, 'config.yaml')}:1: unknown key 'telemetry' is ignored`);
    } finally {
      await server.close();
    }
  });

  it('an invalid file stops rho mcp and a run with exit 2, naming the file and the field', async () => {
    const cases: [string[], string][] = [
      [['mcp_servers: [everything]'], "config.yaml:1: 'mcp_servers' must be a mapping of server names"],
      [
        ['mcp_servers:', '  bad: {command: x, url: "https://x.example"}'],
        "config.yaml: 'mcp_servers.bad' has both command and url",
      ],
      [['mcp_servers: {a: ['], 'config.yaml:2: not valid YAML: '],
    ];
    const server = await startLoopbackServer({ steps: [] });
    try {
      for (const [lines, message] of cases) {
        const home = homeWith(lines);
        const list = await rho(['mcp', 'list'], home);
        expect(list.code).toBe(2);
        expect(list.stderr).toContain(message);
        expect(list.stderr).toContain(join(home, 'config.yaml'));
        const run = await runRho(['--base-url', server.url, '-p', 'Hi'], { env: { RHO_HOME: home }, cwd: dir });
        expect(run.code).toBe(2);
        expect(run.stderr).toContain(message);
        expect(run.stderr).toContain(join(home, 'config.yaml'));
      }
      expect(server.requests).toHaveLength(0);
    } finally {
      await server.close();
    }
  });
});
