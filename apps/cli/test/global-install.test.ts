import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sandboxWrapper } from '@rho/permissions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackServer } from '@rho/core/testing';
import { runnableShellBlocks } from '@rho/doc-blocks';
import { runInstalled, runInstalledTask } from './support/installed-rho.js';
import type { InstalledRun } from './support/installed-rho.js';

/**
 * What a user gets from `npm install -g` of the CLI's tarball, until the packages are on a
 * registry: `pnpm pack:all` into a new folder, the CLI installed globally from its one tarball
 * (into a temporary prefix, without install scripts, third-party packages from the npm registry),
 * and the installed `rho` run outside the workspace against a loopback model server: its tools,
 * the files the bundle carries (help, the dashboard's page, the data sets, WebAssembly grammars,
 * ripgrep, the sandbox server, the SQLite process), and a tool package that imports @rho/core
 * without installing it.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const packAll = join(root, 'scripts', 'pack-all.mjs');

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const npm = spawnSync('npm', ['--version'], { encoding: 'utf8' });
const npmAvailable = npm.status === 0;
const made: string[] = [];
const temporary = (prefix: string): string => {
  const directory = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  made.push(directory);
  return directory;
};
// A global install holds some 600 packages: removing them takes a while on a busy machine.
afterAll(() => {
  for (const directory of made) rmSync(directory, { recursive: true, force: true });
}, 300_000);

const packDir = temporary('rho-pack-all-');
let packOutput = '';
beforeAll(() => {
  const packed = spawnSync(process.execPath, [packAll, '--no-build', '--out', packDir], {
    cwd: root,
    encoding: 'utf8',
  });
  if (packed.status !== 0) throw new Error(`pnpm pack:all failed:\n${packed.stderr}${packed.stdout}`);
  packOutput = packed.stdout;
}, 300_000);

/** The workspace's publishable packages (not private), by name. */
function publishable(): Map<string, Manifest> {
  const found = new Map<string, Manifest>();
  for (const group of ['packages', 'apps', 'examples', 'tooling']) {
    for (const entry of readdirSync(join(root, group), { withFileTypes: true })) {
      const file = join(root, group, entry.name, 'package.json');
      if (!entry.isDirectory() || !existsSync(file)) continue;
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as Manifest;
      if (manifest.private !== true) found.set(manifest.name, manifest);
    }
  }
  return found;
}

