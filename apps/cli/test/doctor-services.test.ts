// `rho doctor`'s checks of what a configuration reaches, through the built CLI: the databases of
// databases.yaml (a closed port, a server that never answers, a missing driver package, the
// real PostgreSQL and MariaDB answering; the driver loaded only by doctor, the password never
// printed), the fleet's schema version in the real PostgreSQL, and MCP servers that list their
// tools, die or hang.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { LATEST_SCHEMA_VERSION } from '@rho/fleet';
import { postgresRequired, probePostgres, SHARED_POSTGRES_URL } from '@rho/fleet/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { around, closedPort, doctor, HIDE_MODULES, NO_SANDBOX, privateHome, scratch } from './support/doctor.js';
import { dropSchema, freshSchema } from './support/fleet.js';
import { runRho } from './support/run-rho.js';

const PASSWORD = 'pw-doctor-secret-4242';

/** A private $RHO_HOME whose databases.yaml has these aliases. */
function withDatabases(entries: Record<string, Record<string, string | number>>): string {
  const home = privateHome();
  const lines = ['databases:'];
  for (const [alias, fields] of Object.entries(entries)) {
    lines.push(`  ${alias}:`);
    for (const [key, value] of Object.entries(fields)) lines.push(`    ${key}: ${JSON.stringify(value)}`);
  }
  writeFileSync(join(home, 'databases.yaml'), `${lines.join('\n')}\n`);
  return home;
}

const pg = await probePostgres();
const maria =
  spawnSync('mysql', ['-h', '127.0.0.1', '-P', '3306', '-u', 'root', '-e', 'SELECT 1'], { encoding: 'utf8' }).status ===
  0;
const mariaRequired = process.env.CI === 'true' || process.env.RHO_REQUIRE_DB === '1';

describe('rho doctor: the databases of databases.yaml', () => {
  it('fails a database on a closed port, naming it and where, never printing its password (exit 1)', async () => {
    const port = await closedPort();
    const home = withDatabases({
      closed: { type: 'postgres', host: '127.0.0.1', port, database: 'app', user: 'reader', password: PASSWORD },
    });
    const outcome = await doctor(NO_SANDBOX, around(home));
    expect(outcome.get('database:closed')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(
        new RegExp(
          `^PostgreSQL database closed \\(127\\.0\\.0\\.1:${port}/app, as reader; .*databases\\.yaml\\) does not answer: .*ECONNREFUSED`,
        ),
      ),
      fix: expect.stringContaining('host, port, database, user and password'),
    });
    expect(outcome.code).toBe(1);
    expect(outcome.stdout + outcome.stderr).not.toContain(PASSWORD);
  });

  it('fails a server that accepts and never answers within --timeout, and still finishes', async () => {
    const silent: Server = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as { port: number };
      const home = withDatabases({ stuck: { type: 'postgres', host: '127.0.0.1', port, database: 'app', user: 'u' } });
      const outcome = await doctor(['--timeout', '1', ...NO_SANDBOX], around(home));
      expect(outcome.get('database:stuck')).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining('did not answer within 1 s'),
      });
      expect(outcome.elapsedMs).toBeLessThan(10_000);
    } finally {
      silent.close();
    }
  });

  it('fails a database whose driver package is not installed, with the npm install', async () => {
    const home = withDatabases({
      shop: { type: 'mysql', host: '127.0.0.1', port: await closedPort(), database: 'shop' },
    });
    const outcome = await doctor(
      NO_SANDBOX,
      around(home, { NODE_OPTIONS: HIDE_MODULES, RHO_TEST_HIDE_MODULES: '^mysql2$' }),
    );
    expect(outcome.get('database:shop')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('its driver package mysql2 is not installed'),
      fix: 'npm install mysql2 (or pnpm add / yarn add) next to rho',
    });
  });

  it('loads a driver only for a database configured with it, and only in doctor', async () => {
    const pattern = '^(postgres|mysql2|better-sqlite3|oracledb|vertica-nodejs)$';
    const loaded = async (home: string, args: string[]): Promise<string[]> => {
      const record = join(scratch(), 'imports.txt');
      writeFileSync(record, '');
      const recorder = fileURLToPath(new URL('./support/record-imports.mjs', import.meta.url));
      await runRho(
        args,
        around(home, {
          NODE_OPTIONS: `--import ${recorder}`,
          RHO_TEST_IMPORTS: record,
          RHO_TEST_IMPORTS_PATTERN: pattern,
        }),
      );
      return [...new Set(readFileSync(record, 'utf8').split('\n').filter(Boolean))];
    };
    const home = withDatabases({
      shop: { type: 'mysql', host: '127.0.0.1', port: await closedPort(), database: 'shop' },
    });
    expect(await loaded(home, ['doctor', ...NO_SANDBOX])).toEqual(['mysql2']);
    expect(await loaded(home, ['ps'])).toEqual([]);
    expect(await loaded(privateHome(), ['doctor', ...NO_SANDBOX])).toEqual([]);
  });

  it.runIf(pg.available || postgresRequired)('passes the real PostgreSQL answering', async () => {
    const home = withDatabases({
      main: {
        type: 'postgres',
        host: '127.0.0.1',
        port: 5432,
        database: 'postgres',
        user: 'postgres',
        password: PASSWORD,
      },
    });
    const outcome = await doctor(NO_SANDBOX, around(home));
    expect(outcome.get('database:main')).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(
        /^PostgreSQL database main \(127\.0\.0\.1:5432\/postgres, as postgres; .*\) answers \(\d+ ms\)$/,
      ),
    });
    expect(outcome.code).toBe(0);
    expect(outcome.stdout + outcome.stderr).not.toContain(PASSWORD);
  });

  it.runIf(maria || mariaRequired)('passes the real MariaDB answering', async () => {
    const home = withDatabases({
      maria: { type: 'mysql', host: '127.0.0.1', port: 3306, database: 'mysql', user: 'root' },
    });
    const outcome = await doctor(NO_SANDBOX, around(home));
    expect(outcome.get('database:maria')).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/^MySQL database maria \(127\.0\.0\.1:3306\/mysql, as root; .*\) answers/),
    });
    expect(outcome.code).toBe(0);
  });
});

