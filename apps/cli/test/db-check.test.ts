import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { postgresRequired, probePostgres, SHARED_POSTGRES_URL } from '@rho/fleet/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

// Issue 32: `rho db check ALIAS` connects with the alias's configured account and reports what it
// can do that a read-only agent's account should not, with a GRANT script for a least-privilege
// read account. Against the real PostgreSQL and MariaDB of the machine: a least-privilege account
// passes (exit 0), a too-powerful one is reported with each power named (exit 1), and the GRANT
// script rho prints, run as is, makes an account that passes. The old rho has no `db` command.

const suffix = randomBytes(4).toString('hex');
const root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-db-check-')));
const home = join(root, 'rho-home');

/** Writes a databases.yaml with these aliases and returns its path. */
function aliases(name: string, entries: Record<string, Record<string, string | number>>): string {
  const lines = ['databases:'];
  for (const [alias, fields] of Object.entries(entries)) {
    lines.push(`  ${alias}:`);
    for (const [key, value] of Object.entries(fields)) lines.push(`    ${key}: ${JSON.stringify(value)}`);
  }
  const path = join(root, `${name}.yaml`);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

async function check(
  file: string,
  alias: string,
  extra: string[] = [],
): Promise<{
  code: number | null;
  report: { ok: boolean; findings: { kind: string; message: string }[]; grantScript: string };
  stderr: string;
}> {
  const outcome = await runRho(['db', 'check', alias, '--db-config', file, '--json', ...extra], {
    env: { RHO_HOME: home },
    cwd: root,
  });
  let report;
  try {
    report = JSON.parse(outcome.stdout);
  } catch {
    throw new Error(`rho db check ${alias} printed no JSON (exit ${outcome.code}): ${outcome.stdout}${outcome.stderr}`);
  }
  return { code: outcome.code, report, stderr: outcome.stderr };
}

const kinds = (report: { findings: { kind: string; message: string }[] }): string[] =>
  report.findings.map((finding) => finding.kind);

const pg = await probePostgres();
const pgDatabase = `rho_test_dbcheck_${suffix}`;
const pgRoles = [`rho_dbcheck_ro_${suffix}`, `rho_dbcheck_rw_${suffix}`, `rho_dbcheck_new_${suffix}`];

describe.runIf(pg.available || postgresRequired)('rho db check against PostgreSQL', () => {
  const admin = postgres(SHARED_POSTGRES_URL, { max: 1, onnotice: () => undefined });
  const inDatabase = postgres(SHARED_POSTGRES_URL.replace(/\/postgres$/, `/${pgDatabase}`), {
    max: 1,
    onnotice: () => undefined,
  });
  afterAll(async () => {
    await inDatabase.end({ timeout: 1 });
    await admin.unsafe(`DROP DATABASE IF EXISTS ${pgDatabase} WITH (FORCE)`);
    for (const role of pgRoles) await admin.unsafe(`DROP ROLE IF EXISTS ${role}`);
    await admin.end({ timeout: 1 });
  });

  it('passes a least-privilege role, names every power of a too-powerful one, and its GRANT script works', async () => {
    const [ro, rw, fresh] = pgRoles as [string, string, string];
    await admin.unsafe(`CREATE DATABASE ${pgDatabase}`);
    await inDatabase.unsafe('CREATE TABLE public.item (n serial PRIMARY KEY, label text)');
    await admin.unsafe(`CREATE ROLE ${ro} LOGIN PASSWORD 'ro-secret'`);
    await admin.unsafe(`GRANT CONNECT ON DATABASE ${pgDatabase} TO ${ro}`);
    await inDatabase.unsafe(`GRANT USAGE ON SCHEMA public TO ${ro}`);
    await inDatabase.unsafe(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${ro}`);
    const file = aliases('pg', {
      fit: { type: 'postgres', host: '127.0.0.1', database: pgDatabase, user: ro, password: 'ro-secret' },
      powerful: { type: 'postgres', host: '127.0.0.1', database: pgDatabase, user: rw, password: 'rw-secret' },
      fresh: { type: 'postgres', host: '127.0.0.1', database: pgDatabase, user: fresh, password: 'new-secret' },
    });

    const fit = await check(file, 'fit');
    expect(fit.report.findings, fit.stderr).toEqual([]);
    expect(fit).toMatchObject({ code: 0, report: { ok: true } });

    // Too powerful: role attributes, dangerous predefined roles, write grants, CREATE, dblink.
    await inDatabase.unsafe('CREATE EXTENSION IF NOT EXISTS dblink');
    await admin.unsafe(`CREATE ROLE ${rw} LOGIN PASSWORD 'rw-secret' CREATEDB CREATEROLE`);
    await admin.unsafe(`GRANT CONNECT, CREATE ON DATABASE ${pgDatabase} TO ${rw}`);
    await admin.unsafe(`GRANT pg_signal_backend, pg_execute_server_program TO ${rw}`);
    await inDatabase.unsafe(`GRANT USAGE, CREATE ON SCHEMA public TO ${rw}`);
    await inDatabase.unsafe(`GRANT SELECT, INSERT, DELETE ON public.item TO ${rw}`);
    await inDatabase.unsafe(`GRANT UPDATE ON SEQUENCE public.item_n_seq TO ${rw}`);
    const powerful = await check(file, 'powerful', ['--role', fresh]);
    expect(powerful.code).toBe(1);
    expect(powerful.report.ok).toBe(false);
    expect(kinds(powerful.report).sort()).toEqual(
      [
        'create_database',
        'create_role',
        'database_create',
        'extension',
        'role_membership',
        'role_membership',
        'schema_create',
        'sequence_write',
        'table_write',
      ].sort(),
    );
    const text = powerful.report.findings.map((finding) => finding.message).join('\n');
    expect(text).toContain('pg_signal_backend');
    expect(text).toContain('pg_execute_server_program');
    expect(text).toContain('public.item (INSERT, DELETE)');
    expect(text).toMatch(/dblink extension is installed/);
    // The least-privilege role of the printed script (password filled in) passes, dblink included.
    const script = powerful.report.grantScript.replace("PASSWORD '...'", "PASSWORD 'new-secret'");
    expect(script).toContain(`CREATE ROLE "${fresh}"`);
    await inDatabase.unsafe(script);
    const made = await check(file, 'fresh');
    expect(made.report.findings, made.stderr).toEqual([]);
    expect(made.code).toBe(0);

    // The text report says the same, with the script.
    const plain = await runRho(['db', 'check', 'powerful', '--db-config', file], {
      env: { RHO_HOME: home },
      cwd: root,
    });
    expect(plain.code).toBe(1);
    expect(plain.stdout).toMatch(/^TOO POWERFUL: database "powerful" \(postgres, /);
    expect(plain.stdout).toContain('GRANT SELECT ON ALL TABLES IN SCHEMA "public" TO "rho_reader";');
  });
});

function mariadb(sql: string): { ok: boolean; output: string } {
  const run = spawnSync('mysql', ['-h', '127.0.0.1', '-P', '3306', '-u', 'root', '-e', sql], { encoding: 'utf8' });
  return { ok: run.status === 0, output: `${run.stdout ?? ''}${run.stderr ?? ''}${run.error?.message ?? ''}` };
}

const maria = mariadb('SELECT 1');
const mariaRequired = process.env.CI === 'true' || process.env.RHO_REQUIRE_DB === '1';
const myDatabase = `rho_test_dbcheck_${suffix}`;
const myUsers = [`rho_dbcheck_ro_${suffix}`, `rho_dbcheck_rw_${suffix}`, `rho_dbcheck_new_${suffix}`];

describe.runIf(maria.ok || mariaRequired)('rho db check against MariaDB', () => {
  afterAll(() => {
    mariadb(`DROP DATABASE IF EXISTS ${myDatabase}`);
    for (const user of myUsers) mariadb(`DROP USER IF EXISTS '${user}'@'%'`);
  });

  it('passes a SELECT-only account, names SUPER, PROCESS, FILE, writes and GRANT OPTION, and its GRANT script works', async () => {
    expect(maria.ok, maria.output).toBe(true);
    const [ro, rw, fresh] = myUsers as [string, string, string];
    const setup = mariadb(
      [
        `CREATE DATABASE ${myDatabase}`,
        `CREATE TABLE ${myDatabase}.item (n INT PRIMARY KEY, label TEXT)`,
        `CREATE USER '${ro}'@'%' IDENTIFIED BY 'ro-secret'`,
        `GRANT SELECT, SHOW VIEW ON ${myDatabase}.* TO '${ro}'@'%'`,
        `CREATE USER '${rw}'@'%' IDENTIFIED BY 'rw-secret'`,
        `GRANT SUPER, PROCESS, FILE ON *.* TO '${rw}'@'%'`,
        `GRANT SELECT, INSERT, UPDATE ON ${myDatabase}.* TO '${rw}'@'%' WITH GRANT OPTION`,
      ].join(';'),
    );
    expect(setup.ok, setup.output).toBe(true);
    const file = aliases('maria', {
      fit: { type: 'mysql', host: '127.0.0.1', database: myDatabase, user: ro, password: 'ro-secret' },
      powerful: { type: 'mysql', host: '127.0.0.1', database: myDatabase, user: rw, password: 'rw-secret' },
      fresh: { type: 'mysql', host: '127.0.0.1', database: myDatabase, user: fresh, password: 'new-secret' },
    });

    const fit = await check(file, 'fit');
    expect(fit.report.findings, fit.stderr).toEqual([]);
    expect(fit.code).toBe(0);

    const powerful = await check(file, 'powerful', ['--role', fresh]);
    expect(powerful.code).toBe(1);
    const text = powerful.report.findings.map((finding) => finding.message).join('\n');
    for (const power of ['SUPER', 'PROCESS', 'FILE']) expect(text).toMatch(new RegExp(`it has ${power} ON \\*\\.\\*`));
    expect(text).toContain(`it may write: INSERT, UPDATE ON \`${myDatabase}\`.*`);
    expect(kinds(powerful.report)).toContain('grant_option');

    const script = powerful.report.grantScript.replace("IDENTIFIED BY '...'", "IDENTIFIED BY 'new-secret'");
    const made = mariadb(script);
    expect(made.ok, made.output).toBe(true);
    const fresh_ = await check(file, 'fresh');
    expect(fresh_.report.findings, fresh_.stderr).toEqual([]);
    expect(fresh_.code).toBe(0);
  });
});

describe('rho db check of a SQLite file', () => {
  it('reports a file rho can write (exit 1) and passes one it cannot (exit 0, as another user)', async () => {
    const directory = join(root, 'sqlite');
    spawnSync('mkdir', ['-p', directory]);
    const path = join(directory, 'data.sqlite');
    writeFileSync(path, '');
    const file = aliases('lite', { lite: { type: 'sqlite', path } });
    const writable = await check(file, 'lite');
    expect(writable.code).toBe(1);
    expect(kinds(writable.report)).toEqual(['file_writable']);
    expect(writable.report.grantScript).toContain(`chmod a-w '${path}'`);
    if (process.getuid?.() !== 0) return;
    // As an unprivileged user, a file it cannot write passes.
    chmodSync(path, 0o444);
    for (const folder of [root, directory]) chmodSync(folder, 0o755);
    const outcome = await runRho(['db', 'check', 'lite', '--db-config', file, '--json'], {
      env: { RHO_HOME: join(root, 'nobody-home') },
      cwd: root,
      uid: 65534,
      gid: 65534,
    });
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(JSON.parse(outcome.stdout)).toMatchObject({ ok: true, findings: [] });
  });

  it('says which aliases exist when the alias is unknown (exit 2)', async () => {
    writeFileSync(join(root, 'one.sqlite'), '');
    const file = aliases('unknown', { one: { type: 'sqlite', path: join(root, 'one.sqlite') } });
    const outcome = await runRho(['db', 'check', 'two', '--db-config', file], { env: { RHO_HOME: home }, cwd: root });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('Unknown database alias "two"');
    expect(outcome.stderr).toContain('use one of one');
  });
});
