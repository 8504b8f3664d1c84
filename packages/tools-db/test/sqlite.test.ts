import { createHash } from 'node:crypto';
import { chmod, mkdtemp, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlite, sqliteEngine } from '../src/internal/drivers/sqlite-engine.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolRegistry } from '@rho/core';
import type { Tool, ToolContext } from '@rho/core';
import { closeDbTools, createDbTools } from '../src/db-tools.js';
import type { DatabaseConfig } from '../src/database-config.js';
import { SQLITE_READS, sqliteHostile } from './support/corpus.js';
import { copySqliteChinook } from './support/servers.js';
import { call, profile, toolNamed } from './support/tool-call.js';

let directory: string;

/**
 * Statements the read-only connection itself lets run because they write nothing: a savepoint
 * (rolled back after the call, so a later RELEASE fails) and dropping a trigger that does not exist.
 */
// Statements a read-only, query_only connection lets through because they write nothing.
// better-sqlite3 also refuses statements SQLite flags as writers (sqlite3_stmt_readonly);
// node:sqlite (the engine on Node 24+) cannot tell, so no-op writers and EXPLAIN of a write pass too.
const SQLITE_HARMLESS_WITHOUT_POLICY: string[] =
  sqliteEngine() === 'better-sqlite3'
    ? ['SAVEPOINT pwned', 'DROP TRIGGER IF EXISTS pwned']
    : [
        'SAVEPOINT pwned',
        'EXPLAIN DELETE FROM Genre',
        'EXPLAIN QUERY PLAN DELETE FROM Genre',
        'DROP VIEW IF EXISTS pwned',
        'DROP TRIGGER IF EXISTS pwned',
      ];
let config: DatabaseConfig;
const opened: Tool[][] = [];

function tools(
  profileName: 'readonly' | 'readonly-exports' | 'unrestricted',
  options: { skipSqlPolicy?: boolean } = {},
): Tool {
  const list = createDbTools({ profile: profile(profileName), databases: [config], workingDir: directory }, options);
  opened.push(list);
  return toolNamed(list, 'sqlite');
}

async function checksum(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}

beforeAll(async () => {
  ({ directory, config } = await copySqliteChinook());
});

afterAll(async () => {
  for (const list of opened) await closeDbTools(list);
});

