// Differential test of the SQL policy's reading against the real servers. For every PostgreSQL
// and MySQL statement of the SQL corpus (packages/permissions/test/sql-corpus.json and this
// package's hostile and read corpora), the policy's reading (readSql: how many statements, what
// kind, where every token, comment and string starts and ends) must be the server's:
//   - statement count: PostgreSQL's extended-protocol Parse refuses several commands; MariaDB's
//     COM_STMT_PREPARE refuses the whole text as a syntax error but accepts each piece;
//   - kind (PostgreSQL): a statement the server describes returns rows exactly when the policy's
//     parse says it is a row-returning one;
//   - tokens: the text rebuilt from the policy's tokens alone (comments dropped) is prepared by
//     the server with the same outcome as the original (same error, same column and parameter
//     types), so no comment hid anything and no token was cut differently;
//   - strings and comments: each one the policy found, put alone in a probe statement
//     (`SELECT <string> AS rho_probe`, `SELECT 1 <comment>\n AS rho_probe`), is read by the
//     server as exactly one string or one comment (the probe's one column is rho_probe).
// Nothing is executed: statements are only parsed and described, as an unprivileged role.
// A text the policy cannot read must be one the policy refuses.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from 'postgres';
import type { Connection } from 'mysql2/promise';
import { checkSql } from '@rho/permissions';
import { readSql } from '@rho/permissions/internal';
import type { SqlReading, SqlServerContext } from '@rho/permissions/internal';
import { MYSQL_READS, POSTGRES_READS, mysqlHostile, postgresHostile } from './support/corpus.js';
import {
  MYSQL_SERVER,
  createMysqlChinook,
  createPostgresChinook,
  mysqlAdmin,
  postgresAdmin,
  probeMysql,
  probePostgres,
} from './support/servers.js';

interface CorpusEntry {
  dialect: string;
  sql: string;
  allowed: boolean;
  context?: SqlServerContext;
}

const corpus = JSON.parse(
  readFileSync(new URL('../../permissions/test/sql-corpus.json', import.meta.url), 'utf8'),
) as CorpusEntry[];

/** The text rebuilt from the policy's tokens: comments dropped, a space wherever anything separated two tokens. */
function rebuilt(sql: string, reading: SqlReading, from = 0, to = sql.length): string {
  let text = '';
  let previousEnd = -1;
  for (const token of reading.tokens) {
    if (token.start < from || token.end > to) continue;
    const piece = sql.slice(token.start, token.end);
    // Two tokens that would form a comment when joined (`-` `-`, `/` `*`) keep a space between them.
    const joins = /[-/*]$/.test(text) && /^[-*/]/.test(piece) && /--|\/\*|\*\//.test(`${text.slice(-1)}${piece[0]}`);
    if (previousEnd !== -1) text += token.start === previousEnd && !joins ? '' : ' ';
    text += piece;
    previousEnd = token.end;
  }
  return text;
}

const pgProbe = await probePostgres();
const mysqlProbe = await probeMysql();

