// Issue 33: a session directory duplicated to a second node (restored from a backup without its
// lock) ran there too: the fleet's registry row moved, one cancel stopped both, and the fleet's
// copy of the trace mixed the two runs. Now the second node's run is refused by the fleet, says
// who runs the session, and stops; the first keeps its row and its trace.
import { cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually, fleetHome, runOnNode, startOnNode, useFleetFixture } from './support/fleet.js';
import { runRho } from './support/run-rho.js';

const fleet = await useFleetFixture();
const { probe, schema } = fleet;

describe.skipIf(!probe.available)('one session id on two nodes', () => {
  it('the second node is refused with who runs it, and stops; the first keeps its row', async () => {
    const operator = { RHO_HOME: fleetHome({ schema }) };
    expect((await runRho(['fleet', 'migrate'], { env: operator })).code).toBe(0);
    // A model that keeps the first run busy: a tool call every 50 ms.
    const server = await fleet.model({
      respond: () => ({ type: 'response', toolCalls: [{ name: 'list', arguments: '{"path":"."}' }], delayMs: 50 }),
    });
    const homeA = fleetHome({ schema });
    const first = startOnNode('node-a', ['--base-url', server.url, '--max-turns', '400', 'keep listing'], {
      RHO_HOME: homeA,
    });
    fleet.track(first);
    const id = await eventually(() => readdirSync(join(homeA, 'sessions'))[0], 'the first session');
    await eventually(async () => {
      const listed = JSON.parse((await runRho(['ps', '--json'], { env: operator })).stdout) as {
        id: string;
        status: string;
      }[];
      return listed.some((session) => session.id === id && session.status === 'running');
    }, 'the first run to register');

    // Node B gets a copy of the session directory, as a restored backup would, and resumes it.
    const homeB = fleetHome({ schema });
    mkdirSync(join(homeB, 'sessions'), { recursive: true });
    cpSync(join(homeA, 'sessions', id), join(homeB, 'sessions', id), { recursive: true });
    // ... without its lock (the local lock would refuse the copy on its own).
    rmSync(join(homeB, 'sessions', id, 'lock'), { force: true });
    const second = await runOnNode('node-b', ['--base-url', server.url, '--resume', id, 'go on'], { RHO_HOME: homeB });
    expect(second.stderr).toContain(`Session ${id} is live on node-a`);
    expect(second.stderr).toContain('This run stops.');
    expect(second.code).toBe(130);

    const listed = JSON.parse((await runRho(['ps', '--json'], { env: operator })).stdout) as {
      id: string;
      host: string;
      status: string;
    }[];
    expect(listed.find((session) => session.id === id)).toMatchObject({ host: 'node-a', status: 'running' });
    // One cancel stops the one run there is.
    expect((await runRho(['cancel', id], { env: operator })).code).toBe(0);
    expect((await first.done).code).toBe(130);
  }, 120_000);
});
