// `rho doctor` (issue 36, part 4), through the built CLI: each check passes, and fails for its
// reason (bubblewrap missing from PATH or unable to make a sandbox, ripgrep missing, an
// unwritable or shared $RHO_HOME, a full disk), with --json's shape and the exit codes. The model
// endpoint is in doctor-model.test.ts; the databases, the fleet and the MCP servers in
// doctor-services.test.ts.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, constants, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeCheck } from '../src/commands/doctor/system-checks.js';
import {
  around,
  asRoot,
  bwrapWorks,
  doctor,
  HIDE_MODULES,
  KEY,
  NO_SANDBOX,
  onPath,
  pathOf,
  privateHome,
  scratch,
  type Check,
} from './support/doctor.js';
import { bin, runRho } from './support/run-rho.js';

describe('rho doctor: the report', () => {
  it('prints one {check, status, detail, fix} per check with --json, and exits 0 when nothing failed', async () => {
    const home = privateHome();
    const outcome = await doctor(NO_SANDBOX, around(home));
    expect(outcome.code, outcome.stdout).toBe(0);
    for (const entry of outcome.checks) {
      expect(Object.keys(entry).sort()).toEqual(['check', 'detail', 'fix', 'status']);
      expect(['ok', 'warn', 'fail', 'skip']).toContain(entry.status);
      expect(typeof entry.detail).toBe('string');
      expect(entry.fix === null || typeof entry.fix === 'string').toBe(true);
    }
    expect(outcome.checks.map((entry) => entry.check)).toEqual([
      'node',
      'rho_home',
      'disk',
      'bubblewrap',
      'ripgrep',
      'config',
      'model',
      'database',
      'fleet',
      'mcp',
    ]);
    // Not configured is skipped, not failed.
    for (const name of ['database', 'fleet', 'mcp']) expect(outcome.get(name).status).toBe('skip');
    expect(outcome.checks.filter((entry) => entry.status === 'fail')).toEqual([]);
    expect(outcome.stdout).not.toContain(KEY);
  });

  it('prints one line per check with its mark and the fix, then a summary; exit 1 when one failed', async () => {
    const home = privateHome();
    const ok = await runRho(['doctor', ...NO_SANDBOX], around(home));
    const lines = ok.stdout.trimEnd().split('\n');
    expect(ok.code).toBe(0);
    expect(lines[0]).toMatch(/^✓ node +Node\.js \d+\.\d+\.\d+ /);
    expect(lines.filter((line) => /^[✓!✗-] [a-z_]+/.test(line))).toHaveLength(10);
    expect(lines.at(-1)).toMatch(
      /^\d+ ok, \d+ warnings?, 0 failed, 3 skipped: everything this configuration needs is there\.$/,
    );
    const failed = await runRho(['doctor', ...NO_SANDBOX], around(home, { OPENAI_API_KEY: '' }));
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(
      /^✗ model +model gpt-5-mini at https:\/\/api\.openai\.com\/v1 .* Fix: set OPENAI_API_KEY/m,
    );
    expect(failed.stdout.trimEnd().split('\n').at(-1)).toMatch(
      /1 failed, 3 skipped: one thing this configuration needs is missing or broken \(exit 1\)\.$/,
    );
  });

  it('refuses a --timeout that is not a number of seconds (exit 2)', async () => {
    const outcome = await runRho(['doctor', '--timeout', '0'], around(privateHome()));
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('--timeout takes seconds above 0');
  });

  it('skips what depends on a configuration that cannot be read, and fails its config check', async () => {
    const home = privateHome();
    writeFileSync(join(home, 'config.yaml'), 'mcp_servers: [unclosed\n');
    const outcome = await doctor(NO_SANDBOX, around(home));
    expect(outcome.code).toBe(1);
    expect(outcome.get('config')).toMatchObject({ status: 'fail' });
    expect(outcome.get('config').detail).toContain(join(home, 'config.yaml'));
    for (const name of ['bubblewrap', 'ripgrep', 'model', 'database', 'fleet', 'mcp'])
      expect(outcome.get(name)).toMatchObject({ status: 'skip', detail: expect.stringContaining('see config') });
  });
});

describe('rho doctor: Node', () => {
  it('passes the Node running it, and fails one older than 22.15 with the fix', () => {
    expect(nodeCheck().status).toBe('ok');
    expect(nodeCheck('22.14.0', '/x/node')).toEqual({
      check: 'node',
      status: 'fail',
      detail: 'Node.js 22.14.0 (/x/node) is older than the 22.15 rho needs',
      fix: 'install Node.js 22 or 24 (nodejs.org, or your package manager) and run rho with it',
    });
    expect(nodeCheck('24.1.0', '/x/node').status).toBe('ok');
  });
});

