import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { compareResultSets } from '../src/sql/compare-result-sets.js';
import type { SqlValue } from '../src/sql/compare-result-sets.js';
import { loadSqlDataset, SQL_DIFFICULTIES } from '../src/sql/sql-dataset.js';
import { createSqlExecutor } from '../src/sql/sql-executor.js';

const dataset = loadSqlDataset('chinook');
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
    for (const difficulty of SQL_DIFFICULTIES) expect(dataset.questions.filter((question) => question.difficulty === difficulty).length, difficulty).toBeGreaterThanOrEqual(10);
    expect(new Set(dataset.questions.map((question) => question.question)).size).toBe(dataset.questions.length);
  });

  it('has gold queries that all run read-only and return rows', async () => {
    const outcomes = await Promise.all(dataset.questions.map(async (question) => ({ question, outcome: await executor.run(question.databasePath, question.goldSql) })));
    for (const { question, outcome } of outcomes) {
      expect(outcome.ok ? 'ok' : outcome.message, `question ${question.id}`).toBe('ok');
      if (outcome.ok) expect(outcome.rows.length, `question ${question.id} returns no row`).toBeGreaterThan(0);
    }
  });

  it('has gold results that do not depend on the order SQLite happens to scan rows in', () => {
    // PRAGMA reverse_unordered_selects makes SQLite scan in the other order wherever the query
    // leaves order open: a LIMIT that cuts through ties, or a GROUP BY picking any row, changes.
    const database = new Database(dataset.questions[0]!.databasePath, { readonly: true });
    database.defaultSafeIntegers(true);
    try {
      for (const question of dataset.questions) {
        const run = () => database.prepare(question.goldSql).raw(true).all() as SqlValue[][];
        database.pragma('reverse_unordered_selects = OFF');
        const forward = run();
        database.pragma('reverse_unordered_selects = ON');
        const reversed = run();
        expect(compareResultSets(reversed, forward), `question ${question.id}`).toEqual({ equal: true });
      }
    } finally {
      database.close();
    }
  });

  it('has no tie at the cut of any ORDER BY ... LIMIT n', () => {
    const database = new Database(dataset.questions[0]!.databasePath, { readonly: true });
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
        const keys = database.prepare(`SELECT ${key} FROM ${from} ORDER BY ${key} ${direction} LIMIT ${Number(limit) + 1}`).pluck().all();
        if (keys.length > Number(limit)) expect(keys[Number(limit)], `question ${question.id} has a tie at its LIMIT`).not.toEqual(keys[Number(limit) - 1]);
        checked += 1;
      }
    } finally {
      database.close();
    }
    expect(checked).toBeGreaterThanOrEqual(10);
  });
});
