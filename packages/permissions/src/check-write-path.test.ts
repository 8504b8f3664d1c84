import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { builtinProfile } from './builtin-profiles.js';
import { checkWritePath } from './check-write-path.js';
import { openWriteTarget } from './write-target.js';
import { parseProfile } from './permission-profile.js';
import type { PermissionProfile } from './permission-profile.js';

const createOnly: PermissionProfile = { ...builtinProfile('readonly')!, name: 'exports', fileWrite: 'create-only' };
const full: PermissionProfile = builtinProfile('developer')!;

let root: string;
let home: string;
let work: string;

beforeEach(() => {
  // A real tree: a fake home with credentials, and a project inside it with traps.
  root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-paths-')));
  home = join(root, 'home', 'user');
  work = join(home, 'project');
  mkdirSync(join(home, '.ssh'), { recursive: true });
  mkdirSync(join(home, '.aws'), { recursive: true });
  mkdirSync(join(work, 'bin'), { recursive: true });
  mkdirSync(join(work, 'src'), { recursive: true });
  writeFileSync(join(home, '.ssh', 'authorized_keys'), 'ssh-ed25519 AAAA original\n');
  writeFileSync(join(home, '.aws', 'credentials'), '[default]\n');
  writeFileSync(join(work, 'existing.txt'), 'keep me\n');
  symlinkSync(join(home, '.ssh'), join(work, 'keys'));
  symlinkSync(join(home, '.aws', 'credentials'), join(work, 'creds'));
  symlinkSync(join(work, 'src'), join(work, 'src-link'));
});

const check = (path: string, profile: PermissionProfile = createOnly) =>
  checkWritePath(path, { profile, workingDir: work, home });

describe('checkWritePath', () => {
  it('allows new files inside the working directory, including under a bin/ of the project', async () => {
    expect(await check('notes/new.md')).toEqual({
      allowed: true,
      realPath: join(work, 'notes', 'new.md'),
      rule: 'create_only.new_file',
    });
    expect(await check(join(work, 'bin', 'tool.sh'))).toMatchObject({
      allowed: true,
      realPath: join(work, 'bin', 'tool.sh'),
    });
    expect(await check('./src//deep///file.ts')).toMatchObject({
      allowed: true,
      realPath: join(work, 'src', 'deep', 'file.ts'),
    });
  });

  it('refuses writes when the profile has file writes off', async () => {
    expect(await check('a.txt', builtinProfile('readonly')!)).toMatchObject({ allowed: false, rule: 'file_write.off' });
  });

  it('refuses to escape with .. or absolute paths', async () => {
    expect(await check('../outside.txt')).toMatchObject({ allowed: false, rule: 'path.outside_roots' });
    expect(await check('src/../../.ssh/authorized_keys')).toMatchObject({ allowed: false, rule: 'path.outside_roots' });
    expect(await check(join(root, 'elsewhere.txt'))).toMatchObject({ allowed: false, rule: 'path.outside_roots' });
    expect(await check('~/.bashrc')).toMatchObject({ allowed: false });
  });

  it('judges symlinks on the real path: a link into the fake home is refused', async () => {
    const viaDirectory = await check('keys/authorized_keys2');
    expect(viaDirectory).toMatchObject({ allowed: false });
    expect(await check('creds', full)).toMatchObject({ allowed: false });
    // Even a link that stays inside the project is refused: it could be swapped before the write.
    expect(await check('src-link/x.ts', full)).toMatchObject({ allowed: false, rule: 'path.symlink' });
  });

  it('refuses sensitive locations as whole components, case-insensitively, in every mode', async () => {
    mkdirSync(join(work, '.SSH'), { recursive: true });
    expect(await check('.SSH/id_rsa', full)).toMatchObject({ allowed: false, rule: 'path.sensitive' });
    expect(await check('.config/app.json', full)).toMatchObject({ allowed: false, rule: 'path.sensitive' });
    expect(await check('.bashrc', full)).toMatchObject({ allowed: false, rule: 'path.sensitive' });
    // Not substrings: these are fine.
    expect(await check('.profile_notes.md', full)).toMatchObject({ allowed: true });
    expect(await check('my.ssh.notes', full)).toMatchObject({ allowed: true });
  });

  it('refuses system directories even when they are write roots', async () => {
    const decision = await checkWritePath('/etc/rho-test.conf', { profile: full, workingDir: work, roots: ['/etc'] });
    expect(decision).toMatchObject({ allowed: false, rule: 'path.sensitive' });
  });

  it('refuses directories and trailing slashes, and existing files in create-only mode', async () => {
    expect(await check('src/')).toMatchObject({ allowed: false, rule: 'path.directory' });
    expect(await check('src', full)).toMatchObject({ allowed: false, rule: 'path.directory' });
    expect(await check('existing.txt')).toEqual({
      allowed: false,
      rule: 'create_only.exists',
      reason: 'File already exists: existing.txt. Use a different path or delete the existing file first.',
    });
    expect(await check('existing.txt', full)).toMatchObject({ allowed: true, rule: 'full.inside_roots' });
  });

  it('allows configured roots besides the working directory', async () => {
    const exports = join(root, 'exports');
    mkdirSync(exports);
    expect(
      await checkWritePath(join(exports, 'out.csv'), { profile: createOnly, workingDir: work, roots: [exports] }),
    ).toMatchObject({ allowed: true, realPath: join(exports, 'out.csv') });
  });
});

