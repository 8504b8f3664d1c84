import { mkdtemp, mkdir, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { builtinProfile } from './builtin-profiles.js';
import { explainPolicy, formatPolicyExplanation } from './explain-policy.js';
import { parseProfile } from './permission-profile.js';

const readonly = builtinProfile('readonly') ?? parseProfile({});

describe('explainPolicy', () => {
  test('an allowed shell line: rule, commands, plan, approval; JSON round-trips', async () => {
    // With the sandbox off, the answer does not depend on bubblewrap being installed here.
    const explanation = await explainPolicy({
      profile: { ...readonly, sandbox: 'off' },
      shell: 'grep -rn TODO src | head -5 2>/dev/null',
    });
    expect(explanation).toEqual({
      kind: 'shell',
      profile: 'readonly',
      input: 'grep -rn TODO src | head -5 2>/dev/null',
      allowed: true,
      rule: 'shell.allowlist',
      commands: [
        ['grep', '-rn', 'TODO', 'src'],
        ['head', '-5'],
      ],
      plan: {
        steps: [
          {
            operator: 'start',
            pipeline: [{ argv: ['grep', '-rn', 'TODO', 'src'] }, { argv: ['head', '-5'], stderrToDevNull: true }],
          },
        ],
      },
      sandbox: {
        mode: 'off',
        active: false,
        description: 'none',
        network: [],
        warning: expect.stringContaining('`sandbox: off`'),
      },
      approval: { required: true, reason: expect.stringContaining('bash is a dangerous tool') },
    });
    expect(JSON.parse(JSON.stringify(explanation))).toEqual(explanation);
    const text = formatPolicyExplanation(explanation);
    expect(text).toContain('ALLOWED (shell, profile readonly)');
    expect(text).toContain('  grep -rn TODO src');
    expect(text).toContain('grep -rn TODO src | head -5 2>/dev/null');
  });

  test('a refused shell line names the rule and the reason', async () => {
    const explanation = await explainPolicy({ profile: readonly, shell: "sed -ni 's/a/b/p' f" });
    expect(explanation).toMatchObject({
      allowed: false,
      rule: 'program.sed',
      commands: [['sed', '-ni', 's/a/b/p', 'f']],
    });
    expect(explanation.reason).toContain('-i');
    expect(explanation.plan).toBeUndefined();
    expect(formatPolicyExplanation(explanation)).toMatch(
      /^REFUSED \(shell, profile readonly\)\nrule: +program\.sed\nreason: +sed option -i/,
    );
  });

  test('write: refused under readonly, resolved to the real path under create-only, sensitive links refused', async () => {
    const workingDir = await mkdtemp(join(tmpdir(), 'rho-explain-'));
    expect(await explainPolicy({ profile: readonly, write: 'notes.md', workingDir })).toMatchObject({
      kind: 'write',
      allowed: false,
      rule: 'file_write.off',
    });
    const creator = parseProfile({ profile: 'creator', file_write: 'create-only', approval: 'none' });
    const allowed = await explainPolicy({ profile: creator, write: 'reports/out.md', workingDir });
    expect(allowed).toMatchObject({ allowed: true, workingDir, approval: { required: false } });
    expect(allowed.realPath?.endsWith(join('reports', 'out.md'))).toBe(true);
    const home = join(workingDir, 'home');
    await mkdir(join(home, '.ssh'), { recursive: true });
    await symlink(join(home, '.ssh'), join(workingDir, 'keys'));
    const refused = await explainPolicy({ profile: creator, write: 'keys/authorized_keys', workingDir });
    expect(refused.allowed).toBe(false);
  });

  test('write --via: each writing tool gets its own decision from the same function', async () => {
    const workingDir = await mkdtemp(join(tmpdir(), 'rho-explain-via-'));
    const exportsOn = { ...readonly, databaseExports: true };
    const viaExport = await explainPolicy({ profile: exportsOn, write: 'out.csv', workingDir, via: 'export_query' });
    expect(viaExport).toMatchObject({ kind: 'write', via: 'export_query', allowed: true, rule: 'export.new_file' });
    expect(viaExport.approval).toBeUndefined();
    expect(
      await explainPolicy({ profile: exportsOn, write: 'conftest.py', workingDir, via: 'export_query' }),
    ).toMatchObject({ allowed: false, rule: 'export.extension' });
    expect(await explainPolicy({ profile: readonly, write: 'out.csv', workingDir, via: 'export_query' })).toMatchObject(
      { allowed: false, rule: 'database_exports.off' },
    );
    const viaWrite = await explainPolicy({ profile: readonly, write: 'out.csv', workingDir });
    expect(viaWrite).toMatchObject({ via: 'write', allowed: false, rule: 'file_write.off' });
    expect(viaWrite.otherTools).toEqual([
      { tool: 'edit', allowed: false, rule: 'file_write.edit' },
      { tool: 'export_query', allowed: false, rule: 'database_exports.off' },
    ]);
    expect(formatPolicyExplanation(viaWrite)).toContain(
      '\nothers:   edit refused (file_write.edit), export_query refused (database_exports.off)',
    );
    expect((await explainPolicy({ profile: exportsOn, write: 'out.csv', workingDir })).otherTools).toEqual([
      { tool: 'edit', allowed: false, rule: 'file_write.edit' },
      { tool: 'export_query', allowed: true, rule: 'export.new_file' },
    ]);
    expect(formatPolicyExplanation(viaWrite)).toMatch(
      /^REFUSED \(write, profile readonly\)\nrule: +file_write\.off\nreason: .*\ntool: +write\n/,
    );
    const developer = parseProfile({ profile: 'dev', file_write: 'full', approval: 'none' });
    expect(await explainPolicy({ profile: developer, write: 'missing.md', workingDir, via: 'edit' })).toMatchObject({
      allowed: false,
      rule: 'edit.not_found',
      approval: { required: false },
    });
  });

  test('sql: statement type and refusals; mutations profiles allow everything', async () => {
    const read = await explainPolicy({ profile: readonly, sql: "select 'DROP TABLE x' as s", dialect: 'postgres' });
    expect(read).toMatchObject({
      kind: 'sql',
      allowed: true,
      dialect: 'postgres',
      statementType: expect.any(String),
      approval: { required: true },
    });
    const write = await explainPolicy({ profile: readonly, sql: 'delete from users', dialect: 'sqlite' });
    expect(write).toMatchObject({ allowed: false });
    expect(write.reason?.length).toBeGreaterThan(10);
    const unrestricted = builtinProfile('unrestricted') ?? readonly;
    expect(await explainPolicy({ profile: unrestricted, sql: 'drop table users', dialect: 'mysql' })).toMatchObject({
      allowed: true,
      rule: 'database.mutations',
      approval: { required: false },
    });
    expect(formatPolicyExplanation(write)).toContain('dialect:  sqlite');
  });
});
