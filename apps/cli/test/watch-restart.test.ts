// Issue 33: `rho watch` over the fleet died on a database restart with "this is a bug in rho". It
// now says the database went away, reconnects, and goes on from the record it had reached: every
// record of the run once. The restart is played by a TCP proxy in front of the shared PostgreSQL.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startLoopbackServer } from '@rho/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema, eventually, fleetHome, freshSchema, probePostgres, startOnNode } from './support/fleet.js';
import { freePort, startPgProxy } from './support/pg-proxy.js';
import { bin, runRho } from './support/run-rho.js';

const probe = await probePostgres();
const schema = freshSchema();
afterAll(async () => {
  if (probe.available) await dropSchema(schema);
});

type Proxy = Awaited<ReturnType<typeof startPgProxy>>;

/** The watcher as the restart sees it: what it printed so far, and its exit. */
interface Watcher {
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/**
 * Runs a session on a node, watches it through the proxy from an empty machine, calls `restart`
 * once the watcher shows records, then lets the run finish: the watcher must have shown every
 * record of the run once, in order, and ended by itself.
 */
async function watchAcross(restart: (proxy: Proxy, watcher: Watcher) => Promise<void>): Promise<void> {
  const operator = { RHO_HOME: fleetHome({ schema }) };
  expect((await runRho(['fleet', 'migrate'], { env: operator })).code).toBe(0);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let turn = 0;
  // A few tool calls, then a wait for the test, then more calls and the answer.
  const model = await startLoopbackServer({
    respond: async () => {
      turn += 1;
      if (turn === 4) await gate;
      if (turn >= 8) return { type: 'response', text: 'all listed' };
      return { type: 'response', toolCalls: [{ name: 'list', arguments: '{"path":"."}' }] };
    },
  });
  const home = fleetHome({ schema });
  const agent = startOnNode('node-w', ['--base-url', model.url, 'list again and again'], { RHO_HOME: home });
  const port = await freePort();
  const proxy = await startPgProxy(port);
  try {
    const id = await eventually(() => readdirSync(join(home, 'sessions'))[0], 'the session');
    await eventually(async () => {
      const listed = JSON.parse((await runRho(['ps', '--json'], { env: operator })).stdout) as { id: string }[];
      return listed.some((session) => session.id === id);
    }, 'the session in the fleet');
    // The watcher reaches the fleet through the proxy, from an empty machine (no local copy).
    const watcherHome = fleetHome({ schema, url: `postgres://postgres@127.0.0.1:${port}/postgres` });
    let stdout = '';
    let stderr = '';
    const watcher = spawn(process.execPath, [bin, 'watch', id, '--json'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', RHO_HOME: watcherHome },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    watcher.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    watcher.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => watcher.on('close', resolve));
    await eventually(() => stdout.includes('"tool_end"'), 'the watcher to show records');
    await restart(proxy, { stdout: () => stdout, stderr: () => stderr, exited });
    release();
    expect((await agent.done).code).toBe(0);
    expect(await exited, `rho watch exited; its stderr:\n${stderr}`).toBe(0);
    expect(stderr).not.toContain('bug in rho');
    const watched = stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { type: string; source?: string })
      .filter((record) => record.source !== 'fleet');
    const trace = readFileSync(join(home, 'sessions', id, 'trace.jsonl'), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { type: string });
    // Every record once, in order, from where the watch began to the run's end.
    const types = watched.map((record) => record.type);
    expect(types.at(-1)).toBe('run_end');
    expect(types).toEqual(trace.slice(trace.length - types.length).map((record) => record.type));
    expect(stdout).toContain("The fleet's database answers again");
  } finally {
    release();
    await proxy.close();
    await model.close();
  }
}

describe.skipIf(!probe.available)('rho watch across a database restart', { timeout: 120_000 }, () => {
  it('says so, reconnects, and shows every record of the run once', async () => {
    await watchAcross(async (proxy, watcher) => {
      await proxy.down();
      await eventually(() => watcher.stdout().includes("The fleet's database went away"), 'the watcher to say so');
      await proxy.up();
    });
  });

  // The driver's first query on a new connection fetches the array types; a connection lost then
  // reconnects on its own, and a refused reconnect used to reject that query where no code could
  // catch it: an unhandled ECONNREFUSED that ended rho watch (porsager/postgres#1223, patched in
  // patches/postgres@3.4.9.patch). No process-wide handler covers for it any more.
  it('survives a restart that cuts a new connection while it starts, then refuses it', async () => {
    await watchAcross(async (proxy, watcher) => {
      await proxy.down();
      await eventually(() => watcher.stdout().includes("The fleet's database went away"), 'the watcher to say so');
      proxy.downAtArrayTypes();
      await proxy.up();
      await eventually(() => proxy.cutsAtArrayTypes() === 1, 'a reconnection cut while it fetched the array types');
      // Down long enough for that connection's reconnect to be refused.
      const early = await Promise.race([watcher.exited.then((code) => ({ code })), sleep(5_000)]);
      expect(early, `rho watch ended while the database was down; its stderr:\n${watcher.stderr()}`).toBeUndefined();
      await proxy.up();
    });
  });
});
