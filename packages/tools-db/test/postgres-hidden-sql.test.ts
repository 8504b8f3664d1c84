// Issue 14's PostgreSQL bypasses, each proved twice in a scratch database: with the SQL policy
// bypassed (the database's read-only transaction alone), the statement really has its effect
// (a row written through dblink, a session killed, a server file written or read, a replication
// slot that outlives the rollback, a catalog with password hashes read); through the whole tool
// in readonly mode it is refused and the effect does not happen.
import { chmod, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from 'postgres';
import type { Tool, ToolResult } from '@rho/core';
import { closeDbTools, createDbTools } from '../src/db-tools.js';
import type { DatabaseConfig } from '../src/database-config.js';
import { POSTGRES_SERVER, createPostgresChinook, postgresAdmin, probePostgres } from './support/servers.js';
import { call, profile, toolNamed } from './support/tool-call.js';

const DATABASE = 'rho_test_hidden_pg';
const SLOT = 'rho_test_hidden_slot';
const probe = await probePostgres();
const opened: Tool[][] = [];
let config: DatabaseConfig;
let admin: Sql;
let hostileDir: string;
let largeObject = 0;

function tool(options: { skipSqlPolicy: boolean }): Tool {
  const list = createDbTools(
    { profile: profile('readonly'), databases: [config], workingDir: hostileDir },
    { skipSqlPolicy: options.skipSqlPolicy },
  );
  opened.push(list);
  return toolNamed(list, 'postgres');
}

/** A statement text run by ts_stat: the SQL the policy never sees unless it refuses ts_stat. */
const viaTsStat = (expression: string): string =>
  `SELECT * FROM ts_stat($hidden$SELECT to_tsvector((${expression})::text)$hidden$)`;
const dblinkInsert = (note: string): string =>
  `dblink_exec('dbname=${DATABASE} host=${POSTGRES_SERVER.host} port=${POSTGRES_SERVER.port} user=${POSTGRES_SERVER.user}', 'INSERT INTO probe_log (note) VALUES (''${note}'')')`;

async function notes(note: string): Promise<number> {
  const [row] = await admin<{ n: number }[]>`SELECT count(*)::int AS n FROM probe_log WHERE note = ${note}`;
  return row?.n ?? 0;
}

interface Attack {
  name: string;
  sql: () => Promise<string> | string;
  /** Whether the effect happened (after the tool call returned). */
  happened: (result: ToolResult) => Promise<boolean>;
  /** Undoes the effect after the proof run. */
  undo?: () => Promise<void>;
  /** What the refusal must say (the rule's wording). */
  reason: RegExp;
}

describe.skipIf(!probe.available)(
  `issue 14 PostgreSQL bypasses against a real server${probe.available ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    beforeAll(async () => {
      config = await createPostgresChinook(DATABASE);
      admin = await postgresAdmin(DATABASE);
      // dblink ships with PostgreSQL's contrib modules (postgresql-15 on Debian); the proof needs it.
      await admin.unsafe('CREATE EXTENSION IF NOT EXISTS dblink');
      // A volatile function of the table's row type: `a.probe_row_write` calls it (attribute notation).
      await admin.unsafe(
        `CREATE OR REPLACE FUNCTION probe_row_write(artist) RETURNS text LANGUAGE sql VOLATILE AS $f$ SELECT ${dblinkInsert('via attribute notation')} $f$`,
      );
      // An aggregate is marked IMMUTABLE by PostgreSQL whatever its transition function does.
      await admin.unsafe(
        `CREATE OR REPLACE FUNCTION probe_dblink_sfunc(int, int) RETURNS int LANGUAGE sql VOLATILE AS $f$ SELECT $1 + length(${dblinkInsert('via aggregate')}) $f$`,
      );
      await admin.unsafe('DROP AGGREGATE IF EXISTS probe_agg_write(int)');
      await admin.unsafe(
        "CREATE AGGREGATE probe_agg_write(int) (SFUNC = probe_dblink_sfunc, STYPE = int, INITCOND = '0')",
      );
      const [row] = await admin<{ oid: number }[]>`SELECT lo_from_bytea(0, 'large object contents')::int AS oid`;
      largeObject = row?.oid ?? 0;
      hostileDir = await mkdtemp(join(tmpdir(), 'rho-hidden-pg-'));
      await chmod(hostileDir, 0o777);
      await writeFile(join(hostileDir, 'secret.txt'), 'rhosecretword\n', { mode: 0o644 });
    });

    afterAll(async () => {
      for (const list of opened) await closeDbTools(list);
      await admin
        ?.unsafe(`SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '${SLOT}'`)
        .catch(() => undefined);
      await admin?.end();
    });

    const attacks: Attack[] = [
      {
        name: 'dblink_exec inside ts_stat writes a row that survives the read-only transaction',
        sql: () => viaTsStat(dblinkInsert('via ts_stat')),
        happened: async () => (await notes('via ts_stat')) > 0,
        undo: async () => void (await admin`DELETE FROM probe_log WHERE note = 'via ts_stat'`),
        reason:
          /may not be called: it (runs SQL|opens a connection|reads or writes|manages replication|acts on|takes locks|changes settings|reads server files|takes locks, reads)/,
      },
      {
        name: 'dblink_exec inside query_to_xml writes a row',
        sql: () => `SELECT query_to_xml($q$SELECT ${dblinkInsert('via query_to_xml')}$q$, true, false, '')`,
        happened: async () => (await notes('via query_to_xml')) > 0,
        undo: async () => void (await admin`DELETE FROM probe_log WHERE note = 'via query_to_xml'`),
        reason:
          /may not be called: it (runs SQL|opens a connection|reads or writes|manages replication|acts on|takes locks|changes settings|reads server files|takes locks, reads)/,
      },
      {
        name: 'dblink_exec inside ts_rewrite writes a row (even though ts_rewrite then fails)',
        sql: () =>
          `SELECT ts_rewrite('a'::tsquery, $q$SELECT to_tsquery(${dblinkInsert('via ts_rewrite')}), 'b'::tsquery$q$)`,
        happened: async () => (await notes('via ts_rewrite')) > 0,
        undo: async () => void (await admin`DELETE FROM probe_log WHERE note = 'via ts_rewrite'`),
        reason:
          /may not be called: it (runs SQL|opens a connection|reads or writes|manages replication|acts on|takes locks|changes settings|reads server files|takes locks, reads)/,
      },
      {
        name: 'a volatile function called by attribute notation (a.f, no parentheses) writes a row through dblink',
        sql: () => 'SELECT a.probe_row_write FROM artist a WHERE a.artist_id = 1',
        happened: async () => (await notes('via attribute notation')) > 0,
        undo: async () => void (await admin`DELETE FROM probe_log WHERE note = 'via attribute notation'`),
        reason: /declared VOLATILE/,
      },
      {
        name: 'an aggregate (always marked IMMUTABLE) whose transition function writes a row through dblink',
        sql: () => 'SELECT probe_agg_write(artist_id) FROM artist WHERE artist_id = 1',
        happened: async () => (await notes('via aggregate')) > 0,
        undo: async () => void (await admin`DELETE FROM probe_log WHERE note = 'via aggregate'`),
        reason: /declared VOLATILE/,
      },
      (() => {
        let victim: Sql | undefined;
        let pid = 0;
        return {
          name: 'pg_terminate_backend inside ts_stat kills another session',
          sql: async () => {
            victim = await postgresAdmin(DATABASE);
            const [row] = await victim<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
            pid = row?.pid ?? 0;
            return viaTsStat(`pg_terminate_backend(${pid})`);
          },
          // A terminated backend leaves pg_stat_activity a moment later on a loaded machine: wait up to 2 s.
          happened: async () => {
            for (let attempt = 0; attempt < 20; attempt += 1) {
              const [row] = await admin<
                { n: number }[]
              >`SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ${pid}`;
              if (row?.n === 0) return true;
              await new Promise((resolve) => setTimeout(resolve, 100));
            }
            return false;
          },
          undo: async () => {
            await victim?.end({ timeout: 0 }).catch(() => undefined);
          },
          reason:
            /may not be called: it (runs SQL|opens a connection|reads or writes|manages replication|acts on|takes locks|changes settings|reads server files|takes locks, reads)/,
        } satisfies Attack;
      })(),
      {
        name: 'lo_export inside ts_stat writes a server file',
        sql: () => viaTsStat(`lo_export(${largeObject}, '${hostileDir}/large-object')`),
        happened: async () => (await readdir(hostileDir)).includes('large-object'),
        undo: () => rm(join(hostileDir, 'large-object'), { force: true }),
        reason:
          /may not be called: it (runs SQL|opens a connection|reads or writes|manages replication|acts on|takes locks|changes settings|reads server files|takes locks, reads)/,
      },
      {
        name: 'a replication slot created inside ts_stat persists after the rollback',
        sql: () => viaTsStat(`pg_create_physical_replication_slot('${SLOT}', true)`),
        happened: async () => (await admin`SELECT 1 FROM pg_replication_slots WHERE slot_name = ${SLOT}`).length > 0,
        undo: async () => void (await admin.unsafe(`SELECT pg_drop_replication_slot('${SLOT}')`)),
        reason:
          /may not be called: it (runs SQL|opens a connection|reads or writes|manages replication|acts on|takes locks|changes settings|reads server files|takes locks, reads)/,
      },
      {
        name: 'pg_read_file inside ts_stat reads a server file',
        sql: () => viaTsStat(`pg_read_file('${hostileDir}/secret.txt')`),
        happened: async (result) => result.success && result.content.includes('rhosecretword'),
        reason:
          /may not be called: it (runs SQL|opens a connection|reads or writes|manages replication|acts on|takes locks|changes settings|reads server files|takes locks, reads)/,
      },
      {
        name: 'pg_authid is readable (password hashes)',
        sql: () => 'SELECT rolname, rolpassword FROM pg_authid',
        happened: async (result) => result.success && result.content.includes('postgres'),
        reason: /exposes .* not readable in readonly mode/,
      },
      {
        name: 'pg_hba_file_rules is readable (the server pg_hba.conf)',
        sql: () => 'SELECT type, database, user_name, auth_method FROM pg_hba_file_rules',
        happened: async (result) => result.success && /trust|md5|scram|peer/.test(result.content),
        reason: /exposes .* not readable in readonly mode/,
      },
      {
        name: 'pg_file_settings is readable (the server configuration files)',
        sql: () => 'SELECT sourcefile, name, setting FROM pg_file_settings',
        happened: async (result) => result.success && result.content.includes('.conf'),
        reason: /exposes .* not readable in readonly mode/,
      },
    ];

    describe.each(attacks.map((attack) => [attack.name, attack] as const))('%s', (_name, attack) => {
      it('is real: the read-only transaction alone lets it happen', async () => {
        const result = await call(tool({ skipSqlPolicy: true }), { operation: 'query', sql: await attack.sql() });
        try {
          expect(await attack.happened(result), result.content).toBe(true);
        } finally {
          await attack.undo?.();
        }
      });

      it('is refused by the readonly tool, and nothing happens', async () => {
        const result = await call(tool({ skipSqlPolicy: false }), { operation: 'query', sql: await attack.sql() });
        try {
          expect(result.success, result.content).toBe(false);
          expect(result.metadata?.blocked).toBe(true);
          expect(result.content).toContain('Refused:');
          expect(result.content).toMatch(attack.reason);
          expect(await attack.happened(result)).toBe(false);
        } finally {
          await attack.undo?.().catch(() => undefined);
        }
      });
    });

    it('user-defined functions are refused with the live catalog whatever their label; one the profile names runs', async () => {
      await admin.unsafe(`
      CREATE OR REPLACE FUNCTION probe_stable(x int) RETURNS int LANGUAGE sql STABLE AS 'SELECT x + 1';
      CREATE OR REPLACE FUNCTION probe_volatile_read() RETURNS bigint LANGUAGE sql VOLATILE AS 'SELECT count(*) FROM artist';`);
      const readonlyTool = tool({ skipSqlPolicy: false });
      // Issue 32: a STABLE label is the author's claim, not what the body calls.
      const stable = await call(readonlyTool, { operation: 'query', sql: 'SELECT probe_stable(41) AS answer' });
      expect(stable.success, stable.content).toBe(false);
      expect(stable.content).toMatch(
        /user-defined function .*declared STABLE.*database_functions: \[public\.probe_stable\]/,
      );
      const trusting = createDbTools({
        profile: { ...profile('readonly'), databaseFunctions: ['public.probe_stable'] },
        databases: [config],
        workingDir: hostileDir,
      });
      opened.push(trusting);
      const named = await call(toolNamed(trusting, 'postgres'), {
        operation: 'query',
        sql: 'SELECT probe_stable(41) AS answer',
      });
      expect(named.success, named.content).toBe(true);
      expect(named.content).toContain('42');
      const volatile = await call(readonlyTool, { operation: 'query', sql: 'SELECT probe_volatile_read()' });
      expect(volatile.success).toBe(false);
      expect(volatile.content).toMatch(/VOLATILE/);
      const unknown = await call(readonlyTool, { operation: 'query', sql: 'SELECT no_such_function(1)' });
      expect(unknown.content).toMatch(/not a function of this database's catalog/);
    });
  },
);
