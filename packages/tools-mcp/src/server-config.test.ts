import { ConfigError } from '@rho/core';
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '@rho/core/internal';
import { parseMcpServers, parseMcpServerSources } from './server-config.js';

describe('parseMcpServers', () => {
  it('reads stdio and streamable HTTP servers with ${ENV} references resolved', () => {
    const env = { TOKEN: 'secret', ROOT: '/srv/data' };
    const servers = parseMcpServers(
      {
        files: {
          command: 'npx',
          args: ['-y', 'server-filesystem', '${ROOT}'],
          env: { API_KEY: '${TOKEN}', MODE: '${MODE:-fast}' },
          timeout: 30,
        },
        web: { url: 'https://mcp.example.test/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
      },
      { env },
    );
    expect(servers).toEqual([
      {
        name: 'files',
        transport: 'stdio',
        command: 'npx',
        args: ['-y', 'server-filesystem', '/srv/data'],
        env: { API_KEY: 'secret', MODE: 'fast' },
        timeoutMs: 30_000,
        startupTimeoutMs: 30_000,
      },
      {
        name: 'web',
        transport: 'http',
        url: 'https://mcp.example.test/mcp',
        headers: { Authorization: 'Bearer secret' },
        timeoutMs: 600_000,
        startupTimeoutMs: 30_000,
      },
    ]);
  });

  it('reads defer', () => {
    expect(parseMcpServers({ big: { url: 'http://127.0.0.1:1/mcp', defer: true } })[0]).toMatchObject({ defer: true });
    expect(() => parseMcpServers({ big: { url: 'http://127.0.0.1:1/mcp', defer: 'yes' } })).toThrow(
      'MCP servers: \'mcp_servers.big.defer\' must be true or false (got "yes").',
    );
  });

  it('accepts nothing configured', () => {
    expect(parseMcpServers(undefined)).toEqual([]);
    expect(parseMcpServers(null)).toEqual([]);
  });

  it.each([
    [{ s: { command: 'x', url: 'http://127.0.0.1/mcp' } }, /^MCP servers: 'mcp_servers\.s' has both command and url/],
    [{ s: {} }, /'mcp_servers\.s' needs command \(a stdio server\) or url/],
    [
      { s: { command: 'x', headers: {} } },
      /'mcp_servers\.s\.headers' is an unknown key; allowed keys: command, args, env, cwd, timeout, startup_timeout, defer\.$/,
    ],
    [{ s: { command: 'x', args: 'y' } }, /'mcp_servers\.s\.args' must be a list of strings \(got "y"\)/],
    [{ s: { command: 'x', args: ['a', {}] } }, /'mcp_servers\.s\.args\[1\]' must be a string \(got \{\}\)/],
    [
      { s: { url: 'ftp://host/mcp' } },
      /'mcp_servers\.s\.url' must be an http:\/\/ or https:\/\/ URL \(got "ftp:\/\/host\/mcp"\)/,
    ],
    [{ 'a.b': { command: 'x' } }, /is not a valid server name/],
    [{ a__b: { command: 'x' } }, /must not contain "__"/],
    [
      { s: { command: 'x', env: { K: '${MISSING_RHO_VAR}' } } },
      /'mcp_servers\.s\.env\.K' refers to \$\{MISSING_RHO_VAR\}, which is not set/,
    ],
    [
      { s: { command: 'x', timeout: -1 } },
      /'mcp_servers\.s\.timeout' must be a number of seconds between 1 and 86400 \(got -1\)/,
    ],
    [['x'], /'mcp_servers' must be a mapping/],
  ])('rejects %j with a clear ConfigError', (source, message) => {
    expect(() => parseMcpServers(source, { env: {} })).toThrow(ConfigError);
    expect(() => parseMcpServers(source, { env: {} })).toThrow(message);
  });
});

describe('parseMcpServerSources', () => {
  const global = {
    origin: '/home/me/.config/rho/config.yaml',
    servers: {
      notes: { command: 'notes-server' },
      tracker: { url: 'https://global.example/mcp', headers: { A: '${UNSET_TOKEN}' } },
    },
  };

  it('a later source wins by name, whole, and the replaced server is not validated', () => {
    const servers = parseMcpServerSources(
      [global, { origin: 'agent.yaml', servers: { tracker: { url: 'https://agent.example/mcp' } } }],
      { env: {} },
    );
    expect(servers.map((server) => server.name)).toEqual(['notes', 'tracker']);
    // No header of the global tracker survives, and its unset ${UNSET_TOKEN} is no error.
    expect(servers[1]).toEqual({
      name: 'tracker',
      transport: 'http',
      url: 'https://agent.example/mcp',
      headers: {},
      timeoutMs: 600_000,
      startupTimeoutMs: 30_000,
    });
  });

  it('takes sources that configure nothing', () => {
    expect(
      parseMcpServerSources(
        [
          { origin: 'config.yaml', servers: undefined },
          { origin: 'agent.yaml', servers: { a: { url: 'https://a.example' } } },
        ],
        { env: {} },
      ).map((server) => server.name),
    ).toEqual(['a']);
    expect(
      parseMcpServerSources([
        { origin: 'config.yaml', servers: null },
        { origin: 'agent.yaml', servers: {} },
      ]),
    ).toEqual([]);
  });

  it('names the file of the server at fault', () => {
    expect(() => parseMcpServerSources([global, { origin: 'agent.yaml', servers: undefined }], { env: {} })).toThrow(
      /^\/home\/me\/\.config\/rho\/config\.yaml: 'mcp_servers\.tracker\.headers\.A' refers to \$\{UNSET_TOKEN\}/,
    );
    expect(() =>
      parseMcpServerSources([{ origin: 'agent.yaml', servers: { bad: { command: 'x', url: 'y' } } }]),
    ).toThrow(/^agent\.yaml: 'mcp_servers\.bad' has both command and url/);
    expect(() => parseMcpServerSources([{ origin: 'agent.yaml', servers: ['x'] }])).toThrow(
      /agent\.yaml: 'mcp_servers' must be a mapping/,
    );
  });
});

describe('the line of a wrong value in a file', () => {
  const text = [
    'model: gpt-5',
    'mcp_servers:',
    '  files:',
    '    command: npx',
    '    args:',
    '      - -y',
    '      - 3',
    '    env:',
    '      TOKEN: ${TOKEN}',
    '  web:',
    '    url: https://mcp.example.test/mcp',
    '    timeout: soon',
    '',
  ].join('\n');
  const fix = (from: string, to: string) => parseConfigText(text.replace(from, to), 'agent.yaml');

  it('names the file, the key and its line, nested keys and list items too', () => {
    const problem = (source: ReturnType<typeof parseConfigText>, env: Record<string, string> = { TOKEN: 't' }) => {
      try {
        parseMcpServerSources(
          [{ origin: source.file, servers: (source.value as { mcp_servers: unknown }).mcp_servers, source }],
          { env },
        );
      } catch (error) {
        return error as ConfigError;
      }
      throw new Error('expected a ConfigError');
    };
    const soon = problem(fix('      - 3', '      - {x: 1}'));
    expect(soon.message).toBe(`agent.yaml:7: 'mcp_servers.files.args[1]' must be a string (got {"x":1}).`);
    expect(soon).toMatchObject({ file: 'agent.yaml', field: 'mcp_servers.files.args[1]', line: 7 });
    expect(problem(fix('', '')).message).toBe(
      'agent.yaml:12: \'mcp_servers.web.timeout\' must be a number of seconds between 1 and 86400 (got "soon").',
    );
    const good = fix('    timeout: soon', '    timeout: 30');
    expect(problem(good, {}).message).toBe(
      "agent.yaml:9: 'mcp_servers.files.env.TOKEN' refers to ${TOKEN}, which is not set: set TOKEN in the environment or write ${TOKEN:-default}.",
    );
    expect(problem(fix('    timeout: soon', '    header: {}')).message).toBe(
      "agent.yaml:12: 'mcp_servers.web.header' is an unknown key; allowed keys: url, headers, timeout, startup_timeout, defer.",
    );
    expect(problem(fix('    url: https://mcp.example.test/mcp\n    timeout: soon', '    url: ftp://x')).message).toBe(
      `agent.yaml:11: 'mcp_servers.web.url' must be an http:// or https:// URL (got "ftp://x").`,
    );
    expect(problem(fix('    command: npx', '    command: npx\n    url: https://x')).message).toBe(
      "agent.yaml:3: 'mcp_servers.files' has both command and url: give one (command for stdio, url for streamable HTTP).",
    );
    // parseMcpServers takes the source the same way, the file named by it when no origin is given.
    const source = fix('    timeout: soon', '    defer: maybe');
    expect(() =>
      parseMcpServers((source.value as { mcp_servers: unknown }).mcp_servers, { source, env: { TOKEN: 't' } }),
    ).toThrow(`agent.yaml:12: 'mcp_servers.web.defer' must be true or false (got "maybe").`);
    expect(
      parseMcpServers((good.value as { mcp_servers: unknown }).mcp_servers, { source: good, env: { TOKEN: 't' } }),
    ).toHaveLength(2);
  });
});
