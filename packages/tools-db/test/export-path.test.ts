import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, realpath, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@rho/core';
import { explainPolicy } from '@rho/permissions';
import type { PermissionProfile } from '@rho/permissions';
import { closeDbTools, createDbTools } from '../src/db-tools.js';
import type { DatabaseConfig } from '../src/database-config.js';
import { csvRecord } from '../src/internal/csv-writer.js';
import { copySqliteChinook } from './support/servers.js';
import { call, profile, toolNamed } from './support/tool-call.js';

// export_query is the one way a read-only profile creates files, and only when the profile enables
// it (`database_exports: on`; issue 32: `readonly` itself never writes one). Issue 14 proved it
// created any name, e.g. a conftest.py whose CSV header is Python that pytest then runs. It now
// goes through the one write decision of @rho/permissions (writer: export), as `rho policy check
// --via export_query` does: new .csv/.tsv files only, never sensitive, hidden or auto-executed names.

let config: DatabaseConfig;
let dbDirectory: string;
const opened: Tool[][] = [];

function sqliteTool(workingDir: string, chosen: PermissionProfile = profile('readonly-exports')): Tool {
  const list = createDbTools({ profile: chosen, databases: [config], workingDir });
  opened.push(list);
  return toolNamed(list, 'sqlite');
}

async function scratch(name: string): Promise<string> {
  return realpath(await mkdtemp(join(tmpdir(), `rho-export-${name}-`)));
}

beforeAll(async () => {
  ({ directory: dbDirectory, config } = await copySqliteChinook());
});

afterAll(async () => {
  for (const list of opened) await closeDbTools(list);
});

/** Runs pytest (or, without it, imports conftest with python3) in `directory`; false when neither exists. */
function runPython(directory: string): boolean {
  const pytest = spawnSync('pytest', ['-q', '-p', 'no:cacheprovider'], { cwd: directory, encoding: 'utf8' });
  if (pytest.error === undefined) return true;
  const python = spawnSync('python3', ['-c', 'import conftest'], { cwd: directory, encoding: 'utf8' });
  return python.error === undefined;
}

describe('export_query without database exports (the readonly profile)', () => {
  it('is not offered, is refused when called anyway, writes nothing, and policy check says the same', async () => {
    const work = await scratch('off');
    const tool = sqliteTool(work, profile('readonly'));
    const operation = (tool.parameters as unknown as { properties: { operation: { enum: string[] } } }).properties
      .operation;
    expect(operation.enum).toEqual(['query', 'list_tables', 'describe']);
    expect(tool.description).toContain("No 'export_query'");
    const result = await call(tool, { operation: 'export_query', sql: 'SELECT 1 AS a', export_path: 'a.csv' }, work);
    expect(result).toMatchObject({ success: false, metadata: { blocked: true, rule: 'database_exports.off' } });
    expect(await readdir(work)).toEqual([]);
    const explained = await explainPolicy({
      profile: profile('readonly'),
      write: 'a.csv',
      workingDir: work,
      via: 'export_query',
    });
    expect(explained).toMatchObject({ allowed: false, rule: 'database_exports.off' });
  });
});

