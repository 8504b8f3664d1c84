// A private PostgreSQL server for fault tests: initdb in a temporary directory, started with
// pg_ctl on a free port, so a test can stop and restart it (the shared server on 5432 is never
// touched). As root, every command runs as the `postgres` user (PostgreSQL refuses to run as
// root). Skips locally when the binaries are missing; under CI=true that is a failure.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { serverRequired } from './postgres.js';

/** RHO_PG_BIN, else the newest /usr/lib/postgresql/<version>/bin (Debian's layout). */
const BIN = process.env.RHO_PG_BIN ?? newestServerBin();

function newestServerBin(): string {
  const base = '/usr/lib/postgresql';
  try {
    const versions = readdirSync(base)
      .filter((name) => existsSync(join(base, name, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return join(base, versions[0], 'bin');
  } catch {
    // No Debian layout.
  }
  return join(base, '15', 'bin');
}

/** Whether a private server can be started here, and why not. */
export function privateServerSupport(): { available: boolean; reason: string } {
  if (existsSync(join(BIN, 'initdb')) && existsSync(join(BIN, 'pg_ctl'))) return { available: true, reason: '' };
  const reason = `initdb/pg_ctl not found in ${BIN} (set RHO_PG_BIN)`;
  if (serverRequired) throw new Error(`A private PostgreSQL is required (CI=true): ${reason}`);
  return { available: false, reason };
}

/** A running private server. */
export interface PrivateServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  url: string;
  /** Stops it: `immediate` is a crash (no shutdown checkpoint), `fast` a clean stop. */
  stop(mode?: 'immediate' | 'fast'): void;
  start(): void;
  /** Stops it and removes its directory. */
  destroy(): void;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/** Creates and starts a private server. */
export async function startPrivateServer(): Promise<PrivateServer> {
  const root = userInfo().uid === 0;
  const directory = mkdtempSync(join(tmpdir(), 'rho-fleet-pg-'));
  if (root) chownSync(directory, uid('postgres'), gid('postgres'));
  const data = join(directory, 'data');
  const log = join(directory, 'server.log');
  const port = await freePort();
  const run = (program: string, args: string[]) => {
    const command = root ? 'runuser' : join(BIN, program);
    const argv = root ? ['-u', 'postgres', '--', join(BIN, program), ...args] : args;
    execFileSync(command, argv, { stdio: 'pipe', timeout: 120_000 });
  };
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const options = `-p ${port} -k ${directory} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`;
  const start = () => run('pg_ctl', ['-D', data, '-o', options, '-l', log, '-w', '-t', '60', 'start']);
  start();
  let running = true;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop(mode = 'immediate') {
      run('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
      running = false;
    },
    start() {
      start();
      running = true;
    },
    destroy() {
      try {
        if (running) run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '60', 'stop']);
      } catch {
        // Already stopped.
      }
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

function uid(name: string): number {
  return Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
}

function gid(name: string): number {
  return Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
}
