import { ConfigError } from '@rho/core';
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
      /unknown key 'fleet.scheme'/,
    );
    expect(() => resolveFleetConfig({ env: {}, userConfig: { url: 'postgres://x/y', schema: 'Bad-Name' } })).toThrow(
      /lower-case SQL identifier/,
    );
    expect(() => resolveFleetConfig({ env: {}, userConfig: { url: 'postgres://x/y', dead_after_ms: -1 } })).toThrow(
      /positive number of milliseconds/,
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
    ).toThrow(/fleet.ssl.passphrase/);
    expect(() => resolveFleetConfig({ env: {}, agentConfig: 'postgres://x' as never })).toThrow(/must be a mapping/);
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
