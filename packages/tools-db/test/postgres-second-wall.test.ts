// Issue 32's PostgreSQL holes in the "second wall", each proved twice in a scratch database:
// with the SQL policy bypassed (the read-only transaction alone) a user-defined operator, cast,
// domain, view or STABLE-labelled wrapper really writes a row through dblink_exec (another
// connection, outside the read-only transaction) or kills another session; through the readonly
// tool it is refused, with the chain that reaches the function, and nothing happens.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from 'postgres';
import type { Tool, ToolResult } from '@rho/core';
import type { PermissionProfile } from '@rho/permissions';
import { closeDbTools, createDbTools } from '../src/db-tools.js';
import type { DatabaseConfig } from '../src/database-config.js';
import { POSTGRES_SERVER, createPostgresChinook, postgresAdmin, probePostgres } from './support/servers.js';
import { call, profile, toolNamed } from './support/tool-call.js';

const DATABASE = 'rho_test_pgwall';
const OTHER_ROLE = 'rho_test_pgwall_other';
const probe = await probePostgres();
const opened: Tool[][] = [];
let config: DatabaseConfig;
let admin: Sql;

function tool(options: { skipSqlPolicy: boolean; functions?: string[] }): Tool {
  const base = profile('readonly');
  const chosen: PermissionProfile =
    options.functions === undefined ? base : { ...base, databaseFunctions: options.functions };
  const list = createDbTools({ profile: chosen, databases: [config] }, { skipSqlPolicy: options.skipSqlPolicy });
  opened.push(list);
  return toolNamed(list, 'postgres');
}

/** dblink_exec inserting `note` (an SQL expression) into probe_log through a second connection. */
const dblinkInsert = (note: string): string =>
  `dblink_exec('dbname=${DATABASE} host=${POSTGRES_SERVER.host} port=${POSTGRES_SERVER.port} user=${POSTGRES_SERVER.user}', format('INSERT INTO probe_log (note) VALUES (%L)', ${note}))`;

async function notes(note: string): Promise<number> {
  const [row] = await admin<{ n: number }[]>`SELECT count(*)::int AS n FROM probe_log WHERE note = ${note}`;
  return row?.n ?? 0;
}

interface Attack {
  name: string;
  sql: () => Promise<string> | string;
  happened: (result: ToolResult) => Promise<boolean>;
  undo?: () => Promise<void>;
  /** What the refusal must say. */
  reason: RegExp;
  rule: string;
}

const written = (note: string): Pick<Attack, 'happened' | 'undo'> => ({
  happened: async () => (await notes(note)) > 0,
  undo: async () => void (await admin`DELETE FROM probe_log WHERE note = ${note}`),
});

