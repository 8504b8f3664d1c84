import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const built = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const DRIVERS = ['better-sqlite3', 'node:sqlite', 'postgres', 'mysql2', 'oracledb', 'vertica-nodejs'];

// A child process records every module it resolves (through a module hook), imports the
// package, builds the tools, and reports which driver packages were loaded.
async function loadedPackages(script: string): Promise<string[]> {
  const directory = await mkdtemp(join(tmpdir(), 'rho-lazy-'));
  const hooks = join(directory, 'hooks.mjs');
  await writeFile(
    hooks,
    `let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  port.postMessage(result.url);
  return result;
}`,
  );
  const main = join(directory, 'main.mjs');
  await writeFile(
    main,
    `import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
const { port1, port2 } = new MessageChannel();
const seen = [];
port1.on('message', (url) => seen.push(url));
port1.unref();
register(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { port: port2 }, transferList: [port2] });
const tools = await import(${JSON.stringify(pathToFileURL(built).href)});
${script}
// The hook's messages arrive asynchronously: import a sentinel last and wait for its message,
// which the port delivers after every earlier one.
const sentinel = 'data:text/javascript,export{}';
const flushed = new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error('the module hook never reported the sentinel import')), 10000);
  port1.on('message', (url) => {
    if (url === sentinel) {
      clearTimeout(timer);
      resolve();
    }
  });
});
await import(sentinel);
await flushed;
process.stdout.write(JSON.stringify(seen));`,
  );
  const { stdout } = await run(process.execPath, [main], { cwd: directory });
  const urls = JSON.parse(stdout) as string[];
  return DRIVERS.filter((name) =>
    urls.some((url) => url === name || url.includes(`/node_modules/${name}/`) || url.includes(`/${name}@`)),
  );
}

describe.runIf(existsSync(built))('import @rho/tools-db', () => {
  it('loads no database driver, even when the tools are built', async () => {
    const loaded = await loadedPackages(`
const { dbTools } = tools;
const profile = { name: 'readonly', database: 'readonly', fileWrite: 'off', approval: 'none', requiredTools: [], dangerousPatterns: [] };
const made = dbTools({ profile, databases: [
  { alias: 'a', type: 'postgres', database: 'x', statementTimeoutSeconds: 1 },
  { alias: 'b', type: 'mysql', database: 'x', statementTimeoutSeconds: 1 },
  { alias: 'c', type: 'oracle', dsn: 'h/s', statementTimeoutSeconds: 1 },
  { alias: 'd', type: 'vertica', database: 'x', statementTimeoutSeconds: 1 },
  { alias: 'e', type: 'sqlite', path: '/nonexistent', statementTimeoutSeconds: 1 },
] });
if (made.length !== 5) throw new Error('expected five tools');`);
    expect(loaded).toEqual([]);
  });

  it('the hook does see a driver once a tool uses it (the check can fail)', async () => {
    const loaded = await loadedPackages(`
const { dbTools } = tools;
const profile = { name: 'readonly', database: 'readonly', fileWrite: 'off', approval: 'none', requiredTools: [], dangerousPatterns: [] };
const [tool] = dbTools({ profile, databases: [{ alias: 'p', type: 'postgres', host: '127.0.0.1', port: 1, database: 'x', statementTimeoutSeconds: 1 }] });
await tool.handle({ callId: '1', toolName: 'postgres', arguments: { operation: 'list_tables' } }, { signal: new AbortController().signal, sessionId: 's', workingDir: '.' });`);
    expect(loaded).toEqual(['postgres']);
  });
});

describe.runIf(!existsSync(built))('import @rho/tools-db (needs a build)', () => {
  it('fails until the package is built', () => {
    throw new Error('dist/index.js is missing: run `pnpm turbo run build --filter=@rho/tools-db` first');
  });
});
