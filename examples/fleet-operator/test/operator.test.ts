// The built operator script against a real fleet: PostgreSQL on the test machine (a schema of
// its own), two "nodes" registered as agents do it, and the script run as a user runs it.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TraceRecord } from '@rho/core';
import { connectFleet } from '@rho/fleet';
import type { Fleet, FleetConfig, SessionAttachment } from '@rho/fleet';
import { dropTestSchema, freshFleetConfig, probePostgres } from '@rho/fleet/testing';
import type { ListedSession } from '@rho/monitor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const main = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');
const probe = await probePostgres();

function run(config: FleetConfig, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [main, ...args, '--schema', config.schema], {
      env: { PATH: process.env.PATH, RHO_FLEET_URL: config.url },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const record = (type: string, fields: Record<string, unknown> = {}) =>
  ({ type, ts: new Date().toISOString(), ...fields }) as unknown as TraceRecord;

describe.skipIf(!probe.available)(`the fleet operator script ${probe.reason}`, () => {
  const config = freshFleetConfig();
  let fleet: Fleet;
  let running: SessionAttachment;
  let other: SessionAttachment;
  beforeAll(async () => {
    fleet = await connectFleet(config, { syncIntervalMs: 200 });
    await fleet.migrate();
    // What `rho --fleet` does for each session on its node: register, heartbeat, mirror the trace.
    running = await fleet.attachSession({
      id: 'a1b2c3d4-build',
      host: 'node-a',
      model: 'gpt-5-mini',
      labels: { team: 'data' },
      firstPrompt: 'Rebuild the nightly report',
    });
    running.mirror.observe(record('run_start', { prompt: 'Rebuild the nightly report' }));
    other = await fleet.attachSession({ id: 'b2c3d4e5-audit', host: 'node-b', labels: { team: 'ops' } });
    const done = await fleet.attachSession({ id: 'c3d4e5f6-done', host: 'node-b', firstPrompt: 'Say hello' });
    done.mirror.observe(record('run_start', { prompt: 'Say hello' }));
    done.mirror.observe(record('run_end', { status: 'completed' }));
    await done.close({ status: 'completed' });
    await running.mirror.flush();
  });
  afterAll(async () => {
    await running?.close();
    await other?.close();
    await fleet?.close();
    await dropTestSchema(config.schema);
  });

  it('lists the sessions of every node, and filters them', async () => {
    const listed = await run(config, ['list', '--json']);
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    const sessions = JSON.parse(listed.stdout) as ListedSession[];
    expect(sessions.map((session) => [session.id, session.status, session.hostname]).sort()).toEqual([
      ['a1b2c3d4-build', 'running', 'node-a'],
      ['b2c3d4e5-audit', 'running', 'node-b'],
      ['c3d4e5f6-done', 'completed', 'node-b'],
    ]);
    const running = await run(config, ['list', '--status', 'running', '--label', 'team=data']);
    expect(running.stdout.trim().split('\n')).toEqual([
      'a1b2c3d4-build\trunning\tnode-a\tgpt-5-mini\t$0.0000\tRebuild the nightly report',
    ]);
  });

  it('cancels a session on another node, refuses a finished one, and cancels the rest with --all', async () => {
    const one = await run(config, ['cancel', 'a1b2']);
    expect(one).toMatchObject({ code: 0, stdout: 'cancel requested: a1b2c3d4-build (node-a)\n' });
    // The agent's side sees it (rho polls it before every model and tool call).
    await waitFor(() => running.control.isCancelRequested());
    const finished = await run(config, ['cancel', 'c3d4']);
    expect(finished.code).toBe(2);
    expect(finished.stderr).toMatch(/c3d4e5f6-done/);
    const unknown = await run(config, ['cancel', 'zzzz']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No session in the fleet matches 'zzzz'/);
    const all = await run(config, ['cancel', '--all', '--host', 'node-b']);
    expect(all).toMatchObject({
      code: 0,
      stdout: 'cancel requested: b2c3d4e5-audit (node-b)\n1 session asked to stop\n',
    });
    await waitFor(() => other.control.isCancelRequested());
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the cancel to reach the agent');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