describe.skipIf(!probe.available)(
  `issue 32 PostgreSQL second-wall holes against a real server${probe.available ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    beforeAll(async () => {
      config = await createPostgresChinook(DATABASE);
      admin = await postgresAdmin(DATABASE);
      // dblink ships with PostgreSQL's contrib modules (part of postgresql-15 on Debian).
      await admin.unsafe('CREATE EXTENSION IF NOT EXISTS dblink');
      await admin.unsafe(`
        -- A VOLATILE writer, and wrappers that lie about what they call.
        CREATE FUNCTION wall_write(note text) RETURNS boolean LANGUAGE sql VOLATILE
          AS $f$ SELECT ${dblinkInsert('note')} IS NOT NULL $f$;
        CREATE FUNCTION wall_stable(note text) RETURNS text LANGUAGE plpgsql STABLE
          AS $f$ BEGIN PERFORM ${dblinkInsert('note')}; RETURN 'ok'; END $f$;
        CREATE FUNCTION wall_kill(pid int) RETURNS boolean LANGUAGE sql IMMUTABLE
          AS $f$ SELECT pg_terminate_backend(pid) $f$;
        CREATE FUNCTION wall_indirect_kill(pid int) RETURNS boolean LANGUAGE sql STABLE
          AS $f$ SELECT wall_kill(pid) $f$;
        CREATE FUNCTION wall_add(a int, b int) RETURNS int LANGUAGE sql IMMUTABLE AS $f$ SELECT a + b $f$;
        -- An operator whose function is labelled STABLE but writes.
        CREATE FUNCTION wall_op_fn(a int, note text) RETURNS boolean LANGUAGE sql STABLE
          AS $f$ SELECT wall_write(note) $f$;
        CREATE OPERATOR === (LEFTARG = int, RIGHTARG = text, FUNCTION = wall_op_fn);
        -- A cast whose function is labelled IMMUTABLE but writes.
        CREATE TYPE wall_note AS (note text);
        CREATE FUNCTION wall_cast_fn(note text) RETURNS wall_note LANGUAGE sql IMMUTABLE
          AS $f$ SELECT ROW(note)::wall_note FROM (SELECT wall_write(note)) AS w $f$;
        CREATE CAST (text AS wall_note) WITH FUNCTION wall_cast_fn(text);
        -- A domain whose CHECK constraint writes.
        CREATE DOMAIN wall_domain AS text CHECK (wall_write(VALUE));
        -- A view over a view that calls the writer.
        CREATE VIEW wall_inner AS SELECT wall_write('via nested view') AS written;
        CREATE VIEW wall_outer AS SELECT written FROM wall_inner;
        -- A view over the other roles' settings.
        CREATE VIEW wall_settings AS SELECT setrole, setconfig FROM pg_db_role_setting;
        CREATE VIEW wall_harmless AS SELECT 1 AS one;
      `);
      await admin.unsafe(`DROP ROLE IF EXISTS ${OTHER_ROLE}`);
      await admin.unsafe(`CREATE ROLE ${OTHER_ROLE}`);
      await admin.unsafe(`ALTER ROLE ${OTHER_ROLE} SET application_name = 'wall-secret-setting'`);
    });

    afterAll(async () => {
      for (const list of opened) await closeDbTools(list);
      await admin?.unsafe(`ALTER ROLE ${OTHER_ROLE} RESET ALL`).catch(() => undefined);
      await admin?.unsafe(`DROP ROLE IF EXISTS ${OTHER_ROLE}`).catch(() => undefined);
      await admin?.end();
    });

    /** Kills another session: a fresh victim per run, dead afterwards when the attack worked. */
    const killer = (name: string, expression: (pid: number) => string, reason: RegExp, rule: string): Attack => {
      let victim: Sql | undefined;
      let pid = 0;
      return {
        name,
        sql: async () => {
          victim = await postgresAdmin(DATABASE);
          const [row] = await victim<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
          pid = row?.pid ?? 0;
          return `SELECT ${expression(pid)}`;
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
        reason,
        rule,
      };
    };

    const attacks: Attack[] = [
      {
        name: 'a user-defined operator whose STABLE-labelled function writes through dblink_exec',
        sql: () => "SELECT 1 === 'via operator'",
        ...written('via operator'),
        reason: /operator public\.===, which runs public\.wall_op_fn\(\).*user-defined function/,
        rule: 'sql.user-function',
      },
      {
        name: 'the same operator named with OPERATOR(schema.name)',
        sql: () => "SELECT 1 OPERATOR(public.===) 'via qualified operator'",
        ...written('via qualified operator'),
        reason: /operator public\.===/,
        rule: 'sql.user-function',
      },
      {
        name: 'a cast whose IMMUTABLE-labelled function writes through dblink_exec',
        sql: () => "SELECT ('via cast'::text)::wall_note",
        ...written('via cast'),
        reason: /cast from text to public\.wall_note, which calls public\.wall_cast_fn\(\)/,
        rule: 'sql.user-function',
      },
      {
        name: 'a domain whose CHECK constraint writes through dblink_exec',
        sql: () => "SELECT 'via domain'::wall_domain",
        ...written('via domain'),
        reason: /domain public\.wall_domain, whose CHECK constraints use wall_write\(\) may not be called/,
        rule: 'sql.user-function',
      },
      {
        name: 'a view over a view that calls a VOLATILE writer',
        sql: () => 'SELECT * FROM wall_outer',
        ...written('via nested view'),
        reason:
          /view public\.wall_outer, whose query uses the view public\.wall_inner, whose query uses wall_write\(\) may not be called/,
        rule: 'sql.user-function',
      },
      {
        name: 'a plpgsql function labelled STABLE that writes through dblink_exec',
        sql: () => "SELECT wall_stable('via stable wrapper')",
        ...written('via stable wrapper'),
        reason: /public\.wall_stable is a user-defined function \(LANGUAGE plpgsql, declared STABLE\)/,
        rule: 'sql.user-function',
      },
      killer(
        'a function labelled IMMUTABLE that kills another session with pg_terminate_backend',
        (pid) => `wall_kill(${pid})`,
        /public\.wall_kill is a user-defined function .*declared IMMUTABLE/,
        'sql.user-function',
      ),
      {
        name: "pg_db_role_setting shows another role's settings",
        sql: () => 'SELECT setconfig FROM pg_db_role_setting',
        happened: async (result) => result.success && result.content.includes('wall-secret-setting'),
        reason: /pg_db_role_setting exposes other roles' and databases' settings/,
        rule: 'sql.sensitive-catalog',
      },
      {
        name: "pg_roles.rolconfig shows another role's settings",
        sql: () => 'SELECT rolname, rolconfig FROM pg_roles',
        happened: async (result) => result.success && result.content.includes('wall-secret-setting'),
        reason: /the column rolconfig shows other roles' settings/,
        rule: 'sql.sensitive-catalog',
      },
      {
        name: "SELECT * FROM pg_roles shows another role's settings",
        sql: () => `SELECT * FROM pg_roles WHERE rolname = '${OTHER_ROLE}'`,
        happened: async (result) => result.success && result.content.includes('wall-secret-setting'),
        reason: /\* over pg_roles shows other roles' settings/,
        rule: 'sql.sensitive-catalog',
      },
      {
        name: "a view over pg_db_role_setting shows another role's settings",
        sql: () => 'SELECT setconfig FROM wall_settings',
        happened: async (result) => result.success && result.content.includes('wall-secret-setting'),
        reason:
          /view public\.wall_settings, whose query uses pg_db_role_setting exposes other roles' and databases' settings/,
        rule: 'sql.sensitive-catalog',
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

    it('a function the profile names runs, but a wrapper of pg_terminate_backend stays refused however it is named', async () => {
      const trusted = tool({ skipSqlPolicy: false, functions: ['public.wall_add', 'wall_kill', 'wall_indirect_kill'] });
      const add = await call(trusted, { operation: 'query', sql: 'SELECT wall_add(40, 2) AS answer' });
      expect(add.success, add.content).toBe(true);
      expect(add.content).toContain('42');
      // Not named: refused with the profile key that would allow it.
      const untrusted = await call(tool({ skipSqlPolicy: false }), {
        operation: 'query',
        sql: 'SELECT wall_add(40, 2)',
      });
      expect(untrusted.success).toBe(false);
      expect(untrusted.content).toMatch(/database_functions: \[public\.wall_add\]/);
      const victim = await postgresAdmin(DATABASE);
      try {
        const [row] = await victim<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
        for (const sql of [`SELECT wall_kill(${row?.pid ?? 0})`, `SELECT wall_indirect_kill(${row?.pid ?? 0})`]) {
          const result = await call(trusted, { operation: 'query', sql });
          expect(result.success, result.content).toBe(false);
          expect(result.content).toMatch(/its body calls pg_terminate_backend/);
          const [alive] = await victim<{ one: number }[]>`SELECT 1 AS one`;
          expect(alive?.one).toBe(1);
        }
      } finally {
        await victim.end({ timeout: 0 }).catch(() => undefined);
      }
    });

    it('a table whose row-level security policy calls the writer, and a foreign table, are refused', async () => {
      await admin.unsafe(`
        CREATE TABLE wall_rls (id int);
        INSERT INTO wall_rls VALUES (1);
        ALTER TABLE wall_rls ENABLE ROW LEVEL SECURITY;
        CREATE POLICY wall_policy ON wall_rls FOR SELECT USING (wall_write('via policy'));
        CREATE EXTENSION IF NOT EXISTS postgres_fdw;
        CREATE SERVER wall_remote FOREIGN DATA WRAPPER postgres_fdw
          OPTIONS (host '${POSTGRES_SERVER.host}', port '${POSTGRES_SERVER.port}', dbname '${DATABASE}');
        CREATE USER MAPPING FOR CURRENT_USER SERVER wall_remote OPTIONS (user '${POSTGRES_SERVER.user}');
        CREATE FOREIGN TABLE wall_foreign (note text) SERVER wall_remote OPTIONS (table_name 'probe_log');
        CREATE TABLE wall_parent (note text);
        CREATE FOREIGN TABLE wall_foreign_child () INHERITS (wall_parent) SERVER wall_remote OPTIONS (table_name 'probe_log');`);
      try {
        const readonlyTool = tool({ skipSqlPolicy: false });
        const rls = await call(readonlyTool, { operation: 'query', sql: 'SELECT id FROM wall_rls' });
        expect(rls.success, rls.content).toBe(false);
        expect(rls.content).toMatch(/table public\.wall_rls, whose row-level security policies use wall_write\(\)/);
        // The foreign table reads the database again through a second connection.
        const real = await call(tool({ skipSqlPolicy: true }), {
          operation: 'query',
          sql: 'SELECT note FROM wall_foreign',
        });
        expect(real.success, real.content).toBe(true);
        expect(real.content).toContain('first');
        const foreign = await call(readonlyTool, { operation: 'query', sql: 'SELECT note FROM wall_foreign' });
        expect(foreign.success, foreign.content).toBe(false);
        expect(foreign.content).toMatch(/foreign table public\.wall_foreign, which reaches outside this database/);
        // Reading the parent reads its foreign child: the same server reached without naming it.
        const viaParent = await call(tool({ skipSqlPolicy: true }), {
          operation: 'query',
          sql: 'SELECT note FROM wall_parent',
        });
        expect(viaParent.content).toContain('first');
        const parent = await call(readonlyTool, { operation: 'query', sql: 'SELECT note FROM wall_parent' });
        expect(parent.success, parent.content).toBe(false);
        expect(parent.content).toMatch(
          /table public\.wall_parent, which has a foreign table among its partitions or children/,
        );
      } finally {
        await admin.unsafe('DROP TABLE wall_rls; DROP SERVER wall_remote CASCADE; DROP TABLE wall_parent');
      }
    });

    it('ordinary reads keep running: built-in operators, casts, a harmless view, catalog views', async () => {
      const readonlyTool = tool({ skipSqlPolicy: false });
      for (const sql of [
        "SELECT name FROM artist WHERE artist_id BETWEEN 1 AND 3 AND name LIKE 'A%' ORDER BY name",
        "SELECT '2024-01-01'::date + 1, CAST('42' AS int), 1::numeric(10, 2), NULLIF(1, 2)",
        'SELECT a.name FROM artist a JOIN album USING (artist_id) WHERE album.title IN (SELECT title FROM album LIMIT 3)',
        'SELECT one FROM wall_harmless',
        'SELECT spent FROM big_spenders ORDER BY spent DESC LIMIT 1',
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' LIMIT 1",
        'SELECT relname FROM pg_stat_user_tables LIMIT 1',
      ]) {
        const result = await call(readonlyTool, { operation: 'query', sql });
        expect(result.success, `${sql}: ${result.content}`).toBe(true);
      }
    });

    it('a view replaced mid-session by another session is judged again (the cached catalog is invalidated)', async () => {
      await admin.unsafe('CREATE OR REPLACE VIEW wall_changing AS SELECT true AS written');
      const readonlyTool = tool({ skipSqlPolicy: false });
      const before = await call(readonlyTool, { operation: 'query', sql: 'SELECT * FROM wall_changing' });
      expect(before.success, before.content).toBe(true);
      await admin.unsafe("CREATE OR REPLACE VIEW wall_changing AS SELECT wall_write('via replaced view') AS written");
      try {
        const after = await call(readonlyTool, { operation: 'query', sql: 'SELECT * FROM wall_changing' });
        expect(after.success, after.content).toBe(false);
        expect(after.content).toMatch(/view public\.wall_changing, whose query uses wall_write\(\) may not be called/);
        expect(await notes('via replaced view')).toBe(0);
        // A function created after the connection read its catalog is judged too.
        await admin.unsafe(
          `CREATE FUNCTION wall_late(note text) RETURNS boolean LANGUAGE sql STABLE AS $f$ SELECT wall_write(note) $f$`,
        );
        const late = await call(readonlyTool, { operation: 'query', sql: "SELECT wall_late('via late function')" });
        expect(late.success, late.content).toBe(false);
        expect(late.content).toMatch(/public\.wall_late is a user-defined function/);
        expect(await notes('via late function')).toBe(0);
      } finally {
        await admin`DELETE FROM probe_log WHERE note IN ('via replaced view', 'via late function')`;
        await admin.unsafe('DROP VIEW wall_changing; DROP FUNCTION IF EXISTS wall_late(text)');
      }
    });

    it('an implicit cast that writes refuses every statement on the database until it is dropped', async () => {
      const readonlyTool = tool({ skipSqlPolicy: false });
      const before = await call(readonlyTool, { operation: 'query', sql: 'SELECT 1 AS one' });
      expect(before.success, before.content).toBe(true);
      await admin.unsafe(`
        CREATE TYPE wall_implicit AS (note text);
        CREATE FUNCTION wall_implicit_fn(value wall_implicit) RETURNS text LANGUAGE sql IMMUTABLE
          AS $f$ SELECT (value).note FROM (SELECT wall_write((value).note)) AS w $f$;
        CREATE CAST (wall_implicit AS text) WITH FUNCTION wall_implicit_fn(wall_implicit) AS IMPLICIT;`);
      try {
        const sql = "SELECT length(ROW('via implicit cast')::wall_implicit)";
        const real = await call(tool({ skipSqlPolicy: true }), { operation: 'query', sql });
        expect(real.success, real.content).toBe(true);
        expect(await notes('via implicit cast')).toBe(1);
        await admin`DELETE FROM probe_log WHERE note = 'via implicit cast'`;
        const refused = await call(readonlyTool, { operation: 'query', sql });
        expect(refused.success).toBe(false);
        expect(refused.content).toMatch(/cast from wall_implicit to pg_catalog\.text.*applies that cast implicitly/);
        expect(await notes('via implicit cast')).toBe(0);
        const plain = await call(readonlyTool, { operation: 'query', sql: 'SELECT 1 AS one' });
        expect(plain.success).toBe(false);
      } finally {
        await admin.unsafe('DROP TYPE wall_implicit CASCADE');
      }
      const after = await call(readonlyTool, { operation: 'query', sql: 'SELECT 1 AS one' });
      expect(after.success, after.content).toBe(true);
    });
  },
);
