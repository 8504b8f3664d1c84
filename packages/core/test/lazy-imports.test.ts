import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const built = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const builtInternal = fileURLToPath(new URL('../dist/internal/index.js', import.meta.url));

// A child process records every module URL it resolves (through a module hook) while it runs `script`.
async function resolvedUrls(script: string): Promise<string[]> {
  const directory = await mkdtemp(join(tmpdir(), 'rho-lazy-core-'));
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
const core = await import(${JSON.stringify(pathToFileURL(built).href)});
${script}
// The hook's messages arrive in order: once a last, marker import is seen, every earlier one is.
const marker = 'data:text/javascript,export default 1';
const markerSeen = new Promise((resolve) => port1.on('message', (url) => { if (url === marker) resolve(); }));
// The port is unref'd: hold the process open until the marker arrives.
port1.ref();
await import(marker);
await markerSeen;
port1.unref();
process.stdout.write(JSON.stringify(seen.filter((url) => url !== marker)));`,
  );
  const { stdout } = await run(process.execPath, [main], { cwd: directory });
  return JSON.parse(stdout) as string[];
}

const loadsOpenAI = (urls: string[]) => urls.some((url) => /\/node_modules\/openai\//.test(url));

describe('import @rho/core', () => {
  it('does not load the openai SDK until a model request is made', async () => {
    const idle = await resolvedUrls(
      `const agent = new core.Agent({ clientOptions: { apiKey: 'x', baseURL: 'http://127.0.0.1:9/v1' } }); agent.createClient();`,
    );
    expect(idle.some((url) => url.endsWith('/core/dist/index.js'))).toBe(true);
    expect(loadsOpenAI(idle)).toBe(false);
    const used =
      await resolvedUrls(`const client = core.createModelClient({ model: 'm', apiKey: 'x', baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0 });
for await (const event of client.stream({ messages: [{ role: 'user', content: 'hi' }] })) { void event; }`);
    expect(loadsOpenAI(used)).toBe(true);
  });

  it('loads the openai SDK on preload(), with no request made and no key set', async () => {
    // Port 9 (discard) is never asked: preload only loads; it resolves, it does not reject.
    const preloaded =
      await resolvedUrls(`const client = core.createModelClient({ model: 'm', apiKey: '', baseURL: 'http://127.0.0.1:9/v1' });
const outcome = await client.preload();
if (outcome !== undefined) throw new Error('preload resolved to ' + String(outcome));`);
    expect(loadsOpenAI(preloaded)).toBe(true);
  });

  it('does not load the yaml package until a YAML file is read or written', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'rho-lazy-yaml-'));
    const config = join(directory, 'agent.yaml');
    await writeFile(config, 'model: m\n');
    const main = join(directory, 'main.mjs');
    // yaml is CommonJS: whether it was loaded shows in the require cache.
    await writeFile(
      main,
      `import { createRequire } from 'node:module';
const core = await import(${JSON.stringify(pathToFileURL(built).href)});
const internal = await import(${JSON.stringify(pathToFileURL(builtInternal).href)});
const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((path) => /[\\/]yaml[\\/]/.test(path));
const agent = new core.Agent({ clientOptions: { apiKey: 'x', baseURL: 'http://127.0.0.1:9/v1' } });
agent.createSession({ directory: ${JSON.stringify(join(directory, 'session'))} });
const before = loaded();
const parsed = internal.loadAgentConfig(${JSON.stringify(config)});
process.stdout.write(JSON.stringify({ before, after: loaded(), model: parsed.model }));`,
    );
    const { stdout } = await run(process.execPath, [main], { cwd: directory });
    expect(JSON.parse(stdout)).toEqual({ before: false, after: true, model: 'm' });
  });
});