/** The check-then-create flow of the write tools: a checked path opened without following links. */
async function createExclusive(realPath: string, data: string): Promise<void> {
  const target = await openWriteTarget(realPath, { createParents: true });
  try {
    await target.createExclusive(Buffer.from(data, 'utf8'), 0o644);
  } finally {
    target.close();
  }
}

describe('create after the check', () => {
  it('creates the file with its parents', async () => {
    const decision = await check('reports/2026/summary.md');
    if (!decision.allowed) throw new Error(decision.reason);
    await createExclusive(decision.realPath, 'hello');
    expect(readFileSync(decision.realPath, 'utf8')).toBe('hello');
  });

  it('never overwrites a file that appeared between the check and the create', async () => {
    const decision = await check('race.txt');
    if (!decision.allowed) throw new Error(decision.reason);
    writeFileSync(join(work, 'race.txt'), 'written by someone else');
    await expect(createExclusive(decision.realPath, 'agent data')).rejects.toMatchObject({ code: 'EEXIST' });
    expect(readFileSync(join(work, 'race.txt'), 'utf8')).toBe('written by someone else');
  });

  it('never writes through a symlink planted between the check and the create', async () => {
    const decision = await check('planted.txt');
    if (!decision.allowed) throw new Error(decision.reason);
    symlinkSync(join(home, '.ssh', 'authorized_keys'), join(work, 'planted.txt'));
    await expect(createExclusive(decision.realPath, 'ssh-rsa attacker')).rejects.toMatchObject({ code: 'EEXIST' });
    expect(readFileSync(join(home, '.ssh', 'authorized_keys'), 'utf8')).toBe('ssh-ed25519 AAAA original\n');
  });

  it('refuses when a parent directory was replaced by a symlink after the check', async () => {
    const decision = await check('newdir/file.txt');
    if (!decision.allowed) throw new Error(decision.reason);
    symlinkSync(join(home, '.aws'), join(work, 'newdir'));
    await expect(createExclusive(decision.realPath, 'data')).rejects.toMatchObject({ code: 'ECHANGED' });
    expect(existsSync(join(home, '.aws', 'file.txt'))).toBe(false);
  });
});

