// A fleet of simulated nodes on one machine: each `rho` is a separate process in its own UTS
// namespace with its own host name (node-a, node-b, ...) and its own $RHO_HOME, and they share
// only the local PostgreSQL (a random schema for this file). Agents on two nodes are listed,
// filtered, watched, paused, steered and cancelled from a third; an agent whose node is killed
// becomes `dead`; a signal for a finished session is refused.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer, RecordedRequest } from '@rho/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeProcess } from './support/fleet.js';
import {
  dropSchema,
  eventually,
  fleetHome,
  freshSchema,
  probePostgres,
  runOnNode,
  startOnNode,
  utsNamespaces,
} from './support/fleet.js';

const probe = await probePostgres();
const schema = freshSchema();
let server: LoopbackServer;
const started: NodeProcess[] = [];

/** The task of the conversation a request belongs to (its first user message). */
function taskOf(request: RecordedRequest): string {
  const first = (request.body.messages as { role: string; content: unknown }[]).find(
    (message) => message.role === 'user',
  );
  return String(first?.content ?? '');
}

function directivesSeen(task: string): string[] {
  return server.requests
    .filter((request) => taskOf(request) === task)
    .flatMap((request) =>
      (request.body.messages as { role: string; content: unknown }[])
        .filter((message) => message.role === 'user' && String(message.content).startsWith('[Operator directive] '))
        .map((message) => String(message.content)),
    );
}

interface Listed {
  id: string;
  status: string;
  host: string;
  labels: Record<string, string>;
  first_prompt: string | null;
  records: number;
}

beforeAll(async () => {
  if (!probe.available) return;
  // Every agent works forever (one cheap tool call after another) until an operator stops it.
  server = await startLoopbackServer({
    respond: () => ({
      type: 'response',
      toolCalls: [{ name: 'list', arguments: JSON.stringify({ path: '.' }) }],
      delayMs: 20,
      usage: { prompt_tokens: 120, completion_tokens: 8 },
    }),
  });
});

afterAll(async () => {
  for (const node of started)
    if (node.child.exitCode === null && node.child.signalCode === null) node.child.kill('SIGKILL');
  await server?.close();
  if (probe.available) await dropSchema(schema);
});

