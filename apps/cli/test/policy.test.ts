import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

const rho = (args: string[], cwd = tmpdir()) =>
  runRho(['policy', 'check', ...args], { cwd, env: { RHO_HOME: mkdtempSync(join(tmpdir(), 'rho-policy-home-')) } });

describe('rho policy check', () => {
  it('explains an allowed pipeline with every parsed command, as JSON', async () => {
    const outcome = await rho(['--shell', 'grep -rn TODO src | sort | uniq -c | head -20', '--json']);
    expect(outcome.code).toBe(0);
    expect(JSON.parse(outcome.stdout)).toMatchObject({
      kind: 'shell',
      profile: 'readonly',
      allowed: true,
      commands: [['grep', '-rn', 'TODO', 'src'], ['sort'], ['uniq', '-c'], ['head', '-20']],
      approval: { required: true },
    });
  });

  it('names the rule and the reason of a refusal, exit 1', async () => {
    const outcome = await rho(['--shell', 'find . -name "*.log" -delete']);
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toMatch(/^REFUSED \(shell, profile readonly\)\nrule: +\S+\nreason: +.*-delete/);
  });

  it('judges writes on the real path and SQL per dialect', async () => {
    const work = mkdtempSync(join(tmpdir(), 'rho-policy-work-'));
    mkdirSync(join(work, 'out'));
    symlinkSync('/etc', join(work, 'etc-link'));
    const inside = JSON.parse(
      (await rho(['--profile', 'developer', '--write', 'out/report.md', '--json'], work)).stdout,
    ) as Record<string, unknown>;
    expect(inside).toMatchObject({ kind: 'write', allowed: true, rule: 'full.inside_roots' });
    const linked = await rho(['--profile', 'developer', '--write', 'etc-link/passwd', '--json'], work);
    expect(linked.code).toBe(1);
    expect(JSON.parse(linked.stdout)).toMatchObject({ allowed: false });

    const read = await rho([
      '--sql',
      "SELECT name, 'DELETE FROM x' FROM Artist -- DROP",
      '--dialect',
      'sqlite',
      '--json',
    ]);
    expect(JSON.parse(read.stdout)).toMatchObject({
      kind: 'sql',
      dialect: 'sqlite',
      allowed: true,
      statementType: 'SELECT',
    });
    const stacked = await rho(['--sql', 'SELECT 1; DROP TABLE Artist', '--dialect', 'postgres', '--json']);
    expect(stacked.code).toBe(1);
    expect(JSON.parse(stacked.stdout)).toMatchObject({ allowed: false, rule: 'sql.stacked-statements' });
  });

  it('answers for each writing tool what that tool does (--via), export_query included', async () => {
    const work = realpathSync(mkdtempSync(join(tmpdir(), 'rho-policy-via-')));
    // readonly itself never exports (database_exports off); a profile of its own turns exports on.
    const off = await rho(['--profile', 'readonly', '--write', 'report.csv', '--via', 'export_query', '--json'], work);
    expect(off.code).toBe(1);
    expect(JSON.parse(off.stdout)).toMatchObject({ allowed: false, rule: 'database_exports.off' });
    const exportsProfile = join(mkdtempSync(join(tmpdir(), 'rho-policy-profile-')), 'exports.yaml');
    writeFileSync(exportsProfile, 'profile: readonly-exports\ndatabase_exports: on\n');
    const conftest = await rho(
      ['--profile', exportsProfile, '--write', 'conftest.py', '--via', 'export_query', '--json'],
      work,
    );
    expect(conftest.code).toBe(1);
    expect(JSON.parse(conftest.stdout)).toMatchObject({
      kind: 'write',
      via: 'export_query',
      allowed: false,
      rule: 'export.extension',
    });
    const csv = await rho(
      ['--profile', exportsProfile, '--write', 'out/report.csv', '--via', 'export_query', '--json'],
      work,
    );
    expect(csv.code).toBe(0);
    expect(JSON.parse(csv.stdout)).toMatchObject({
      allowed: true,
      rule: 'export.new_file',
      realPath: join(work, 'out', 'report.csv'),
    });
    const write = await rho(['--profile', 'readonly', '--write', 'out/report.csv'], work);
    expect(write.code).toBe(1);
    expect(write.stdout).toMatch(/^REFUSED \(write, profile readonly\)\nrule: +file_write\.off\n(.*\n)*tool: +write\n/);
    const home = await rho(['--profile', 'developer', '--write', '.bash_aliases', '--json'], work);
    expect(JSON.parse(home.stdout)).toMatchObject({ allowed: false, rule: 'path.sensitive' });
    const edit = await rho(['--profile', 'developer', '--write', 'missing.txt', '--via', 'edit', '--json'], work);
    expect(JSON.parse(edit.stdout)).toMatchObject({ via: 'edit', allowed: false, rule: 'edit.not_found' });
    const misplaced = await rho(['--shell', 'ls', '--via', 'edit']);
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain('--via goes with --write');
  });

  it('shows whether the sandbox is active, and refuses shell lines when it is missing', async (context) => {
    const { sandboxWrapper } = await import('@rho/permissions');
    const wrapper = await sandboxWrapper();
    if (!wrapper.available) {
      if (process.env.CI === 'true')
        throw new Error(`CI must run the sandbox tests: ${wrapper.unavailableReason ?? ''}`);
      context.skip('bubblewrap is not available here');
    }
    const line = 'curl -s http://127.0.0.1:1/ | wc -c';
    const active = await rho(['--shell', line]);
    expect(active.code).toBe(0);
    expect(active.stdout).toMatch(/^sandbox: {2}active: bubblewrap \(\S*bwrap\), read-only, network for curl only$/m);
    expect(JSON.parse((await rho(['--shell', line, '--json'])).stdout)).toMatchObject({
      allowed: true,
      sandbox: { mode: 'required', active: true, network: ['curl'] },
    });
    // A PATH without bwrap (rho itself is started by node's absolute path).
    const home = mkdtempSync(join(tmpdir(), 'rho-policy-home-'));
    const missing = await runRho(['policy', 'check', '--shell', line, '--json'], {
      env: { RHO_HOME: home, PATH: home },
    });
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toMatchObject({
      allowed: false,
      rule: 'sandbox.missing',
      sandbox: { active: false },
    });
    expect(JSON.parse(missing.stdout).reason).toMatch(
      /bwrap was not found on PATH: install bubblewrap \(Debian\/Ubuntu: sudo apt-get install bubblewrap;/,
    );
  });

  it('asks for exactly one thing to check, exit 2', async () => {
    const none = await rho([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Give exactly one of --shell');
    const noDialect = await rho(['--sql', 'SELECT 1']);
    expect(noDialect.code).toBe(2);
    expect(noDialect.stderr).toContain('--sql needs --dialect');
  });
});