describe('sqlite tool on Chinook', () => {
  it('lists tables and views', async () => {
    const result = await call(tools('readonly'), { operation: 'list_tables' });
    expect(result.success).toBe(true);
    for (const table of [
      'Album',
      'Artist',
      'Customer',
      'Employee',
      'Genre',
      'Invoice',
      'InvoiceLine',
      'MediaType',
      'Playlist',
      'PlaylistTrack',
      'Track',
    ]) {
      expect(result.content).toMatch(new RegExp(`^${table}\\s+\\| table$`, 'm'));
    }
    expect(result.metadata?.table_count).toBe(11);
    const filtered = await call(tools('readonly'), { operation: 'list_tables', table_pattern: 'Invoice%' });
    expect(filtered.metadata?.table_count).toBe(2);
    const none = await call(tools('readonly'), { operation: 'list_tables', table_pattern: 'zzz%' });
    expect(none.content).toBe('No tables found matching pattern: zzz%');
  });

  it('describes a table with its columns, primary key, foreign keys and indexes', async () => {
    const result = await call(tools('readonly'), { operation: 'describe', table_name: 'Track' });
    expect(result.success).toBe(true);
    expect(result.content).toContain('Table: Track');
    expect(result.content).toMatch(/^ {2}TrackId\s+INTEGER\s+NOT NULL$/m);
    expect(result.content).toMatch(/^ {2}Composer\s+NVARCHAR\(220\)\s+NULL$/m);
    expect(result.content).toContain('Primary Key: (TrackId)');
    expect(result.content).toMatch(/\(AlbumId\) -> Album\(AlbumId\)/);
    expect(result.content).toMatch(/IFK_TrackAlbumId \(NONUNIQUE\) on \(AlbumId\)/);
    const missing = await call(tools('readonly'), { operation: 'describe', table_name: 'Nope' });
    expect(missing).toMatchObject({ success: false, content: 'Table not found: Nope' });
  });

  it('shows row_limit rows and the exact number left out', async () => {
    const result = await call(tools('readonly'), {
      operation: 'query',
      sql: 'SELECT ArtistId, Name FROM Artist ORDER BY ArtistId',
      row_limit: 5,
    });
    expect(result.success).toBe(true);
    const lines = result.content.split('\n');
    expect(lines[0]).toMatch(/^ArtistId \| Name/);
    expect(lines[2]).toMatch(/^1\s+\| AC\/DC$/);
    expect(lines).toHaveLength(2 + 5 + 1);
    expect(lines.at(-1)).toBe('... (270 more rows)');
    expect(result.metadata).toMatchObject({ row_count: 5, total_rows: 275, truncated: true });
  });

  it('shows NULLs, Unicode and no-row results', async () => {
    const nulls = await call(tools('readonly'), {
      operation: 'query',
      sql: 'SELECT Name, Composer FROM Track WHERE Composer IS NULL ORDER BY TrackId LIMIT 1',
    });
    expect(nulls.content).toMatch(/\| NULL$/m);
    const unicode = await call(tools('readonly'), {
      operation: 'query',
      sql: "SELECT Name FROM Artist WHERE Name LIKE '%ö%' ORDER BY Name LIMIT 3",
    });
    expect(unicode.content).toContain('Motörhead');
    const empty = await call(tools('readonly'), { operation: 'query', sql: 'SELECT * FROM Artist WHERE 1 = 0' });
    expect(empty.content).toBe('(no rows returned)');
  });

  it('serves several aliases from one tool and asks which one when none is given', async () => {
    const second = await copySqliteChinook();
    const list = createDbTools({
      profile: profile('readonly'),
      databases: [config, { ...second.config, alias: 'backup' }],
      workingDir: directory,
    });
    opened.push(list);
    const tool = toolNamed(list, 'sqlite');
    expect(tool.parameters.required).toEqual(['database', 'operation']);
    const missing = await call(tool, { operation: 'list_tables' });
    expect(missing).toMatchObject({
      success: false,
      content: `'database' is required and must be one of "backup", "chinook"`,
    });
    const chosen = await call(tool, { database: 'backup', operation: 'query', sql: 'SELECT COUNT(*) AS n FROM Genre' });
    expect(chosen.content).toMatch(/^25$/m);
  });

  it('names the alias choices when the database is unknown', async () => {
    const result = await call(tools('readonly'), { database: 'other', operation: 'query', sql: 'SELECT 1' });
    expect(result).toMatchObject({
      success: false,
      content: `Unknown database: 'database' must be one of "chinook" (got "other")`,
    });
  });

  it('names the operations when the operation is unknown, and the registry says the same for a missing database', async () => {
    const unknown = await call(tools('readonly'), { operation: 'drop_everything' });
    expect(unknown).toMatchObject({
      success: false,
      content: `Unknown operation: 'operation' must be one of "query", "list_tables", "describe" (got "drop_everything")`,
    });
    expect(await call(tools('readonly-exports'), { operation: 'drop_everything' })).toMatchObject({
      content: `Unknown operation: 'operation' must be one of "query", "list_tables", "describe", "export_query" (got "drop_everything")`,
    });
    const second = await copySqliteChinook();
    const list = createDbTools({
      profile: profile('readonly'),
      databases: [config, { ...second.config, alias: 'backup' }],
      workingDir: directory,
    });
    opened.push(list);
    const registry = new ToolRegistry(list);
    const viaRegistry = await registry.dispatch({ id: 'c1', name: 'sqlite', arguments: { operation: 'list_tables' } }, {
      signal: new AbortController().signal,
      sessionId: 's',
      workingDir: directory,
    } as unknown as ToolContext);
    expect(viaRegistry.success).toBe(false);
    expect(viaRegistry.content).toContain(`'database' is required and must be one of "backup", "chinook"`);
  });
});

