import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLoopbackServer } from '@rho/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * What a user gets from the registry: every workspace package packed (`pnpm pack`, which turns
 * `workspace:` and `catalog:` into versions), and the `@rho/core` set installed with npm into a
 * new app outside the repository, where examples/embed runs against a loopback model server.
 * Third-party dependencies come from the npm registry; @rho packages only from the tarballs.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const workspaceDirs = ['packages', 'apps', 'examples'].flatMap((group) =>
  readdirSync(join(root, group), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, group, entry.name, 'package.json')))
    .map((entry) => join(root, group, entry.name)),
);

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  files?: string[];
  publishConfig?: Record<string, unknown>;
  exports?: Record<string, unknown>;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

interface Packed {
  directory: string;
  manifest: Manifest;
  tarball: string;
  entries: string[];
}

const npm = spawnSync('npm', ['--version'], { encoding: 'utf8' });
const npmAvailable = npm.status === 0;
const packDir = mkdtempSync(join(tmpdir(), 'rho-pack-'));
const packed = new Map<string, Packed>();
/** Temporary folders (the app holds a whole node_modules), removed at the end. */
const made: string[] = [packDir];
afterAll(() => {
  for (const directory of made) rmSync(directory, { recursive: true, force: true });
});

beforeAll(() => {
  for (const directory of workspaceDirs) {
    const source = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as Manifest;
    const output = execFileSync('pnpm', ['pack', '--pack-destination', packDir, '--json'], {
      cwd: directory,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tarball = (JSON.parse(output.slice(output.indexOf('{'))) as { filename: string }).filename;
    const entries = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.replace(/^package\//, ''));
    const manifest = JSON.parse(
      execFileSync('tar', ['xzf', tarball, '-O', 'package/package.json'], { encoding: 'utf8' }),
    ) as Manifest;
    packed.set(source.name, { directory, manifest, tarball, entries });
  }
}, 120_000);

/** Every file an `exports`/`bin` map points to. */
function targets(manifest: Manifest): string[] {
  const found: string[] = [];
  const walk = (value: unknown) => {
    if (typeof value === 'string') found.push(value.replace(/^\.\//, ''));
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(manifest.exports);
  walk(manifest.bin);
  return found;
}

describe('packed packages', () => {
  it('every package packs with a README, its entry points, no tests and no workspace protocols', () => {
    expect(packed.size).toBe(workspaceDirs.length);
    for (const [name, { manifest, entries }] of packed) {
      const where = `${name} (${relative(root, packed.get(name)!.directory)})`;
      expect(entries, `${where}: README.md`).toContain('README.md');
      expect(manifest.files, `${where}: files`).toBeDefined();
      expect(manifest.version, `${where}: version`).toMatch(/^\d+\.\d+\.\d+/);
      if (manifest.private !== true)
        expect(manifest.publishConfig, `${where}: publishConfig`).toMatchObject({ access: 'public' });
      for (const target of targets(manifest)) expect(entries, `${where}: ${target}`).toContain(target);
      expect(
        entries.filter((entry) => /\.test\.[cm]?[jt]s$/.test(entry) || entry.startsWith('src/')),
        `${where}: tests or sources`,
      ).toEqual([]);
      const ranges = JSON.stringify([manifest.dependencies, manifest.peerDependencies, manifest.optionalDependencies]);
      expect(ranges, `${where}: protocols`).not.toMatch(/workspace:|catalog:/);
    }
  });

  it('installs the @rho/core set with npm into a new app outside the workspace and runs examples/embed there', async (context) => {
    if (!npmAvailable) {
      if (process.env.CI === 'true')
        throw new Error(
          `CI must run the packed-install test, but npm is not available: ${npm.error?.message ?? npm.stderr}`,
        );
      context.skip('npm is not available here');
    }
    const app = realpathSync(mkdtempSync(join(tmpdir(), 'rho-packed-app-')));
    made.push(app);
    const tarball = (name: string) => `file:${packed.get(name)!.tarball}`;
    // Only these four come from the pack; npm must find everything else in the registry.
    const local = ['@rho/core', '@rho/model-client', 'rho-example-word-count', 'rho-example-embed'];
    writeFileSync(
      join(app, 'package.json'),
      `${JSON.stringify({ name: 'rho-packed-app', private: true, type: 'module', dependencies: Object.fromEntries(local.map((name) => [name, tarball(name)])) }, null, 2)}\n`,
    );
    const install = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: app,
      encoding: 'utf8',
      env: { ...process.env, npm_config_nodedir: undefined },
    });
    expect(install.stderr + install.stdout, 'npm install').not.toMatch(/ERR!/);
    expect(install.status).toBe(0);

    // The @rho set is core and what core depends on, nothing else.
    expect(readdirSync(join(app, 'node_modules', '@rho')).sort()).toEqual(['core', 'model-client']);
    const version = (name: string) =>
      (JSON.parse(readFileSync(join(app, 'node_modules', ...name.split('/'), 'package.json'), 'utf8')) as Manifest)
        .version;
    expect(version('@rho/core')).toBe(packed.get('@rho/core')!.manifest.version);
    // The app's code resolves @rho/core inside the app, not in this repository.
    const resolved = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', "process.stdout.write(import.meta.resolve('@rho/core'))"],
      { cwd: app, encoding: 'utf8' },
    );
    expect(fileURLToPath(resolved)).toBe(join(app, 'node_modules', '@rho', 'core', 'dist', 'index.js'));
    const testingFixtures = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const { pythonTracesDir } = await import('@rho/core/testing'); const { readdirSync } = await import('node:fs'); process.stdout.write(String(readdirSync(pythonTracesDir).length))",
      ],
      { cwd: app, encoding: 'utf8' },
    );
    expect(Number(testingFixtures)).toBeGreaterThan(0);

    const workingDir = mkdtempSync(join(tmpdir(), 'rho-packed-work-'));
    made.push(workingDir);
    mkdirSync(join(workingDir, 'docs'));
    writeFileSync(join(workingDir, 'docs', 'notes.md'), 'alpha beta\ngamma\ndelta epsilon zeta\n');
    const server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'word_count', arguments: '{"path": "docs/notes.md"}' }] },
        { type: 'response', text: 'docs/notes.md has 6 words.' },
      ],
    });
    try {
      const main = join(app, 'node_modules', 'rho-example-embed', 'dist', 'main.js');
      const output = await runApp(main, 'How many words are in docs/notes.md?', workingDir, server.url);
      expect(output.stderr).toBe('');
      expect(output.code).toBe(0);
      expect(output.stdout.trim()).toBe('docs/notes.md has 6 words.');
      const second = server.requests[1]!.body as {
        messages: { role: string; content: string }[];
        tools: { function: { name: string } }[];
      };
      expect(second.tools.map((tool) => tool.function.name)).toEqual(['word_count']);
      expect(second.messages.at(-1)).toMatchObject({
        role: 'tool',
        content: `3 lines, 6 words, 36 bytes: ${join(workingDir, 'docs', 'notes.md')}`,
      });
    } finally {
      await server.close();
    }
  }, 600_000);

  it('installs @rho/agent with npm into a new app outside the workspace and runs a profile-built agent there (examples/embed-agent)', async (context) => {
    if (!npmAvailable) {
      if (process.env.CI === 'true')
        throw new Error(
          `CI must run the packed-install test, but npm is not available: ${npm.error?.message ?? npm.stderr}`,
        );
      context.skip('npm is not available here');
    }
    const app = realpathSync(mkdtempSync(join(tmpdir(), 'rho-packed-agent-app-')));
    made.push(app);
    const tarball = (name: string) => `file:${packed.get(name)!.tarball}`;
    // The app names @rho/agent alone; the @rho packages it depends on are not in the registry, so
    // npm takes them from the tarballs through overrides, like a registry install would resolve them.
    const rho = [
      '@rho/agent',
      '@rho/backend-sandbox',
      '@rho/core',
      '@rho/model-client',
      '@rho/permissions',
      '@rho/tools-fs',
      '@rho/tools-db',
      '@rho/tools-mcp',
    ];
    writeFileSync(
      join(app, 'package.json'),
      `${JSON.stringify({ name: 'rho-packed-agent-app', private: true, type: 'module', dependencies: { '@rho/agent': tarball('@rho/agent'), 'rho-example-embed-agent': tarball('rho-example-embed-agent') }, overrides: Object.fromEntries(rho.map((name) => [name, tarball(name)])) }, null, 2)}\n`,
    );
    // No install scripts: the ones in this tree fetch binaries from outside the npm registry
    // (@vscode/ripgrep) or build a native grammar rho does not load (tree-sitter-bash: rho uses its .wasm).
    const install = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--ignore-scripts'], {
      cwd: app,
      encoding: 'utf8',
      env: { ...process.env, npm_config_nodedir: undefined },
    });
    expect(install.stderr + install.stdout, 'npm install').not.toMatch(/ERR!/);
    expect(install.status, install.stderr).toBe(0);
    expect(readdirSync(join(app, 'node_modules', '@rho')).sort()).toEqual([
      'agent',
      'backend-sandbox',
      'core',
      'model-client',
      'permissions',
      'tools-db',
      'tools-fs',
      'tools-mcp',
    ]);
    const resolved = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', "process.stdout.write(import.meta.resolve('@rho/agent'))"],
      { cwd: app, encoding: 'utf8' },
    );
    expect(fileURLToPath(resolved)).toBe(join(app, 'node_modules', '@rho', 'agent', 'dist', 'index.js'));
    // Database drivers load only when a database tool runs: none was installed, and none is needed.
    expect(existsSync(join(app, 'node_modules', 'better-sqlite3'))).toBe(false);

    const workingDir = mkdtempSync(join(tmpdir(), 'rho-packed-agent-work-'));
    made.push(workingDir);
    writeFileSync(join(workingDir, 'Makefile'), 'clean:\n\trm -rf dist\n');
    const server = await startLoopbackServer({
      steps: [
        {
          type: 'response',
          toolCalls: [
            {
              name: 'edit',
              arguments: JSON.stringify({
                path: 'Makefile',
                old_string: 'rm -rf dist',
                new_string: 'rm -rf dist build',
              }),
            },
          ],
        },
        {
          type: 'response',
          toolCalls: [
            {
              name: 'write',
              arguments: JSON.stringify({ path: 'NOTES.md', content: 'make clean removes build too\n' }),
            },
          ],
        },
        { type: 'response', text: 'Done.' },
      ],
    });
    try {
      const main = join(app, 'node_modules', 'rho-example-embed-agent', 'dist', 'main.js');
      const output = await runApp(main, 'Make clean remove build too, and note it.', workingDir, server.url, 'y\n');
      expect(output.code, output.stderr).toBe(0);
      expect(output.stdout.trim()).toBe('Done.');
      // The developer profile asked before the edit with a dangerous pattern, and not before the plain write.
      expect(
        output.stderr
          .split('\n')
          .filter((line) => line.startsWith('approve '))
          .map((line) => line.split(' ')[1]),
      ).toEqual(['edit']);
      expect(readFileSync(join(workingDir, 'Makefile'), 'utf8')).toBe('clean:\n\trm -rf dist build\n');
      expect(readFileSync(join(workingDir, 'NOTES.md'), 'utf8')).toBe('make clean removes build too\n');
      const first = server.requests[0]!.body as { tools: { function: { name: string } }[] };
      expect(first.tools.map((tool) => tool.function.name).sort()).toEqual([
        'bash',
        'delegate',
        'edit',
        'glob',
        'grep',
        'list',
        'read',
        'read_excel',
        'write',
      ]);
    } finally {
      await server.close();
    }
  }, 600_000);
});

/** Runs a packed app's `main` on a task against the model at `baseUrl`, with `input` on stdin. */
function runApp(
  main: string,
  task: string,
  workingDir: string,
  baseUrl: string,
  input = '',
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [main, task], {
      cwd: workingDir,
      env: { PATH: process.env.PATH, OPENAI_BASE_URL: baseUrl },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}
