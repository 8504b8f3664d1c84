import { createRequire } from 'node:module';
import { afterAll, describe, expect, it } from 'vitest';
import { compareResultSets } from '../src/sql/compare-result-sets.js';
import type { SqlValue } from '../src/sql/compare-result-sets.js';
import { loadSqlDataset, SQL_DIFFICULTIES } from '../src/sql/sql-dataset.js';
import { createSqlExecutor } from '../src/sql/sql-executor.js';

const dataset = loadSqlDataset('chinook');

/** A read-only connection with the engine rho uses on this Node (better-sqlite3 objects abort Node 24 when collected). */
interface Connection {
  rows(sql: string): SqlValue[][];
  exec(sql: string): void;
  close(): void;
}
function openReadonly(path: string): Connection {
  const require = createRequire(import.meta.url);
  if (Number(process.versions.node.split('.')[0]) >= 24) {
    const { DatabaseSync } = require('node:sqlite') as {
      DatabaseSync: new (
        path: string,
        options: { readOnly: boolean },
      ) => {
        prepare(sql: string): {
          setReadBigInts(on: boolean): void;
          setReturnArrays(on: boolean): void;
          all(): SqlValue[][];
        };
        exec(sql: string): void;
        close(): void;
      };
    };
    const database = new DatabaseSync(path, { readOnly: true });
    return {
      rows(sql) {
        const statement = database.prepare(sql);
        statement.setReadBigInts(true);
        statement.setReturnArrays(true);
        return statement.all();
      },
      exec: (sql) => database.exec(sql),
      close: () => database.close(),
    };
  }
  const Database = require('better-sqlite3') as typeof import('better-sqlite3');
  const database = new Database(path, { readonly: true });
  database.defaultSafeIntegers(true);
  return {
    rows: (sql) => database.prepare(sql).raw(true).all() as SqlValue[][],
    exec: (sql) => void database.exec(sql),
    close: () => void database.close(),
  };
}
const executor = createSqlExecutor({ maxProcesses: 2 });
afterAll(() => executor.close());

describe('the bundled chinook set', () => {
  it('has at least 60 questions with evidence, gold SQL and every difficulty', () => {
    expect(dataset.questions.length).toBeGreaterThanOrEqual(60);
    for (const question of dataset.questions) {
      expect(question.evidence.trim(), question.id).not.toBe('');
      expect(question.goldSql.trim(), question.id).not.toBe('');
      expect(SQL_DIFFICULTIES, question.id).toContain(question.difficulty);
    }
    for (const difficulty of SQL_DIFFICULTIES)
      expect(
        dataset.questions.filter((question) => question.difficulty === difficulty).length,
        difficulty,
      ).toBeGreaterThanOrEqual(10);
    expect(new Set(dataset.questions.map((question) => question.question)).size).toBe(dataset.questions.length);
  });

  it('has gold queries that all run read-only and return rows', async () => {
    const outcomes = await Promise.all(
      dataset.questions.map(async (question) => ({
        question,
        outcome: await executor.run(question.databasePath, question.goldSql),
      })),
    );
    for (const { question, outcome } of outcomes) {
      expect(outcome.ok ? 'ok' : outcome.message, `question ${question.id}`).toBe('ok');
      if (outcome.ok) expect(outcome.rows.length, `question ${question.id} returns no row`).toBeGreaterThan(0);
    }
  });

  it('has gold results that do not depend on the order SQLite happens to scan rows in', () => {
    // PRAGMA reverse_unordered_selects makes SQLite scan in the other order wherever the query
    // leaves order open: a LIMIT that cuts through ties, or a GROUP BY picking any row, changes.
    const database = openReadonly(dataset.questions[0]!.databasePath);
    try {
      for (const question of dataset.questions) {
        database.exec('PRAGMA reverse_unordered_selects = OFF');
        const forward = database.rows(question.goldSql);
        database.exec('PRAGMA reverse_unordered_selects = ON');
        const reversed = database.rows(question.goldSql);
        expect(compareResultSets(reversed, forward), `question ${question.id}`).toEqual({ equal: true });
      }
    } finally {
      database.close();
    }
  });

  it('has no tie at the cut of any ORDER BY ... LIMIT n', () => {
    const database = openReadonly(dataset.questions[0]!.databasePath);
    let checked = 0;
    try {
      for (const question of dataset.questions) {
        const match = /^SELECT (.+?) FROM (.+) ORDER BY (.+?) (ASC|DESC) LIMIT (\d+)$/s.exec(question.goldSql);
        if (match === null) {
          expect(question.goldSql, `question ${question.id}: a LIMIT this check cannot read`).not.toMatch(/\bLIMIT\b/i);
          continue;
        }
        const [, , from, key, direction, limit] = match;
        // The ordering key of the first n + 1 rows: the n-th and the next must differ.
        const keys = database
          .rows(`SELECT ${key} FROM ${from} ORDER BY ${key} ${direction} LIMIT ${Number(limit) + 1}`)
          .map((row) => row[0]);
        if (keys.length > Number(limit))
          expect(keys[Number(limit)], `question ${question.id} has a tie at its LIMIT`).not.toEqual(
            keys[Number(limit) - 1],
          );
        checked += 1;
      }
    } finally {
      database.close();
    }
    expect(checked).toBeGreaterThanOrEqual(10);
  });
});
