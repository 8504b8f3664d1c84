// `rho dashboard` with a fleet configured serves every node's sessions from the fleet's PostgreSQL
// (a random schema for this file, dropped after), and a named directory still serves that directory;
// a call waiting for approval on one node is answered from the dashboard on another.
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually, fleetHome, runOnNode, startOnNode, useFleetFixture } from './support/fleet.js';
import { runRho } from './support/run-rho.js';

const fleet = await useFleetFixture();
const { probe, schema } = fleet;

describe.skipIf(!probe.available)(`rho dashboard over a fleet ${probe.reason}`, () => {
  it("lists a session that ran on another node, with its host, from the fleet's database", async () => {
    const operator = { RHO_HOME: fleetHome({ schema }) };
    expect((await runRho(['fleet', 'migrate'], { env: operator })).code).toBe(0);
    const server = await fleet.model({
      steps: [{ type: 'response', text: 'Done.', usage: { prompt_tokens: 100, completion_tokens: 5 } }],
    });
    const work = mkdtempSync(join(tmpdir(), 'rho-dashboard-fleet-work-'));
    const run = await runOnNode('node-a', ['--base-url', server.url, '-w', work, '-m', 'gpt-4o-mini', 'say done'], {
      RHO_HOME: fleetHome({ schema }),
    });
    expect(run.code, run.stderr).toBe(0);

    const dashboard = startOnNode('node-c', ['dashboard', '--port', '0'], operator);
    fleet.track(dashboard);
    const url = await eventually(
      () => /http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+/.exec(dashboard.stdout())?.[0],
      'the URL',
    );
    expect(dashboard.stderr()).toContain('serving the fleet at postgres://postgres@127.0.0.1:5432/postgres');
    const origin = new URL(url).origin;
    expect((await fetch(`${origin}/api/sessions`)).status).toBe(401);
    const login = await fetch(url, { redirect: 'manual' });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const rows = await eventually(async () => {
      const page = (await (await fetch(`${origin}/api/sessions`, { headers: { Cookie: cookie } })).json()) as {
        rows: { id: string; hostname?: string; status: string }[];
      };
      return page.rows.length > 0 ? page.rows : undefined;
    }, 'the fleet session in the listing');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ hostname: 'node-a', status: 'completed' });
    dashboard.child.kill('SIGINT');
    expect((await dashboard.done).code).toBe(0);
  });

  it("answers a call waiting on another node from the dashboard, exactly once, through the fleet's signals", async () => {
    const operator = { RHO_HOME: fleetHome({ schema }) };
    expect((await runRho(['fleet', 'migrate'], { env: operator })).code).toBe(0);
    const server = await fleet.model({
      steps: [
        { type: 'response', toolCalls: [{ id: 'call_rm', name: 'bash', arguments: '{"command": "rm -rf build"}' }] },
        { type: 'response', text: 'Cleaned.' },
      ],
    });
    const work = mkdtempSync(join(tmpdir(), 'rho-dashboard-fleet-work-'));
    mkdirSync(join(work, 'build'));
    writeFileSync(join(work, 'build', 'out.o'), 'object\n');
    const agent = startOnNode(
      'node-a',
      ['--base-url', server.url, '-w', work, '--profile', 'developer', '--when-unattended', 'wait', 'clean the build'],
      { RHO_HOME: fleetHome({ schema }) },
    );
    fleet.track(agent);
    const dashboard = startOnNode('node-c', ['dashboard', '--port', '0'], operator);
    fleet.track(dashboard);
    const url = await eventually(
      () => /http:\/\/127\.0\.0\.1:\d+\/\?token=([\w-]+)/.exec(dashboard.stdout()) ?? undefined,
      'the URL',
    );
    const origin = new URL(url[0]).origin;
    const headers = { Authorization: `Bearer ${url[1]}` };
    const [call] = await eventually(async () => {
      const listed = (await (await fetch(`${origin}/api/approvals`, { headers })).json()) as {
        approvals: { sessionId: string; toolCallId: string; dangerous?: string; sessionStatus: string }[];
      };
      return listed.approvals.length > 0 ? listed.approvals : undefined;
    }, 'the waiting call in the dashboard');
    expect(call).toMatchObject({ toolCallId: 'call_rm', dangerous: 'rm -rf', sessionStatus: 'waiting_approval' });
    expect(existsSync(join(work, 'build'))).toBe(true);
    const answer = (decision: string) =>
      fetch(`${origin}/api/sessions/${call!.sessionId}/approvals`, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json', 'X-Rho-Token': url[1]! },
        body: JSON.stringify({ toolCallId: 'call_rm', decision }),
      });
    const approved = await answer('approve');
    expect(approved.status).toBe(200);
    expect(((await approved.json()) as { answer: { by: string } }).answer.by).toBe('dashboard');
    const second = await answer('deny');
    expect(second.status).toBe(409);
    expect(((await second.json()) as { error: string }).error).toContain('already answered (approve by dashboard)');
    const outcome = await agent.done;
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(existsSync(join(work, 'build'))).toBe(false);
    // The trace viewer from the fleet's mirror: the call, its approval by the dashboard, its result.
    const tree = await eventually(async () => {
      const snapshot = (await (
        await fetch(`${origin}/api/sessions/${call!.sessionId}/spans?snapshot=1`, { headers })
      ).json()) as {
        spans: { id: string; kind: string; name: string; status: string; summary: string; records: number[] }[];
      };
      return snapshot.spans.some((span) => span.kind === 'run' && span.status === 'completed')
        ? snapshot.spans
        : undefined;
    }, 'the whole tree over the fleet');
    const bash = tree.find((span) => span.kind === 'tool' && span.name === 'bash')!;
    expect(bash.status).toBe('ok');
    expect(tree.find((span) => span.kind === 'approval')!.summary).toBe('approved by dashboard');
    const detail = (await (
      await fetch(`${origin}/api/sessions/${call!.sessionId}/records?at=${bash.records.join(',')}`, { headers })
    ).json()) as { records: { record: { type: string; role?: string } }[] };
    expect(detail.records.map((entry) => entry.record.type)).toEqual(
      expect.arrayContaining(['approval_requested', 'approval_answered', 'tool_start', 'tool_end', 'message']),
    );
    // Content search over the fleet's mirror (SQL in its database): the call's arguments, found at
    // one of the bash span's records, counted as the trace viewer counts them.
    const search = await fetch(`${origin}/api/search?q=${encodeURIComponent('RM -rf BUILD')}`, { headers });
    expect(search.status).toBe(200);
    const found = (await search.json()) as {
      hits: { sessionId: string; record: number; type: string; field: string; snippet: string }[];
      complete: boolean;
    };
    expect(found.complete).toBe(true);
    expect(found.hits.every((hit) => hit.sessionId === call!.sessionId)).toBe(true);
    const start = found.hits.find((hit) => hit.type === 'tool_start')!;
    expect(start).toMatchObject({ field: 'tool_args.command', snippet: 'rm -rf build' });
    expect(bash.records).toContain(start.record);
    const pointed = (await (
      await fetch(`${origin}/api/sessions/${call!.sessionId}/records?at=${start.record}`, { headers })
    ).json()) as { records: { record: { type: string; tool_name?: string; tool_call_id?: string } }[] };
    expect(pointed.records.map((entry) => entry.record)).toEqual([
      expect.objectContaining({ type: 'tool_start', tool_name: 'bash', tool_call_id: 'call_rm' }),
    ]);
    // Keys are not content.
    const keys = (await (await fetch(`${origin}/api/search?q=tool_call_id`, { headers })).json()) as {
      hits: unknown[];
    };
    expect(keys.hits).toEqual([]);
    dashboard.child.kill('SIGINT');
    expect((await dashboard.done).code).toBe(0);
  }, 120_000);
});
