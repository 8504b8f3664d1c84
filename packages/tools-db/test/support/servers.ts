// Real PostgreSQL and MariaDB for the integration suites. Locally a suite skips (with the
// reason) when its server does not answer; under CI=true a missing server fails the run.
import { copyFile, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import type { Sql } from 'postgres';
import type { Connection } from 'mysql2/promise';
import type { DatabaseConfig } from '../../src/database-config.js';

const fixtures = fileURLToPath(new URL('../fixtures/chinook/', import.meta.url));

export const POSTGRES_SERVER = {
  host: '127.0.0.1',
  port: 5432,
  user: 'postgres',
  password: '',
  maintenanceDatabase: 'postgres',
};
export const MYSQL_SERVER = { host: '127.0.0.1', port: 3306, user: 'root', password: '' };

/** Whether CI requires the database servers (then a missing one is a failure, not a skip). */
export const serversRequired = process.env.CI === 'true' || process.env.RHO_REQUIRE_DB === '1';

/** Result of probing a server: available, or the reason it is not. */
export interface ServerProbe {
  available: boolean;
  reason: string;
}

/** An admin connection to PostgreSQL (test setup only: the simple protocol runs whole scripts). */
export async function postgresAdmin(
  database = POSTGRES_SERVER.maintenanceDatabase,
  port = POSTGRES_SERVER.port,
): Promise<Sql> {
  return postgres({
    host: POSTGRES_SERVER.host,
    port,
    username: POSTGRES_SERVER.user,
    password: POSTGRES_SERVER.password,
    database,
    max: 1,
    connect_timeout: 3,
    onnotice: () => undefined,
  });
}

/** An admin connection to MariaDB/MySQL allowing multi-statement scripts (test setup only). */
export async function mysqlAdmin(database?: string, port = MYSQL_SERVER.port): Promise<Connection> {
  const mysql = await import('mysql2/promise');
  return mysql.createConnection({
    host: MYSQL_SERVER.host,
    port,
    user: MYSQL_SERVER.user,
    password: MYSQL_SERVER.password,
    multipleStatements: true,
    connectTimeout: 3000,
    ...(database === undefined ? {} : { database }),
  });
}

/** Probes PostgreSQL; throws when servers are required (CI) and it does not answer. */
export async function probePostgres(options: { port?: number; required?: boolean } = {}): Promise<ServerProbe> {
  const port = options.port ?? POSTGRES_SERVER.port;
  let sql: Sql | undefined;
  try {
    sql = await postgresAdmin(POSTGRES_SERVER.maintenanceDatabase, port);
    await sql`select 1`;
    return { available: true, reason: '' };
  } catch (error) {
    return gate('PostgreSQL', `${POSTGRES_SERVER.host}:${port}`, error, options.required ?? serversRequired);
  } finally {
    await sql?.end({ timeout: 0 }).catch(() => undefined);
  }
}

/** Probes MariaDB/MySQL; throws when servers are required (CI) and it does not answer. */
export async function probeMysql(options: { port?: number; required?: boolean } = {}): Promise<ServerProbe> {
  const port = options.port ?? MYSQL_SERVER.port;
  try {
    const connection = await mysqlAdmin(undefined, port);
    await connection.query('select 1');
    await connection.end();
    return { available: true, reason: '' };
  } catch (error) {
    return gate('MariaDB', `${MYSQL_SERVER.host}:${port}`, error, options.required ?? serversRequired);
  }
}

function gate(label: string, where: string, error: unknown, required: boolean): ServerProbe {
  const reason = `${label} at ${where} does not answer (${(error as Error).message}); start it (see .ci/run) to run these tests`;
  if (required) throw new Error(`CI requires ${reason}`);
  return { available: false, reason };
}

/** Drops and recreates `name` on PostgreSQL and loads the Chinook fixture into it, plus probes. */
export async function createPostgresChinook(name: string): Promise<DatabaseConfig> {
  const admin = await postgresAdmin();
  try {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.unsafe(`CREATE DATABASE ${name} ENCODING 'UTF8' TEMPLATE template0`);
  } finally {
    await admin.end();
  }
  const script = await readFile(join(fixtures, 'Chinook_PostgreSql.sql'), 'utf8');
  // The script creates its own `chinook` database and connects with psql's \c: keep only what follows.
  const body = script.slice(script.indexOf('\\c chinook;') + '\\c chinook;'.length);
  const sql = await postgresAdmin(name);
  try {
    await sql.unsafe(body);
    // Objects the hostile corpus aims at besides tables: a sequence, a view, a function.
    await sql.unsafe(`
      CREATE SEQUENCE probe_seq START 42;
      CREATE TABLE probe_log (id serial PRIMARY KEY, note text NOT NULL);
      INSERT INTO probe_log (note) VALUES ('first'), ('second');
      CREATE VIEW big_spenders AS SELECT customer_id, sum(total) AS spent FROM invoice GROUP BY customer_id HAVING sum(total) > 45;
      CREATE FUNCTION probe_write() RETURNS int LANGUAGE sql AS $$ INSERT INTO probe_log (note) VALUES ('from function') RETURNING id $$;
    `);
  } finally {
    await sql.end();
  }
  return {
    alias: 'chinook',
    type: 'postgres',
    host: POSTGRES_SERVER.host,
    port: POSTGRES_SERVER.port,
    user: POSTGRES_SERVER.user,
    password: POSTGRES_SERVER.password,
    database: name,
    statementTimeoutSeconds: 5,
  };
}

/** Drops and recreates `name` on MariaDB and loads the Chinook fixture into it, plus probes. */
export async function createMysqlChinook(name: string): Promise<DatabaseConfig> {
  const script = await readFile(join(fixtures, 'Chinook_MySql.sql'), 'utf8');
  // The script drops, creates and uses its own `Chinook` database: keep only what follows USE.
  const body = script.slice(script.indexOf('USE `Chinook`;') + 'USE `Chinook`;'.length);
  const admin = await mysqlAdmin();
  try {
    await admin.query(
      `DROP DATABASE IF EXISTS \`${name}\`; CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci; USE \`${name}\`;`,
    );
    await admin.query(body);
    await admin.query(`
      CREATE TABLE probe_log (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(100) NOT NULL);
      INSERT INTO probe_log (note) VALUES ('first'), ('second');
      CREATE SEQUENCE probe_seq START WITH 42;
      CREATE VIEW big_spenders AS SELECT CustomerId, SUM(Total) AS spent FROM Invoice GROUP BY CustomerId HAVING SUM(Total) > 45;
    `);
  } finally {
    await admin.end();
  }
  return {
    alias: 'chinook',
    type: 'mysql',
    host: MYSQL_SERVER.host,
    port: MYSQL_SERVER.port,
    user: MYSQL_SERVER.user,
    password: MYSQL_SERVER.password,
    database: name,
    statementTimeoutSeconds: 5,
  };
}

/** A private copy of the Chinook SQLite file in a fresh temp directory. */
export async function copySqliteChinook(): Promise<{ directory: string; config: DatabaseConfig }> {
  const directory = await mkdtemp(join(tmpdir(), 'rho-tools-db-'));
  const path = join(directory, 'chinook.sqlite');
  await copyFile(join(fixtures, 'Chinook_Sqlite.sqlite'), path);
  return { directory, config: { alias: 'chinook', type: 'sqlite', path, statementTimeoutSeconds: 5 } };
}
