import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkSql } from './check-sql.js';
import type { SqlDecision, SqlDialect } from './check-sql.js';
import type { SqlServerContext } from './internal/sql/function-policy.js';

interface CorpusEntry {
  dialect: SqlDialect;
  sql: string;
  allowed: boolean;
  why: string;
  /** The rule a refusal must name, when the entry says. */
  rule?: string;
  /** What the tools would have read from the server (sql_mode, standard_conforming_strings). */
  context?: SqlServerContext;
}

const corpus = JSON.parse(readFileSync(new URL('../test/sql-corpus.json', import.meta.url), 'utf8')) as CorpusEntry[];

function refused(decision: SqlDecision): Extract<SqlDecision, { allowed: false }> {
  if (decision.allowed) throw new Error(`expected a refusal, got ${JSON.stringify(decision)}`);
  return decision;
}

describe('SQL corpus', () => {
  const families: Record<string, SqlDialect[]> = {
    postgres: ['postgres', 'vertica'],
    mysql: ['mysql'],
    sqlite: ['sqlite'],
  };
  for (const [family, dialects] of Object.entries(families)) {
    it(`has at least 60 ${family}-family statements, at least 30 legitimate and 30 hostile`, () => {
      const entries = corpus.filter((entry) => dialects.includes(entry.dialect));
      expect(entries.length).toBeGreaterThanOrEqual(60);
      expect(entries.filter((entry) => entry.allowed).length).toBeGreaterThanOrEqual(30);
      expect(entries.filter((entry) => !entry.allowed).length).toBeGreaterThanOrEqual(30);
    });
  }

  it('keeps at least as many legitimate statements as hostile ones, in every dialect', () => {
    for (const dialect of ['postgres', 'vertica', 'mysql', 'sqlite', 'oracle'] as const) {
      const entries = corpus.filter((entry) => entry.dialect === dialect);
      expect(entries.filter((entry) => entry.allowed).length, dialect).toBeGreaterThanOrEqual(
        entries.filter((entry) => !entry.allowed).length,
      );
    }
  });

  it('has Oracle and Vertica entries of their own', () => {
    for (const dialect of ['oracle', 'vertica'] as const) {
      expect(corpus.filter((entry) => entry.dialect === dialect && entry.allowed).length).toBeGreaterThan(5);
      expect(corpus.filter((entry) => entry.dialect === dialect && !entry.allowed).length).toBeGreaterThan(5);
    }
  });

  it.each(corpus.map((entry) => [entry.dialect, entry.allowed ? 'allows' : 'refuses', entry.sql, entry] as const))(
    '%s %s %j',
    async (_dialect, _verdict, _sql, entry) => {
      const decision = await checkSql(entry.sql, entry.dialect, entry.context);
      expect(decision.allowed, `${entry.why}: ${JSON.stringify(decision)}`).toBe(entry.allowed);
      if (!decision.allowed && entry.rule !== undefined) expect(decision.rule, entry.why).toBe(entry.rule);
      if (decision.allowed) {
        expect(decision.rule).toBe('sql.read');
      } else {
        // Every refusal tells the model what is allowed instead.
        expect(decision.reason).toMatch(/^Refused: /);
        expect(decision.reason).toContain('Only read-only queries are allowed here');
      }
    },
  );
});