const tarballName = (name: string, version: string) => `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;
const cliVersion = () => publishable().get('@rho/cli')!.version;
const cliTarball = () => join(packDir, tarballName('@rho/cli', cliVersion()));

/** `node scripts/pack-all.mjs --check DIR`. */
function check(directory: string): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [packAll, '--check', directory], { encoding: 'utf8' });
}

describe('pnpm pack:all', () => {
  it('packs every publishable package into one folder, pinned to each other, and prints the two install commands', () => {
    const expected = [...publishable()].map(([name, manifest]) => tarballName(name, manifest.version)).sort();
    expect(readdirSync(packDir).sort()).toEqual(expected);
    expect(packOutput).toContain(`npm install -g --ignore-scripts ${cliTarball()}\n`);
    expect(packOutput).toMatch(
      new RegExp(
        `npm install --ignore-scripts ${join(packDir, 'rho-agent-')}[^ ]+\\.tgz ${join(packDir, 'rho-backend-sandbox-')}`,
      ),
    );
    expect(check(packDir).status).toBe(0);

    // The CLI's tarball is the bundle: no @rho dependency (but the optional peer), no dist/ or sources.
    const manifest = JSON.parse(
      execFileSync('tar', ['xzf', cliTarball(), '-O', 'package/package.json'], { encoding: 'utf8' }),
    ) as Manifest;
    expect(Object.keys(manifest.dependencies ?? {}).filter((name) => name.startsWith('@rho/'))).toEqual([]);
    expect(Object.keys(manifest.peerDependencies ?? {}).filter((name) => name.startsWith('@rho/'))).toEqual([
      '@rho/model-gguf',
    ]);
    expect(manifest.peerDependenciesMeta?.['@rho/model-gguf']?.optional).toBe(true);
    expect(manifest.bin?.rho?.replace(/^\.\//, '')).toBe('bundle/bin.js');
    const entries = execFileSync('tar', ['tzf', cliTarball()], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.replace(/^package\//, ''));
    for (const file of [
      'bundle/bin.js',
      'bundle/rho-core.js',
      'bundle/help-100.txt',
      'bundle/assets/index.html',
      'bundle/assets/app.js',
      'bundle/datasets/chinook/dev.json',
      'bundle/sqlite-child.js',
      'bundle/server/sandbox-server.js',
    ])
      expect(entries, file).toContain(file);
    expect(entries.filter((entry) => /^(dist|src)\//.test(entry) || entry.endsWith('externals.json'))).toEqual([]);
  });

  it('refuses, in one line naming the package, a folder that misses a @rho dependency or pins another version', () => {
    const partial = temporary('rho-pack-partial-');
    for (const file of readdirSync(packDir).filter((name) => !name.startsWith('rho-model-client-')))
      copyFileSync(join(packDir, file), join(partial, file));
    const missing = check(partial);
    expect(missing.status).toBe(1);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr).toMatch(
      /^pack:all: @rho\/core \(rho-core-[^)]+\.tgz\) depends on @rho\/model-client, which is missing from /,
    );

    // @rho/core repacked with a range instead of the exact version of @rho/model-client.
    const mismatched = temporary('rho-pack-mismatch-');
    for (const file of readdirSync(packDir)) copyFileSync(join(packDir, file), join(mismatched, file));
    const core = readdirSync(packDir).find((name) => name.startsWith('rho-core-'))!;
    const unpacked = temporary('rho-pack-unpacked-');
    execFileSync('tar', ['xzf', join(packDir, core), '-C', unpacked]);
    const manifestPath = join(unpacked, 'package', 'package.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
    manifest.dependencies!['@rho/model-client'] = `^${manifest.version}`;
    writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
    execFileSync('tar', ['czf', join(mismatched, core), '-C', unpacked, 'package']);
    const pinned = check(mismatched);
    expect(pinned.status).toBe(1);
    expect(pinned.stderr.trim().split('\n')).toHaveLength(1);
    expect(pinned.stderr).toContain(
      `pack:all: @rho/core (${core}) pins @rho/model-client to "^${manifest.version}" in dependencies, not to ${manifest.version}`,
    );
  });
});

describe('the CLI installed globally from its tarball', () => {
  let prefix = '';
  let installed = '';
  /** A PATH with `node` alone: `rho` finds it (its shebang), and no `rg` of the system's. */
  let nodeOnlyPath = '';

  beforeAll(() => {
    if (!npmAvailable) {
      if (process.env.CI === 'true')
        throw new Error(
          `CI must run the global-install test, but npm is not available: ${npm.error?.message ?? npm.stderr}`,
        );
      return;
    }
    prefix = temporary('rho-global-');
    nodeOnlyPath = temporary('rho-global-path-');
    symlinkSync(process.execPath, join(nodeOnlyPath, 'node'));
    // Only the CLI's tarball: npm must find every other package in the registry. No install
    // scripts, as in the packed-install test (they fetch binaries from outside the npm registry).
    const install = spawnSync(
      'npm',
      [
        'install',
        '--global',
        '--prefix',
        prefix,
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        cliTarball(),
      ],
      { encoding: 'utf8', env: { ...process.env, npm_config_nodedir: undefined } },
    );
    if (install.status !== 0) throw new Error(`npm install -g failed:\n${install.stderr}${install.stdout}`);
    installed = join(prefix, 'lib', 'node_modules', '@rho', 'cli');
  }, 600_000);

  const skipWithoutNpm = (context: { skip: (note?: string) => void }) => {
    if (!npmAvailable) context.skip('npm is not available here');
  };
  /** A new working folder outside the workspace, with a RHO_HOME of its own; `path` defaults to node alone. */
  function where(path = nodeOnlyPath): InstalledRun {
    const work = temporary('rho-global-work-');
    mkdirSync(join(work, 'home'));
    return { bin: join(prefix, 'bin', 'rho'), cwd: work, home: join(work, 'home'), path };
  }
  /** The system's folders too, for what runs programs (bubblewrap, the shell's allowlist). */
  const systemPath = () => [nodeOnlyPath, '/usr/local/bin', '/usr/bin', '/bin'].join(delimiter);

  it('installs @rho/cli alone, with the bundle as its bin, and answers --version and --help', async (context) => {
    skipWithoutNpm(context);
    expect(readdirSync(join(prefix, 'lib', 'node_modules', '@rho'))).toEqual(['cli']);
    expect(existsSync(join(installed, 'node_modules', '@rho'))).toBe(false);
    expect(realpathSync(join(prefix, 'bin', 'rho'))).toBe(join(installed, 'bundle', 'bin.js'));
    const run = where();
    const version = await runInstalled(['--version'], run);
    expect(version).toMatchObject({ code: 0, stdout: `${cliVersion()}\n`, stderr: '' });
    const help = await runInstalled(['--help'], run);
    expect(help.code).toBe(0);
    expect(help.stdout).toBe(readFileSync(join(root, 'apps', 'cli', 'dist', 'help-100.txt'), 'utf8'));
  });

  it('runs a task with its tools: read, grep through the packaged ripgrep, and sqlite through its own process', async (context) => {
    skipWithoutNpm(context);
    const run = where();
    writeFileSync(join(run.cwd, 'notes.txt'), 'alpha\nthe needle is here\n');
    // The Chinook database the bundle carries for `rho eval sql`.
    copyFileSync(
      join(installed, 'bundle', 'datasets', 'chinook', 'dev_databases', 'chinook', 'chinook.sqlite'),
      join(run.cwd, 'chinook.sqlite'),
    );
    writeFileSync(
      join(run.cwd, 'databases.yaml'),
      'databases:\n  music:\n    type: sqlite\n    path: ./chinook.sqlite\n',
    );
    // With --ignore-scripts, @vscode/ripgrep's binary still comes from its platform package on the registry.
    const rgPath = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', "process.stdout.write((await import('@vscode/ripgrep')).rgPath)"],
      {
        cwd: installed,
        encoding: 'utf8',
      },
    );
    expect(rgPath.startsWith(join(installed, 'node_modules'))).toBe(true);
    const outcome = await runInstalledTask(
      [
        {
          type: 'response',
          toolCalls: [
            { name: 'read', arguments: '{"path": "notes.txt"}' },
            { name: 'grep', arguments: '{"pattern": "needle"}' },
            {
              name: 'sqlite',
              arguments: '{"database": "music", "operation": "query", "sql": "SELECT COUNT(*) AS artists FROM Artist"}',
            },
          ],
        },
        { type: 'response', text: 'Found the needle.' },
      ],
      ['-y', '--db-config', 'databases.yaml', 'Find the needle.'],
      run,
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout.trim()).toBe('Found the needle.');
    expect(outcome.results[0]).toContain('the needle is here');
    expect(outcome.results[1]).toContain(`${join(run.cwd, 'notes.txt')}:2:the needle is here`);
    // Node 24 has node:sqlite; Node 22 needs better-sqlite3 (an optional peer, not installed): the
    // SQLite process started from the bundle either way, and says so.
    if (Number(process.versions.node.split('.')[0]) >= 24) expect(outcome.results[2]).toContain('275');
    else
      expect(outcome.results[2]).toContain(
        'The SQLite driver is not installed: add it with `npm install better-sqlite3`',
      );
  });

  it('runs the shell in the sandbox backend, through the server the bundle carries', async (context) => {
    skipWithoutNpm(context);
    if (!(await sandboxWrapper()).available) {
      if (process.env.CI === 'true')
        throw new Error('CI must run the sandbox backend of the installed CLI (bubblewrap)');
      context.skip('bubblewrap is not available here');
    }
    const run = where(systemPath());
    writeFileSync(join(run.cwd, 'notes.txt'), 'inside the sandbox\n');
    const outcome = await runInstalledTask(
      [
        { type: 'response', toolCalls: [{ name: 'bash', arguments: '{"command": "cat notes.txt"}' }] },
        { type: 'response', text: 'Done.' },
      ],
      ['-y', '--backend', 'sandbox', 'Show notes.txt.'],
      run,
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.results[0]).toContain('inside the sandbox');
  });

  it('gives a tool package outside the workspace its own @rho/core, without installing it', async (context) => {
    skipWithoutNpm(context);
    const run = where();
    const tools = temporary('rho-global-tools-');
    copyFileSync(join(root, 'apps', 'cli', 'test', 'support', 'core-probe-tools.mjs'), join(tools, 'probe.mjs'));
    const outcome = await runInstalledTask(
      [
        {
          type: 'response',
          toolCalls: [
            { name: 'core_probe', arguments: '{}' },
            { name: 'core_refuse', arguments: '{}' },
          ],
        },
        { type: 'response', text: 'Probed.' },
      ],
      ['--tool-package', join(tools, 'probe.mjs'), 'Probe.'],
      run,
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    // The CLI's own copy, shared with the rest of the bundle: a Session the CLI made is an instance of the package's Session.
    expect(JSON.parse(outcome.results[0]!)).toEqual({
      core: `file://${join(installed, 'bundle', 'rho-core.js')}`,
      session: true,
      state: true,
      error: true,
    });
    expect(outcome.results[1]).toBe("Tool 'core_refuse' failed: ConfigError: the probe refuses\nArguments: {}");

    // A syntax error, in a module the package's entry imports: one line naming that file and line.
    writeFileSync(join(tools, 'broken.mjs'), "import { inner } from './inner.mjs';\nexport default inner;\n");
    writeFileSync(
      join(tools, 'inner.mjs'),
      "import { defineTool } from '@rho/core';\nexport const inner = defineTool({\n  name: 'x',,\n});\n",
    );
    const broken = await runInstalledTask(
      [{ type: 'response', text: 'never' }],
      ['--tool-package', join(tools, 'broken.mjs'), 'x'],
      run,
    );
    expect(broken.code).toBe(2);
    expect(broken.requests).toBe(0);
    expect(broken.stderr).toBe(
      `rho: Tool package ${join(tools, 'broken.mjs')} (--tool-package) failed to load: a syntax error in ${join(tools, 'inner.mjs')}:3: Unexpected token ','\n`,
    );
  });

  it('reads its data files from the installed package: WebAssembly grammars for policy checks, the dashboard page', async (context) => {
    skipWithoutNpm(context);
    const run = where();
    // The commands come from tree-sitter-bash's grammar, parsed by web-tree-sitter (both WebAssembly).
    const shell = await runInstalled(['policy', 'check', '--shell', 'ls -la | grep x'], run);
    expect(shell.stdout, shell.stderr).toMatch(/\ncommands:\n {2}ls -la\n {2}grep x\n/);
    const sql = await runInstalled(
      ['policy', 'check', '--dialect', 'postgres', '--sql', 'select 1; drop table t'],
      run,
    );
    // libpg-query's parser (WebAssembly) counted two statements.
    expect(sql.code).toBe(1);
    expect(sql.stdout).toContain('rule:     sql.stacked-statements');

    const dashboard = spawn(run.bin, ['dashboard', '--port', '0'], {
      cwd: run.cwd,
      env: { PATH: run.path, HOME: run.home, RHO_HOME: run.home, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<URL>((resolve, reject) => {
        let printed = '';
        dashboard.stdout.on('data', (chunk: Buffer) => {
          printed += chunk.toString();
          const found = /http:\/\/\S+\?token=\S+/.exec(printed);
          if (found !== null) resolve(new URL(found[0]));
        });
        dashboard.on('close', (code) => reject(new Error(`rho dashboard exited ${code}: ${printed}`)));
      });
      const headers = { authorization: `Bearer ${url.searchParams.get('token')}` };
      const page = await fetch(new URL('/', url), { headers });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('/assets/app.js');
      const script = await fetch(new URL('/assets/app.js', url), { headers });
      expect(script.status).toBe(200);
      expect(
        Buffer.from(await script.arrayBuffer()).equals(readFileSync(join(installed, 'bundle', 'assets', 'app.js'))),
      ).toBe(true);
    } finally {
      dashboard.kill();
    }
  });

  it('runs every shell block of the README and docs/ marked <!-- run -->, in reading order, in one project', async (context) => {
    skipWithoutNpm(context);
    const blocks = runnableShellBlocks(root);
    expect(blocks.map((block) => block.file)).toEqual(
      expect.arrayContaining(['README.md', 'docs/settings.md', 'docs/user-guide.md']),
    );
    // The project the blocks speak of, as a reader has it: an agent config, sources, ~/project;
    // `rho` on PATH from the global install, the model a loopback server that answers every task.
    const run = where(systemPath());
    writeFileSync(join(run.cwd, 'agent.yaml'), 'profile: readonly\n');
    mkdirSync(join(run.cwd, 'src'));
    writeFileSync(join(run.cwd, 'src', 'app.ts'), '// TODO: handle errors\nexport const answer = 42;\n');
    mkdirSync(join(run.home, 'project'));
    const server = await startLoopbackServer({
      respond: () => ({ type: 'response', text: 'Done.' }),
      models: [{ id: 'gpt-5-mini' }],
    });
    try {
      for (const block of blocks) {
        const outcome = await runShellBlock(block.code, {
          cwd: run.cwd,
          env: {
            PATH: [join(prefix, 'bin'), run.path].join(delimiter),
            HOME: run.home,
            NO_COLOR: '1',
            OPENAI_BASE_URL: server.url,
            OPENAI_API_KEY: 'sk-snippet',
          },
        });
        expect(outcome.code, `${block.file}:${block.line} exited ${outcome.code}:\n${outcome.stderr}`).toBe(0);
      }
    } finally {
      await server.close();
    }
    // The blocks ran tasks: the README's first one made a session, and its resume continued it.
    expect(server.requests.length).toBeGreaterThanOrEqual(2);
  });
});

/** Runs a documentation block as `bash -e -o pipefail`: every command of it must succeed. */
function runShellBlock(
  code: string,
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', code], {
      ...options,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (exit) => {
      clearTimeout(timer);
      resolve({ code: exit, stdout, stderr });
    });
  });
}
