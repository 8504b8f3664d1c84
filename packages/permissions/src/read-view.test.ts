import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProfile } from './permission-profile.js';
import { gitConfigKeyNamesProgram, readView, sanitizeGitConfig, SECRET_SCAN_MAX_ENTRIES } from './read-view.js';
import { viewMounts } from './sandbox-mounts.js';

function tree(): { root: string; work: string; rho: string; home: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-read-view-')));
  const work = join(root, 'work');
  const rho = join(root, 'rho-home');
  const home = join(root, 'home');
  for (const directory of [work, rho, home]) mkdirSync(directory);
  return { root, work, rho, home };
}

describe('readView', () => {
  it('shows the working directory and the system directories, and nothing else of the host', () => {
    const { root, work, rho, home } = tree();
    const view = readView({ workingDir: work, rhoHome: rho, home });
    const decide = (path: string) => view.decide(path);
    expect(decide(join(work, 'src/a.ts'))).toMatchObject({ allowed: true, rule: 'read.working-dir' });
    expect(decide('/usr/share/dict/words')).toMatchObject({ allowed: true, rule: 'read.system' });
    expect(decide('/etc/passwd')).toMatchObject({ allowed: true, rule: 'read.system' });
    expect(decide('/proc/cpuinfo')).toMatchObject({ allowed: true });
    for (const path of [
      '/var/lib/postgresql/data',
      '/run/docker.sock',
      '/srv/x',
      join(root, 'other'),
      '/home/someone/x',
    ])
      expect(decide(path), path).toMatchObject({ allowed: false, rule: 'read.outside-view' });
    for (const path of [
      join(rho, 'databases.yaml'),
      join(rho, 'sessions/s1/trace.jsonl'),
      join(home, '.bashrc'),
      '/root/.ssh/id_rsa',
    ])
      expect(decide(path), path).toMatchObject({ allowed: false, rule: 'read.hidden' });
    expect(decide('/proc/self/environ')).toMatchObject({ allowed: false, rule: 'read.proc' });
  });

  it('masks the system secrets and secret-named files, with the profile adding and letting through names', () => {
    const { work, rho, home } = tree();
    const profile = parseProfile({
      profile: 'p',
      secret_files: { extra: ['*.secret', 'config/master.txt'], allow: ['.env.local'] },
    });
    const view = readView({ profile, workingDir: work, rhoHome: rho, home });
    for (const path of [
      '/etc/shadow',
      '/etc/gshadow',
      '/etc/sudoers',
      '/etc/sudoers.d/admins',
      '/etc/ssh/ssh_host_ed25519_key',
    ])
      expect(view.decide(path), path).toMatchObject({ allowed: false, rule: 'read.secret' });
    expect(view.decide('/etc/ssh/ssh_host_ed25519_key.pub')).toMatchObject({ allowed: true });
    for (const name of [
      '.env',
      '.env.production',
      'prod.env',
      '.netrc',
      '.pgpass',
      '.my.cnf',
      'id_ed25519',
      'server.pem',
      '.npmrc',
      'credentials',
      'databases.yaml',
      'a.secret',
      'config/master.txt',
    ])
      expect(view.decide(join(work, name)), name).toMatchObject({ allowed: false, rule: 'read.secret' });
    for (const name of [
      '.env.example',
      '.env.local',
      'id_ed25519.pub',
      'environment.ts',
      'README.md',
      'other/master.txt',
    ])
      expect(view.decide(join(work, name)), name).toMatchObject({ allowed: true });
    expect(view.decide(join(work, '.git/config'))).toMatchObject({ allowed: true, sanitized: 'git-config' });
    expect(view.decide(join(work, '.git/modules/sub/config'))).toMatchObject({ sanitized: 'git-config' });
  });

  it("adds the profile's read_paths, and keeps rho's home hidden inside a visible directory", () => {
    const { root, work, rho, home } = tree();
    mkdirSync(join(root, 'data'));
    const profile = parseProfile({ profile: 'p', read_paths: ['../data'] });
    const view = readView({ profile, workingDir: work, rhoHome: rho, home });
    expect(view.decide(join(root, 'data/x.csv'))).toMatchObject({ allowed: true, rule: 'read.read-paths' });
    // The working directory is the parent of rho's home: the home stays hidden.
    const wide = readView({ workingDir: root, rhoHome: rho, home });
    expect(wide.decide(join(root, 'work/a'))).toMatchObject({ allowed: true });
    expect(wide.decide(join(rho, 'databases.yaml'))).toMatchObject({ allowed: false, rule: 'read.hidden' });
    const mounts = viewMounts(wide, { allowNetwork: false });
    expect(mounts.view.join(' ')).toContain(`--tmpfs ${rho}`);
    // A working directory inside rho's home is visible; the rest of the home is not.
    mkdirSync(join(rho, 'project'));
    const inside = readView({ workingDir: join(rho, 'project'), rhoHome: rho, home });
    expect(inside.decide(join(rho, 'project/a'))).toMatchObject({ allowed: true });
    expect(inside.decide(join(rho, 'databases.yaml'))).toMatchObject({ allowed: false });
  });

  it('builds mounts from the view: no bind of the root, masks over secrets, a sanitized git config', () => {
    const { work, rho, home } = tree();
    mkdirSync(join(work, '.git'));
    mkdirSync(join(work, 'deep/er'), { recursive: true });
    writeFileSync(join(work, '.env'), 'KEY=1');
    writeFileSync(join(work, 'deep/er/id_rsa'), 'key');
    writeFileSync(join(work, '.git/config'), '[http]\n\textraheader = AUTHORIZATION: basic TOKEN\n');
    const view = readView({ workingDir: work, rhoHome: rho, home });
    const mounts = viewMounts(view, { allowNetwork: false, writableCwd: true });
    const all = [...mounts.system, ...mounts.view].join(' ');
    expect(all).not.toMatch(/--ro-bind \/ \//);
    expect(all).toContain(`--bind ${work} ${work}`);
    expect(all).toMatch(new RegExp(`--ro-bind \\S+ ${join(work, '.env')}`));
    expect(all).toMatch(new RegExp(`--ro-bind \\S+ ${join(work, 'deep/er/id_rsa')}`));
    const copy = view.masks().find((mask) => mask.path === join(work, '.git/config'));
    expect(readFileSync(copy!.source!, 'utf8')).not.toContain('TOKEN');
    expect(SECRET_SCAN_MAX_ENTRIES).toBeGreaterThan(1000);
  });
});

describe('the scan of secret names', () => {
  it('masks a secret created after an earlier scan, in a directory whose listing was cached', async () => {
    const { work, rho, home } = tree();
    mkdirSync(join(work, 'old'));
    // A listing is trusted only once the directory has not changed for two seconds (its change
    // time, which no one can set back, included).
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const masked = () =>
      readView({ workingDir: work, rhoHome: rho, home })
        .masks()
        .map((mask) => mask.path);
    expect(masked()).not.toContain(join(work, 'old/.env'));
    // The listing of `old` is now cached and trusted; creating a file changes the directory's times.
    writeFileSync(join(work, 'old/.env'), 'KEY=1');
    writeFileSync(join(work, '.netrc'), 'machine x password y');
    expect(masked()).toEqual(expect.arrayContaining([join(work, 'old/.env'), join(work, '.netrc')]));
  });
});

describe('sanitizeGitConfig', () => {
  it('drops credentials and program-naming entries, and keeps the rest', () => {
    const text = [
      '[core]',
      '\tbare = false',
      '\tfsmonitor = ./watch.sh',
      '[remote "origin"]',
      '\turl = https://user:ghp_TOKEN@github.com/o/r.git',
      '[http "https://github.com/"]',
      '\textraheader = AUTHORIZATION: basic TOKEN2',
      '[credential]',
      '\thelper = store',
      '[filter "lfs"]',
      '\tclean = ./evil',
      '\trequired = true',
      '[diff "x"] textconv = ./evil2',
      '[user]',
      '\tname = Someone',
    ].join('\n');
    const clean = sanitizeGitConfig(text);
    for (const gone of ['TOKEN', 'TOKEN2', 'store', './evil', './evil2', 'watch.sh']) expect(clean).not.toContain(gone);
    for (const kept of ['bare = false', 'url = https://github.com/o/r.git', 'required = true', 'name = Someone'])
      expect(clean).toContain(kept);
  });

  it('knows the keys that name programs', () => {
    for (const key of [
      'filter.x.clean',
      'diff.x.textconv',
      'diff.external',
      'core.fsmonitor',
      'core.sshCommand',
      'credential.helper',
    ])
      expect(gitConfigKeyNamesProgram(key), key).toBe(true);
    for (const key of ['core.bare', 'user.name', 'filter.x.required'])
      expect(gitConfigKeyNamesProgram(key), key).toBe(false);
  });
});

describe('profile keys of the view', () => {
  it('reads read_paths, secret_files and network, and refuses unknown keys', () => {
    const profile = parseProfile({
      profile: 'p',
      read_paths: ['/data'],
      secret_files: { extra: ['*.x'] },
      network: true,
    });
    expect(profile).toMatchObject({ readPaths: ['/data'], secretFiles: { extra: ['*.x'], allow: [] }, network: 'on' });
    expect(parseProfile({ network: false }).network).toBe('off');
    expect(() => parseProfile({ secret_files: { hide: [] } })).toThrow(/'secret_files\.hide' is an unknown key/);
    expect(() => parseProfile({ read_paths: 'x' })).toThrow(/'read_paths' must be a list of strings/);
  });
});
