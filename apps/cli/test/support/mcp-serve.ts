// The set-up of the `rho mcp serve` tests: a temp RHO_HOME with an optional `mcp_serve:` config,
// the SDK's client over stdio against the built CLI, `rho ps --json`, and polling.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { bin } from './run-rho.js';

export interface ServeSetup {
  root: string;
  home: string;
  work: string;
  env: Record<string, string>;
}

/** A temp home and working directory; `WORK` in the config is the working directory. */
export function serveSetup(config = '', modelUrl?: string): ServeSetup {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-mcp-serve-')));
  const home = join(root, 'home');
  const work = join(root, 'work');
  mkdirSync(home);
  mkdirSync(work);
  if (config !== '') writeFileSync(join(home, 'config.yaml'), config.replaceAll('WORK', work));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? root,
    NO_COLOR: '1',
    RHO_HOME: home,
    OPENAI_API_KEY: 'test-key',
    OPENAI_MODEL: 'loopback-model',
  };
  if (modelUrl !== undefined) env.OPENAI_BASE_URL = modelUrl;
  return { root, home, work, env };
}

/** The clients connected by {@link connectServe}: the tests' afterEach closes them. */
export const serveClients: Client[] = [];

/** The SDK client connected to `rho mcp serve [flags]` over stdio. */
export async function connectServe(s: ServeSetup, name = 'test-client', flags: string[] = []): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [bin, 'mcp', 'serve', ...flags],
      env: s.env,
      cwd: s.work,
      stderr: 'pipe',
    }),
  );
  serveClients.push(client);
  return client;
}

/** `rho ps --json` of the set-up's home. */
export function ps(s: ServeSetup): Record<string, unknown>[] {
  return JSON.parse(
    execFileSync(process.execPath, [bin, 'ps', '--json', '--limit', '100'], { env: s.env, encoding: 'utf8' }),
  ) as Record<string, unknown>[];
}

/** The recorded status of a session (its meta.json). */
export function recordedStatus(s: ServeSetup, id: string): string {
  return (JSON.parse(readFileSync(join(s.home, 'sessions', id, 'meta.json'), 'utf8')) as { status: string }).status;
}

/** Polls until `what` gives a value. */
export async function until<T>(what: () => Promise<T | undefined> | T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await what();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
