import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChatMessage } from '@rho/core';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

// Issue 14's write bypasses, through the real CLI with `-y`, as they were proven: export_query of
// the readonly profile creating conftest.py whose CSV header is Python, and the write tool
// writing start-up, git and editor files when the working directory is the home.

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function workspace(): { home: string; work: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-cli-writes-')));
  const work = join(root, 'work');
  mkdirSync(work);
  return { home: join(root, 'rho-home'), work };
}

function toolResults(): string[] {
  const last = server!.requests.at(-1)!.body as { messages: ChatMessage[] };
  return last.messages.filter((message) => message.role === 'tool').map((message) => String(message.content));
}

/** A copy of Chinook (vendored by @rho/tools-db, see its test/fixtures/chinook/README.md) and its alias file. */
function chinookIn(work: string): void {
  const chinook = join(
    dirname(fileURLToPath(import.meta.url)),
    '..',
    '..',
    '..',
    'packages',
    'tools-db',
    'test',
    'fixtures',
    'chinook',
    'Chinook_Sqlite.sqlite',
  );
  cpSync(chinook, join(work, 'chinook.sqlite'));
  writeFileSync(join(work, 'databases.yaml'), 'databases:\n  music:\n    type: sqlite\n    path: ./chinook.sqlite\n');
}

describe('readonly writes through the real CLI', () => {
  // Issue 32: `-y` approved export_query under readonly, which then wrote a CSV file. `-y` never
  // widens a profile: readonly does not enable database exports, so export_query is not offered
  // (and refused if called) and no file appears.
  it('with -y, readonly export_query writes no file; policy check refuses it (database_exports.off)', async () => {
    const { home, work } = workspace();
    chinookIn(work);
    const call = (exportPath: string) => ({
      name: 'sqlite',
      arguments: JSON.stringify({
        database: 'music',
        operation: 'export_query',
        sql: 'SELECT Name FROM Artist',
        export_path: exportPath,
      }),
    });
    server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [call('artists.csv'), call('out/artists.tsv')] },
        { type: 'response', text: 'Done.' },
      ],
    });
    const outcome = await runRho(
      ['--base-url', server.url, '--profile', 'readonly', '-y', '--db-config', 'databases.yaml', 'Export.'],
      { env: { RHO_HOME: home }, cwd: work },
    );
    const first = server.requests[0]!.body as { tools: { function: { name: string; parameters: unknown } }[] };
    const sqlite = first.tools.find((tool) => tool.function.name === 'sqlite');
    expect(JSON.stringify(sqlite?.function.parameters)).not.toContain('"export_query"');
    const results = toolResults();
    expect(results).toHaveLength(2);
    for (const result of results) expect(result).toMatch(/export_query/);
    expect(readdirSync(work).sort()).toEqual(['chinook.sqlite', 'databases.yaml']);
    expect(outcome.code).not.toBeNull();

    const policy = await runRho(
      ['policy', 'check', '--profile', 'readonly', '--write', 'artists.csv', '--via', 'export_query', '--json'],
      { env: { RHO_HOME: home }, cwd: work },
    );
    expect(policy.code).toBe(1);
    expect(JSON.parse(policy.stdout)).toMatchObject({ allowed: false, rule: 'database_exports.off' });
  });

  it('export_query (database_exports: on) creates report.csv but not conftest.py, and policy check says the same', async () => {
    const { home, work } = workspace();
    chinookIn(work);
    // readonly with exports enabled: the profile names the one kind of file it may create.
    const exportsProfile = join(work, '..', 'readonly-exports.yaml');
    writeFileSync(exportsProfile, 'profile: readonly-exports\ndatabase_exports: on\n');
    const marker = join(work, 'pwned');
    const sql = `SELECT 1 AS "import pathlib; pathlib.Path('${marker}').write_text('ran')"`;
    const call = (exportPath: string) => ({
      name: 'sqlite',
      arguments: JSON.stringify({ database: 'music', operation: 'export_query', sql, export_path: exportPath }),
    });
    server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [call('conftest.py'), call('report.csv')] },
        { type: 'response', text: 'Done.' },
      ],
    });
    const outcome = await runRho(
      ['--base-url', server.url, '--profile', exportsProfile, '-y', '--db-config', 'databases.yaml', 'Export.'],
      { env: { RHO_HOME: home }, cwd: work },
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    const [conftest, report] = toolResults();
    expect(conftest).toMatch(
      /Export blocked: export_query creates only \.csv or \.tsv files; conftest\.py has another extension/,
    );
    expect(report).toMatch(/^Exported 1 rows/);
    expect(existsSync(join(work, 'conftest.py'))).toBe(false);
    expect(readFileSync(join(work, 'report.csv'), 'utf8')).toMatch(/^import pathlib/);
    // Nothing Python would run was left behind: pytest (when present) finds no conftest.py.
    spawnSync('pytest', ['-q', '-p', 'no:cacheprovider'], { cwd: work });
    expect(existsSync(marker)).toBe(false);

    const policy = await runRho(
      ['policy', 'check', '--profile', exportsProfile, '--write', 'conftest.py', '--via', 'export_query', '--json'],
      { env: { RHO_HOME: home }, cwd: work },
    );
    expect(policy.code).toBe(1);
    expect(JSON.parse(policy.stdout)).toMatchObject({ allowed: false, rule: 'export.extension' });
    const allowed = await runRho(
      ['policy', 'check', '--profile', exportsProfile, '--write', 'other.csv', '--via', 'export_query', '--json'],
      { env: { RHO_HOME: home }, cwd: work },
    );
    expect(JSON.parse(allowed.stdout)).toMatchObject({
      allowed: true,
      rule: 'export.new_file',
      realPath: join(work, 'other.csv'),
    });
  });

  it('the write tool refuses start-up, git and editor files when the working directory is the home', async () => {
    const { home, work } = workspace();
    mkdirSync(join(work, '.git'));
    const paths = [
      '.bash_aliases',
      '.gitconfig',
      '.git/config',
      '.pam_environment',
      '.vscode/tasks.json',
      '~/.profile',
    ];
    server = await startLoopbackServer({
      steps: [
        {
          type: 'response',
          toolCalls: paths.map((path) => ({
            name: 'write',
            arguments: JSON.stringify({ path, content: '[core]\n\tfsmonitor = touch pwned\n' }),
          })),
        },
        { type: 'response', text: 'Done.' },
      ],
    });
    const outcome = await runRho(['--base-url', server.url, '--profile', 'developer', '-y', 'Configure.'], {
      env: { RHO_HOME: home, HOME: work },
      cwd: work,
    });
    expect(outcome.code, outcome.stderr).toBe(0);
    const results = toolResults();
    expect(results).toHaveLength(paths.length);
    for (const result of results) expect(result).toMatch(/^Cannot write to sensitive location: /);
    expect(readdirSync(work).sort()).toEqual(['.git']);
    expect(readdirSync(join(work, '.git'))).toEqual([]);
  });
});