describe('sqlite read-only layer on its own (SQL policy bypassed)', () => {
  const attempts = [
    "INSERT INTO Artist (Name) VALUES ('x')",
    "UPDATE Artist SET Name = 'x'",
    'DELETE FROM Track',
    'DROP TABLE Genre',
    'CREATE TABLE t (a)',
    'CREATE TEMP TABLE t (a)',
    "ATTACH DATABASE 'evil.sqlite' AS evil",
    "VACUUM INTO 'copy.sqlite'",
    'PRAGMA journal_mode = DELETE',
    'PRAGMA user_version = 7',
    "REPLACE INTO Genre (GenreId, Name) VALUES (1, 'x')",
    "WITH x AS (SELECT 1) INSERT INTO Genre (Name) SELECT 'y' FROM x",
    'SELECT 1; DELETE FROM Genre',
    '/* c */ DELETE FROM Genre',
    'BEGIN IMMEDIATE',
    'REINDEX',
    'ANALYZE',
    "SELECT load_extension('/nonexistent')",
  ];

  it.each(attempts)('refuses %s and leaves the file unchanged', async (sql) => {
    const before = await checksum(config.path ?? '');
    const listing = await readdir(directory);
    const result = await call(tools('readonly', { skipSqlPolicy: true }), { operation: 'query', sql });
    expect(result.success, result.content).toBe(false);
    expect(result.content).toMatch(/^SQLite error: /);
    expect(await checksum(config.path ?? '')).toBe(before);
    expect(await readdir(directory)).toEqual(listing);
  });
});

describe('sqlite in mutations mode', () => {
  it('runs writes normally', async () => {
    const { config: writable, directory: writableDirectory } = await copySqliteChinook();
    const list = createDbTools({
      profile: profile('unrestricted'),
      databases: [writable],
      workingDir: writableDirectory,
    });
    opened.push(list);
    const tool = toolNamed(list, 'sqlite');
    const insert = await call(tool, { operation: 'query', sql: "INSERT INTO Genre (Name) VALUES ('Chiptune')" });
    expect(insert).toMatchObject({ success: true, content: 'Query executed (no result set) (1 rows affected)' });
    const read = await call(tool, {
      operation: 'query',
      sql: "SELECT COUNT(*) AS n FROM Genre WHERE Name = 'Chiptune'",
    });
    expect(read.content).toMatch(/^1$/m);
  });
});

describe('sqlite export_query', () => {
  it('streams every row to an RFC 4180 CSV file', async () => {
    const result = await call(tools('readonly-exports'), {
      operation: 'export_query',
      sql: 'SELECT TrackId, Name, Composer, UnitPrice FROM Track ORDER BY TrackId',
      export_path: 'exports/tracks.csv',
    });
    expect(result.success, result.content).toBe(true);
    expect(result.content).toMatch(/^Exported 3503 rows \(4 columns\) to .*exports\/tracks\.csv \(\d+ bytes\)$/);
    const text = await readFile(join(directory, 'exports/tracks.csv'), 'utf8');
    const records = text.split('\r\n');
    expect(records[0]).toBe('TrackId,Name,Composer,UnitPrice');
    expect(records[1]).toBe(
      '1,For Those About To Rock (We Salute You),"Angus Young, Malcolm Young, Brian Johnson",0.99',
    );
    expect(records.at(-1)).toBe('');
    expect(result.metadata).toMatchObject({ row_count: 3503, column_count: 4 });
  });

  it("accepts rho-agent's output_path as export_path", async () => {
    const result = await call(tools('readonly-exports'), {
      operation: 'export_query',
      sql: 'SELECT GenreId, Name FROM Genre ORDER BY GenreId',
      output_path: 'exports/genres-old-name.csv',
    });
    expect(result.success, result.content).toBe(true);
    expect((await readFile(join(directory, 'exports/genres-old-name.csv'), 'utf8')).split('\r\n')[0]).toBe(
      'GenreId,Name',
    );
    const same = await call(tools('readonly-exports'), {
      operation: 'export_query',
      sql: 'SELECT 1',
      export_path: 'exports/same.csv',
      output_path: 'exports/same.csv',
    });
    expect(same.success, same.content).toBe(true);
    const disagree = await call(tools('readonly-exports'), {
      operation: 'export_query',
      sql: 'SELECT 1',
      export_path: 'a.csv',
      output_path: 'b.csv',
    });
    expect(disagree).toMatchObject({
      success: false,
      content:
        'export_path and output_path name the same parameter and disagree ("a.csv" and "b.csv"); pass only export_path.',
    });
    expect(await call(tools('readonly-exports'), { operation: 'export_query', sql: 'SELECT 1' })).toMatchObject({
      success: false,
      content: 'No export_path provided',
    });
  });

  it('never overwrites a file and never writes through a symlink', async () => {
    await writeFile(join(directory, 'taken.csv'), 'keep me');
    const taken = await call(tools('readonly-exports'), {
      operation: 'export_query',
      sql: 'SELECT 1',
      export_path: 'taken.csv',
    });
    expect(taken.success).toBe(false);
    expect(await readFile(join(directory, 'taken.csv'), 'utf8')).toBe('keep me');
    await symlink(join(directory, 'taken.csv'), join(directory, 'link.csv'));
    const linked = await call(tools('readonly-exports'), {
      operation: 'export_query',
      sql: 'SELECT 1',
      export_path: 'link.csv',
    });
    expect(linked.success).toBe(false);
    expect(await readFile(join(directory, 'taken.csv'), 'utf8')).toBe('keep me');
  });

  it('refuses sensitive locations and paths outside the working directory, whatever the profile', async () => {
    const sensitive = await call(tools('readonly-exports'), {
      operation: 'export_query',
      sql: 'SELECT 1',
      export_path: '.ssh/keys.csv',
    });
    expect(sensitive.success).toBe(false);
    expect(sensitive.content).toMatch(/^Export blocked: .*sensitive/);
    const outside = await call(tools('unrestricted'), {
      operation: 'export_query',
      sql: 'SELECT 1',
      export_path: '../outside.csv',
    });
    expect(outside.success).toBe(false);
    expect(outside.content).toMatch(/^Export blocked: .*outside the working directory/);
    expect(await readdir(directory)).not.toContain('.ssh');
  });

  it('removes the partial file when the query fails, and refuses statements without rows', async () => {
    const failed = await call(tools('readonly-exports'), {
      operation: 'export_query',
      sql: 'SELECT * FROM NoSuchTable',
      export_path: 'broken.csv',
    });
    expect(failed.success).toBe(false);
    expect(failed.content).toMatch(/^SQLite export error: .*no such table/);
    expect(await readdir(directory)).not.toContain('broken.csv');
    const noRows = await call(tools('unrestricted'), {
      operation: 'export_query',
      sql: 'UPDATE Genre SET Name = Name WHERE 0',
      export_path: 'nothing.csv',
    });
    expect(noRows).toMatchObject({ success: false, content: 'Query executed but returned no result set' });
    expect(await readdir(directory)).not.toContain('nothing.csv');
  });
});

