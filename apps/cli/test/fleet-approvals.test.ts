// `rho approvals` over a fleet on the local PostgreSQL (a random schema for this file, dropped
// after): a headless run on node-a waits for approval and another node lists its call with the
// commands that answer it; stopped while it waits, the session is `parked` in the listing, in
// `rho stats` and in `rho fleet status` (schema version 4); the fleet takes answers for live
// sessions only, so another node is refused, and on node-a the same `rho approve` answers it in
// the session directory, where the resumed run reads it.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually, fleetHome, runOnNode, startOnNode, useFleetFixture } from './support/fleet.js';
import { runRho } from './support/run-rho.js';

const fleet = await useFleetFixture();
const { probe, schema } = fleet;

interface Waiting {
  session_id: string;
  call_id: string;
  status: string;
  host: string | null;
  dangerous: boolean;
  approve_command: string;
  answer_on_host: string | null;
}

describe.skipIf(!probe.available)('rho approvals over the fleet', () => {
  it('lists a waiting call of any node; a parked one is parked everywhere and answered on its node', async () => {
    const operator = { RHO_HOME: fleetHome({ schema, deadAfterMs: 1_500 }) };
    expect((await runRho(['fleet', 'migrate'], { env: operator })).code).toBe(0);
    const server = await fleet.model({
      steps: [
        { type: 'response', toolCalls: [{ id: 'call_rm', name: 'bash', arguments: '{"command": "rm -rf build"}' }] },
        { type: 'response', text: 'Cleaned.' },
      ],
    });
    const agentHome = fleetHome({ schema, deadAfterMs: 1_500 });
    const work = mkdtempSync(join(tmpdir(), 'rho-fleet-approvals-'));
    mkdirSync(join(work, 'build'));
    writeFileSync(join(work, 'build', 'out.o'), 'object\n');
    const agent = startOnNode(
      'node-a',
      ['--base-url', server.url, '-w', work, '--profile', 'developer', '--when-unattended', 'wait', 'clean the build'],
      { RHO_HOME: agentHome },
    );
    fleet.track(agent);
    const listed = async () =>
      JSON.parse((await runRho(['approvals', '--json'], { env: operator })).stdout) as Waiting[];
    const [waiting] = await eventually(async () => {
      const calls = await listed();
      return calls.length === 1 && calls[0]!.status === 'waiting_approval' ? calls : undefined;
    }, 'the waiting call in the fleet');
    const [id] = readdirSync(join(agentHome, 'sessions'));
    expect(waiting).toMatchObject({
      session_id: id,
      call_id: 'call_rm',
      host: 'node-a',
      dangerous: true,
      approve_command: `rho approve ${id} call_rm`,
      answer_on_host: null,
    });
    const table = await runRho(['approvals'], { env: operator });
    expect(table.stdout).toMatch(/^1 tool call waits for approval in the fleet:\n/);
    expect(table.stdout).toMatch(new RegExp(`^${id}  call call_rm  bash  .*  waiting_approval  on node-a$`, 'm'));

    // Stopped while it waits: no process runs it, and every view of the fleet says parked.
    agent.child.kill('SIGTERM');
    expect((await agent.done).code).toBe(4);
    const [parked] = await eventually(async () => {
      const calls = await listed();
      return calls[0]?.status === 'parked' ? calls : undefined;
    }, 'the session to be parked');
    expect(parked).toMatchObject({ session_id: id, answer_on_host: 'node-a' });
    expect((await runRho(['approvals'], { env: operator })).stdout).toContain(
      'no process runs it and the fleet takes answers for live sessions only: answer it on node-a',
    );
    const stats = JSON.parse((await runRho(['stats', 'status', '--json'], { env: operator })).stdout) as {
      sessions_by_status: { status: string; sessions: number }[];
    };
    expect(stats.sessions_by_status).toEqual([expect.objectContaining({ status: 'parked', sessions: 1 })]);
    const status = JSON.parse((await runRho(['fleet', 'status', '--json'], { env: operator })).stdout) as {
      byStatus: Record<string, number>;
    };
    expect(status.byStatus).toEqual({ parked: 1 });
    const ps = JSON.parse((await runRho(['ps', '--json', '--status', 'parked'], { env: operator })).stdout) as {
      id: string;
    }[];
    expect(ps.map((session) => session.id)).toEqual([id]);

    // Another node cannot answer it: nothing is recorded.
    const elsewhere = await runOnNode('node-b', ['approve', id!, 'call_rm'], operator);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain('The fleet takes answers for live sessions only');
    // On node-a the listed command answers it in the session directory; the resumed run goes on.
    const approved = await runOnNode('node-a', parked!.approve_command.split(' ').slice(1), { RHO_HOME: agentHome });
    expect(approved.stderr).toContain("answering it in this machine's session directory");
    expect(approved.code).toBe(0);
    expect(approved.stdout).toMatch(/^Approved bash\(rm -rf build\) \(call call_rm\)/);
    const resumed = await runOnNode(
      'node-a',
      ['--base-url', server.url, '-w', work, '--resume', id!, '--when-unattended', 'wait'],
      { RHO_HOME: agentHome },
    );
    expect(resumed.code).toBe(0);
    expect(existsSync(join(work, 'build'))).toBe(false);
    expect(await listed()).toEqual([]);
  }, 180_000);
});