describe('export_query in readonly with database_exports: on', () => {
  it('no longer creates conftest.py whose CSV header is Python that pytest runs (the effect proved first)', async () => {
    const work = await scratch('conftest');
    const marker = join(work, 'pwned');
    const header = `import pathlib; pathlib.Path('${marker}').write_text('ran')`;
    const sql = `SELECT 1 AS "${header}"`;
    // The file the old export wrote, byte for byte, run in a control folder: it runs code.
    const control = await scratch('control');
    await writeFile(join(control, 'conftest.py'), csvRecord([header]) + csvRecord([1]));
    if (!runPython(control)) return expect(process.env.CI).not.toBe('true');
    expect(await readFile(marker, 'utf8')).toBe('ran');
    await writeFile(marker, '');

    const result = await call(sqliteTool(work), { operation: 'export_query', sql, export_path: 'conftest.py' }, work);
    expect(result).toMatchObject({ success: false, metadata: { blocked: true, rule: 'export.extension' } });
    expect(result.content).toBe(
      'Export blocked: export_query creates only .csv or .tsv files; conftest.py has another extension. Give an export_path ending in .csv or .tsv.',
    );
    expect(await readdir(work)).toEqual(['pwned']);
    expect(await readFile(marker, 'utf8')).toBe('');
    // rho policy check answers the same, through the same function.
    expect(
      await explainPolicy({
        profile: profile('readonly-exports'),
        write: 'conftest.py',
        workingDir: work,
        via: 'export_query',
      }),
    ).toMatchObject({
      allowed: false,
      rule: 'export.extension',
    });
  });

  it('refuses executable-looking, hidden, sensitive and auto-executed names whatever the profile', async () => {
    const work = await scratch('names');
    await mkdir(join(work, '.git'));
    for (const chosen of [profile('readonly-exports'), profile('unrestricted')]) {
      const tool = sqliteTool(work, chosen);
      const refusals: [string, string][] = [
        ['x.py', 'export.extension'],
        ['run.sh', 'export.extension'],
        ['data.csv.py', 'export.extension'],
        ['Makefile', 'export.extension'],
        ['sitecustomize.py', 'export.extension'],
        ['.envrc.csv', 'export.hidden'],
        ['.csv', 'export.hidden'],
        ['.git/hooks/pre-commit.csv', 'path.sensitive'],
        ['.vscode/tasks.csv', 'path.sensitive'],
        ['.husky/pre-commit.csv', 'path.auto_executed'],
        ['../outside.csv', 'path.outside_roots'],
      ];
      for (const [exportPath, rule] of refusals) {
        const result = await call(
          tool,
          { operation: 'export_query', sql: 'SELECT 1 AS a', export_path: exportPath },
          work,
        );
        expect(result.metadata, exportPath).toMatchObject({ blocked: true, rule });
      }
    }
    expect((await readdir(work)).sort()).toEqual(['.git']);
    expect(await readdir(join(work, '.git'))).toEqual([]);
  });

  it('writes .csv and tab-separated .tsv files, and only new ones', async () => {
    const work = await scratch('formats');
    const tool = sqliteTool(work);
    const sql = "SELECT 'a,b' AS first, 'tab\there' AS second";
    expect((await call(tool, { operation: 'export_query', sql, export_path: 'out/one.csv' }, work)).success).toBe(true);
    expect(await readFile(join(work, 'out', 'one.csv'), 'utf8')).toBe('first,second\r\n"a,b",tab\there\r\n');
    expect((await call(tool, { operation: 'export_query', sql, export_path: 'two.TSV' }, work)).success).toBe(true);
    expect(await readFile(join(work, 'two.TSV'), 'utf8')).toBe('first\tsecond\r\na,b\t"tab\there"\r\n');
    const again = await call(tool, { operation: 'export_query', sql, export_path: 'two.TSV' }, work);
    expect(again).toMatchObject({ success: false, metadata: { rule: 'export.exists' } });
    expect(await readFile(join(work, 'two.TSV'), 'utf8')).toBe('first\tsecond\r\na,b\t"tab\there"\r\n');
  });

  it('writes into a configured export directory (the profile file_write.roots), nowhere else outside', async () => {
    const work = await scratch('root-work');
    const exports = await scratch('root-exports');
    const withRoot: PermissionProfile = { ...profile('readonly-exports'), writeRoots: [exports] };
    const allowed = await call(
      sqliteTool(work, withRoot),
      { operation: 'export_query', sql: 'SELECT 1 AS a', export_path: join(exports, 'a.csv') },
      work,
    );
    expect(allowed.success, allowed.content).toBe(true);
    expect(await readFile(join(exports, 'a.csv'), 'utf8')).toBe('a\r\n1\r\n');
    const refused = await call(
      sqliteTool(work),
      { operation: 'export_query', sql: 'SELECT 1 AS a', export_path: join(exports, 'b.csv') },
      work,
    );
    expect(refused.metadata).toMatchObject({ rule: 'path.outside_roots' });
  });

  it('gives the answer rho policy check --via export_query gives, for every path', async () => {
    const work = await scratch('agree');
    await mkdir(join(work, 'sub'));
    await writeFile(join(work, 'taken.csv'), 'keep\r\n');
    const { symlink } = await import('node:fs/promises');
    await symlink(dbDirectory, join(work, 'link'));
    const tool = sqliteTool(work);
    const paths = [
      'a.csv',
      'sub/b.tsv',
      'new/c.csv',
      'taken.csv',
      'link/x.csv',
      'conftest.py',
      'x.py',
      '.hidden.csv',
      '.ssh/k.csv',
      '.config/autostart/x.csv',
      '../up.csv',
      'sub',
      'sub/',
      '~/.bashrc',
      '~/x.csv',
    ];
    for (const exportPath of paths) {
      const explained = await explainPolicy({
        profile: profile('readonly-exports'),
        write: exportPath,
        workingDir: work,
        via: 'export_query',
      });
      const result = await call(
        tool,
        { operation: 'export_query', sql: 'SELECT 1 AS a', export_path: exportPath },
        work,
      );
      expect(result.success, `${exportPath}: policy ${explained.rule}, tool ${result.content}`).toBe(explained.allowed);
      if (!explained.allowed) expect(result.metadata?.rule, exportPath).toBe(explained.rule);
    }
    expect(await readFile(join(work, 'taken.csv'), 'utf8')).toBe('keep\r\n');
    expect((await readdir(dbDirectory)).some((name) => name.endsWith('.csv'))).toBe(false);
  });
});
