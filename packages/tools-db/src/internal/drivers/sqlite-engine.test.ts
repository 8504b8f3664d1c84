import { join } from 'node:path';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { hasSecondStatement, openSqlite, sqliteEngine } from './sqlite-engine.js';
import type { SqliteEngineName } from './sqlite-engine.js';

const chinook = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'test',
  'fixtures',
  'chinook',
  'Chinook_Sqlite.sqlite',
);
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const available: SqliteEngineName[] = [
  ...(major < 24 ? (['better-sqlite3'] as const) : []),
  ...(major > 22 || (major === 22 && minor >= 5) ? (['node:sqlite'] as const) : []),
];

describe('sqliteEngine', () => {
  it('uses better-sqlite3 before Node 24 and node:sqlite from Node 24 on', () => {
    expect(sqliteEngine('20.19.0')).toBe('better-sqlite3');
    expect(sqliteEngine('22.12.0')).toBe('better-sqlite3');
    expect(sqliteEngine('24.0.0')).toBe('node:sqlite');
  });
});

describe('hasSecondStatement', () => {
  it.each([
    ['SELECT 1', false],
    ['SELECT 1;', false],
    ['SELECT 1; -- done\n', false],
    ["SELECT ';DROP' AS x;  /* trailing */ ", false],
    ['SELECT "a;b" FROM t', false],
    ['SELECT 1; SELECT 2', true],
    ["SELECT 1; 'x'", true],
    ['SELECT 1;;DELETE FROM t', true],
  ])('%j → %s', (sql, expected) => {
    expect(hasSecondStatement(sql)).toBe(expected);
  });
});

describe.each(available)('the %s engine', (engine) => {
  it('reads rows as arrays with bigint integers, and column names', async () => {
    const database = await openSqlite(chinook, { readonly: true, fileMustExist: true, timeoutMs: 1000 }, engine);
    const statement = database.prepare('SELECT ArtistId, Name FROM Artist ORDER BY ArtistId LIMIT 2');
    expect(statement.reader).toBe(true);
    expect(statement.columns()).toEqual(['ArtistId', 'Name']);
    expect([...statement.iterate([])]).toEqual([
      [1n, 'AC/DC'],
      [2n, 'Accept'],
    ]);
    database.close();
  });

  it('refuses a second statement and writes on a read-only file', async () => {
    const database = await openSqlite(chinook, { readonly: true, fileMustExist: true, timeoutMs: 1000 }, engine);
    expect(() => database.prepare('SELECT 1; DELETE FROM Artist')).toThrow(/more than one statement/);
    expect(() => database.exec('DELETE FROM Artist')).toThrow(/readonly/);
    database.close();
  });

  it('refuses a missing file', async () => {
    await expect(
      openSqlite('/nonexistent/db.sqlite', { readonly: true, fileMustExist: true, timeoutMs: 1000 }, engine),
    ).rejects.toThrow();
  });
});