describe('checkSql reasons', () => {
  it('names stacked statements and how many there were', async () => {
    for (const dialect of ['postgres', 'mysql', 'sqlite', 'oracle', 'vertica'] as const) {
      const decision = refused(await checkSql('SELECT 1 FROM Artist; SELECT 2 FROM Album', dialect));
      expect(decision.rule).toBe('sql.stacked-statements');
      expect(decision.reason).toContain('2 statements were sent');
    }
  });

  it('allows a single trailing semicolon and refuses an empty statement', async () => {
    for (const dialect of ['postgres', 'mysql', 'sqlite', 'oracle', 'vertica'] as const) {
      expect((await checkSql('SELECT * FROM Genre;', dialect)).allowed).toBe(true);
      expect(refused(await checkSql('  -- only a comment\n', dialect)).rule).toMatch(/^sql\.(empty|unparseable)$/);
    }
  });

  it('reports the statement type of what it allows', async () => {
    expect(await checkSql('VALUES (1)', 'postgres')).toEqual({
      allowed: true,
      rule: 'sql.read',
      statementType: 'VALUES',
    });
    expect(await checkSql('SHOW work_mem', 'postgres')).toEqual({
      allowed: true,
      rule: 'sql.read',
      statementType: 'SHOW',
    });
    expect(await checkSql('EXPLAIN ANALYZE SELECT 1', 'postgres')).toEqual({
      allowed: true,
      rule: 'sql.read',
      statementType: 'EXPLAIN ANALYZE',
    });
    expect(await checkSql('DESC Track', 'mysql')).toEqual({
      allowed: true,
      rule: 'sql.read',
      statementType: 'DESCRIBE',
    });
    expect(await checkSql('SHOW TABLES', 'mysql')).toEqual({ allowed: true, rule: 'sql.read', statementType: 'SHOW' });
    expect(await checkSql('EXPLAIN QUERY PLAN SELECT 1', 'sqlite')).toEqual({
      allowed: true,
      rule: 'sql.read',
      statementType: 'EXPLAIN QUERY PLAN',
    });
  });

  it('names the refused statement type', async () => {
    const decision = refused(await checkSql('DELETE FROM "Track" WHERE "TrackId" = 1', 'postgres'));
    expect(decision).toMatchObject({ rule: 'sql.statement-type', statementType: 'DELETE' });
    expect(decision.reason).toContain('DELETE is not a read');
    expect(refused(await checkSql('COPY "Track" TO \'/tmp/t.csv\'', 'postgres')).reason).toContain(
      'COPY is not a read',
    );
    expect(refused(await checkSql('BEGIN', 'postgres')).reason).toContain('transaction control');
    expect(refused(await checkSql("LOAD DATA INFILE '/etc/hosts' INTO TABLE Genre", 'mysql')).reason).toContain(
      'LOAD DATA is not a read',
    );
    expect(refused(await checkSql('PRAGMA user_version = 7', 'sqlite')).reason).toContain(
      'no PRAGMA statement is allowed',
    );
    expect(refused(await checkSql('PRAGMA table_info(Track)', 'sqlite')).reason).toContain('pragma_table_info');
  });

  it('explains data-modifying CTEs, SELECT INTO and locking clauses', async () => {
    expect(
      refused(await checkSql('WITH gone AS (DELETE FROM "Genre" RETURNING *) SELECT count(*) FROM gone', 'postgres')),
    ).toMatchObject({
      rule: 'sql.data-modifying-cte',
      reason: expect.stringContaining('data-modifying DELETE'),
    });
    expect(refused(await checkSql('SELECT * INTO backup FROM "Track"', 'postgres')).rule).toBe('sql.select-into');
    expect(refused(await checkSql("SELECT * FROM Track INTO OUTFILE '/tmp/t'", 'mysql')).reason).toContain('INTO');
    expect(refused(await checkSql('SELECT * FROM "Track" FOR KEY SHARE', 'postgres')).rule).toBe('sql.locking-clause');
    expect(refused(await checkSql('SELECT * FROM Track LOCK IN SHARE MODE', 'mysql')).reason).toContain(
      'LOCK IN SHARE MODE',
    );
    expect(refused(await checkSql('SELECT * FROM Track FOR SHARE', 'mysql')).reason).toContain('FOR SHARE');
    expect(refused(await checkSql('SELECT * FROM Track FOR UPDATE', 'oracle')).rule).toBe('sql.locking-clause');
  });

  it('finds side-effect functions anywhere in the tree, qualified or quoted, and names them', async () => {
    const postgres = refused(
      await checkSql(
        'SELECT "Name" FROM "Artist" WHERE EXISTS (SELECT 1 FROM "Album" HAVING count(pg_catalog.pg_advisory_lock(1)) > 0)',
        'postgres',
      ),
    );
    expect(postgres).toMatchObject({
      rule: 'sql.side-effect-function',
      reason: expect.stringContaining('pg_catalog.pg_advisory_lock()'),
    });
    expect(refused(await checkSql('SELECT Name FROM Artist ORDER BY sleep(1)', 'mysql')).reason).toContain('sleep()');
    expect(refused(await checkSql("SELECT [writefile]('/tmp/x', 'y')", 'sqlite')).reason).toContain('writefile()');
    expect(refused(await checkSql('SELECT sys.dbms_lock.sleep(5) FROM dual', 'oracle')).reason).toContain('dbms_lock');
  });

  it('never refuses because of words in literals, quoted identifiers or comments', async () => {
    const cases: [string, SqlDialect][] = [
      ["SELECT 'DROP TABLE x' AS t -- delete", 'postgres'],
      ["SELECT 'pg_sleep(10); DELETE FROM t' AS t /* COPY t TO PROGRAM 'x' */", 'postgres'],
      ["SELECT E'it\\'s; DROP TABLE t' AS t", 'postgres'],
      ['SELECT "pg_sleep" FROM (SELECT 1 AS "pg_sleep") AS s', 'postgres'],
      ["SELECT 'DROP TABLE x' AS t -- delete", 'mysql'],
      ["SELECT 'GET_LOCK(1); INSERT INTO t' AS t # UPDATE", 'mysql'],
      ["SELECT 'DROP TABLE x' AS t -- delete", 'sqlite'],
      ['SELECT "insert" FROM (SELECT 1 AS "insert")', 'sqlite'],
      ["SELECT 'DROP TABLE x' AS t FROM dual -- delete", 'oracle'],
      ["SELECT q'{ FOR UPDATE }' FROM dual", 'oracle'],
      ["SELECT 'DROP TABLE x' AS t -- delete", 'vertica'],
    ];
    for (const [sql, dialect] of cases)
      expect(await checkSql(sql, dialect), `${dialect}: ${sql}`).toMatchObject({ allowed: true });
  });

  it('refuses what it cannot parse and quotes the parser', async () => {
    const postgres = refused(await checkSql('SELECT FROM WHERE', 'postgres'));
    expect(postgres.rule).toBe('sql.unparseable');
    expect(postgres.reason).toMatch(/could not parse the statement as PostgreSQL \(syntax error at or near "WHERE"\)/);
    expect(refused(await checkSql('SELECT * FROM Track WHERE', 'mysql')).reason).toContain(
      'could not parse the statement as MySQL/MariaDB (',
    );
    expect(refused(await checkSql('SELECT "unterminated FROM Track', 'sqlite')).reason).toContain(
      'unterminated quoted name',
    );
    expect(refused(await checkSql("SELECT q'[never closed FROM dual", 'oracle')).reason).toContain(
      'unterminated q-quoted string',
    );
  });

  it('refuses EXPLAIN ANALYZE of a write, and EXPLAIN of a write', async () => {
    expect(refused(await checkSql('EXPLAIN (ANALYZE) UPDATE "Track" SET "Name" = \'x\'', 'postgres'))).toMatchObject({
      rule: 'sql.explain-analyze-write',
      reason: expect.stringContaining('runs the statement'),
    });
    expect(refused(await checkSql('EXPLAIN UPDATE "Track" SET "Name" = \'x\'', 'postgres')).rule).toBe(
      'sql.explain-write',
    );
    expect(refused(await checkSql("EXPLAIN SELECT nextval('s')", 'postgres')).rule).toBe('sql.side-effect-function');
    expect(refused(await checkSql('EXPLAIN DELETE FROM Genre', 'mysql')).reason).toContain('not DELETE');
    expect(refused(await checkSql('EXPLAIN ANALYZE SELECT * FROM Genre', 'mysql')).reason).toContain(
      'EXPLAIN ANALYZE cannot be checked here',
    );
  });

  it('refuses MySQL executable comments anywhere', async () => {
    for (const sql of ['SELECT 1 /*!50000 , (SELECT 1) */', "SELECT '/*!' AS s", 'SELECT /*M!100000 1, */ 2']) {
      expect(refused(await checkSql(sql, 'mysql')).rule).toBe('sql.executable-comment');
    }
    // Not MySQL: the same text is an ordinary comment elsewhere.
    expect((await checkSql('SELECT 1 /*! harmless */', 'postgres')).allowed).toBe(true);
  });

  it('answers an unknown dialect with a refusal, not a throw', async () => {
    const decision = refused(await checkSql('SELECT 1', 'db2' as SqlDialect));
    expect(decision.rule).toBe('sql.dialect');
  });
});

