// The shared PostgreSQL of the test machine (127.0.0.1:5432, user postgres, trust) for the fleet
// CLI tests. Each test file works in its own schema with a random name and drops it afterwards.
// Locally a suite skips (with the reason) when the server does not answer; under CI=true a missing
// server fails the run. Nodes are `rho` processes, each in its own UTS namespace with its own host
// name (`unshare --uts`, as root), or, where that is not allowed, with RHO_FLEET_HOST.
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer, LoopbackServerOptions } from '@rho/core/testing';
import { postgresRequired, probePostgres as probe, SHARED_POSTGRES_URL } from '@rho/fleet/testing';
import { afterAll, afterEach } from 'vitest';
import { bin } from './run-rho.js';
import type { Outcome } from './run-rho.js';

export const SHARED_URL = SHARED_POSTGRES_URL;

/** Whether CI requires the server (then a missing one is a failure, not a skip). */
export const serverRequired = postgresRequired;

/** Whether PostgreSQL answers; throws under CI when it does not. */
export const probePostgres = probe;

/** A fresh random schema name for one test file. */
export function freshSchema(): string {
  return `rho_fleet_cli_${randomBytes(5).toString('hex')}`;
}

/** Drops a test schema. */
export async function dropSchema(schema: string, url = SHARED_URL): Promise<void> {
  const sql = postgres(url, { max: 1, connect_timeout: 5, onnotice: () => undefined });
  try {
    await sql.unsafe(`drop schema if exists "${schema}" cascade`);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** What {@link useFleetFixture} gives a test file. */
export interface FleetFixture {
  /** Whether PostgreSQL answers (`describe.skipIf(!probe.available)`). */
  probe: Awaited<ReturnType<typeof probe>>;
  /** The file's schema, dropped after its last test. */
  schema: string;
  /** A node process of the test: killed (SIGKILL) after the test if it still runs. */
  track<T extends NodeProcess>(node: T): T;
  /** A loopback model server, closed after the test. */
  model(options: LoopbackServerOptions): Promise<LoopbackServer>;
  /** Something else to undo after the test (after the processes are killed). */
  afterTest(undo: () => unknown): void;
}

/**
 * The fleet of one test file: a schema of its own on the shared PostgreSQL (dropped after the
 * file), and after each test, its node processes killed and its model servers closed. Call it
 * once, at the top of the file.
 */
export async function useFleetFixture(): Promise<FleetFixture> {
  const probed = await probePostgres();
  const schema = freshSchema();
  const nodes: NodeProcess[] = [];
  const undos: (() => unknown)[] = [];
  afterEach(async () => {
    for (const node of nodes.splice(0))
      if (node.child.exitCode === null && node.child.signalCode === null) node.child.kill('SIGKILL');
    for (const undo of undos.splice(0)) await undo();
  });
  afterAll(async () => {
    if (probed.available) await dropSchema(schema);
  });
  return {
    probe: probed,
    schema,
    track(node) {
      nodes.push(node);
      return node;
    },
    async model(options) {
      const server = await startLoopbackServer(options);
      undos.push(() => server.close());
      return server;
    },
    afterTest(undo) {
      undos.push(undo);
    },
  };
}

/** Fleet settings written to a node's `$RHO_HOME/config.yaml`. */
export interface FleetSettings {
  url?: string;
  schema: string;
  heartbeatIntervalMs?: number;
  deadAfterMs?: number;
}

/** A new `$RHO_HOME` whose config.yaml names the fleet (what a node's operator writes once). */
export function fleetHome(settings: FleetSettings): string {
  const home = join(mkdtempSync(join(tmpdir(), 'rho-fleet-cli-')), 'home');
  mkdirSync(home, { recursive: true });
  writeFileSync(
    join(home, 'config.yaml'),
    [
      'fleet:',
      `  url: ${JSON.stringify(settings.url ?? SHARED_URL)}`,
      `  schema: ${settings.schema}`,
      `  heartbeat_interval_ms: ${settings.heartbeatIntervalMs ?? 500}`,
      `  dead_after_ms: ${settings.deadAfterMs ?? 30_000}`,
      '',
    ].join('\n'),
  );
  return home;
}

/** Whether this process may give a child its own host name (`unshare --uts`: root, or user namespaces). */
export const utsNamespaces =
  // RHO_TEST_NO_UTS=1 runs the fallback (RHO_FLEET_HOST) where namespaces would work.
  process.env.RHO_TEST_NO_UTS !== '1' &&
  spawnSync('unshare', ['--uts', 'sh', '-c', 'hostname rho-uts-probe && test "$(hostname)" = rho-uts-probe'], {
    stdio: 'ignore',
  }).status === 0;

/** A `rho` process on a simulated node, with its output collected as it arrives. */
export interface NodeProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  done: Promise<Outcome>;
}

/**
 * Starts `rho ARGS` on node `host`: in its own UTS namespace whose host name is `host` (so the
 * fleet sees the name the machine reports), or, without namespaces, with RHO_FLEET_HOST. The
 * process's pid is rho's own (unshare and sh exec it), so a SIGKILL kills the agent.
 */
export function startOnNode(host: string, args: string[], env: NodeJS.ProcessEnv): NodeProcess {
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...env };
  const child = utsNamespaces
    ? spawn('unshare', ['--uts', 'sh', '-c', 'hostname "$0" && exec "$@"', host, process.execPath, bin, ...args], {
        env: base,
        cwd: tmpdir(),
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn(process.execPath, [bin, ...args], {
        env: { ...base, RHO_FLEET_HOST: host },
        cwd: tmpdir(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const done = new Promise<Outcome>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { child, stdout: () => stdout, stderr: () => stderr, done };
}

/** Runs `rho ARGS` on node `host` to the end. */
export function runOnNode(host: string, args: string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
  return startOnNode(host, args, env).done;
}

/** Waits until `check` holds (polling), failing after `timeoutMs` with the last value seen. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as T;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `Timed out after ${timeoutMs} ms waiting for ${what}${last === undefined ? '' : `: ${String(last)}`}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
