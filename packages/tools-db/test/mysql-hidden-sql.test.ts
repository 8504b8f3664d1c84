// Issue 14's MariaDB bypasses, each proved twice in a scratch database: with the SQL policy
// bypassed (the read-only transaction alone) the statement really has its effect (a server
// file written, a server file read, a SLEEP that outlasts the statement timeout, password
// hashes read); through the whole tool in readonly mode it is refused and nothing happens.
// MariaDB reads `--1` as minus minus one, where node-sql-parser saw a comment.
import { chmod, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool, ToolResult } from '@rho/core';
import { closeDbTools, createDbTools } from '../src/db-tools.js';
import type { DatabaseConfig } from '../src/database-config.js';
import { createMysqlChinook, probeMysql } from './support/servers.js';
import { call, profile, toolNamed } from './support/tool-call.js';

const DATABASE = 'rho_test_hidden_mysql';
const probe = await probeMysql();
const opened: Tool[][] = [];
let config: DatabaseConfig;
let hostileDir: string;

function tool(options: { skipSqlPolicy: boolean; statementTimeoutSeconds?: number }): Tool {
  const databases = [
    { ...config, statementTimeoutSeconds: options.statementTimeoutSeconds ?? config.statementTimeoutSeconds },
  ];
  const list = createDbTools(
    { profile: profile('readonly'), databases, workingDir: hostileDir },
    { skipSqlPolicy: options.skipSqlPolicy },
  );
  opened.push(list);
  return toolNamed(list, 'mysql');
}

interface Attack {
  name: string;
  sql: () => string;
  happened: (result: ToolResult) => Promise<boolean>;
  undo?: () => Promise<void>;
  /** What the refusal must say (the rule's wording). */
  reason: RegExp;
  statementTimeoutSeconds?: number;
}

describe.skipIf(!probe.available)(
  `issue 14 MariaDB bypasses against a real server${probe.available ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    beforeAll(async () => {
      config = await createMysqlChinook(DATABASE);
      hostileDir = await mkdtemp(join(tmpdir(), 'rho-hidden-mysql-'));
      await chmod(hostileDir, 0o777);
      await writeFile(join(hostileDir, 'secret.txt'), 'rhosecretword\n', { mode: 0o644 });
    });

    afterAll(async () => {
      for (const list of opened) await closeDbTools(list);
    });

    const attacks: Attack[] = [
      {
        name: 'SELECT name --1 INTO OUTFILE ... FROM writes a server file',
        sql: () => `SELECT Name --1 INTO OUTFILE '${hostileDir}/outfile.txt' FROM Artist`,
        happened: async () => (await readdir(hostileDir)).includes('outfile.txt'),
        undo: () => rm(join(hostileDir, 'outfile.txt'), { force: true }),
        reason: /SELECT \.\.\. INTO writes a file/,
      },
      {
        name: 'SELECT name --1 INTO DUMPFILE writes a server file',
        sql: () => `SELECT Name --1 INTO DUMPFILE '${hostileDir}/dumpfile.txt' FROM Artist LIMIT 1`,
        happened: async () => (await readdir(hostileDir)).includes('dumpfile.txt'),
        undo: () => rm(join(hostileDir, 'dumpfile.txt'), { force: true }),
        reason: /SELECT \.\.\. INTO writes a file/,
      },
      {
        name: 'LOAD_FILE after --1 reads a server file',
        sql: () =>
          `SELECT Name --1, CONVERT(LOAD_FILE('${hostileDir}/secret.txt') USING utf8mb4) AS f FROM Artist LIMIT 1`,
        happened: async (result) => result.success && result.content.includes('rhosecretword'),
        reason:
          /may not be called: it (runs SQL|opens a connection|reads or writes|manages replication|acts on|takes locks|changes settings|reads server files|takes locks, reads)/,
      },
      {
        name: 'a SLEEP hidden after --1 runs (it outlasts a one-second statement timeout)',
        sql: () => 'SELECT Name --1 + SLEEP(5) FROM Artist LIMIT 1',
        happened: async (result) => !result.success && /max_statement_time|interrupted/i.test(result.content),
        statementTimeoutSeconds: 1,
        reason:
          /may not be called: it (runs SQL|opens a connection|reads or writes|manages replication|acts on|takes locks|changes settings|reads server files|takes locks, reads)/,
      },
      {
        name: 'a SLEEP after --<no-break space> runs (MariaDB: no comment there)',
        sql: () => 'SELECT 1 --\u00a0x, SLEEP(5)',
        // MariaDB reads `1 - -<nbsp>x`: an unknown column, so the statement fails before SLEEP; the
        // proof is that MariaDB saw the column at all (a comment would have returned 1).
        happened: async (result) => !result.success && /Unknown column/i.test(result.content),
        reason:
          /may not be called: it (runs SQL|opens a connection|reads or writes|manages replication|acts on|takes locks|changes settings|reads server files|takes locks, reads)/,
      },
      {
        name: 'mysql.user is readable (password hashes)',
        sql: () => 'SELECT User, Host, Password FROM mysql.user',
        happened: async (result) => result.success && result.content.includes('root'),
        reason: /exposes .* not readable in readonly mode/,
      },
      {
        name: 'mysql.global_priv is readable (authentication strings)',
        sql: () => 'SELECT User, Priv FROM mysql.global_priv',
        happened: async (result) => result.success && result.content.includes('root'),
        reason: /exposes .* not readable in readonly mode/,
      },
    ];

    describe.each(attacks.map((attack) => [attack.name, attack] as const))('%s', (_name, attack) => {
      const timeout =
        attack.statementTimeoutSeconds === undefined ? {} : { statementTimeoutSeconds: attack.statementTimeoutSeconds };
      it('is real: the read-only transaction alone lets it happen', async () => {
        const result = await call(tool({ skipSqlPolicy: true, ...timeout }), { operation: 'query', sql: attack.sql() });
        try {
          expect(await attack.happened(result), result.content).toBe(true);
        } finally {
          await attack.undo?.();
        }
      });

      it('is refused by the readonly tool, and nothing happens', async () => {
        const result = await call(tool({ skipSqlPolicy: false, ...timeout }), {
          operation: 'query',
          sql: attack.sql(),
        });
        try {
          expect(result.success, result.content).toBe(false);
          expect(result.metadata?.blocked).toBe(true);
          expect(result.content).toContain('Refused:');
          expect(result.content).toMatch(attack.reason);
          expect(await attack.happened(result)).toBe(false);
        } finally {
          await attack.undo?.();
        }
      });
    });

    it('the legitimate lines of the issue run: SHOW VARIABLES LIKE, SHOW TABLE STATUS LIKE, --1 as arithmetic', async () => {
      const readonlyTool = tool({ skipSqlPolicy: false });
      const variables = await call(readonlyTool, { operation: 'query', sql: "SHOW VARIABLES LIKE 'max_connections'" });
      expect(variables.success, variables.content).toBe(true);
      expect(variables.content).toContain('max_connections');
      const status = await call(readonlyTool, { operation: 'query', sql: "SHOW TABLE STATUS LIKE 'Track'" });
      expect(status.success, status.content).toBe(true);
      expect(status.content).toContain('Track');
      const arithmetic = await call(readonlyTool, {
        operation: 'query',
        sql: 'SELECT Name FROM Artist WHERE ArtistId = 3 --1',
      });
      expect(arithmetic.success, arithmetic.content).toBe(true);
      // 3 - -1 = 4: MariaDB's reading, which the policy now shares.
      expect(arithmetic.content).toContain('Alanis Morissette');
    });
  },
);
