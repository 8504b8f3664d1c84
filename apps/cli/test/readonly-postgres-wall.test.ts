// Issue 32's PostgreSQL holes through the real CLI: under a readonly profile file that names one
// trusted function (`database_functions`), a scripted model calls the postgres tool with a
// user-defined operator whose STABLE-labelled function writes through dblink_exec and with an
// IMMUTABLE-labelled wrapper of pg_terminate_backend. Both are refused, no row is written and
// the other session lives; the named function runs.
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatMessage } from '@rho/core';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { probePostgres } from '@rho/fleet/testing';
import postgres from 'postgres';
import type { Sql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

const DATABASE = 'rho_test_cli_pgwall';
const { available, reason } = await probePostgres();
let admin: Sql | undefined;
let server: LoopbackServer | undefined;

const connect = (database: string): Sql =>
  postgres({ host: '127.0.0.1', port: 5432, username: 'postgres', database, max: 1, onnotice: () => undefined });

describe.skipIf(!available)(
  `readonly PostgreSQL through the real CLI${available ? '' : ` (skipped: ${reason})`}`,
  () => {
    beforeAll(async () => {
      const maintenance = connect('postgres');
      try {
        await maintenance.unsafe(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
        await maintenance.unsafe(`CREATE DATABASE ${DATABASE}`);
      } finally {
        await maintenance.end();
      }
      admin = connect(DATABASE);
      await admin.unsafe(`
      CREATE EXTENSION dblink;
      CREATE TABLE probe_log (note text);
      CREATE FUNCTION wall_op_fn(a int, note text) RETURNS boolean LANGUAGE sql STABLE AS $f$
        SELECT dblink_exec('dbname=${DATABASE} host=127.0.0.1 port=5432 user=postgres',
          format('INSERT INTO probe_log VALUES (%L)', note)) IS NOT NULL $f$;
      CREATE OPERATOR === (LEFTARG = int, RIGHTARG = text, FUNCTION = wall_op_fn);
      CREATE FUNCTION wall_kill(pid int) RETURNS boolean LANGUAGE sql IMMUTABLE AS $f$ SELECT pg_terminate_backend(pid) $f$;
      CREATE FUNCTION wall_add(a int, b int) RETURNS int LANGUAGE sql IMMUTABLE AS $f$ SELECT a + b $f$;`);
    });

    afterAll(async () => {
      await server?.close();
      await admin?.end();
    });

    it('refuses the operator and the kill wrapper, runs the function the profile names', async () => {
      const root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-cli-pgwall-')));
      const work = join(root, 'work');
      mkdirSync(work);
      writeFileSync(
        join(work, 'databases.yaml'),
        `databases:\n  app:\n    type: postgres\n    host: 127.0.0.1\n    port: 5432\n    database: ${DATABASE}\n    user: postgres\n`,
      );
      writeFileSync(
        join(work, 'analyst.yaml'),
        'profile: analyst\ndatabase: readonly\ndatabase_functions: [public.wall_add]\napproval: none\n',
      );
      const victim = connect(DATABASE);
      try {
        const [row] = await victim<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
        const query = (sql: string) => ({ name: 'postgres', arguments: JSON.stringify({ operation: 'query', sql }) });
        server = await startLoopbackServer({
          steps: [
            {
              type: 'response',
              toolCalls: [
                query("SELECT 1 === 'via the cli'"),
                query(`SELECT wall_kill(${row?.pid ?? 0})`),
                query('SELECT wall_add(40, 2) AS answer'),
              ],
            },
            { type: 'response', text: 'Done.' },
          ],
        });
        const outcome = await runRho(
          [
            '--base-url',
            server.url,
            '--profile',
            join(work, 'analyst.yaml'),
            '--db-config',
            'databases.yaml',
            'Query.',
          ],
          { env: { RHO_HOME: join(root, 'rho-home') }, cwd: work },
        );
        expect(outcome.code, outcome.stderr).toBe(0);
        const last = server.requests.at(-1)!.body as { messages: ChatMessage[] };
        const [operator, kill, add] = last.messages
          .filter((message) => message.role === 'tool')
          .map((message) => String(message.content));
        expect(operator).toMatch(/Query blocked: Refused: the statement uses the operator public\.===/);
        expect(kill).toMatch(
          /Query blocked: Refused: wall_kill\(\) may not be called: public\.wall_kill is a user-defined function/,
        );
        expect(add).toContain('42');
        const [written] = await admin!<{ n: number }[]>`SELECT count(*)::int AS n FROM probe_log`;
        expect(written?.n).toBe(0);
        const [alive] = await victim<{ one: number }[]>`SELECT 1 AS one`;
        expect(alive?.one).toBe(1);
      } finally {
        await victim.end({ timeout: 0 }).catch(() => undefined);
      }
    });
  },
);
