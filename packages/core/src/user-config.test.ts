import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from './errors.js';
import { loadUserConfig, parseUserConfig, userConfigPath } from './user-config.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'rho-user-config-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const write = (text: string) => writeFileSync(join(home, 'config.yaml'), text);

describe('loadUserConfig', () => {
  it('is empty when the file is missing', () => {
    expect(loadUserConfig(home)).toEqual({ path: join(home, 'config.yaml'), found: false, warnings: [] });
    expect(userConfigPath(home)).toBe(join(home, 'config.yaml'));
  });

  it('is empty when $RHO_HOME is a file (the session store reports that)', () => {
    writeFileSync(join(home, 'file'), '');
    expect(loadUserConfig(join(home, 'file')).found).toBe(false);
  });

  it('is empty for an empty file', () => {
    write('');
    expect(loadUserConfig(home)).toEqual({ path: join(home, 'config.yaml'), found: true, warnings: [] });
  });

  it('reads mcp_servers as written, ${ENV} references kept', () => {
    write('mcp_servers:\n  notes:\n    command: notes-server\n    env: {TOKEN: "${NOTES_TOKEN}"}\n');
    expect(loadUserConfig(home).mcpServers).toEqual({
      notes: { command: 'notes-server', env: { TOKEN: '${NOTES_TOKEN}' } },
    });
  });

  it('reads fleet as written, ${ENV} references kept, and refuses a fleet that is not a mapping', () => {
    write('fleet:\n  url: "postgres://rho:${FLEET_PASSWORD}@db/rho"\n  schema: rho_fleet\n');
    expect(loadUserConfig(home).fleet).toEqual({ url: 'postgres://rho:${FLEET_PASSWORD}@db/rho', schema: 'rho_fleet' });
    write('fleet: postgres://db/rho\n');
    expect(() => loadUserConfig(home)).toThrow(/'fleet' must be a mapping/);
  });

  it('warns about unknown keys with the key they may mean, and loads the rest', () => {
    write(
      'mcp-servers: {}\nmcp: {}\ntelemetry: {url: "https://otel.example"}\nmcp_servers:\n  a: {url: "https://a.example/mcp"}\n',
    );
    const config = loadUserConfig(home);
    const path = join(home, 'config.yaml');
    expect(config.warnings).toEqual([
      `${path}: unknown key 'mcp-servers' is ignored (did you mean 'mcp_servers'?).`,
      `${path}: unknown key 'mcp' is ignored (did you mean 'mcp_servers'?).`,
      `${path}: unknown key 'telemetry' is ignored (this version knows mcp_servers, otel, fleet, worker).`,
    ]);
    expect(config.mcpServers).toEqual({ a: { url: 'https://a.example/mcp' } });
  });

  it('reads otel: endpoint, headers and content, warning about keys it does not know', () => {
    write(
      'otel:\n  endpoint: http://collector:4318\n  headers: {x-honeycomb-team: abc}\n  content: true\n  contnet: true\n',
    );
    const config = loadUserConfig(home);
    expect(config.otel).toEqual({
      endpoint: 'http://collector:4318',
      headers: { 'x-honeycomb-team': 'abc' },
      content: true,
    });
    expect(config.warnings).toEqual([
      `${join(home, 'config.yaml')}: unknown key 'otel.contnet' is ignored (did you mean 'content'?).`,
    ]);
  });

  it.each([
    ['otel: http://collector:4318\n', /'otel' must be a mapping/, 'otel'],
    ['otel: {endpoint: 4318}\n', /'otel.endpoint' must be a URL/, 'otel.endpoint'],
    ['otel: {headers: {a: 1}}\n', /'otel.headers' must be a mapping of header names to strings/, 'otel.headers'],
    ['otel: {content: "yes"}\n', /'otel.content' must be true or false/, 'otel.content'],
    ['mcp_servers: [notes]\n', /config\.yaml: 'mcp_servers' must be a mapping of server names/, 'mcp_servers'],
    ['mcp_servers: notes\n', /'mcp_servers' must be a mapping/, 'mcp_servers'],
    ['- mcp_servers\n', /config\.yaml must contain a YAML mapping/, undefined],
    ['mcp_servers: {a: [\n', /Invalid YAML in .*config\.yaml/, undefined],
  ])('rejects %j naming the file and the field', (text, message, field) => {
    write(text);
    let thrown: unknown;
    try {
      loadUserConfig(home);
    } catch (error) {
      thrown = error;
    }
    expect(ConfigError.isInstance(thrown)).toBe(true);
    expect((thrown as ConfigError).message).toMatch(message);
    expect((thrown as ConfigError).file).toBe(join(home, 'config.yaml'));
    expect((thrown as ConfigError).field).toBe(field);
  });

  it('rejects a file it cannot read', () => {
    mkdirSync(join(home, 'config.yaml'));
    expect(() => loadUserConfig(home)).toThrow(/Cannot read .*config\.yaml/);
    rmSync(join(home, 'config.yaml'), { recursive: true });
  });

  it('parses a document already read', () => {
    expect(parseUserConfig(null, 'x.yaml')).toEqual({ path: 'x.yaml', found: true, warnings: [] });
  });
});
