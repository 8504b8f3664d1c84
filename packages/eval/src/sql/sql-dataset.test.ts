import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundledSqlDatasetDir, loadSqlDataset } from './sql-dataset.js';

const chinookFile = join(bundledSqlDatasetDir('chinook'), 'dev_databases', 'chinook', 'chinook.sqlite');

/** A dataset directory in BIRD's dev layout, with the given questions. */
function birdLayout(questions: unknown, databases: string[] = ['california_schools']): string {
  const directory = mkdtempSync(join(tmpdir(), 'rho-bird-'));
  for (const db of databases) {
    mkdirSync(join(directory, 'dev_databases', db), { recursive: true });
    copyFileSync(chinookFile, join(directory, 'dev_databases', db, `${db}.sqlite`));
  }
  writeFileSync(join(directory, 'dev.json'), JSON.stringify(questions));
  return directory;
}

const birdQuestion = {
  question_id: 0,
  db_id: 'california_schools',
  question: 'What is the highest eligible free rate for K-12 students in the schools in Alameda County?',
  evidence: 'Eligible free rate for K-12 = `Free Meal Count (K-12)` / `Enrollment (K-12)`',
  SQL: "SELECT `Free Meal Count (K-12)` / `Enrollment (K-12)` FROM frpm WHERE `County Name` = 'Alameda' ORDER BY (CAST(`Free Meal Count (K-12)` AS REAL) / `Enrollment (K-12)`) DESC LIMIT 1",
  difficulty: 'simple',
};

describe('loadSqlDataset', () => {
  it("loads BIRD's dev layout as is: a directory with dev.json and dev_databases/<db>/<db>.sqlite", () => {
    const directory = birdLayout([birdQuestion, { ...birdQuestion, question_id: 1, difficulty: 'moderate' }]);
    const dataset = loadSqlDataset(directory);
    expect(dataset.path).toBe(join(directory, 'dev.json'));
    expect(dataset.questions).toHaveLength(2);
    expect(dataset.questions[0]).toEqual({
      id: '0',
      dbId: 'california_schools',
      question: birdQuestion.question,
      evidence: birdQuestion.evidence,
      goldSql: birdQuestion.SQL,
      difficulty: 'simple',
      databasePath: join(directory, 'dev_databases', 'california_schools', 'california_schools.sqlite'),
    });
    // the questions file itself works too
    expect(loadSqlDataset(join(directory, 'dev.json')).questions).toHaveLength(2);
    expect(dataset.databasesDir).toBe(join(directory, 'dev_databases'));
  });

  it('finds the databases in another folder when told (--db-dir)', () => {
    const directory = birdLayout([birdQuestion]);
    const elsewhere = mkdtempSync(join(tmpdir(), 'rho-bird-questions-'));
    writeFileSync(join(elsewhere, 'mini_dev.json'), JSON.stringify([birdQuestion]));
    expect(() => loadSqlDataset(join(elsewhere, 'mini_dev.json'))).toThrow(/Database file not found/);
    const dataset = loadSqlDataset(join(elsewhere, 'mini_dev.json'), {
      databasesDir: join(directory, 'dev_databases'),
    });
    expect(dataset.questions[0]!.databasePath).toBe(
      join(directory, 'dev_databases', 'california_schools', 'california_schools.sqlite'),
    );
  });

  it('takes questions without evidence or difficulty (BIRD train has no difficulty)', () => {
    const directory = birdLayout([{ question_id: 7, db_id: 'california_schools', question: 'q?', SQL: 'SELECT 1' }]);
    expect(loadSqlDataset(directory).questions[0]).toMatchObject({ id: '7', evidence: '', difficulty: 'unlabelled' });
  });

  it('loads the bundled chinook set by name', () => {
    const dataset = loadSqlDataset('chinook');
    expect(dataset.name).toBe('chinook');
    expect(dataset.questions.length).toBeGreaterThanOrEqual(60);
  });

  it.each([
    ['a missing database', [{ ...birdQuestion, db_id: 'financial' }], /Database file not found: .*financial\.sqlite/],
    [
      'an unknown difficulty',
      [{ ...birdQuestion, difficulty: 'hard' }],
      /difficulty "hard" is not one of simple, moderate, challenging/,
    ],
    ['a duplicate id', [birdQuestion, birdQuestion], /question_id 0 appears twice/],
    ['a missing SQL', [{ ...birdQuestion, SQL: undefined }], /item 0: missing 'SQL'/],
    ['a db_id that is a path', [{ ...birdQuestion, db_id: '../x' }], /is not a plain name/],
    ['an object instead of an array', { questions: [] }, /must hold a JSON array/],
  ])('refuses %s with a message naming it', (_name, questions, message) => {
    expect(() => loadSqlDataset(birdLayout(questions))).toThrow(message);
  });

  it('refuses a missing path and a directory without dev.json', () => {
    expect(() => loadSqlDataset(join(tmpdir(), 'rho-no-such-dataset'))).toThrow(/Dataset not found/);
    expect(() => loadSqlDataset(mkdtempSync(join(tmpdir(), 'rho-bird-')))).toThrow(/No dev.json in/);
  });
});
