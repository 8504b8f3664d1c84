// Issue 32 on MariaDB: information_schema.INNODB_TRX showed another session's running statement
// (with a password literal) to the readonly tool; proved with the policy bypassed, refused
// through it. And the common read-only forms the grammar lacked, refused before, now run:
// EXPLAIN FORMAT=JSON, JSON_TABLE, PARTITION (p0), FOR SYSTEM_TIME AS OF.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Connection } from 'mysql2/promise';
import type { Tool } from '@rho/core';
import { closeDbTools, createDbTools } from '../src/db-tools.js';
import type { DatabaseConfig } from '../src/database-config.js';
import { createMysqlChinook, mysqlAdmin, probeMysql } from './support/servers.js';
import { call, profile, toolNamed } from './support/tool-call.js';

const DATABASE = 'rho_test_mysql_wall';
const SECRET = 'IDENTIFIED BY hunter2-wall';
const probe = await probeMysql();
const opened: Tool[][] = [];
let config: DatabaseConfig;
let admin: Connection;
let between = '';

function tool(options: { skipSqlPolicy: boolean }): Tool {
  const list = createDbTools({ profile: profile('readonly'), databases: [config] }, options);
  opened.push(list);
  return toolNamed(list, 'mysql');
}

/**
 * How often the set-up reads INNODB_TRX while it waits. InnoDB serves INNODB_TRX (and INNODB_LOCKS,
 * INNODB_LOCK_WAITS) from one cache shared by all sessions, and refills it only when nobody has read
 * it for 100 ms (CACHE_MIN_IDLE_TIME_NS in trx0i_s.cc): reads closer together than that return the
 * first one's rows again and again. So polls must be more than 100 ms apart, or a first read that
 * came before the other session's statement reached InnoDB pins that view for the whole wait.
 */
const INNODB_TRX_POLL_MS = 250;

/** Another session inside a transaction, its statement (with a password literal) waiting on a row lock until `end()`. */
async function busySession(): Promise<{ end: () => Promise<void> }> {
  // Another session's statement that stays in INNODB_TRX until the test ends it: an UPDATE whose
  // literal holds the password, waiting for a row lock another connection holds (a read-write
  // transaction in LOCK WAIT stays listed, with its statement, until the lock is released).
  const holder = await mysqlAdmin(DATABASE);
  const victim = await mysqlAdmin(DATABASE);
  let done: Promise<string> = Promise.resolve('not sent');
  const end = async (): Promise<void> => {
    await holder.query('ROLLBACK').catch(() => undefined);
    await done;
    await victim.query('ROLLBACK').catch(() => undefined);
    await Promise.all([holder.end(), victim.end()].map((ending) => ending.catch(() => undefined)));
  };
  try {
    await holder.query('START TRANSACTION');
    await holder.query('SELECT * FROM Artist WHERE ArtistId = 1 FOR UPDATE');
    await victim.query('SET SESSION innodb_lock_wait_timeout = 120');
    await victim.query('START TRANSACTION');
    // The literal comes first (a comment, kept in the statement's text): the tool's table shows the
    // first 50 characters of a cell.
    done = victim.query(`/* ${SECRET} */ UPDATE Artist SET Name = '${SECRET}' WHERE ArtistId = 1`).then(
      () => 'ended without waiting for the lock',
      (error: Error) => `failed: ${error.message}`,
    );
    let outcome = 'still waiting for the lock';
    void done.then((text) => (outcome = text));
    await vi.waitFor(
      async () => {
        const [rows] = await admin.query('SELECT trx_query FROM information_schema.INNODB_TRX');
        expect(JSON.stringify(rows), `the other session's UPDATE: ${outcome}`).toContain('hunter2-wall');
      },
      { timeout: 25_000, interval: INNODB_TRX_POLL_MS },
    );
  } catch (error) {
    // Ended here too: a session left holding the row lock would make every later set-up wait on it.
    await end();
    throw error;
  }
  return { end };
}

