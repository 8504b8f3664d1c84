import { ConfigError } from '@rho/core';
import { describe, expect, it } from 'vitest';
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
      'mcp_servers.big.defer must be true or false.',
    );
  });

  it('accepts nothing configured', () => {
    expect(parseMcpServers(undefined)).toEqual([]);
    expect(parseMcpServers(null)).toEqual([]);
  });

  it.each([
    [{ s: { command: 'x', url: 'http://127.0.0.1/mcp' } }, /mcp_servers\.s has both command and url/],
    [{ s: {} }, /mcp_servers\.s needs command \(a stdio server\) or url/],
    [
      { s: { command: 'x', headers: {} } },
      /mcp_servers\.s\.headers has unknown key headers; allowed keys: command, args, env, cwd, timeout, startup_timeout, defer/,
    ],
    [{ s: { command: 'x', args: 'y' } }, /mcp_servers\.s\.args must be a list of strings/],
    [{ s: { url: 'ftp://host/mcp' } }, /mcp_servers\.s\.url must be an http:\/\/ or https:\/\/ URL/],
    [{ 'a.b': { command: 'x' } }, /is not a valid server name/],
    [{ a__b: { command: 'x' } }, /must not contain "__"/],
    [
      { s: { command: 'x', env: { K: '${MISSING_RHO_VAR}' } } },
      /mcp_servers\.s\.env\.K refers to \$\{MISSING_RHO_VAR\}, which is not set/,
    ],
    [{ s: { command: 'x', timeout: -1 } }, /timeout must be a number of seconds/],
    [['x'], /mcp_servers must be a mapping/],
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
      /^\/home\/me\/\.config\/rho\/config\.yaml: mcp_servers\.tracker\.headers\.A refers to \$\{UNSET_TOKEN\}/,
    );
    expect(() =>
      parseMcpServerSources([{ origin: 'agent.yaml', servers: { bad: { command: 'x', url: 'y' } } }]),
    ).toThrow(/^agent\.yaml: mcp_servers\.bad has both command and url/);
    expect(() => parseMcpServerSources([{ origin: 'agent.yaml', servers: ['x'] }])).toThrow(
      /agent\.yaml: mcp_servers must be a mapping/,
    );
  });
});
