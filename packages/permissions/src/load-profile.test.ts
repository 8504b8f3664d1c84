import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@rho/core';
import { describe, expect, test } from 'vitest';
import { BUILTIN_PROFILES } from './builtin-profiles.js';
import { loadProfile } from './load-profile.js';
import { parseProfile, profileToDocument } from './permission-profile.js';

describe('built-in profiles', () => {
  test('readonly is restricted, write off, database readonly, approval dangerous', async () => {
    const profile = await loadProfile('readonly');
    expect(profile).toMatchObject({
      shell: 'restricted',
      fileWrite: 'off',
      database: 'readonly',
      approval: 'dangerous',
      shellTimeoutSeconds: 120,
    });
  });
  test('developer, unrestricted, eval alias and developer-bash-only match the original', async () => {
    expect(await loadProfile('developer')).toMatchObject({
      shell: 'unrestricted',
      fileWrite: 'full',
      approval: 'granular',
      requiredTools: ['oracle', 'mysql'],
      shellTimeoutSeconds: 300,
    });
    const unrestricted = await loadProfile('unrestricted');
    expect(unrestricted).toMatchObject({ database: 'mutations', approval: 'none' });
    expect(await loadProfile('eval')).toEqual(unrestricted);
    expect(await loadProfile('developer-bash-only')).toMatchObject({
      shell: 'unrestricted',
      fileWrite: 'off',
      bashOnly: true,
      approval: 'dangerous',
    });
    expect(BUILTIN_PROFILES).toContain('eval');
  });
  test('each load returns a fresh copy', async () => {
    const first = await loadProfile('readonly');
    first.requiredTools.push('read');
    expect((await loadProfile('readonly')).requiredTools).not.toContain('read');
  });
});