describe.skipIf(!probe.available)(
  `issue 32 MariaDB catalogs and read forms against a real server${probe.available ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    beforeAll(async () => {
      config = await createMysqlChinook(DATABASE);
      admin = await mysqlAdmin(DATABASE);
      await admin.query(`
        CREATE TABLE wall_parts (id INT NOT NULL, note VARCHAR(20)) PARTITION BY RANGE (id)
          (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN MAXVALUE);
        INSERT INTO wall_parts VALUES (1, 'in p0'), (20, 'in p1');
        CREATE TABLE wall_versioned (id INT PRIMARY KEY, note VARCHAR(20)) WITH SYSTEM VERSIONING;
        INSERT INTO wall_versioned VALUES (1, 'original');
        CREATE TABLE wall_docs (id INT PRIMARY KEY, doc JSON);
        INSERT INTO wall_docs VALUES (1, '[{"name": "alpha"}, {"name": "beta"}]');`);
      // A moment between the first row version and the second, which FOR SYSTEM_TIME AS OF must show.
      await admin.query('DO SLEEP(0.2)');
      const [rows] = await admin.query('SELECT CAST(NOW(6) AS CHAR) AS moment');
      between = String((rows as { moment: string }[])[0]?.moment);
      await admin.query('DO SLEEP(0.2)');
      await admin.query("UPDATE wall_versioned SET note = 'changed' WHERE id = 1");
    });

    afterAll(async () => {
      for (const list of opened) await closeDbTools(list);
      await admin?.end();
    });

    it("is real: INNODB_TRX shows another session's statement with its password literal", async () => {
      const session = await busySession();
      try {
        const result = await call(tool({ skipSqlPolicy: true }), {
          operation: 'query',
          sql: 'SELECT trx_query FROM information_schema.INNODB_TRX',
        });
        expect(result.success, result.content).toBe(true);
        expect(result.content).toContain('hunter2-wall');
      } finally {
        await session.end();
      }
    });

    it('INNODB_TRX, INNODB_LOCKS and INNODB_LOCK_WAITS are refused by the readonly tool, qualified or not', async () => {
      // Refused before they run, whatever the server holds: no other session is needed to show it.
      {
        const readonlyTool = tool({ skipSqlPolicy: false });
        for (const sql of [
          'SELECT trx_query FROM information_schema.INNODB_TRX',
          'SELECT * FROM INFORMATION_SCHEMA.innodb_locks',
          'SELECT * FROM information_schema.INNODB_LOCK_WAITS',
          'SELECT (SELECT trx_query FROM information_schema.innodb_trx LIMIT 1) AS q',
        ]) {
          const result = await call(readonlyTool, { operation: 'query', sql });
          expect(result.success, `${sql}: ${result.content}`).toBe(false);
          expect(result.metadata?.blocked).toBe(true);
          expect(result.content).toMatch(/Refused: information_schema\.\w+ exposes other sessions'/i);
          expect(result.content).not.toContain('hunter2-wall');
        }
      }
    });

    it('EXPLAIN FORMAT=JSON, JSON_TABLE, PARTITION (p0) and FOR SYSTEM_TIME AS OF run in readonly', async () => {
      const readonlyTool = tool({ skipSqlPolicy: false });
      const cases: [string, string][] = [
        ['EXPLAIN FORMAT=JSON SELECT * FROM Artist WHERE ArtistId = 1', 'query_block'],
        [
          `SELECT d.id, jt.name FROM wall_docs d, JSON_TABLE(d.doc, '$[*]' COLUMNS (ord FOR ORDINALITY, name VARCHAR(20) PATH '$.name' DEFAULT 'none' ON EMPTY)) AS jt ORDER BY jt.ord`,
          'beta',
        ],
        ['SELECT note FROM wall_parts PARTITION (p0)', 'in p0'],
        ['SELECT note FROM wall_parts PARTITION (p0, p1) AS w WHERE w.id > 5', 'in p1'],
        [`SELECT note FROM wall_versioned FOR SYSTEM_TIME AS OF TIMESTAMP '${between}' WHERE id = 1`, 'original'],
        [
          'SELECT note FROM wall_versioned FOR SYSTEM_TIME AS OF NOW() - INTERVAL 1 YEAR AS v RIGHT JOIN Artist a ON a.ArtistId = v.id WHERE a.ArtistId = 1',
          'NULL',
        ],
        ['SELECT COUNT(*) AS versions FROM wall_versioned FOR SYSTEM_TIME ALL', '2'],
        [
          "SELECT note FROM wall_versioned FOR SYSTEM_TIME BETWEEN TIMESTAMP '2000-01-01 00:00:00' AND NOW() AS v ORDER BY note",
          'changed',
        ],
      ];
      for (const [sql, expected] of cases) {
        const result = await call(readonlyTool, { operation: 'query', sql });
        expect(result.success, `${sql}: ${result.content}`).toBe(true);
        expect(result.content).toContain(expected);
      }
    });

    it('what those forms carry is still judged: a sensitive table, a refused call, a write', async () => {
      const readonlyTool = tool({ skipSqlPolicy: false });
      for (const [sql, reason] of [
        [
          'SELECT note FROM wall_versioned FOR SYSTEM_TIME AS OF (SELECT MAX(Password) FROM mysql.user)',
          /mysql\.user exposes/,
        ],
        [
          "SELECT * FROM JSON_TABLE((SELECT Priv FROM mysql.global_priv LIMIT 1), '$' COLUMNS (a TEXT PATH '$')) AS jt",
          /mysql\.global_priv exposes/,
        ],
        ['SELECT note FROM wall_versioned FOR SYSTEM_TIME AS OF SLEEP(5)', /SLEEP\(\) may not be called/],
        ['EXPLAIN FORMAT=JSON DELETE FROM wall_parts', /EXPLAIN is only allowed for a SELECT/],
        ['SELECT note FROM wall_parts PARTITION (p0) FOR UPDATE', /FOR UPDATE takes row locks/],
      ] as const) {
        const result = await call(readonlyTool, { operation: 'query', sql });
        expect(result.success, `${sql}: ${result.content}`).toBe(false);
        expect(result.content).toMatch(reason);
      }
    });
  },
);