describe('checkWritePath: locations that run code later, when the working directory is the home or inside it', () => {
  // Each of these was writable before: the first five are the proven misses of issue 14.
  const homeFiles = [
    '.bash_aliases',
    '.gitconfig',
    '.git/config',
    '.pam_environment',
    '.vscode/tasks.json',
    '.vscode/settings.json',
    '.vscode/launch.json',
    '.git/hooks/pre-commit',
    '.git/info/attributes',
    '.git',
    '.idea/workspace.xml',
    '.idea/runConfigurations/run.xml',
    '.devcontainer/devcontainer.json',
    '.envrc',
    '.direnv/bin/x',
    '.local/bin/ls',
    '.inputrc',
    '.psqlrc',
    '.sqliterc',
    '.xsessionrc',
    '.config/autostart/evil.desktop',
    '.CONFIG/AutoStart/evil.desktop',
    '.Bash_Aliases',
    '.Rprofile',
    '.gdbinit',
    '.ghci',
    '.ipython/profile_default/startup/00.py',
    '.jupyter/jupyter_notebook_config.py',
    '.julia/config/startup.jl',
  ];

  it.each(homeFiles)('refuses %s in full mode with the home as working directory', async (path) => {
    mkdirSync(join(home, '.git'), { recursive: true });
    const decision = await checkWritePath(path, { profile: full, workingDir: home, home });
    expect(decision).toMatchObject({ allowed: false, rule: 'path.sensitive' });
  });

  it('refuses them inside a project below the home too, by absolute path, ~ or relative path', async () => {
    mkdirSync(join(work, '.git'), { recursive: true });
    for (const path of ['.git/config', join(work, '.vscode', 'tasks.json'), 'sub/.bash_aliases', '.idea/x.xml']) {
      expect(await checkWritePath(path, { profile: full, workingDir: work, home })).toMatchObject({
        allowed: false,
        rule: 'path.sensitive',
      });
    }
    // ~ expands to the home, which is outside this working directory, and sensitive anyway.
    expect(await checkWritePath('~/.gitconfig', { profile: full, workingDir: work, home })).toMatchObject({
      allowed: false,
    });
    // The same files under the home when it is a write root.
    expect(
      await checkWritePath('~/.gitconfig', { profile: full, workingDir: work, home, roots: [home] }),
    ).toMatchObject({ allowed: false, rule: 'path.sensitive' });
  });

  it('matches on the real path when the working directory is a link to the home', async () => {
    const alias = join(root, 'home-alias');
    symlinkSync(home, alias);
    for (const path of ['.bash_aliases', '.gitconfig', '.pam_environment', '.vscode/tasks.json']) {
      expect(await checkWritePath(path, { profile: full, workingDir: alias, home: alias })).toMatchObject({
        allowed: false,
        rule: 'path.sensitive',
      });
    }
    expect(await checkWritePath('notes.md', { profile: full, workingDir: alias, home: alias })).toMatchObject({
      allowed: true,
      realPath: join(home, 'notes.md'),
    });
  });

  it('proves the effect of .git/config: core.fsmonitor runs a command on the next git status', async () => {
    const git = spawnSync('git', ['--version']);
    if (git.status !== 0) return expect(process.env.CI).not.toBe('true');
    const repo = join(root, 'repo');
    mkdirSync(repo);
    expect(spawnSync('git', ['init', '-q', repo]).status).toBe(0);
    const marker = join(root, 'fsmonitor-ran');
    const config = `${readFileSync(join(repo, '.git', 'config'), 'utf8')}[core]\n\tfsmonitor = "touch '${marker}'; false"\n`;
    // What the write tool would have written before: prove it runs code on `git status`.
    writeFileSync(join(repo, '.git', 'config'), config);
    spawnSync('git', ['status'], { cwd: repo });
    expect(existsSync(marker)).toBe(true);
    // The decision refuses that write now.
    expect(await checkWritePath('.git/config', { profile: full, workingDir: repo, home })).toMatchObject({
      allowed: false,
      rule: 'path.sensitive',
    });
  });

  it('refuses auto-executed names for new files (create-only) but lets full mode edit them', async () => {
    for (const path of [
      'conftest.py',
      'tests/conftest.py',
      'sitecustomize.py',
      'Makefile',
      'GNUmakefile',
      'lib/evil.pth',
      '.pnpmfile.cjs',
      '.yarnrc.yml',
      '.husky/pre-commit',
    ]) {
      expect(await check(path), path).toMatchObject({ allowed: false, rule: 'path.auto_executed' });
      expect(await check(path, full), path).toMatchObject({ allowed: true });
    }
    // Only below the root: a working directory that is itself called Makefile is not refused.
    const odd = join(root, 'Makefile');
    mkdirSync(odd);
    expect(await checkWritePath('notes.md', { profile: createOnly, workingDir: odd, home })).toMatchObject({
      allowed: true,
    });
  });
});

