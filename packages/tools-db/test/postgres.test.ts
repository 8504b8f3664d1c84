import { chmod, mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Sql } from 'postgres';
import type { Tool } from '@rho/core';
import { checkSql } from '@rho/permissions';
import { closeDbTools, createDbTools } from '../src/db-tools.js';
import type { DatabaseConfig } from '../src/database-config.js';
import type { DatabaseWarning } from '../src/db-tools.js';
import { POSTGRES_READS, postgresHostile } from './support/corpus.js';
import { createPostgresChinook, postgresAdmin, probePostgres } from './support/servers.js';
import { call, profile, toolNamed } from './support/tool-call.js';

const DATABASE = 'rho_test_chinook_pg';
const probe = await probePostgres();
const opened: Tool[][] = [];
let config: DatabaseConfig;
let admin: Sql;
let hostileDir: string;
let exportDir: string;

function postgresTool(
  profileName: 'readonly' | 'readonly-exports' | 'unrestricted',
  options: { skipSqlPolicy?: boolean; onWarning?: (warning: DatabaseWarning) => void } = {},
): Tool {
  const list = createDbTools(
    {
      profile: profile(profileName),
      databases: [config],
      workingDir: exportDir,
      ...(options.onWarning ? { onWarning: options.onWarning } : {}),
    },
    { skipSqlPolicy: options.skipSqlPolicy === true },
  );
  opened.push(list);
  return toolNamed(list, 'postgres');
}

/** Everything the corpus must leave alone, as one comparable object. */
async function snapshot(): Promise<Record<string, unknown>> {
  const tables = await admin<{ table_name: string }[]>`
    SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`;
  const contents: Record<string, unknown> = {};
  for (const { table_name: table } of tables) {
    const [row] = await admin.unsafe(
      `SELECT count(*)::int AS n, md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS sum FROM "${table}" t`,
    );
    contents[table] = row;
  }
  const schema = await admin`
    SELECT n.nspname, c.relname, c.relkind, c.relpersistence FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND n.nspname NOT LIKE 'pg_temp%' AND n.nspname NOT LIKE 'pg_toast_temp%'
    ORDER BY 1, 2`;
  const columns =
    await admin`SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 2`;
  const functions =
    await admin`SELECT proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' ORDER BY 1`;
  const comments =
    await admin`SELECT count(*)::int AS n FROM pg_description d JOIN pg_class c ON c.oid = d.objoid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'`;
  const grants =
    await admin`SELECT table_name, grantee, privilege_type FROM information_schema.role_table_grants WHERE table_schema = 'public' ORDER BY 1, 2, 3`;
  const sequences =
    await admin`SELECT last_value, is_called FROM probe_seq UNION ALL SELECT last_value, is_called FROM probe_log_id_seq`;
  const roles = await admin`SELECT rolname, rolsuper FROM pg_roles WHERE rolname IN ('pwned', 'postgres') ORDER BY 1`;
  const schemas = await admin`SELECT nspname FROM pg_namespace WHERE nspname IN ('pwned', 'public') ORDER BY 1`;
  const extensions = await admin`SELECT extname FROM pg_extension ORDER BY 1`;
  const fileSettings = await admin`SELECT name, setting FROM pg_file_settings ORDER BY 1, 2`;
  const roleSettings = await admin`SELECT setdatabase, setrole, setconfig FROM pg_db_role_setting ORDER BY 1, 2`;
  const largeObjects = await admin`SELECT count(*)::int AS n FROM pg_largeobject_metadata`;
  const advisoryLocks = await admin`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'`;
  const adminAlive = await admin`SELECT pg_backend_pid() AS pid`;
  const replicationSlots = await admin`SELECT slot_name FROM pg_replication_slots ORDER BY 1`;
  return {
    contents,
    schema,
    columns,
    functions,
    comments,
    grants,
    sequences,
    roles,
    schemas,
    extensions,
    fileSettings,
    roleSettings,
    largeObjects,
    advisoryLocks,
    adminAlive,
    replicationSlots,
    files: await readdir(hostileDir),
    // Other engineers' runs create temp entries concurrently: only names the corpus could write are compared.
    tempEntries: (await readdir(tmpdir())).filter((name) => /pwned/i.test(name)),
  };
}

