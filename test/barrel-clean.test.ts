/**
 * Importing a package's public entry loads nothing heavy: database drivers, exceljs, the openai
 * SDK, the SQL and shell parsers, ripgrep and llama.cpp load the first time a tool or a model
 * call needs them (modelcontextprotocol/typescript-sdk's `barrelClean.test.ts` does the same).
 * Every entry of every `packages/*` package's `exports` map is imported, as a user would import it,
 * in a fresh Node process whose module hook records every URL resolved. The per-package tests
 * (core's lazy-imports, tools-db's index, tools-fs's lazy-loading, permissions' check-sql) show
 * that a dependency does load once a tool uses it; this one sweeps every entry, including those
 * added later (`@rho/<name>/internal`, new packages), without a line to add.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));

/** Packages that only a tool or a model call may load. */
const HEAVY = [
  'openai',
  'better-sqlite3',
  'postgres',
  'mysql2',
  'oracledb',
  'vertica-nodejs',
  'exceljs',
  'web-tree-sitter',
  'tree-sitter-bash',
  'libpg-query',
  'node-sql-parser',
  'node-llama-cpp',
  '@vscode/ripgrep',
  '@modelcontextprotocol/sdk',
  'pg',
  'pg-boss',
  // Read or written on first use of a YAML file (a profile, an agent or database config); a
  // session's config.yaml is written without it (core's internal/yaml-emit).
  'yaml',
  // @rho/backend-daytona: the Daytona SDK and its generated clients load when a sandbox is created.
  '@daytonaio/sdk',
  '@daytona/api-client',
  '@daytona/toolbox-api-client',
];

interface Entry {
  /** What a user writes: `@rho/core`, `@rho/core/testing`. */
  specifier: string;
  /** The package's directory: the import runs from there, so the name resolves to the package itself. */
  directory: string;
  /** The built file the entry points to. */
  file: string;
}

function publicEntries(): Entry[] {
  const entries: Entry[] = [];
  for (const name of readdirSync(join(root, 'packages')).sort()) {
    const directory = join(root, 'packages', name);
    const manifestPath = join(directory, 'package.json');
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
      name: string;
      exports?: Record<string, { import?: string } | string>;
    };
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      if (subpath.endsWith('package.json')) continue;
      const file = typeof target === 'string' ? target : target.import;
      if (file === undefined) continue;
      const specifier = subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`;
      entries.push({ specifier, directory, file: join(directory, file) });
    }
  }
  return entries;
}

// The hook runs on Node's loader thread and reports each resolved URL over a port; the main
// thread imports a marker last and waits for its report, so every earlier report has arrived.
const hooks = `let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  port.postMessage(result.url);
  return result;
}`;

function script(specifier: string): string {
  return `import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
const { port1, port2 } = new MessageChannel();
const seen = [];
port1.on('message', (url) => seen.push(url));
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)}, { data: { port: port2 }, transferList: [port2] });
await import(${JSON.stringify(specifier)});
const marker = 'data:text/javascript,export default 1';
const markerSeen = new Promise((resolve) => port1.on('message', (url) => { if (url === marker) resolve(); }));
await import(marker);
await markerSeen;
port1.close();
process.stdout.write(JSON.stringify(seen.filter((url) => url !== marker)));`;
}

/** The npm packages whose files were resolved while `specifier` was imported from `directory`. */
async function loadedPackages(directory: string, specifier: string): Promise<string[]> {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script(specifier)], { cwd: directory });
  const names = new Set<string>();
  for (const url of JSON.parse(stdout) as string[]) {
    const at = url.lastIndexOf('/node_modules/');
    if (at === -1) continue;
    const [scopeOrName, scoped] = url.slice(at + '/node_modules/'.length).split('/');
    if (scopeOrName === undefined) continue;
    names.add(scopeOrName.startsWith('@') ? `${scopeOrName}/${scoped}` : scopeOrName);
  }
  return [...names].sort();
}

const entries = publicEntries();
const unbuilt = entries.filter((entry) => !existsSync(entry.file));

describe('importing a public entry loads nothing heavy', () => {
  it('finds the entries of the packages (a build exists)', () => {
    expect(entries.map((entry) => entry.specifier)).toEqual(
      expect.arrayContaining([
        '@rho/core',
        '@rho/core/internal',
        '@rho/core/testing',
        '@rho/model-client',
        '@rho/permissions/internal',
        '@rho/tools-db',
        '@rho/tools-db/internal',
        '@rho/tools-fs',
      ]),
    );
    expect(
      unbuilt.map((entry) => entry.file),
      'run `pnpm build` first',
    ).toEqual([]);
  });

  it('builds every internal entry from src/internal/index.ts, types first', () => {
    const internal = entries.filter((entry) => entry.specifier.endsWith('/internal'));
    expect(internal.length).toBeGreaterThanOrEqual(3);
    for (const entry of internal) {
      const manifest = JSON.parse(readFileSync(join(entry.directory, 'package.json'), 'utf8')) as {
        exports: Record<string, Record<string, string>>;
      };
      expect(Object.entries(manifest.exports['./internal']!), entry.specifier).toEqual([
        ['types', './dist/internal/index.d.ts'],
        ['import', './dist/internal/index.js'],
      ]);
      expect(existsSync(join(entry.directory, 'src', 'internal', 'index.ts')), entry.specifier).toBe(true);
    }
  });

  it('sees a heavy package when one is imported (the check can fail)', async () => {
    const toolsFs = entries.find((entry) => entry.specifier === '@rho/tools-fs');
    expect(toolsFs).toBeDefined();
    const loaded = await loadedPackages(toolsFs!.directory, 'exceljs');
    expect(loaded).toContain('exceljs');
  });

  for (const entry of entries) {
    it.runIf(existsSync(entry.file))(entry.specifier, async () => {
      const loaded = await loadedPackages(entry.directory, entry.specifier);
      expect(loaded.filter((name) => HEAVY.includes(name))).toEqual([]);
    });
  }
});