describe('checkWritePath for export_query (writer: export)', () => {
  // readonly with database_exports: on (the built-in readonly has them off, below).
  const readonly: PermissionProfile = { ...builtinProfile('readonly')!, databaseExports: true };
  const exportCheck = (path: string, options: { profile?: PermissionProfile; workingDir?: string } = {}) =>
    checkWritePath(path, {
      profile: options.profile ?? readonly,
      workingDir: options.workingDir ?? work,
      home,
      writer: 'export',
    });

  it('refuses every export when the profile does not enable database exports (the built-in readonly)', async () => {
    const builtin = builtinProfile('readonly')!;
    expect(await exportCheck('out/report.csv', { profile: builtin })).toMatchObject({
      allowed: false,
      rule: 'database_exports.off',
      reason: expect.stringContaining('database_exports off (the default when file_write is off)'),
    });
    // The default follows file_write; the key overrides it either way.
    const creator = parseProfile({ profile: 'creator', file_write: 'create-only' });
    expect(await exportCheck('a.csv', { profile: creator })).toMatchObject({ allowed: true });
    const closed = parseProfile({ profile: 'closed', file_write: 'full', database_exports: 'off' });
    expect(await exportCheck('a.csv', { profile: closed })).toMatchObject({
      allowed: false,
      rule: 'database_exports.off',
    });
    const opened = parseProfile({ profile: 'opened', database_exports: true });
    expect(await exportCheck('a.csv', { profile: opened })).toMatchObject({ allowed: true });
  });

  it('allows a new .csv or .tsv file in readonly with exports on, and nothing else', async () => {
    expect(await exportCheck('out/report.csv')).toEqual({
      allowed: true,
      realPath: join(work, 'out', 'report.csv'),
      rule: 'export.new_file',
    });
    expect(await exportCheck('report.TSV')).toMatchObject({ allowed: true });
    for (const path of ['conftest.py', 'x.py', 'report.csv.py', 'report', 'run.sh', 'Makefile', 'report.csv/']) {
      expect((await exportCheck(path)).allowed, path).toBe(false);
    }
    expect(await exportCheck('conftest.py')).toMatchObject({
      rule: 'export.extension',
      reason: expect.stringContaining('.csv or .tsv'),
    });
  });

  it('refuses hidden, sensitive, existing, linked and outside names even with the right extension', async () => {
    expect(await exportCheck('.csv')).toMatchObject({ allowed: false, rule: 'export.hidden' });
    expect(await exportCheck('.envrc.csv')).toMatchObject({ allowed: false, rule: 'export.hidden' });
    expect(await exportCheck('.git/x.csv')).toMatchObject({ allowed: false, rule: 'path.sensitive' });
    expect(await exportCheck('.vscode/tasks.csv')).toMatchObject({ allowed: false, rule: 'path.sensitive' });
    expect(await exportCheck('.husky/hook.csv')).toMatchObject({ allowed: false, rule: 'path.auto_executed' });
    writeFileSync(join(work, 'taken.csv'), 'a\r\n');
    expect(await exportCheck('taken.csv')).toMatchObject({ allowed: false, rule: 'export.exists' });
    expect(await exportCheck('src-link/x.csv')).toMatchObject({ allowed: false, rule: 'path.symlink' });
    expect(await exportCheck('../outside.csv')).toMatchObject({ allowed: false, rule: 'path.outside_roots' });
    expect(await exportCheck('~/.ssh/x.csv')).toMatchObject({ allowed: false });
  });

  it('allows the profile file_write.roots as export directories, even with file_write off', async () => {
    const exports = join(root, 'exports');
    mkdirSync(exports);
    const withRoot: PermissionProfile = { ...readonly, writeRoots: [exports] };
    expect(await exportCheck(join(exports, 'a.csv'), { profile: withRoot })).toMatchObject({
      allowed: true,
      realPath: join(exports, 'a.csv'),
    });
    expect(await exportCheck(join(exports, 'a.csv'))).toMatchObject({ allowed: false, rule: 'path.outside_roots' });
    // The write tool stays off in that profile.
    expect(await checkWritePath(join(exports, 'a.csv'), { profile: withRoot, workingDir: work })).toMatchObject({
      allowed: false,
      rule: 'file_write.off',
    });
  });

  it('edit needs full mode and an existing regular file', async () => {
    expect(await checkWritePath('existing.txt', { profile: full, workingDir: work, writer: 'edit' })).toMatchObject({
      allowed: true,
      rule: 'edit.inside_roots',
    });
    expect(await checkWritePath('missing.txt', { profile: full, workingDir: work, writer: 'edit' })).toMatchObject({
      allowed: false,
      rule: 'edit.not_found',
    });
    expect(
      await checkWritePath('existing.txt', { profile: createOnly, workingDir: work, writer: 'edit' }),
    ).toMatchObject({ allowed: false, rule: 'file_write.edit' });
  });
});