describe('sqlite hostile corpus in readonly mode', () => {
  it('has at least 60 statements and 30 reads', () => {
    expect(sqliteHostile('d').length).toBeGreaterThanOrEqual(60);
    expect(SQLITE_READS.length).toBeGreaterThanOrEqual(30);
  });

  for (const skipSqlPolicy of [false, true]) {
    it(`changes neither the database file nor the file system${skipSqlPolicy ? ' (read-only connection alone, SQL policy bypassed)' : ''}`, async () => {
      const hostileDir = await mkdtemp(join(tmpdir(), 'rho-hostile-sqlite-'));
      await chmod(hostileDir, 0o777);
      const tool = tools('readonly', { skipSqlPolicy });
      const before = {
        database: await checksum(config.path ?? ''),
        directory: await readdir(directory),
        hostile: await readdir(hostileDir),
      };
      const allowed: string[] = [];
      for (const statement of sqliteHostile(hostileDir)) {
        const result = await call(tool, { operation: 'query', sql: statement });
        if (result.success) allowed.push(statement);
      }
      const after = {
        database: await checksum(config.path ?? ''),
        directory: await readdir(directory),
        hostile: await readdir(hostileDir),
      };
      expect(after).toEqual(before);
      // Through the whole tool every statement is refused. The read-only connection alone lets
      // through only statements that write nothing.
      expect(allowed).toEqual(skipSqlPolicy ? SQLITE_HARMLESS_WITHOUT_POLICY : []);
      // No transaction was left open: a write from another connection is not blocked.
      const other = await openSqlite(config.path ?? '', { readonly: false, fileMustExist: true, timeoutMs: 1000 });
      other.exec('BEGIN IMMEDIATE');
      other.exec('ROLLBACK');
      other.close();
    });
  }

  it.each(SQLITE_READS)('%s returns its rows', async (sql) => {
    const direct = await openSqlite(config.path ?? '', { readonly: true, fileMustExist: true, timeoutMs: 1000 });
    const expected = [...direct.prepare(sql).iterate([])];
    direct.close();
    const result = await call(tools('readonly'), { operation: 'query', sql, row_limit: 10_000 });
    expect(result.success, result.content).toBe(true);
    expect(result.metadata?.total_rows).toBe(expected.length);
    expect(expected.length).toBeGreaterThan(0);
  });
});