describe.skipIf(!probe.available)(`a fleet of nodes on one PostgreSQL ${probe.reason}`, () => {
  it(`lists, filters, watches, pauses, steers and cancels agents of two nodes from a third (${utsNamespaces ? 'UTS namespaces' : 'RHO_FLEET_HOST, no UTS namespaces here'})`, async () => {
    const settings = { schema, heartbeatIntervalMs: 300 };
    const operator = { RHO_HOME: fleetHome(settings) };
    const migrated = await runOnNode('node-c', ['fleet', 'migrate'], operator);
    expect(migrated.stderr).toBe('');
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toMatch(/Migrated schema rho_fleet_cli_\w+ from version 0 to \d+/);

    const agent = (host: string, task: string, team: string) => {
      const work = mkdtempSync(join(tmpdir(), 'rho-fleet-work-'));
      const node = startOnNode(
        host,
        ['--base-url', server.url, '-w', work, '--label', `team=${team}`, '--json', task],
        { RHO_HOME: fleetHome(settings) },
      );
      started.push(node);
      return node;
    };
    const a = agent('node-a', 'task-a: list the files', 'red');
    const b = agent('node-b', 'task-b: list the files', 'blue');

    const ps = async (...filters: string[]) => {
      const outcome = await runOnNode('node-c', ['ps', '--json', ...filters], operator);
      if (outcome.code !== 0) throw new Error(`rho ps failed: ${outcome.stderr}`);
      return JSON.parse(outcome.stdout) as Listed[];
    };
    // Both agents are registered from their own nodes and seen from the third.
    const both = await eventually(async () => {
      const listed = await ps();
      return listed.length === 2 && listed.every((session) => session.status === 'running' && session.records > 3)
        ? listed
        : undefined;
    }, 'both agents running in rho ps');
    const sessionA = both.find((session) => session.host === 'node-a')!;
    const sessionB = both.find((session) => session.host === 'node-b')!;
    expect(sessionA.first_prompt).toBe('task-a: list the files');
    expect(sessionB.first_prompt).toBe('task-b: list the files');
    expect(sessionA.labels).toEqual({ team: 'red' });

    // Filters.
    expect((await ps('--host', 'node-b')).map((session) => session.id)).toEqual([sessionB.id]);
    expect((await ps('--label', 'team=red')).map((session) => session.id)).toEqual([sessionA.id]);
    expect(await ps('--status', 'paused')).toEqual([]);
    // A table cut at --limit still shows every live session.
    const limited = await runOnNode('node-c', ['ps', '-n', '1'], operator);
    expect(limited.stdout).toContain(sessionA.id);
    expect(limited.stdout).toContain(sessionB.id);
    expect(limited.stdout).toContain('(the newest 1 shown; use --limit N or --json for more)');
    const table = await runOnNode('node-c', ['ps', '--host', 'node-a'], operator);
    expect(table.stdout).toMatch(new RegExp(`${sessionA.id}\\s+running\\s+node-a`));

    // A watch from the third node, by a unique prefix, follows A's mirrored records to the end.
    const watch = startOnNode('node-c', ['watch', sessionA.id.slice(0, 6), '--json'], operator);
    started.push(watch);

    // Pause A: the agent acknowledges by reporting `paused` (it holds before its next call).
    const paused = await runOnNode('node-c', ['pause', sessionA.id], operator);
    expect(paused.stdout).toBe(`pause: ${sessionA.id} (node-a)\n`);
    await eventually(
      async () => (await ps('--status', 'paused')).map((session) => session.id).join() === sessionA.id,
      'A paused',
    );
    expect((await ps('--host', 'node-b'))[0]!.status).toBe('running');

    // Steer A while it is paused, then release it: the directive reaches A's model, not B's.
    const steered = await runOnNode(
      'node-c',
      ['directive', sessionA.id.slice(0, 5), 'steer-a: look at the README'],
      operator,
    );
    expect(steered.stdout).toBe(`directive queued for ${sessionA.id} (node-a)\n`);
    expect((await runOnNode('node-c', ['resume', sessionA.id], operator)).stdout).toBe(
      `resume: ${sessionA.id} (node-a)\n`,
    );
    await eventually(() => directivesSeen('task-a: list the files').length > 0, "the directive in A's model requests");
    expect([...new Set(directivesSeen('task-a: list the files'))]).toEqual([
      '[Operator directive] steer-a: look at the README',
    ]);
    expect(directivesSeen('task-b: list the files')).toEqual([]);

    // Cancel both from the third node: each agent stops (exit 130) and says so in the fleet.
    const cancelled = await runOnNode('node-c', ['cancel', '--all'], operator);
    expect(cancelled.stdout).toContain(`cancel: ${sessionA.id} (node-a)`);
    expect(cancelled.stdout).toContain(`cancel: ${sessionB.id} (node-b)`);
    expect((await a.done).code).toBe(130);
    expect((await b.done).code).toBe(130);
    const after = await eventually(async () => {
      const listed = await ps();
      return listed.every((session) => session.status === 'cancelled') ? listed : undefined;
    }, 'both cancelled in rho ps');
    expect(after).toHaveLength(2);

    // The watch saw A's whole run, the directive included, and ended with it.
    const watched = await watch.done;
    expect(watched.code).toBe(0);
    const records = watched.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; prompt?: string; text?: string; status?: string });
    expect(records[0]).toMatchObject({ type: 'run_start', prompt: 'task-a: list the files' });
    expect(records.filter((record) => record.type === 'directive')).toMatchObject([
      { text: 'steer-a: look at the README' },
    ]);
    expect(records.at(-1)).toMatchObject({ type: 'run_end', status: 'cancelled' });

    // A signal for a finished session is refused with a message (exit 2), on any node.
    const refused = await runOnNode('node-c', ['cancel', sessionB.id], operator);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`Session ${sessionB.id} is cancelled`);
    const refusedDirective = await runOnNode('node-c', ['directive', sessionB.id, 'too late'], operator);
    expect(refusedDirective.code).toBe(2);
    expect(refusedDirective.stderr).toContain('the directive was not sent');
  }, 240_000);

  it('marks the sessions of a node whose agent was killed (SIGKILL) dead after the heartbeat threshold', async () => {
    // A short threshold so the test is quick: heartbeats every 200 ms, dead after 2 s without one.
    const settings = { schema, heartbeatIntervalMs: 200, deadAfterMs: 2_000 };
    const operator = { RHO_HOME: fleetHome(settings) };
    const work = mkdtempSync(join(tmpdir(), 'rho-fleet-work-'));
    const doomed = startOnNode('node-d', ['--base-url', server.url, '-w', work, '--json', 'task-d: list the files'], {
      RHO_HOME: fleetHome(settings),
    });
    started.push(doomed);
    const ps = async () =>
      JSON.parse((await runOnNode('node-c', ['ps', '--json', '--host', 'node-d'], operator)).stdout) as Listed[];
    const [running] = await eventually(async () => {
      const listed = await ps();
      return listed[0]?.status === 'running' ? listed : undefined;
    }, 'the agent of node-d running');
    doomed.child.kill('SIGKILL');
    expect((await doomed.done).code).toBe(null);
    const [dead] = await eventually(async () => {
      const listed = await ps();
      return listed[0]?.status === 'dead' ? listed : undefined;
    }, 'the session of node-d dead');
    expect(dead!.id).toBe(running!.id);
    // A dead session takes no signal.
    const refused = await runOnNode('node-c', ['pause', running!.id], operator);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('is dead');
  }, 120_000);
});