describe('lazy loading', () => {
  it('importing the package loads no SQL parser; the first check loads only the one it needs', () => {
    const index = pathToFileURL(fileURLToPath(new URL('./index.ts', import.meta.url))).href;
    const script = `
      import { createRequire } from 'node:module';
      const require = createRequire(import.meta.url);
      const loaded = () => ['libpg-query', 'node-sql-parser'].filter((name) => Object.keys(require.cache).some((path) => path.includes(name)));
      const permissions = await import(${JSON.stringify(index)});
      const afterImport = loaded();
      await permissions.checkSql('SELECT 1', 'sqlite');
      const afterSqlite = loaded();
      await permissions.checkSql('SELECT 1', 'postgres');
      const afterPostgres = loaded();
      await permissions.checkSql('SELECT 1', 'mysql');
      process.stdout.write(JSON.stringify({ afterImport, afterSqlite, afterPostgres, afterMysql: loaded() }));
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      encoding: 'utf8',
    });
    expect(child.status, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual({
      afterImport: [],
      afterSqlite: [],
      afterPostgres: ['libpg-query'],
      afterMysql: ['libpg-query', 'node-sql-parser'],
    });
  });
});

describe('readonly audit, round three', () => {
  it('refuses LAST_INSERT_ID(expr), which sets session state like :=, and keeps the plain read', async () => {
    for (const sql of [
      'SELECT LAST_INSERT_ID(5)',
      'SELECT last_insert_id (GenreId) FROM Genre',
      'SELECT `LAST_INSERT_ID`(1)',
    ]) {
      const decision = refused(await checkSql(sql, 'mysql'));
      expect(decision.rule, sql).toBe('sql.variable-assignment');
      expect(decision.reason).toMatch(/LAST_INSERT_ID\(\) without an argument/i);
    }
    expect((await checkSql('SELECT LAST_INSERT_ID()', 'mysql')).allowed).toBe(true);
  });

  it('names the schema, not a placeholder, when USE names a secret schema', async () => {
    const decision = refused(await checkSql('USE mysql', 'mysql'));
    expect(decision.reason).not.toMatch(/null/);
    expect(decision.reason).toMatch(/the mysql schema/);
  });

  it('refuses a statement too long or too deep to check instead of throwing', async () => {
    for (const dialect of ['mysql', 'postgres'] as const) {
      const decision = refused(await checkSql(`SELECT ${Array(200000).fill('1').join('+')}`, dialect));
      expect(decision.reason).toMatch(/^Refused: /);
    }
  }, 60_000);

  it('decides a long dotted name at once (Oracle and SQLite read names token by token)', async () => {
    for (const dialect of ['oracle', 'sqlite'] as const) {
      const decision = await checkSql(`SELECT ${'"a"."b".'.repeat(50000)}c FROM dual`, dialect);
      expect(decision.allowed, dialect).toBe(true);
    }
    const hidden = refused(await checkSql(`SELECT a.b.c.d.e.f.dbms_pipe.send_message('x') FROM dual`, 'oracle'));
    expect(hidden.rule).toBe('sql.side-effect-function');
  }, 60_000);

  it('refuses a PostgreSQL statement that opens thousands of block comments before the parser sees it', async () => {
    // PostgreSQL's own scanner takes quadratic time on comments left open (50,000: over 12 s).
    for (const dialect of ['postgres', 'vertica'] as const) {
      const decision = refused(await checkSql(`SELECT 1 ${'/*'.repeat(50_000)}`, dialect));
      expect(decision.rule, dialect).toBe('sql.too-complex');
      expect(decision.reason).toMatch(/block comments/);
    }
    // A statement with a few comments, nested as PostgreSQL allows, is read as before.
    expect((await checkSql('SELECT /* one /* two */ */ 1', 'postgres')).allowed).toBe(true);
  }, 60_000);

  it('gives pg_sleep and pg_notify their own reasons (they do not show other sessions)', async () => {
    const sleep = refused(await checkSql('SELECT pg_sleep(1)', 'postgres'));
    expect(sleep.reason).toMatch(/stalls/);
    expect(sleep.reason).not.toMatch(/other sessions/);
    const notify = refused(await checkSql("SELECT pg_notify('c', 'x')", 'postgres'));
    expect(notify.reason).toMatch(/notification/);
  });
});