describe.runIf(pg.available || postgresRequired)('rho doctor: the fleet (the real PostgreSQL)', () => {
  const schema = freshSchema();
  afterAll(() => dropSchema(schema));

  /** A private $RHO_HOME whose config.yaml names the fleet at `url` in the test's schema. */
  const fleetHome = (url = SHARED_POSTGRES_URL): string => {
    const home = privateHome();
    writeFileSync(join(home, 'config.yaml'), `fleet:\n  url: ${JSON.stringify(url)}\n  schema: ${schema}\n`);
    return home;
  };
  const fleet = async (home: string) => (await doctor(NO_SANDBOX, around(home))).get('fleet');

  it('fails a fleet that does not answer, one without a schema, and one at an older version; passes the latest', async () => {
    const port = await closedPort();
    const away = await fleet(fleetHome(`postgres://rho:${PASSWORD}@127.0.0.1:${port}/rho`));
    expect(away).toMatchObject({ status: 'fail', detail: expect.stringMatching(/does not answer/) });
    expect(JSON.stringify(away)).not.toContain(PASSWORD);
    const home = fleetHome();
    expect(await fleet(home)).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining(
        `schema ${schema}: answers, but has no fleet schema (this rho needs version ${LATEST_SCHEMA_VERSION})`,
      ),
      fix: 'rho fleet migrate (once, from any node)',
    });
    const sql = postgres(SHARED_POSTGRES_URL, { max: 1, onnotice: () => undefined });
    try {
      await sql.unsafe(`create schema "${schema}"`);
      await sql.unsafe(
        `create table "${schema}".schema_migrations (version integer primary key, description text not null, applied_at timestamptz not null default now())`,
      );
      await sql.unsafe(
        `insert into "${schema}".schema_migrations (version, description) values (${LATEST_SCHEMA_VERSION - 1}, 'older')`,
      );
      const older = await doctor(NO_SANDBOX, around(home));
      expect(older.get('fleet')).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining(
          `schema at version ${LATEST_SCHEMA_VERSION - 1}, this rho needs ${LATEST_SCHEMA_VERSION}`,
        ),
      });
      expect(older.code).toBe(1);
      await sql.unsafe(`drop schema "${schema}" cascade`);
      const migrated = await runRho(['fleet', 'migrate'], around(home));
      expect(migrated.code, migrated.stderr).toBe(0);
      const latest = await doctor(NO_SANDBOX, around(home));
      expect(latest.get('fleet')).toMatchObject({
        status: 'ok',
        detail: expect.stringContaining(`schema at version ${LATEST_SCHEMA_VERSION} as this rho expects`),
      });
      expect(latest.code).toBe(0);
      await sql.unsafe(
        `insert into "${schema}".schema_migrations (version, description) values (${LATEST_SCHEMA_VERSION + 1}, 'newer')`,
      );
      const newer = await doctor(NO_SANDBOX, around(home));
      expect(newer.get('fleet')).toMatchObject({
        status: 'warn',
        detail: expect.stringContaining(
          `schema at version ${LATEST_SCHEMA_VERSION + 1}, newer than the ${LATEST_SCHEMA_VERSION} of this rho`,
        ),
        fix: 'upgrade rho on this node',
      });
      expect(newer.code).toBe(0);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });
});

describe('rho doctor: MCP servers', () => {
  const liar = fileURLToPath(new URL('../../../packages/tools-mcp/src/test-support/liar-server.mjs', import.meta.url));

  it('passes a server that lists its tools, fails one that exits and one that hangs, within --timeout', async () => {
    const home = privateHome();
    const node = JSON.stringify(process.execPath);
    writeFileSync(
      join(home, 'config.yaml'),
      [
        'mcp_servers:',
        `  liar: {command: ${node}, args: [${JSON.stringify(liar)}]}`,
        `  dies: {command: ${node}, args: ["-e", "process.exit(3)"]}`,
        `  hangs: {command: ${node}, args: ["-e", "setInterval(() => {}, 1000)"]}`,
        '',
      ].join('\n'),
    );
    const outcome = await doctor(['--timeout', '2', ...NO_SANDBOX], around(home));
    expect(outcome.get('mcp:liar')).toMatchObject({
      status: 'ok',
      detail: expect.stringContaining('lists 2 tools: peek, note'),
    });
    expect(outcome.get('mcp:dies')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('could not be started'),
      fix: expect.stringContaining('rho mcp tools dies'),
    });
    expect(outcome.get('mcp:hangs')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('did not list its tools within 2 s'),
    });
    expect(outcome.code).toBe(1);
    expect(outcome.elapsedMs).toBeLessThan(12_000);
  });
});