describe('YAML profiles', () => {
  test('load by path and by name from $RHO_HOME/profiles', async () => {
    const home = await mkdtemp(join(tmpdir(), 'rho-profiles-'));
    await mkdir(join(home, 'profiles'));
    const yaml = [
      'profile: analyst',
      'description: reads and writes reports',
      'shell: restricted',
      'file_write:',
      '  mode: create-only',
      '  roots: [/srv/reports]',
      'database: {mode: readonly}',
      'approval:',
      '  mode: granular',
      '  required_tools: [write]',
      '  dangerous_patterns: ["secret"]',
      'shell_timeout: 30',
      '',
    ].join('\n');
    await writeFile(join(home, 'profiles', 'analyst.yaml'), yaml);
    const byName = await loadProfile('analyst', { rhoHome: home });
    expect(byName).toEqual({
      name: 'analyst',
      description: 'reads and writes reports',
      shell: 'restricted',
      fileWrite: 'create-only',
      database: 'readonly',
      approval: 'granular',
      requiredTools: ['write'],
      dangerousPatterns: ['secret'],
      shellTimeoutSeconds: 30,
      bashOnly: false,
      writeRoots: ['/srv/reports'],
    });
    expect(await loadProfile(join(home, 'profiles', 'analyst.yaml'))).toEqual(byName);
    expect(parseProfile(profileToDocument(byName))).toEqual(byName);
  });

  test('a bad value names the file, the field and the allowed values', async () => {
    const home = await mkdtemp(join(tmpdir(), 'rho-profiles-'));
    const path = join(home, 'bad.yaml');
    await writeFile(path, 'profile: bad\nshell:\n  mode: sometimes\n');
    const error = await loadProfile(path).catch((caught: unknown) => caught);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).message).toBe(
      `${path}:3: 'shell.mode' must be one of restricted, unrestricted (got "sometimes").`,
    );
    expect((error as ConfigError).field).toBe('shell.mode');
    expect((error as ConfigError).file).toBe(path);
    expect((error as ConfigError).line).toBe(3);
  });

  test('a wrong value in a profile file names the file, the key and its line, nested keys and list items too', async () => {
    const home = await mkdtemp(join(tmpdir(), 'rho-profiles-'));
    const path = join(home, 'lab.yaml');
    const good = [
      'profile: lab',
      'shell: restricted',
      'approval:',
      '  mode: granular',
      '  required_tools:',
      '    - write',
      '    - read',
      'limits:',
      '  pids: 64',
      '  memory: 512M',
      'mcp:',
      '  allow: [notes]',
      '  deny:',
      '    - notes/delete',
    ];
    const failure = async (line: number, text: string) => {
      const lines = [...good];
      lines[line - 1] = text;
      await writeFile(path, `${lines.join('\n')}\n`);
      return (await loadProfile(path).catch((caught: unknown) => caught)) as ConfigError;
    };
    const error = await failure(7, '    - 3');
    expect(error.message).toBe(`${path}:7: 'approval.required_tools[1]' must be a string (got 3).`);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ file: path, field: 'approval.required_tools[1]', line: 7 });
    expect((await failure(14, '    - a/b/c')).message).toBe(
      `${path}:14: 'mcp.deny[0]' has more than one "/": write server or server/tool (got "a/b/c").`,
    );
    expect((await failure(10, '  memory: plenty')).message).toMatch(
      new RegExp(`^${path}:10: 'limits\\.memory' must be a size: .* \\(got "plenty"\\)\\.$`),
    );
    // A scalar section is its mode: the line is the section's.
    expect((await failure(2, 'shell: sometimes')).message).toBe(
      `${path}:2: 'shell.mode' must be one of restricted, unrestricted (got "sometimes").`,
    );
    expect((await failure(4, '  mode: often')).message).toBe(
      `${path}:4: 'approval.mode' must be one of all, dangerous, granular, none (got "often").`,
    );
    expect((await failure(9, '  pids: many')).message).toBe(
      `${path}:9: 'limits.pids' must be a whole number (got "many").`,
    );
    expect((await failure(1, 'fle_write: full')).message).toMatch(
      new RegExp(`^${path}:1: 'fle_write' is an unknown key; allowed keys: profile, name, `),
    );
    await writeFile(path, `${good.join('\n')}\n`);
    expect((await loadProfile(path)).requiredTools).toEqual(['write', 'read']);
  });

  test('unknown keys are refused rather than silently ignored', () => {
    expect(() => parseProfile({ profile: 'x', fle_write: 'full' }, 'x.yaml')).toThrow(
      /^x\.yaml: 'fle_write' is an unknown key; allowed keys: profile, name/,
    );
    expect(() => parseProfile({ approval: { mode: 'all', requierd_tools: [] } })).toThrow(
      /^Profile: 'approval\.requierd_tools' is an unknown key; allowed keys: mode, required_tools, dangerous_patterns\.$/,
    );
  });

  test('scalar modes, YAML false for off, and defaults', () => {
    expect(parseProfile({ file_write: false, approval: 'all' })).toMatchObject({
      name: 'custom',
      fileWrite: 'off',
      approval: 'all',
      shell: 'restricted',
    });
    expect(() => parseProfile({ shell_timeout: 0 })).toThrow(
      "Profile: 'shell_timeout' must be at least 1 second (got 0).",
    );
    expect(() => parseProfile(['a'])).toThrow(
      'Profile: the document must be a YAML mapping with keys such as profile, shell, file_write, database, approval (got ["a"]).',
    );
  });

  test('database_exports: on or off (YAML true/false too), validated, kept through the document form', async () => {
    expect(parseProfile({ database_exports: 'on' }).databaseExports).toBe(true);
    expect(parseProfile({ database_exports: false }).databaseExports).toBe(false);
    expect(parseProfile({}).databaseExports).toBeUndefined();
    expect(() => parseProfile({ database_exports: 'sometimes' }, 'x.yaml')).toThrow(
      'x.yaml: \'database_exports\' must be on or off (got "sometimes").',
    );
    const home = await mkdtemp(join(tmpdir(), 'rho-profiles-'));
    const path = join(home, 'exports.yaml');
    await writeFile(path, 'profile: exports\ndatabase_exports: on\n');
    const loaded = await loadProfile(path);
    expect(loaded.databaseExports).toBe(true);
    expect(profileToDocument(loaded)).toMatchObject({ database_exports: 'on' });
    expect(parseProfile(profileToDocument(loaded))).toEqual(loaded);
  });

  test('database_functions names the PostgreSQL functions a readonly query may call, validated', async () => {
    const home = await mkdtemp(join(tmpdir(), 'rho-profiles-'));
    const path = join(home, 'analyst.yaml');
    await writeFile(
      path,
      'profile: analyst\ndatabase: readonly\ndatabase_functions: [public.safe_total, report_day]\n',
    );
    const loaded = await loadProfile(path);
    expect(loaded.databaseFunctions).toEqual(['public.safe_total', 'report_day']);
    expect(loaded.database).toBe('readonly');
    expect(parseProfile(profileToDocument(loaded))).toEqual(loaded);
    expect(() => parseProfile({ database_functions: ['public.f(int)'] }, 'x.yaml')).toThrow(
      /^x\.yaml: 'database_functions\[0\]' must be a function name or schema\.name, .* \(got "public\.f\(int\)"\)\.$/,
    );
    expect(() => parseProfile({ database_functions: ['a.b.c'] })).toThrow(
      /'database_functions\[0\]' must be .* \(got "a\.b\.c"\)/,
    );
    expect(() => parseProfile({ database_functions: 'public.f' })).toThrow(
      /'database_functions' must be a list of strings \(got "public\.f"\)/,
    );
  });

  test('unknown names say what is accepted', async () => {
    const home = await mkdtemp(join(tmpdir(), 'rho-profiles-'));
    await expect(loadProfile('nope', { rhoHome: home })).rejects.toThrow(
      /Unknown profile: nope\. Use one of readonly, developer, unrestricted, developer-bash-only, eval/,
    );
    await expect(loadProfile('./missing.yaml')).rejects.toThrow(/Profile file not found: \.\/missing\.yaml/);
  });

  test('a near miss of a built-in or a saved profile says "did you mean"', async () => {
    const home = await mkdtemp(join(tmpdir(), 'rho-profiles-'));
    await expect(loadProfile('developr', { rhoHome: home })).rejects.toThrow(
      /^Unknown profile: developr \(did you mean developer\?\)\. Use one of readonly, developer,/,
    );
    await expect(loadProfile('developer-bash-onyl', { rhoHome: home })).rejects.toThrow(
      /did you mean developer-bash-only\?/,
    );
    await mkdir(join(home, 'profiles'));
    await writeFile(join(home, 'profiles', 'careful.yaml'), 'file_write: deny\n');
    await expect(loadProfile('carefull', { rhoHome: home })).rejects.toThrow(/did you mean careful\?/);
    await expect(loadProfile('zzz', { rhoHome: home })).rejects.toThrow(/^Unknown profile: zzz\. Use one of/);
  });

  test('invalid YAML is a ConfigError naming the file', async () => {
    const home = await mkdtemp(join(tmpdir(), 'rho-profiles-'));
    const path = join(home, 'broken.yaml');
    await writeFile(path, 'shell: [unclosed\n');
    await expect(loadProfile(path)).rejects.toThrow(`${path}:2: not valid YAML: `);
  });
});
