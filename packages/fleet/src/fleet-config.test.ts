import { ConfigError } from '@rho/core';
import { parseConfigText } from '@rho/core/internal';
import { describe, expect, it } from 'vitest';
import { redactUrl, resolveFleetConfig } from './fleet-config.js';

describe('resolveFleetConfig', () => {
  it('is undefined without a fleet anywhere', () => {
    expect(resolveFleetConfig({ env: {} })).toBeUndefined();
    expect(resolveFleetConfig({ env: { RHO_FLEET_URL: '  ' }, userConfig: { schema: 'x' } })).toBeUndefined();
  });

  it('takes the url from the flag, then RHO_FLEET_URL, then the agent config, then the user config', () => {
    const agentConfig = { url: 'postgres://agent/db' };
    const userConfig = { url: 'postgres://user/db', schema: 'team_fleet' };
    const env = { RHO_FLEET_URL: 'postgres://env/db' };
    expect(resolveFleetConfig({ flag: 'postgres://flag/db', env, agentConfig, userConfig })).toMatchObject({
      url: 'postgres://flag/db',
      source: 'flag',
      schema: 'team_fleet',
    });
    expect(resolveFleetConfig({ env, agentConfig, userConfig })).toMatchObject({
      url: 'postgres://env/db',
      source: 'env',
    });
    expect(resolveFleetConfig({ env: {}, agentConfig, userConfig })?.source).toBe('agent-config');
    expect(resolveFleetConfig({ env: {}, userConfig })).toMatchObject({
      url: 'postgres://user/db',
      source: 'user-config',
      schema: 'team_fleet',
      heartbeatIntervalMs: 5000,
      deadAfterMs: 30000,
    });
    expect(
      resolveFleetConfig({ env: {}, agentConfig: { url: 'postgres://a/b', schema: 'mine' }, userConfig })?.schema,
    ).toBe('mine');
  });

  it('replaces ${NAME} from the environment and names a missing variable without printing the url', () => {
    const config = resolveFleetConfig({
      env: { FLEET_PASSWORD: 's3cret' },
      userConfig: { url: 'postgres://rho:${FLEET_PASSWORD}@db:5432/rho?sslmode=require' },
    });
    expect(config?.url).toBe('postgres://rho:s3cret@db:5432/rho?sslmode=require');
    expect(() => resolveFleetConfig({ env: {}, userConfig: { url: 'postgres://rho:${NOPE}@db/rho' } })).toThrow(
      /\$\{NOPE\}, which is not set/,
    );
    try {
      resolveFleetConfig({ flag: 'mysql://rho:hunter2@db/rho', env: {} });
      expect.unreachable();
    } catch (error) {
      expect(ConfigError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain('postgres://');
      expect((error as Error).message).not.toContain('hunter2');
    }
  });

  it('validates the mapping, the schema, the intervals and the TLS options', () => {
    expect(() => resolveFleetConfig({ env: {}, userConfig: { url: 'postgres://x/y', scheme: 'a' } })).toThrow(
      "$RHO_HOME/config.yaml: 'fleet.scheme' is an unknown key (known: url, schema, ssl, heartbeat_interval_ms, dead_after_ms).",
    );
    expect(() => resolveFleetConfig({ env: {}, userConfig: { url: 'postgres://x/y', schema: 'Bad-Name' } })).toThrow(
      `$RHO_HOME/config.yaml: 'fleet.schema' must be a lower-case SQL identifier such as rho_fleet (got "Bad-Name").`,
    );
    expect(() => resolveFleetConfig({ env: {}, userConfig: { url: 'postgres://x/y', dead_after_ms: -1 } })).toThrow(
      "$RHO_HOME/config.yaml: 'fleet.dead_after_ms' must be a positive number of milliseconds (got -1).",
    );
    expect(
      resolveFleetConfig({
        env: {},
        userConfig: { url: 'postgres://x/y', ssl: { ca: 'PEM', rejectUnauthorized: true }, dead_after_ms: 60000 },
      }),
    ).toMatchObject({ ssl: { ca: 'PEM', rejectUnauthorized: true }, deadAfterMs: 60000 });
    expect(resolveFleetConfig({ env: {}, userConfig: { url: 'postgres://x/y', ssl: 'verify-full' } })?.ssl).toBe(
      'verify-full',
    );
    expect(() =>
      resolveFleetConfig({ env: {}, userConfig: { url: 'postgres://x/y', ssl: { passphrase: 1 } } }),
    ).toThrow(/'fleet\.ssl\.passphrase' is not a TLS option rho passes on/);
    expect(() => resolveFleetConfig({ env: {}, agentConfig: 'postgres://x' as never })).toThrow(
      `the agent config: 'fleet' must be a mapping such as {url: postgres://..., schema: rho_fleet} (got "postgres://x").`,
    );
  });
});

describe('the line of a wrong value in a file', () => {
  const user = [
    'mcp_servers: {}',
    'fleet:',
    '  url: postgres://rho:${FLEET_PASSWORD}@db/rho',
    '  schema: team_fleet',
    '  ssl:',
    '    ca: PEM',
    '    rejectUnauthorized: yes',
    '  dead_after_ms: 60000',
    '',
  ].join('\n');
  const problem = (text: string, env: Record<string, string> = { FLEET_PASSWORD: 'pw' }) => {
    const source = parseConfigText(text, 'config.yaml');
    try {
      resolveFleetConfig({ env, userConfig: (source.value as { fleet: never }).fleet, userConfigSource: source });
    } catch (error) {
      return error as ConfigError;
    }
    throw new Error('expected a ConfigError');
  };

  it('names the file, the key and its line, nested keys too', () => {
    const tls = problem(user);
    expect(tls.message).toBe('config.yaml:7: \'fleet.ssl.rejectUnauthorized\' must be true or false (got "yes").');
    expect(tls).toMatchObject({
      file: 'config.yaml',
      field: 'fleet.ssl.rejectUnauthorized',
      line: 7,
      code: 'fleet_config',
    });
    const fixed = user.replace('rejectUnauthorized: yes', 'rejectUnauthorized: true');
    expect(problem(fixed.replace('60000', 'soon')).message).toBe(
      'config.yaml:8: \'fleet.dead_after_ms\' must be a positive number of milliseconds (got "soon").',
    );
    expect(problem(fixed.replace('schema: team_fleet', 'shema: team_fleet')).message).toMatch(
      /^config\.yaml:4: 'fleet\.shema' is an unknown key /,
    );
    expect(problem(fixed, {}).message).toBe(
      "config.yaml:3: 'fleet.url' references ${FLEET_PASSWORD}, which is not set; export FLEET_PASSWORD or write the value.",
    );
    const mysql = problem(fixed.replace('postgres://', 'mysql://'));
    expect(mysql.message).toBe(
      'config.yaml:3: \'fleet.url\' must start with postgres:// or postgresql:// (got "mysql://rho:***@db/rho").',
    );
    // The agent config's settings win, and are checked in their own file.
    const agent = parseConfigText('fleet:\n  url: postgres://a/b\n  heartbeat_interval_ms: 0\n', 'agent.yaml');
    const source = parseConfigText(fixed, 'config.yaml');
    expect(() =>
      resolveFleetConfig({
        env: {},
        agentConfig: (agent.value as { fleet: never }).fleet,
        agentConfigSource: agent,
        userConfig: (source.value as { fleet: never }).fleet,
        userConfigSource: source,
      }),
    ).toThrow("agent.yaml:3: 'fleet.heartbeat_interval_ms' must be a positive number of milliseconds (got 0).");
    expect(
      resolveFleetConfig({
        env: { FLEET_PASSWORD: 'pw' },
        userConfig: (source.value as { fleet: never }).fleet,
        userConfigSource: source,
      }),
    ).toMatchObject({
      url: 'postgres://rho:pw@db/rho',
      schema: 'team_fleet',
      deadAfterMs: 60000,
      ssl: { ca: 'PEM', rejectUnauthorized: true },
    });
  });
});

describe('redactUrl', () => {
  it('hides the password and secret-looking parameters', () => {
    expect(redactUrl('postgres://rho:s3cret@db:5432/rho?sslmode=require&password=x')).toBe(
      'postgres://rho:***@db:5432/rho?sslmode=require&password=***',
    );
    expect(redactUrl('postgres://db/rho')).toBe('postgres://db/rho');
    expect(redactUrl('not a url')).toBe('<unparsable url>');
  });
});