describe('rho doctor: bubblewrap', () => {
  const withoutBwrap = pathOf(['rg', 'sh']);

  it.runIf(bwrapWorks)('passes where bubblewrap makes sandboxes and the readonly profile needs it', async () => {
    const outcome = await doctor([], around(privateHome()));
    expect(outcome.get('bubblewrap').status).toBe('ok');
    expect(outcome.get('bubblewrap').detail).toMatch(/bubblewrap \(.*bwrap\) makes sandboxes here .*profile readonly/);
  });

  it('fails without bwrap on PATH when the profile or the backend needs it, and skips when nothing does', async () => {
    const home = privateHome();
    const readonly = await doctor([], around(home, { PATH: withoutBwrap }));
    expect(readonly.code).toBe(1);
    expect(readonly.get('bubblewrap')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(
        /^bwrap was not found on PATH, and profile readonly runs every shell command in it/,
      ),
      fix: expect.stringContaining('sudo apt-get install bubblewrap'),
    });
    const sandbox = await doctor(
      ['--profile', 'unrestricted', '--backend', 'sandbox'],
      around(home, { PATH: withoutBwrap }),
    );
    expect(sandbox.get('bubblewrap').detail).toMatch(
      /the sandbox backend \(--backend\) .*the run stops before it starts/,
    );
    expect(sandbox.get('bubblewrap').status).toBe('fail');
    const off = await doctor(NO_SANDBOX, around(home, { PATH: withoutBwrap }));
    expect(off.get('bubblewrap')).toMatchObject({
      status: 'skip',
      detail: expect.stringContaining('sets sandbox: off'),
    });
    expect(off.code).toBe(0);
    const daytona = await doctor(['--backend', 'daytona'], around(home, { PATH: withoutBwrap }));
    expect(daytona.get('bubblewrap')).toMatchObject({ status: 'skip', detail: expect.stringContaining('daytona') });
    const unrestricted = await doctor(['--profile', 'unrestricted'], around(home, { PATH: withoutBwrap }));
    expect(unrestricted.get('bubblewrap')).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('run on this machine'),
    });
  });

  it('fails when bwrap is there but cannot make a sandbox (user namespaces), with that fix', async () => {
    // Tests run as root, where namespaces always work: a stand-in bwrap fails as bubblewrap does without them.
    const path = pathOf(['rg']);
    writeFileSync(
      join(path, 'bwrap'),
      '#!/bin/sh\necho "bwrap: No permissions to creating new namespace" >&2\nexit 1\n',
    );
    chmodSync(join(path, 'bwrap'), 0o755);
    const outcome = await doctor([], around(privateHome(), { PATH: path }));
    expect(outcome.get('bubblewrap')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining(
        `bubblewrap (${join(path, 'bwrap')}) cannot create a sandbox here (bwrap: No permissions to creating new namespace)`,
      ),
      fix: expect.stringContaining('unprivileged user namespaces'),
    });
    expect(outcome.code).toBe(1);
  });
});

describe('rho doctor: ripgrep', () => {
  it("passes with @vscode/ripgrep's rg, then $RHO_RIPGREP_PATH's, and fails with neither nor rg on PATH", async () => {
    const home = privateHome();
    const bundled = await doctor(NO_SANDBOX, around(home));
    expect(bundled.get('ripgrep')).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/^ripgrep \d+.*@vscode.*\/rg\)$/),
    });
    const hidden = { NODE_OPTIONS: HIDE_MODULES, RHO_TEST_HIDE_MODULES: '^@vscode/ripgrep$' };
    const system = onPath('rg');
    if (system !== undefined) {
      const configured = await doctor(NO_SANDBOX, around(home, { ...hidden, RHO_RIPGREP_PATH: system }));
      expect(configured.get('ripgrep')).toMatchObject({ status: 'ok', detail: expect.stringContaining(`(${system})`) });
    }
    const missing = await doctor(NO_SANDBOX, around(home, { ...hidden, PATH: pathOf([]) }));
    expect(missing.get('ripgrep')).toMatchObject({
      status: 'fail',
      detail: 'ripgrep (rg on PATH) was not found: the grep and glob tools need it',
      fix: expect.stringContaining('apt-get install ripgrep'),
    });
    expect(missing.code).toBe(1);
    const remote = await doctor(['--backend', 'daytona'], around(home, { ...hidden, PATH: pathOf([]) }));
    expect(remote.get('ripgrep')).toMatchObject({
      status: 'skip',
      detail: expect.stringContaining('the daytona backend'),
    });
  });
});

