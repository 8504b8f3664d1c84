import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLoopbackServer } from '@rho/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentationSnippets } from '@rho/doc-blocks';

/**
 * Issue 36: the documentation's code runs as a user would paste it. Every fenced TypeScript or
 * JavaScript block of README.md and docs/ (unless an HTML comment `<!-- not run: why -->` stands
 * right before it) is written to a file of an app made with `npm init` outside the workspace,
 * where the @rho packages come from `pnpm pack` tarballs only (third-party dependencies from the
 * npm registry), and run with node against a loopback model server: it must exit 0.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const npm = spawnSync('npm', ['--version'], { encoding: 'utf8' });
const npmAvailable = npm.status === 0;
/** What the snippets may import: @rho/agent and @rho/core with everything they depend on. */
const PACKAGES = [
  'agent',
  'backend-sandbox',
  'core',
  'model-client',
  'permissions',
  'tools-db',
  'tools-fs',
  'tools-mcp',
  'hooks',
];
const made: string[] = [];
let app = '';

afterAll(() => {
  for (const directory of made) rmSync(directory, { recursive: true, force: true });
});

beforeAll(() => {
  if (!npmAvailable) return;
  const packDir = mkdtempSync(join(tmpdir(), 'rho-snippet-pack-'));
  made.push(packDir);
  const tarballs: Record<string, string> = {};
  for (const name of PACKAGES) {
    const output = execFileSync('pnpm', ['pack', '--pack-destination', packDir, '--json'], {
      cwd: join(root, 'packages', name),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    tarballs[`@rho/${name}`] =
      `file:${(JSON.parse(output.slice(output.indexOf('{'))) as { filename: string }).filename}`;
  }
  app = realpathSync(mkdtempSync(join(tmpdir(), 'rho-snippet-app-')));
  made.push(app);
  execFileSync('npm', ['init', '-y'], { cwd: app, stdio: 'ignore' });
  const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(
    join(app, 'package.json'),
    `${JSON.stringify({ ...manifest, type: 'module', dependencies: { '@rho/agent': tarballs['@rho/agent'], '@rho/core': tarballs['@rho/core'], '@rho/hooks': tarballs['@rho/hooks'] }, overrides: tarballs }, null, 2)}\n`,
  );
  // No install scripts: ripgrep's fetches from outside the npm registry, and tree-sitter-bash
  // builds a native grammar rho does not load (it uses the .wasm).
  const install = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--ignore-scripts'], {
    cwd: app,
    encoding: 'utf8',
    env: { ...process.env, npm_config_nodedir: undefined },
  });
  if (install.status !== 0) throw new Error(`npm install failed in the snippet app: ${install.stderr}`);
}, 600_000);

describe('the documentation snippets', () => {
  const snippets = documentationSnippets(root);

  it('finds the snippets, and every one that is not run says why', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(3);
    for (const snippet of snippets)
      if (!snippet.run) expect(snippet.reason, `${snippet.file}:${snippet.line}`).toMatch(/\S{3,}/);
  });

  it('runs every snippet in an app outside the workspace, against the packed packages', async (context) => {
    if (!npmAvailable) {
      if (process.env.CI === 'true') throw new Error(`CI must run the snippet test, but npm is not available`);
      context.skip('npm is not available here');
    }
    expect(readdirSync(join(app, 'node_modules', '@rho')).sort()).toEqual([...PACKAGES].sort());
    // The files the snippets name, as a user's project would have them: an (empty) SQLite database.
    writeFileSync(join(app, 'shop.sqlite'), '');
    for (const [index, snippet] of snippets.entries()) {
      if (!snippet.run) continue;
      const where = `${snippet.file}:${snippet.line}`;
      const file = join(app, `snippet-${index}.${snippet.language === 'ts' ? 'ts' : 'mjs'}`);
      writeFileSync(file, snippet.code);
      const server = await startLoopbackServer({
        steps: Array.from({ length: 6 }, () => ({ type: 'response' as const, text: 'HELLO.' })),
      });
      try {
        const outcome = await runNode(file, app, server.url);
        expect(outcome.code, `${where} exited ${outcome.code}: ${outcome.stderr}`).toBe(0);
      } finally {
        await server.close();
      }
    }
    // The library snippet's session folder did not exist: createSession made it.
    expect(existsSync(join(app, 'my-session', 'trace.jsonl'))).toBe(true);
  }, 600_000);
});

function runNode(
  file: string,
  cwd: string,
  baseUrl: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--experimental-strip-types', '--no-warnings', file], {
      cwd,
      env: { PATH: process.env.PATH, HOME: cwd, RHO_HOME: join(cwd, '.rho'), OPENAI_BASE_URL: baseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
