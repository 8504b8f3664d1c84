import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '@rho/core';
import { describe, expect, it } from 'vitest';
import { loadDatabaseConfig, parseDatabaseConfig, resolveDatabaseConfig } from './database-config.js';

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'rho-db-config-'));
}

function errorOf(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (ConfigError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('parseDatabaseConfig', () => {
  it('interpolates ${VAR} and ${VAR:-default}, casts the port, lower-cases the type and applies defaults', () => {
    const configs = parseDatabaseConfig(
      {
        prod: {
          type: 'Postgres',
          host: '${DB_HOST}',
          port: '6543',
          database: 'app',
          user: '${DB_USER:-reader}',
          password: 'p-${SECRET}',
        },
      },
      { env: { DB_HOST: 'db.internal', SECRET: 's3' } },
    );
    expect(configs).toEqual([
      {
        alias: 'prod',
        type: 'postgres',
        host: 'db.internal',
        port: 6543,
        database: 'app',
        user: 'reader',
        password: 'p-s3',
        statementTimeoutSeconds: 30,
      },
    ]);
  });

  it('names an unset environment variable instead of using an empty string', () => {
    const error = errorOf(() =>
      parseDatabaseConfig({ prod: { type: 'mysql', database: 'x', password: '${NOPE}' } }, { env: {} }),
    );
    expect(error.message).toContain('NOPE');
    expect(error.field).toBe('databases.prod.password');
  });

  it('reports a missing type, an unknown type, missing and unsupported fields', () => {
    expect(errorOf(() => parseDatabaseConfig({ a: { database: 'x' } })).message).toBe(
      "Database config: 'databases.a.type' is required: one of sqlite, postgres, mysql, oracle, vertica.",
    );
    expect(errorOf(() => parseDatabaseConfig({ a: { type: 'mssql' } })).message).toBe(
      'Database config: \'databases.a.type\' must be one of sqlite, postgres, mysql, oracle, vertica (got "mssql").',
    );
    expect(errorOf(() => parseDatabaseConfig({ a: { type: 'postgres' } })).message).toBe(
      "Database config: 'databases.a' (postgres) is missing required fields: database.",
    );
    expect(errorOf(() => parseDatabaseConfig({ a: { type: 'oracle', dsn: 'h:1/s', host: 'h' } })).message).toBe(
      'Database config: \'databases.a.host\' (oracle) has unsupported fields: host. Oracle uses "dsn", which includes host:port/service.',
    );
    expect(errorOf(() => parseDatabaseConfig({ a: { type: 'mysql', database: 'x', pasword: 'typo' } })).message).toBe(
      "Database config: 'databases.a.pasword' is an unknown field; allowed fields are type, path, host, port, database, user, password, dsn, statement_timeout.",
    );
    expect(errorOf(() => parseDatabaseConfig({ a: { type: 'mysql', database: 'x', port: 'abc' } })).message).toBe(
      'Database config: \'databases.a.port\' must be a whole number between 1 and 65535 (got "abc").',
    );
    expect(errorOf(() => parseDatabaseConfig(['a'], { file: 'agent.yaml' })).message).toMatch(
      /^agent\.yaml: 'databases' must be a mapping of alias to settings/,
    );
    expect(errorOf(() => parseDatabaseConfig({ 'a b': { type: 'mysql' } })).field).toBe('databases.a b');
  });

  it('names the file, the key and its line of a databases.yaml', async () => {
    const directory = await tempDir();
    const file = join(directory, 'databases.yaml');
    const good = [
      'databases:',
      '  warehouse:',
      '    type: postgres',
      '    database: dw',
      '    port: 5432',
      '  reports:',
      '    type: mysql',
      '    database: reports',
      '    statement_timeout: 60',
    ];
    const failure = async (line: number, text: string) => {
      const lines = [...good];
      lines[line - 1] = text;
      await writeFile(file, `${lines.join('\n')}\n`);
      return (await loadDatabaseConfig({ path: file, env: {} }).catch((caught: unknown) => caught)) as ConfigError;
    };
    const error = await failure(9, '    statement_timeout: soon');
    expect(error.message).toBe(
      `${file}:9: 'databases.reports.statement_timeout' must be a positive number of seconds (got "soon").`,
    );
    expect(error).toMatchObject({ file, field: 'databases.reports.statement_timeout', line: 9 });
    expect((await failure(5, '    port: 70000')).message).toBe(
      `${file}:5: 'databases.warehouse.port' must be a whole number between 1 and 65535 (got 70000).`,
    );
    expect((await failure(7, '    type: mongo')).message).toBe(
      `${file}:7: 'databases.reports.type' must be one of sqlite, postgres, mysql, oracle, vertica (got "mongo").`,
    );
    expect((await failure(4, '    pasword: x')).message).toMatch(
      new RegExp(`^${file}:4: 'databases\\.warehouse\\.pasword' is an unknown field; `),
    );
    // A field that is missing: the line of its entry.
    expect((await failure(4, '    host: db')).message).toBe(
      `${file}:2: 'databases.warehouse' (postgres) is missing required fields: database.`,
    );
    expect((await failure(8, '    password: ${UNSET_RHO_PASSWORD}')).message).toMatch(
      new RegExp(
        `^${file}:8: 'databases\\.reports\\.password' uses \\$\\{UNSET_RHO_PASSWORD\\}, but the environment variable`,
      ),
    );
    await writeFile(file, '# aliases\ndatabases: [a, b]\n');
    await expect(loadDatabaseConfig({ path: file, env: {} })).rejects.toThrow(
      `${file}:2: 'databases' must be a mapping of alias to settings, such as {chinook: {type: sqlite, path: ./chinook.sqlite}} (got ["a","b"]).`,
    );
    await writeFile(file, 'servers: {}\n');
    await expect(loadDatabaseConfig({ path: file, env: {} })).rejects.toThrow(
      `${file}:1: the document must have a top-level "databases:" mapping of alias to settings.`,
    );
  });

  it('resolves a relative SQLite path against the config file and requires it to exist', async () => {
    const directory = await tempDir();
    await writeFile(join(directory, 'local.sqlite'), '');
    const [config] = parseDatabaseConfig(
      { local: { type: 'sqlite', path: 'local.sqlite' } },
      { file: join(directory, 'databases.yaml') },
    );
    expect(config?.path).toBe(join(directory, 'local.sqlite'));
    const error = errorOf(() =>
      parseDatabaseConfig({ gone: { type: 'sqlite', path: 'missing.sqlite' } }, { baseDir: directory }),
    );
    expect(error.message).toContain('path does not exist');
    expect(
      errorOf(() =>
        parseDatabaseConfig({ s: { type: 'sqlite', path: 'local.sqlite', host: 'x' } }, { baseDir: directory }),
      ).message,
    ).toContain('SQLite only takes "path"');
  });
});

describe('loadDatabaseConfig', () => {
  it('reads $RHO_HOME/databases.yaml, and returns nothing when there is none', async () => {
    const home = await tempDir();
    expect(await loadDatabaseConfig({ rhoHome: home, env: {} })).toEqual([]);
    await writeFile(
      join(home, 'databases.yaml'),
      'databases:\n  warehouse:\n    type: vertica\n    database: dw\n    statement_timeout: 120\n',
    );
    expect(await loadDatabaseConfig({ env: { RHO_HOME: home } })).toEqual([
      { alias: 'warehouse', type: 'vertica', database: 'dw', statementTimeoutSeconds: 120 },
    ]);
  });

  it('prefers an explicit path, then RHO_DB_CONFIG, and fails clearly when the named file is missing', async () => {
    const directory = await tempDir();
    await mkdir(join(directory, 'home'));
    const explicit = join(directory, 'explicit.yaml');
    const fromEnv = join(directory, 'env.yaml');
    await writeFile(explicit, 'databases:\n  a:\n    type: mysql\n    database: one\n');
    await writeFile(fromEnv, 'databases:\n  b:\n    type: mysql\n    database: two\n');
    expect((await loadDatabaseConfig({ path: explicit, env: { RHO_DB_CONFIG: fromEnv } }))[0]?.alias).toBe('a');
    expect((await loadDatabaseConfig({ env: { RHO_DB_CONFIG: fromEnv } }))[0]?.alias).toBe('b');
    await expect(loadDatabaseConfig({ env: { RHO_DB_CONFIG: join(directory, 'nope.yaml') } })).rejects.toThrow(
      /not found.*RHO_DB_CONFIG/,
    );
  });

  it('rejects a file without a databases mapping and invalid YAML', async () => {
    const directory = await tempDir();
    const file = join(directory, 'bad.yaml');
    await writeFile(file, 'servers: {}\n');
    await expect(loadDatabaseConfig({ path: file, env: {} })).rejects.toThrow(/top-level "databases:"/);
    await writeFile(file, 'databases: [unclosed\n');
    await expect(loadDatabaseConfig({ path: file, env: {} })).rejects.toThrow(/not valid YAML/);
  });
});

describe('resolveDatabaseConfig: rho-agent compatibility', () => {
  const fixture = fileURLToPath(new URL('../fixtures/rho-agent/databases.yaml', import.meta.url));
  const fixtureEnv = { CHINOOK_PATH: '', PG_HOST: 'db.internal', PG_USER: 'reader', PG_PASSWORD: 'pw' };

  async function homes(): Promise<{ rhoHome: string; rhoAgentHome: string; sqlite: string }> {
    const root = await tempDir();
    const sqlite = join(root, 'chinook.sqlite');
    await writeFile(sqlite, '');
    return { rhoHome: join(root, 'rho'), rhoAgentHome: join(root, 'rho-agent'), sqlite };
  }

  it("reads RHO_AGENT_DB_CONFIG (a file in rho-agent's layout) when rho has none, with a notice", async () => {
    const { rhoHome, rhoAgentHome, sqlite } = await homes();
    const resolved = await resolveDatabaseConfig({
      rhoHome,
      rhoAgentHome,
      env: { ...fixtureEnv, CHINOOK_PATH: sqlite, RHO_AGENT_DB_CONFIG: fixture },
    });
    expect(resolved.source).toBe('RHO_AGENT_DB_CONFIG');
    expect(resolved.file).toBe(fixture);
    expect(resolved.databases.map((config) => [config.alias, config.type])).toEqual([
      ['chinook', 'sqlite'],
      ['warehouse', 'postgres'],
      ['orders', 'mysql'],
    ]);
    expect(resolved.databases[1]).toMatchObject({ host: 'db.internal', port: 5432, user: 'reader', password: 'pw' });
    expect(resolved.notice).toBe(
      `Using rho-agent's database aliases from ${fixture} (RHO_AGENT_DB_CONFIG), as rho has none of its own (--db-config, RHO_DB_CONFIG, ${join(rhoHome, 'databases.yaml')}). Copy the file to ${join(rhoHome, 'databases.yaml')} to make it rho's.`,
    );
  });

  it('reads ~/.config/rho-agent/databases.yaml when rho has none, and a missing RHO_AGENT_DB_CONFIG file is an error as in rho-agent', async () => {
    const { rhoHome, rhoAgentHome, sqlite } = await homes();
    await mkdir(rhoAgentHome, { recursive: true });
    await writeFile(
      join(rhoAgentHome, 'databases.yaml'),
      `databases:\n  local:\n    type: sqlite\n    path: ${sqlite}\n`,
    );
    const resolved = await resolveDatabaseConfig({ rhoHome, rhoAgentHome, env: {} });
    expect(resolved).toMatchObject({
      source: 'rho_agent_home',
      file: join(rhoAgentHome, 'databases.yaml'),
      databases: [{ alias: 'local', type: 'sqlite', path: sqlite }],
    });
    expect(resolved.notice).toMatch(
      /^Using rho-agent's database aliases from .*rho-agent\/databases\.yaml, as rho has none of its own/,
    );
    await expect(
      resolveDatabaseConfig({
        rhoHome,
        rhoAgentHome,
        env: { RHO_AGENT_DB_CONFIG: join(rhoAgentHome, 'missing.yaml') },
      }),
    ).rejects.toThrow(/Database config file not found: .*missing\.yaml \(from RHO_AGENT_DB_CONFIG\)/);
  });

  it("prefers rho's own files, without a notice", async () => {
    const { rhoHome, rhoAgentHome, sqlite } = await homes();
    await mkdir(rhoHome, { recursive: true });
    await writeFile(join(rhoHome, 'databases.yaml'), `databases:\n  mine:\n    type: sqlite\n    path: ${sqlite}\n`);
    const own = await resolveDatabaseConfig({
      rhoHome,
      rhoAgentHome,
      env: { ...fixtureEnv, CHINOOK_PATH: sqlite, RHO_AGENT_DB_CONFIG: fixture },
    });
    expect(own).toEqual({
      source: 'rho_home',
      file: join(rhoHome, 'databases.yaml'),
      databases: [expect.objectContaining({ alias: 'mine' })],
    });
    const named = await resolveDatabaseConfig({
      rhoHome,
      rhoAgentHome,
      env: { ...fixtureEnv, CHINOOK_PATH: sqlite, RHO_DB_CONFIG: fixture },
    });
    expect(named.source).toBe('RHO_DB_CONFIG');
    expect(named.notice).toBeUndefined();
    expect(
      await resolveDatabaseConfig({
        rhoHome: join(rhoHome, 'none'),
        rhoAgentHome: join(rhoAgentHome, 'none'),
        env: {},
      }),
    ).toEqual({ databases: [], source: 'none' });
  });
});