describe('rho doctor: $RHO_HOME', () => {
  /** The rho_home check of `home`, run from `cwd` (default: its parent). */
  const status = async (home: string, cwd = dirname(home)): Promise<Check> =>
    (await doctor(NO_SANDBOX, { ...around(home), cwd })).get('rho_home');

  it('passes a private one, warns of one others may read, fails one others may write, with the chmod', async () => {
    const home = privateHome();
    expect(await status(home)).toMatchObject({ status: 'ok', detail: `${home} is writable and private (mode 0700)` });
    chmodSync(home, 0o755);
    const readable = await doctor(NO_SANDBOX, around(home));
    expect(readable.get('rho_home')).toMatchObject({ status: 'warn', fix: `chmod 700 ${home}` });
    expect(readable.code).toBe(0);
    chmodSync(home, 0o777);
    const shared = await doctor(NO_SANDBOX, around(home));
    expect(shared.get('rho_home')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('writable by everyone (mode 0777)'),
      fix: `chmod 700 ${home}`,
    });
    expect(shared.code).toBe(1);
  });

  it('passes one that does not exist yet under a writable parent, fails one a file is in the way of', async () => {
    const root = scratch();
    expect(await status(join(root, 'new', 'home'), root)).toMatchObject({
      status: 'ok',
      detail: expect.stringContaining('does not exist yet'),
    });
    writeFileSync(join(root, 'file'), '');
    expect(await status(join(root, 'file', 'home'), root)).toMatchObject({
      status: 'fail',
      detail: `${join(root, 'file', 'home')} cannot be created: ${join(root, 'file')} is a file`,
    });
  });

  it('fails one it cannot write (0500), with the chmod', async (context) => {
    // chmod does not stop root: as root, rho runs as nobody (uid 65534), who owns the directory.
    if (
      asRoot &&
      spawnSync(process.execPath, ['-e', `require('node:fs').accessSync(${JSON.stringify(bin)}, ${constants.R_OK})`], {
        uid: 65534,
        gid: 65534,
      }).status !== 0
    )
      context.skip('running as root, and user nobody cannot read the built rho here');
    const root = scratch();
    chmodSync(root, 0o755);
    const home = privateHome(root);
    if (asRoot) chownSync(home, 65534, 65534);
    chmodSync(home, 0o500);
    const outcome = await doctor(NO_SANDBOX, { ...around(home), ...(asRoot ? { uid: 65534, gid: 65534 } : {}) });
    expect(outcome.get('rho_home')).toMatchObject({
      status: 'fail',
      detail: `${home} is not writable: permission denied (EACCES)`,
      fix: `chmod u+rwx ${home}`,
    });
    expect(outcome.code).toBe(1);
  });
});

describe.runIf(bwrapWorks)('rho doctor: disk space (a small tmpfs as $RHO_HOME, in bubblewrap)', () => {
  /** rho doctor --json with $RHO_HOME on a tmpfs of `bytes`. */
  const onTmpfs = (bytes: number) => {
    const home = join(scratch(), 'home');
    mkdirSync(home);
    return new Promise<Check>((resolve, reject) => {
      const child = spawn(
        'bwrap',
        [
          '--dev-bind',
          '/',
          '/',
          '--size',
          String(bytes),
          '--tmpfs',
          home,
          '--',
          process.execPath,
          bin,
          'doctor',
          '--json',
          ...NO_SANDBOX,
        ],
        {
          env: { PATH: process.env.PATH, HOME: dirname(home), RHO_HOME: home, OPENAI_API_KEY: KEY },
          cwd: dirname(home),
        },
      );
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.on('error', reject);
      child.on('close', () => {
        try {
          resolve((JSON.parse(stdout) as Check[]).find((entry) => entry.check === 'disk')!);
        } catch (error) {
          reject(new Error(`no JSON: ${stdout} (${String(error)})`));
        }
      });
    });
  };

  it('fails below 100 MiB free and warns below 1 GiB, saying how much is free', async () => {
    expect(await onTmpfs(50 * 1024 ** 2)).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/^50 MiB free under .*below 100 MiB/),
    });
    expect(await onTmpfs(500 * 1024 ** 2)).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/^500 MiB free under .*below 1\.0 GiB/),
    });
    expect(await onTmpfs(2 * 1024 ** 3)).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/^2\.0 GiB free under /),
    });
  });
});
