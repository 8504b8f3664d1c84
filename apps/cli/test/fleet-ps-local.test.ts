// Issue 38 (6f): with a fleet configured, `rho ps` listed only the fleet's sessions, so a session
// this machine ran without the fleet (`--fleet ''`, or before the fleet was configured) dropped out
// of sight. Now such sessions follow the fleet's, under their own heading, marked in `--json`.
import { describe, expect, it } from 'vitest';
import { fleetHome, useFleetFixture } from './support/fleet.js';
import { runRho } from './support/run-rho.js';

const fleet = await useFleetFixture();
const { probe, schema } = fleet;

interface Listed {
  id: string;
  host?: string;
  first_prompt: string | null;
  in_fleet?: boolean;
}

describe.skipIf(!probe.available)('rho ps with a fleet and sessions that never registered', () => {
  it('lists this machine’s unregistered sessions under their own heading, with in_fleet: false in JSON', async () => {
    const home = fleetHome({ schema });
    const env = { RHO_HOME: home };
    expect((await runRho(['fleet', 'migrate'], { env })).code).toBe(0);
    const server = await fleet.model({ respond: () => ({ type: 'response', text: 'hello' }) });
    const registered = await runRho(['--base-url', server.url, 'in the fleet'], { env });
    expect(registered.code).toBe(0);
    const alone = await runRho(['--base-url', server.url, '--fleet', '', 'not in the fleet'], { env });
    expect(alone.code).toBe(0);

    const json = await runRho(['ps', '--json'], { env });
    expect(json.code).toBe(0);
    const listed = JSON.parse(json.stdout) as Listed[];
    expect(listed.map((session) => [session.first_prompt, session.in_fleet])).toEqual([
      ['in the fleet', undefined],
      ['not in the fleet', false],
    ]);
    const local = listed[1]!;

    const table = await runRho(['ps'], { env });
    expect(table.code).toBe(0);
    const [fleetPart, localPart] = table.stdout.split('Local sessions not in the fleet (1):\n');
    expect(fleetPart).toContain(listed[0]!.id);
    expect(fleetPart).not.toContain(local.id);
    expect(localPart).toContain(local.id);
    // A filter asks for what the fleet records: unregistered sessions are not looked for.
    const filtered = JSON.parse((await runRho(['ps', '--json', '--status', 'completed'], { env })).stdout) as Listed[];
    expect(filtered.map((session) => session.id)).toEqual([listed[0]!.id]);
  }, 60_000);
});