describe.skipIf(!probe.available)(
  `postgres tool against a real server${probe.available ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    beforeAll(async () => {
      config = await createPostgresChinook(DATABASE);
      admin = await postgresAdmin(DATABASE);
      // Server processes run as another user: the hostile directory must be writable by them, so
      // that only rho stands between a file-writing statement and the file.
      hostileDir = await mkdtemp(join(tmpdir(), 'rho-hostile-pg-'));
      await chmod(hostileDir, 0o777);
      exportDir = await mkdtemp(join(tmpdir(), 'rho-export-pg-'));
    });

    afterAll(async () => {
      for (const list of opened) await closeDbTools(list);
      await admin?.end();
    });

    it('lists tables, describes one with keys and indexes, and shows exact trailers', async () => {
      const tool = postgresTool('readonly');
      const tables = await call(tool, { operation: 'list_tables' });
      expect(tables.success, tables.content).toBe(true);
      expect(tables.content).toMatch(/public\s+\| invoice_line\s+\| BASE TABLE/);
      expect(tables.content).toMatch(/public\s+\| big_spenders\s+\| VIEW/);
      const described = await call(tool, { operation: 'describe', table_name: 'track' });
      expect(described.content).toMatch(/^ {2}track_id\s+integer\s+NOT NULL$/m);
      expect(described.content).toMatch(/^ {2}name\s+character varying\(200\)\s+NOT NULL$/m);
      expect(described.content).toContain('Primary Key: (track_id)');
      expect(described.content).toMatch(/track_album_id_fkey: \(album_id\) -> album\(album_id\)/);
      expect(described.content).toMatch(/track_album_id_idx \(NONUNIQUE\) on \(album_id\)/);
      expect(described.content).toMatch(/track_pkey \(UNIQUE\) on \(track_id\)/);
      const artists = await call(tool, {
        operation: 'query',
        sql: 'SELECT artist_id, name FROM artist ORDER BY artist_id',
        row_limit: 10,
      });
      expect(artists.content.split('\n').at(-1)).toBe('... (265 more rows)');
      expect(artists.metadata).toMatchObject({ row_count: 10, total_rows: 275 });
      const types = await call(tool, {
        operation: 'query',
        sql: "SELECT invoice_date, total, NULL::text AS nothing, '{\"a\":1}'::jsonb AS doc, '\\x00ff'::bytea AS raw FROM invoice WHERE invoice_id = 1",
      });
      expect(types.content).toMatch(/2021-01-01 00:00:00 \| 1\.98\s+\| NULL\s+\| {"a":1}\s+\| \\x00ff/);
      const plan = await call(tool, { operation: 'query', sql: 'EXPLAIN SELECT * FROM track WHERE album_id = 1' });
      expect(plan.content).toMatch(/^QUERY PLAN\n-+\n.*Scan/);
    });

    it('warns once, in metadata and through onWarning, that a superuser account can write', async () => {
      const warnings: DatabaseWarning[] = [];
      const tool = postgresTool('readonly', { onWarning: (warning) => warnings.push(warning) });
      const first = await call(tool, { operation: 'list_tables' });
      const second = await call(tool, { operation: 'list_tables' });
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.message).toMatch(/superuser/);
      expect(first.metadata?.warning).toBe(warnings[0]?.message);
      expect(second.metadata?.warning).toBeUndefined();
    });

    it('reports a server that is down clearly', async () => {
      const list = createDbTools({ profile: profile('readonly'), databases: [{ ...config, port: 1 }] });
      opened.push(list);
      const result = await call(toolNamed(list, 'postgres'), { operation: 'list_tables' });
      expect(result.success).toBe(false);
      expect(result.content).toMatch(
        /^PostgreSQL error: cannot connect to PostgreSQL database "chinook" at 127\.0\.0\.1:1: .*Is the server running/,
      );
    });

    it('reconnects without a failed call when the server ends an idle session', async () => {
      const tool = postgresTool('readonly');
      const pidOf = async (): Promise<string> => {
        const result = await call(tool, { operation: 'query', sql: 'SELECT pg_backend_pid() AS pid' });
        expect(result.success, result.content).toBe(true);
        return result.content.split('\n')[2]?.trim() ?? '';
      };
      const before = await pidOf();
      await admin.unsafe(`SELECT pg_terminate_backend(${Number(before)})`);
      await vi.waitFor(async () =>
        expect(await admin.unsafe(`SELECT 1 FROM pg_stat_activity WHERE pid = ${Number(before)}`)).toHaveLength(0),
      );
      const after = await pidOf();
      expect(after).not.toBe(before);
    });

    it('stops a statement at the statement timeout', async () => {
      const list = createDbTools(
        { profile: profile('readonly'), databases: [{ ...config, statementTimeoutSeconds: 0.5 }] },
        { skipSqlPolicy: true },
      );
      opened.push(list);
      const result = await call(toolNamed(list, 'postgres'), { operation: 'query', sql: 'SELECT pg_sleep(30)' });
      expect(result.success).toBe(false);
      expect(result.content).toMatch(/statement timeout/);
    });

    it('cancels a running statement when the run is cancelled, and the connection stays usable', async () => {
      const tool = postgresTool('readonly', { skipSqlPolicy: true });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 300);
      const cancelled = await call(
        tool,
        { operation: 'query', sql: 'SELECT pg_sleep(20)' },
        exportDir,
        controller.signal,
      );
      expect(cancelled.success).toBe(false);
      expect(cancelled.content).toMatch(/cancel/i);
      const after = await call(tool, { operation: 'query', sql: 'SELECT 1 AS one' });
      expect(after.content).toMatch(/^1$/m);
    });

    it('does not start a statement whose run was cancelled while the connection opened', async () => {
      const tool = postgresTool('readonly', { skipSqlPolicy: true });
      const controller = new AbortController();
      controller.abort();
      // Before the fix the listener was added after the abort fired, postgres.js cannot cancel an
      // unsent query, and pg_sleep(20) ran to the end (the test then runs into vitest's timeout).
      const cancelled = await call(
        tool,
        { operation: 'query', sql: 'SELECT pg_sleep(20)' },
        exportDir,
        controller.signal,
      );
      expect(cancelled.success).toBe(false);
      // Refused before anything was sent, not a server-side cancel or timeout of a started statement.
      expect(cancelled.content).toMatch(/the statement was cancelled/);
      const after = await call(tool, { operation: 'query', sql: 'SELECT 1 AS one' });
      expect(after.content).toMatch(/^1$/m);
    });

    it('runs writes normally in mutations mode', async () => {
      const tool = postgresTool('unrestricted');
      const insert = await call(tool, {
        operation: 'query',
        sql: "INSERT INTO probe_log (note) VALUES ('mutations') RETURNING id",
      });
      expect(insert.success, insert.content).toBe(true);
      const [row] = await admin`SELECT count(*)::int AS n FROM probe_log WHERE note = 'mutations'`;
      expect(row?.n).toBe(1);
      await admin`DELETE FROM probe_log WHERE note = 'mutations'`;
    });

    describe('hostile corpus in readonly mode as a superuser', () => {
      const statements = postgresHostile('HOSTILE_DIR', DATABASE);

      it('has at least 60 statements', () => {
        expect(statements.length).toBeGreaterThanOrEqual(60);
      });

      it('changes no table, schema object, sequence, setting, session or file, through the whole tool', async () => {
        const tool = postgresTool('readonly');
        const before = await snapshot();
        const allowed: string[] = [];
        for (const statement of postgresHostile(hostileDir, DATABASE)) {
          // Statements that would disturb the shared server (and other people's sessions) if the
          // policy ever let them through are checked against it first and not sent when allowed.
          if (
            /pg_terminate_backend|pg_cancel_backend|pg_reload_conf|ALTER SYSTEM|pg_switch_wal/i.test(statement) &&
            (await checkSql(statement, 'postgres')).allowed
          ) {
            allowed.push(statement);
            continue;
          }
          const result = await call(tool, { operation: 'query', sql: statement });
          if (result.success) allowed.push(statement);
        }
        expect(await snapshot()).toEqual(before);
        // Every statement must also be refused: a hostile statement that "succeeds" harmlessly
        // would still be a policy gap worth seeing.
        expect(allowed).toEqual([]);
      });

      it('the read-only transaction alone (SQL policy bypassed) stops every data and schema write', async () => {
        const tool = postgresTool('readonly', { skipSqlPolicy: true });
        const before = await snapshot();
        const writes = [
          "INSERT INTO artist VALUES (9999, 'pwned')",
          "UPDATE track SET name = 'pwned'",
          'DELETE FROM invoice_line',
          'DROP TABLE genre',
          'TRUNCATE playlist_track',
          'CREATE TABLE pwned (a int)',
          'CREATE TEMP TABLE pwned (a int)',
          'ALTER TABLE album ADD COLUMN pwned int',
          'CREATE INDEX pwned_idx ON artist (name)',
          'CREATE SCHEMA pwned',
          "COMMIT; INSERT INTO artist VALUES (9999, 'pwned')",
          'SELECT 1; DELETE FROM genre',
          'WITH d AS (DELETE FROM genre RETURNING *) SELECT * FROM d',
          'SELECT * INTO pwned FROM artist',
          'CREATE TABLE pwned AS SELECT * FROM artist',
          "SELECT nextval('probe_seq')",
          "SELECT setval('probe_seq', 1000)",
          'SELECT probe_write()',
          "DO $$ BEGIN INSERT INTO genre VALUES (98, 'x'); END $$",
          'SELECT * FROM artist FOR UPDATE',
          'MERGE INTO genre g USING (SELECT 1 AS id) s ON g.genre_id = s.id WHEN MATCHED THEN DELETE',
          'EXPLAIN ANALYZE DELETE FROM genre',
          "ALTER SYSTEM SET work_mem = '64MB'",
          'CREATE ROLE pwned LOGIN',
          'ALTER SEQUENCE probe_seq RESTART 1',
          'VACUUM artist',
          'REFRESH MATERIALIZED VIEW big_spenders',
        ];
        for (const statement of writes) {
          const result = await call(tool, { operation: 'query', sql: statement });
          expect(result.success, `${statement}\n${result.content}`).toBe(false);
        }
        // Session state a statement may set is rolled back or discarded before the next call.
        const sessionChanges = [
          "SELECT set_config('default_transaction_read_only', 'off', false)",
          'SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE',
          'SELECT pg_advisory_lock(4242)',
          'PREPARE pwned AS SELECT 1',
          // PostgreSQL allows LOCK in a read-only transaction; the rollback releases it.
          'LOCK TABLE artist IN ACCESS EXCLUSIVE MODE',
          'COMMIT',
        ];
        for (const statement of sessionChanges) {
          await call(tool, { operation: 'query', sql: statement });
          const after = await call(tool, {
            operation: 'query',
            sql: "SELECT current_setting('default_transaction_read_only') AS ro, current_setting('transaction_read_only') AS tx",
          });
          expect(after.content, statement).toMatch(/^on\s+\| on$/m);
          const insert = await call(tool, { operation: 'query', sql: "INSERT INTO genre VALUES (97, 'after') " });
          expect(insert.success, statement).toBe(false);
        }
        expect(await snapshot()).toEqual(before);
      });

      it('always rolls back: a notification a statement sends is never delivered', async () => {
        // A read-only transaction that committed would deliver it: the rollback is what stops it.
        const tool = postgresTool('readonly', { skipSqlPolicy: true });
        const received: string[] = [];
        const listener = await admin.listen('rho_probe_channel', (payload) => received.push(payload));
        try {
          const sent = await call(tool, {
            operation: 'query',
            sql: "SELECT pg_notify('rho_probe_channel', 'from the tool')",
          });
          expect(sent.success, sent.content).toBe(true);
          // Notifications arrive in commit order: once this later one is in, an earlier one would be.
          await admin`SELECT pg_notify('rho_probe_channel', 'control')`;
          await vi.waitFor(() => expect(received).toContain('control'));
          expect(received).toEqual(['control']);
        } finally {
          await listener.unlisten();
        }
      });
    });

    describe('legitimate reads', () => {
      it('has at least 30 of them', () => {
        expect(POSTGRES_READS.length).toBeGreaterThanOrEqual(30);
      });

      it.each(POSTGRES_READS)('%s returns its rows', async (sql) => {
        const expected = await admin.unsafe(sql);
        const result = await call(postgresTool('readonly'), { operation: 'query', sql, row_limit: 10_000 });
        expect(result.success, result.content).toBe(true);
        expect(result.metadata?.total_rows).toBe(expected.length);
        expect(expected.length).toBeGreaterThan(0);
      });
    });

    describe('export_query', () => {
      it('streams a large result to CSV and refuses statements the policy refuses', async () => {
        const tool = postgresTool('readonly-exports');
        const result = await call(tool, {
          operation: 'export_query',
          sql: "SELECT n, 'row ' || n AS label, CASE WHEN n % 2 = 0 THEN NULL ELSE 'x,\"y\"' END AS tricky FROM generate_series(1, 50000) n",
          export_path: 'big.csv',
        });
        expect(result.success, result.content).toBe(true);
        expect(result.metadata).toMatchObject({ row_count: 50000, column_count: 3 });
        const { readFile } = await import('node:fs/promises');
        const lines = (await readFile(join(exportDir, 'big.csv'), 'utf8')).split('\r\n');
        expect(lines.slice(0, 3)).toEqual(['n,label,tricky', '1,row 1,"x,""y"""', '2,row 2,']);
        const refused = await call(tool, {
          operation: 'export_query',
          sql: 'DELETE FROM genre RETURNING *',
          export_path: 'refused.csv',
        });
        expect(refused.success).toBe(false);
        expect(await readdir(exportDir)).not.toContain('refused.csv');
      });
    });
  },
);