describe.skipIf(!pgProbe.available)(
  `PostgreSQL reads every corpus statement as the policy does${pgProbe.available ? '' : ` (skipped: ${pgProbe.reason})`}`,
  () => {
    let sql: Sql;
    const kindsChecked: string[] = [];
    const statements: CorpusEntry[] = [
      ...corpus.filter((entry) => entry.dialect === 'postgres'),
      ...postgresHostile('/nonexistent-dir', 'rho_test_differential_pg').map((text) => ({
        dialect: 'postgres',
        sql: text,
        allowed: false,
      })),
      ...POSTGRES_READS.map((text) => ({ dialect: 'postgres', sql: text, allowed: true })),
    ];

    beforeAll(async () => {
      await createPostgresChinook('rho_test_differential_pg');
      sql = await postgresAdmin('rho_test_differential_pg');
      await sql.unsafe(
        `DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'rho_differential') THEN CREATE ROLE rho_differential NOLOGIN; END IF; END $$`,
      );
      await sql.unsafe('SET ROLE rho_differential');
    });
    afterAll(async () => {
      await sql?.end();
    });

    /** Parse and describe only (never executed). */
    async function describeText(text: string): Promise<string> {
      try {
        const described = await sql.unsafe(text).describe();
        return `ok ${JSON.stringify((described.columns ?? []).map((column) => [column.name, column.type]))} ${JSON.stringify(described.types)}`;
      } catch (error) {
        const { code, message } = error as { code?: string; message: string };
        return `error ${code ?? ''} ${code === '42601' ? message : ''}`;
      }
    }

    it('has at least 200 statements', () => {
      expect(statements.length).toBeGreaterThanOrEqual(200);
    });

    it.each(statements.map((entry) => [entry.sql, entry] as const))('%j', async (_text, entry) => {
      const context: SqlServerContext = { standardConformingStrings: true, ...entry.context };
      if (context.standardConformingStrings === false) return; // this server has it on; the policy refuses those (corpus)
      const reading = await readSql(entry.sql, 'postgres', context);
      const whole = await describeText(entry.sql);
      if (reading.statements === undefined) {
        expect((await checkSql(entry.sql, 'postgres', context)).allowed).toBe(false);
        expect(whole, 'the server parses what the policy could not').toMatch(/^error 42601/);
        return;
      }
      if (reading.statements > 1) {
        expect(whole).toContain('cannot insert multiple commands');
      } else {
        expect(whole).not.toContain('cannot insert multiple commands');
        expect(await describeText(rebuilt(entry.sql, reading)), 'the text rebuilt from the policy tokens').toBe(whole);
        // The statement's kind: a described statement returns rows exactly when the policy's parse
        // says it is a row-returning one (a SELECT without INTO, EXPLAIN, SHOW, RETURNING).
        if (whole.startsWith('ok ') && reading.returnsRows !== undefined) {
          expect(whole.startsWith('ok []'), `${reading.statementType}: ${whole}`).toBe(!reading.returnsRows);
          kindsChecked.push(reading.statementType ?? '');
        }
      }
      for (const string of reading.strings) {
        const probe = await describeText(`SELECT ${entry.sql.slice(string.start, string.end)} AS rho_probe`);
        expect(probe, `string at ${string.start}-${string.end}`).toMatch(/^ok \[\["rho_probe",/);
      }
      for (const comment of reading.comments) {
        const probe = await describeText(`SELECT 1 ${entry.sql.slice(comment.start, comment.end)}\n AS rho_probe`);
        expect(probe, `comment at ${comment.start}-${comment.end}`).toMatch(/^ok \[\["rho_probe",/);
      }
    });

    it('compared the kind of every statement the server could describe (at least 100, of several kinds)', () => {
      expect(kindsChecked.length).toBeGreaterThanOrEqual(100);
      expect(new Set(kindsChecked).size).toBeGreaterThanOrEqual(4);
    });
  },
);

describe.skipIf(!mysqlProbe.available)(
  `MariaDB reads every corpus statement as the policy does${mysqlProbe.available ? '' : ` (skipped: ${mysqlProbe.reason})`}`,
  () => {
    let connection: Connection;
    let defaultMode = '';
    const statements: CorpusEntry[] = [
      ...corpus.filter((entry) => entry.dialect === 'mysql'),
      ...mysqlHostile('/nonexistent-dir', 'rho_test_differential_mysql', 1).map((text) => ({
        dialect: 'mysql',
        sql: text,
        allowed: false,
      })),
      ...MYSQL_READS.map((text) => ({ dialect: 'mysql', sql: text, allowed: true })),
    ];

    beforeAll(async () => {
      await createMysqlChinook('rho_test_differential_mysql');
      const admin = await mysqlAdmin();
      try {
        for (const host of ['%', 'localhost']) {
          await admin.query(`CREATE USER IF NOT EXISTS 'rho_differential'@'${host}' IDENTIFIED BY 'rho-differential'`);
          await admin.query(`GRANT SELECT ON \`rho_test_differential_mysql\`.* TO 'rho_differential'@'${host}'`);
        }
      } finally {
        await admin.end();
      }
      const mysql = await import('mysql2/promise');
      connection = await mysql.createConnection({
        host: MYSQL_SERVER.host,
        port: MYSQL_SERVER.port,
        user: 'rho_differential',
        password: 'rho-differential',
        database: 'rho_test_differential_mysql',
      });
      const [rows] = await connection.query('SELECT @@SESSION.sql_mode AS mode');
      defaultMode = String((rows as { mode: string }[])[0]?.mode ?? '');
    });
    afterAll(async () => {
      await connection?.end();
    });

    /** COM_STMT_PREPARE only (never executed): the error number, or the column and parameter types. */
    async function prepare(text: string): Promise<string> {
      try {
        const prepared = await connection.prepare(text);
        const inner = (
          prepared as unknown as { statement: { columns?: { columnType: number }[]; parameters?: unknown[] } }
        ).statement;
        const outcome = `ok ${JSON.stringify((inner.columns ?? []).map((column) => column.columnType))} ${inner.parameters?.length ?? 0}`;
        prepared.close();
        // mysql2 caches statements by text: a later prepare under another sql_mode must reach the server.
        connection.unprepare(text);
        return outcome;
      } catch (error) {
        return `error ${(error as { errno?: number }).errno ?? ''}`;
      }
    }

    async function probeNames(text: string): Promise<string[]> {
      try {
        const prepared = await connection.prepare(text);
        const names = (
          (prepared as unknown as { statement: { columns?: { name: string }[] } }).statement.columns ?? []
        ).map((column) => column.name);
        prepared.close();
        connection.unprepare(text);
        return names;
      } catch (error) {
        return [`error ${(error as Error).message}`];
      }
    }

    it('has at least 150 statements', () => {
      expect(statements.length).toBeGreaterThanOrEqual(150);
    });

    it.each(statements.map((entry) => [entry.sql, entry] as const))('%j', async (_text, entry) => {
      const mode = entry.context?.sqlMode;
      if (mode !== undefined && /ORACLE|MSSQL|DB2|POSTGRESQL|MAXDB/.test(mode)) return; // refused by the policy (corpus)
      await connection.query(`SET SESSION sql_mode = '${mode ?? defaultMode}'`);
      const context: SqlServerContext = { sqlMode: mode ?? defaultMode };
      const reading = await readSql(entry.sql, 'mysql', context);
      if (reading.statements === undefined) {
        // Unterminated strings or comments, executable comments: the policy refuses what it cannot read.
        expect((await checkSql(entry.sql, 'mysql', context)).allowed).toBe(false);
        return;
      }
      const whole = await prepare(entry.sql);
      if (reading.statements === 0) {
        expect(whole === 'error 1065' || whole.startsWith('ok'), whole).toBe(true);
        return;
      }
      if (reading.statements > 1) {
        expect(whole, 'several statements are one syntax error to PREPARE').toBe('error 1064');
        // Each piece the policy found is a statement the server reads as the policy does.
        const separators = reading.tokens.filter((token) => entry.sql.slice(token.start, token.end) === ';');
        let from = 0;
        for (const separator of [...separators, { start: entry.sql.length, end: entry.sql.length }]) {
          const piece = rebuilt(entry.sql, reading, from, separator.start);
          if (piece !== '') expect(await prepare(piece), piece).not.toBe('error 1064');
          from = separator.end;
        }
      } else {
        expect(await prepare(rebuilt(entry.sql, reading)), 'the text rebuilt from the policy tokens').toBe(whole);
      }
      for (const string of reading.strings) {
        const names = await probeNames(`SELECT ${entry.sql.slice(string.start, string.end)} AS rho_probe`);
        expect(names, `string at ${string.start}-${string.end}`).toEqual(['rho_probe']);
      }
      for (const comment of reading.comments) {
        const names = await probeNames(`SELECT 1 ${entry.sql.slice(comment.start, comment.end)}\n AS rho_probe`);
        expect(names, `comment at ${comment.start}-${comment.end}`).toEqual(['rho_probe']);
      }
    });
  },
);
