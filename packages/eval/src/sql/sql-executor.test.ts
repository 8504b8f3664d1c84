import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bundledSqlDatasetDir } from './sql-dataset.js';
import type { SqlExecutor } from './sql-executor.js';
import { createSqlExecutor } from './sql-executor.js';

const chinook = join(bundledSqlDatasetDir('chinook'), 'dev_databases', 'chinook', 'chinook.sqlite');
// Never ends: a recursive count with no bound, so only the timeout can stop it.
const ENDLESS = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';

let executor: SqlExecutor | undefined;
afterEach(async () => {
  await executor?.close();
  executor = undefined;
});

describe('createSqlExecutor', () => {
  it('returns columns and rows with exact integers, reals, text and NULLs', async () => {
    executor = createSqlExecutor();
    const outcome = await executor.run(
      chinook,
      'SELECT CustomerId, Company, Country, 1.5 AS half FROM Customer WHERE CustomerId IN (1, 2) ORDER BY CustomerId',
    );
    expect(outcome).toEqual({
      ok: true,
      columns: ['CustomerId', 'Company', 'Country', 'half'],
      rows: [
        [1n, 'Embraer - Empresa Brasileira de Aeronáutica S.A.', 'Brazil', 1.5],
        [2n, null, 'Germany', 1.5],
      ],
    });
  });

  it('runs read-only: writes, pragmas that write and a second statement are refused, and the file is unchanged', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'rho-eval-exec-'));
    const copy = join(directory, 'copy.sqlite');
    copyFileSync(chinook, copy);
    const before = readFileSync(copy);
    executor = createSqlExecutor();
    for (const sql of [
      'DELETE FROM Artist',
      "UPDATE Artist SET Name = 'x'",
      'CREATE TABLE t (x)',
      'SELECT 1; DELETE FROM Artist',
      'DROP TABLE Artist',
    ]) {
      const outcome = await executor.run(copy, sql);
      expect(outcome.ok, sql).toBe(false);
    }
    expect(await executor.run(copy, 'SELECT COUNT(*) FROM Artist')).toMatchObject({ ok: true, rows: [[275n]] });
    expect(readFileSync(copy).equals(before)).toBe(true);
  });

  it("reports an SQL error with SQLite's message", async () => {
    executor = createSqlExecutor();
    const outcome = await executor.run(chinook, 'SELECT nope FROM Artist');
    expect(outcome).toEqual({ ok: false, kind: 'error', message: expect.stringContaining('no such column: nope') });
  });

  it('ends a query that outlives its timeout by killing its process, and the next query still runs', async () => {
    executor = createSqlExecutor({ timeoutMs: 300, maxProcesses: 1 });
    const [endless, after] = await Promise.all([
      executor.run(chinook, ENDLESS),
      executor.run(chinook, 'SELECT COUNT(*) FROM Genre'),
    ]);
    expect(endless).toEqual({ ok: false, kind: 'timeout', message: 'the query ran longer than 0.3 s' });
    expect(after).toEqual({ ok: true, columns: ['COUNT(*)'], rows: [[25n]] });
  });

  it('fails a missing database file without creating it', async () => {
    executor = createSqlExecutor();
    const missing = join(mkdtempSync(join(tmpdir(), 'rho-eval-exec-')), 'missing.sqlite');
    const outcome = await executor.run(missing, 'SELECT 1');
    expect(outcome.ok).toBe(false);
  });

  it('runs more queries than processes, each with its own answer', async () => {
    executor = createSqlExecutor({ maxProcesses: 2 });
    const outcomes = await Promise.all(
      [1, 2, 3, 4, 5].map((id) => executor!.run(chinook, `SELECT Name FROM Genre WHERE GenreId = ${id}`)),
    );
    expect(outcomes.map((outcome) => (outcome.ok ? outcome.rows[0]?.[0] : outcome.message))).toEqual([
      'Rock',
      'Jazz',
      'Metal',
      'Alternative & Punk',
      'Rock And Roll',
    ]);
  });

  it('refuses a result larger than maxRows', async () => {
    executor = createSqlExecutor({ maxRows: 10 });
    expect(await executor.run(chinook, 'SELECT * FROM Track')).toEqual({
      ok: false,
      kind: 'error',
      message: 'the query returned more than 10 rows',
    });
  });
});