describe('checkWritePath in an isolated workspace', () => {
  it("lets a session write in its own workspace inside rho's home, and nowhere else of it", async () => {
    // rho's home where it is by default, under a .config directory, with its workspaces.
    const rho = join(home, '.config', 'rho');
    const mine = join(rho, 'workspaces', 'aaaa1111');
    const other = join(rho, 'workspaces', 'bbbb2222');
    for (const directory of [join(mine, 'src'), other, join(rho, 'approvals'), join(rho, 'sessions', 'aaaa1111')])
      mkdirSync(directory, { recursive: true });
    writeFileSync(join(mine, 'src', 'main.ts'), 'old\n');
    const hidden = [rho, join(rho, 'sessions')];
    // Writable roots inside rho's home give no way out of the workspace either.
    const rooted: PermissionProfile = { ...full, writeRoots: [join(rho, 'approvals')] };
    const inWorkspace = (path: string, profile: PermissionProfile = full) =>
      checkWritePath(path, { profile, workingDir: mine, home, hidden });
    expect(await inWorkspace('src/main.ts')).toMatchObject({ allowed: true, realPath: join(mine, 'src', 'main.ts') });
    expect(await inWorkspace('notes/new.md')).toMatchObject({ allowed: true });
    for (const path of [
      join(other, 'a.txt'),
      '../bbbb2222/a.txt',
      join(rho, 'approvals', 'answer.json'),
      join(rho, 'sessions', 'aaaa1111', 'cancel'),
      join(rho, 'config.yaml'),
    ]) {
      expect(await inWorkspace(path), path).toMatchObject({ allowed: false, rule: 'path.hidden' });
      expect(await inWorkspace(path, rooted), path).toMatchObject({ allowed: false, rule: 'path.hidden' });
    }
    // Sensitive names below the workspace are still refused; the .config of rho's own place is not one.
    expect(await inWorkspace('.git/hooks/pre-commit')).toMatchObject({ allowed: false, rule: 'path.sensitive' });
    expect(await inWorkspace('.config/autostart/x.desktop')).toMatchObject({ allowed: false, rule: 'path.sensitive' });
    // A working directory under .config that is not in rho's home keeps the rule.
    const project = join(home, '.config', 'project');
    mkdirSync(project, { recursive: true });
    expect(await checkWritePath('a.txt', { profile: full, workingDir: project, home, hidden })).toMatchObject({
      allowed: false,
      rule: 'path.sensitive',
    });
  });
});
