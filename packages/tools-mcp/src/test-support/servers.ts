import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { McpServerConfig } from '../server-config.js';

const packageRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The entry script of a server package installed as a devDependency. */
export function serverScript(pkg: 'server-everything' | 'server-filesystem'): string {
  return `${packageRoot}node_modules/@modelcontextprotocol/${pkg}/dist/index.js`;
}

/** The cancel probe's script. */
export const CANCEL_PROBE = fileURLToPath(new URL('./cancel-probe-server.mjs', import.meta.url));

/** server-everything over stdio. */
export function everythingStdio(name = 'everything'): McpServerConfig {
  return {
    name,
    transport: 'stdio',
    command: process.execPath,
    args: [serverScript('server-everything'), 'stdio'],
    env: {},
    timeoutMs: 60_000,
  };
}

/** server-filesystem over stdio, allowed into one directory. */
export function filesystemStdio(root: string, name = 'fs'): McpServerConfig {
  return {
    name,
    transport: 'stdio',
    command: process.execPath,
    args: [serverScript('server-filesystem'), root],
    env: {},
    timeoutMs: 60_000,
  };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** server-everything in its streamable HTTP mode on a free local port; stop it with `child.kill()`. */
export async function startEverythingHttp(
  port?: number,
): Promise<{ url: string; port: number; child: ChildProcess; stop(): Promise<void> }> {
  port ??= await freePort();
  const child = spawn(process.execPath, [serverScript('server-everything'), 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('listening on port')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${seen}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}
