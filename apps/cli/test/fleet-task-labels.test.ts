// Issue 38 (6f): a queued task's labels did not reach its session's labels in the fleet, so
// `rho stats cost --by label` and `rho ps --label` did not see them. rho worker now passes them
// (RHO_TASK_LABELS, the queue settings section); each becomes a label key with an empty value.
import { describe, expect, it } from 'vitest';
import { fleetHome, useFleetFixture } from './support/fleet.js';
import { runRho } from './support/run-rho.js';

const fleet = await useFleetFixture();
const { probe, schema } = fleet;

describe.skipIf(!probe.available)("a queued task's labels in the fleet", () => {
  it('RHO_TASK_LABELS become the session labels, next to --label, for ps --label and stats cost --by label', async () => {
    const env = { RHO_HOME: fleetHome({ schema }) };
    expect((await runRho(['fleet', 'migrate'], { env })).code).toBe(0);
    const server = await fleet.model({
      respond: () => ({ type: 'response', text: 'done', usage: { prompt_tokens: 100, completion_tokens: 5 } }),
    });
    const run = await runRho(['--base-url', server.url, '--label', 'team=data', 'a queued task'], {
      env: { ...env, RHO_TASK_ID: 'task-1', RHO_TASK_LABELS: 'nightly,db' },
    });
    expect(run.code, run.stderr).toBe(0);

    const listed = JSON.parse((await runRho(['ps', '--json', '--label', 'nightly'], { env })).stdout) as {
      labels: Record<string, string>;
    }[];
    expect(listed.map((session) => session.labels)).toEqual([{ db: '', nightly: '', team: 'data' }]);
    const stats = await runRho(['stats', 'cost', '--by', 'label', '--json'], { env });
    expect(stats.code).toBe(0);
    const rows = (JSON.parse(stats.stdout) as { cost_by_label: { label: string; value: string }[] }).cost_by_label;
    expect(rows.map((row) => `${row.label}=${row.value}`).sort()).toEqual(['db=', 'nightly=', 'team=data']);
  }, 60_000);
});
