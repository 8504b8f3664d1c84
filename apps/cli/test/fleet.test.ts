// `rho` with a fleet on the local PostgreSQL (a random schema for this file, dropped after):
// set-up commands, a run registered and mirrored, stats, export from another node, a database that
// is down when the agent starts, and nothing of the fleet loaded when none is configured.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOtlpReceiver } from '@rho/otel/testing';
import postgres from 'postgres';
import type { RecordedRequest } from '@rho/core/testing';
import { describe, expect, it } from 'vitest';
import { eventually, fleetHome, runOnNode, SHARED_URL, startOnNode, useFleetFixture } from './support/fleet.js';
import { freePort, startPgProxy } from './support/pg-proxy.js';
import { runRho } from './support/run-rho.js';

const fleet = await useFleetFixture();
const { probe, schema } = fleet;

interface Listed {
  id: string;
  status: string;
  host: string;
  records: number;
  cost_usd: number;
}

function traceLines(home: string, id: string): string[] {
  return readFileSync(join(home, 'sessions', id, 'trace.jsonl'), 'utf8')
    .trim()
    .split('\n');
}

/** Starts forwarding `port` to the shared PostgreSQL: the fleet's database "comes up" there. */
async function startProxy(port: number): Promise<void> {
  const proxy = await startPgProxy(port);
  fleet.afterTest(() => proxy.close());
}

describe('rho without a fleet', () => {
  it('says how to configure one for the fleet commands (exit 2)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'rho-no-fleet-'));
    for (const args of [['fleet', 'status'], ['fleet', 'migrate'], ['stats']]) {
      const outcome = await runRho(args, { env: { RHO_HOME: home } });
      expect(outcome.code).toBe(2);
      expect(outcome.stderr).toContain('No fleet is configured: pass --fleet postgres://');
    }
  });

  it('stops a run with exit 2 before any model call when the fleet is misconfigured', async () => {
    const server = await fleet.model({ respond: () => ({ type: 'response', text: 'hello' }) });
    const home = fleetHome({ schema: 'rho_fleet', url: 'https://fleet.example' });
    const outcome = await runRho(['--base-url', server.url, 'say hello'], { env: { RHO_HOME: home } });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('must start with postgres:// or postgresql://');
    expect(server.requests).toHaveLength(0);
    const unset = await runRho(['ps'], {
      env: { RHO_HOME: fleetHome({ schema: 'rho_fleet', url: 'postgres://${NO_SUCH_VAR}@db/rho' }) },
    });
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain('NO_SUCH_VAR');
  });

  it('prints the GRANT script for the configured schema, without connecting (rho fleet roles)', async () => {
    const plain = await runRho(['fleet', 'roles'], { env: { RHO_HOME: mkdtempSync(join(tmpdir(), 'rho-no-fleet-')) } });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('grant usage on schema rho_fleet to rho_fleet_agent, rho_fleet_operator;');
    // The configured schema, though nothing listens at its url.
    const port = await freePort();
    const named = await runRho(['fleet', 'roles', '--operator-role', 'ops'], {
      env: { RHO_HOME: fleetHome({ schema: 'team_fleet', url: `postgres://postgres@127.0.0.1:${port}/postgres` }) },
    });
    expect(named.code).toBe(0);
    expect(named.stdout).toContain('grant usage on schema team_fleet to rho_fleet_agent, ops;');
    const bad = await runRho(['fleet', 'roles', '--agent-role', 'x; drop'], {
      env: { RHO_HOME: mkdtempSync(join(tmpdir(), 'rho-no-fleet-')) },
    });
    expect(bad.code).toBe(2);
  });

  it('loads neither @rho/fleet nor the PostgreSQL driver for a run; with a fleet it does', async () => {
    const server = await fleet.model({ respond: () => ({ type: 'response', text: 'hello' }) });
    const preload = join(import.meta.dirname, 'support', 'record-imports.mjs');
    const imported = async (env: NodeJS.ProcessEnv) => {
      const record = join(mkdtempSync(join(tmpdir(), 'rho-imports-')), 'imports.txt');
      const outcome = await runRho(['--base-url', server!.url, 'say hello'], {
        env: {
          RHO_HOME: mkdtempSync(join(tmpdir(), 'rho-no-fleet-')),
          NODE_OPTIONS: `--import ${preload}`,
          RHO_TEST_IMPORTS: record,
          RHO_TEST_IMPORTS_PATTERN: '^(postgres|@rho/fleet(?!/settings$))(/|$)',
          ...env,
        },
      });
      expect(outcome.code).toBe(0);
      expect(outcome.stdout).toBe('hello\n');
      try {
        return [...new Set(readFileSync(record, 'utf8').trim().split('\n'))].sort();
      } catch {
        return [];
      }
    };
    expect(await imported({})).toEqual([]);
    // Nor does an operator command (rho ps) without a fleet.
    const record = join(mkdtempSync(join(tmpdir(), 'rho-imports-')), 'imports.txt');
    const ps = await runRho(['ps'], {
      env: {
        RHO_HOME: mkdtempSync(join(tmpdir(), 'rho-no-fleet-')),
        NODE_OPTIONS: `--import ${preload}`,
        RHO_TEST_IMPORTS: record,
        RHO_TEST_IMPORTS_PATTERN: '^(postgres|@rho/fleet(?!/settings$))(/|$)',
      },
    });
    expect(ps.code).toBe(0);
    expect(() => readFileSync(record, 'utf8')).toThrow(/ENOENT/);
    // A fleet that does not answer (nothing listens there): loaded, and the run still completes.
    const port = await freePort();
    expect(await imported({ RHO_FLEET_URL: `postgres://postgres@127.0.0.1:${port}/postgres` })).toEqual([
      '@rho/fleet',
      'postgres',
    ]);
  });
});

describe.skipIf(!probe.available)(`rho with a fleet on PostgreSQL ${probe.reason}`, () => {
  it('migrates (idempotent), reports status, registers and mirrors a run, prints stats, exports it on another node', async () => {
    const operator = { RHO_HOME: fleetHome({ schema }) };
    const before = await runRho(['fleet', 'status'], { env: operator });
    expect(before.code).toBe(2);
    expect(before.stdout).toContain('Schema:   version 0');
    expect(before.stderr).toContain('run rho fleet migrate');
    const first = await runRho(['fleet', 'migrate', '--json'], { env: operator });
    expect(first.code).toBe(0);
    const migrated = JSON.parse(first.stdout) as { schema: string; from: number; to: number };
    expect(migrated).toMatchObject({ schema, from: 0 });
    expect(migrated.to).toBeGreaterThan(0);
    const again = await runRho(['fleet', 'migrate'], { env: operator });
    expect(again.stdout).toBe(`Schema ${schema} is up to date (version ${migrated.to}).\n`);

    const server = await fleet.model({
      steps: [
        {
          type: 'response',
          toolCalls: [{ name: 'list', arguments: JSON.stringify({ path: '.' }) }],
          usage: { prompt_tokens: 1000, completion_tokens: 50 },
        },
        { type: 'response', text: 'Two files.', usage: { prompt_tokens: 1200, completion_tokens: 20 } },
      ],
    });
    const agentHome = fleetHome({ schema });
    const work = mkdtempSync(join(tmpdir(), 'rho-fleet-work-'));
    const run = await runOnNode(
      'node-a',
      ['--base-url', server.url, '-w', work, '-m', 'gpt-4o-mini', 'count the files'],
      {
        RHO_HOME: agentHome,
      },
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('Two files.\n');
    expect(run.stderr).not.toContain('fleet:');
    const [id] = readdirSync(join(agentHome, 'sessions'));
    const lines = traceLines(agentHome, id!);

    // Everything the trace holds is in the fleet once the run has ended (close flushes the mirror).
    const [listed] = JSON.parse((await runRho(['ps', '--json'], { env: operator })).stdout) as Listed[];
    expect(listed).toMatchObject({ id, status: 'completed', host: 'node-a', records: lines.length });
    expect(listed!.cost_usd).toBeGreaterThan(0);

    const status = await runRho(['fleet', 'status', '--json'], { env: operator });
    expect(status.code).toBe(0);
    const report = JSON.parse(status.stdout) as {
      url: string;
      schemaVersion: number;
      latestVersion: number;
      byStatus: Record<string, number>;
      byHost: { host: string; sessions: number }[];
    };
    expect(report.schemaVersion).toBe(report.latestVersion);
    expect(report.byStatus.completed).toBe(1);
    expect(report.byHost).toMatchObject([{ host: 'node-a', sessions: 1 }]);

    const stats = JSON.parse((await runRho(['stats', '--json'], { env: operator })).stdout) as Record<
      string,
      Record<string, unknown>[]
    >;
    expect(Object.keys(stats).sort()).toEqual(['cost_by_model', 'model_latency', 'sessions_by_status', 'tool_calls']);
    expect(stats.cost_by_model).toMatchObject([{ model: 'gpt-4o-mini', calls: 2, input_tokens: 2200 }]);
    expect(stats.tool_calls).toMatchObject([{ tool: 'list', calls: 1, failures: 0 }]);
    const table = await runRho(['stats', 'cost', '--by', 'profile'], { env: operator });
    expect(table.stdout).toMatch(/Cost and tokens by profile\nPROFILE\s+SESSIONS\s+CALLS/);
    expect(table.stdout).toMatch(/readonly\s+1\s+2\s+2,200/);
    const wrong = await runRho(['stats', 'tools', '--by', 'day'], { env: operator });
    expect(wrong.code).toBe(2);

    // Another node has no local copy: it exports the session from the fleet's mirror, the same steps.
    const local = JSON.parse((await runRho(['export', id!], { env: { RHO_HOME: agentHome } })).stdout) as {
      steps: unknown[];
    };
    const remote = await runOnNode('node-b', ['export', id!.slice(0, 6)], operator);
    expect(remote.code).toBe(0);
    const exported = JSON.parse(remote.stdout) as { session_id: string; steps: unknown[] };
    expect(exported.session_id).toBe(id);
    expect(exported.steps).toEqual(local.steps);
  }, 120_000);

  it('runs while the database is down at start, warns once, takes local directives, and registers with its whole trace once the database answers', async () => {
    const operator = { RHO_HOME: fleetHome({ schema }) };
    expect((await runRho(['fleet', 'migrate'], { env: operator })).code).toBe(0);
    const seen: RecordedRequest[] = [];
    const server = await fleet.model({
      respond: (request) => {
        seen.push(request);
        return {
          type: 'response',
          toolCalls: [{ name: 'list', arguments: JSON.stringify({ path: '.' }) }],
          delayMs: 20,
        };
      },
    });
    const port = await freePort();
    const agentHome = fleetHome({ schema, url: `postgres://postgres@127.0.0.1:${port}/postgres` });
    const work = mkdtempSync(join(tmpdir(), 'rho-fleet-work-'));
    const agent = startOnNode('node-e', ['--base-url', server.url, '-w', work, 'task-e: list the files'], {
      RHO_HOME: agentHome,
    });
    fleet.track(agent);
    await eventually(() => agent.stderr().includes('does not answer'), 'the warning that the fleet is down');
    const id = await eventually(() => readdirSync(join(agentHome, 'sessions'))[0], 'the session directory');
    await eventually(() => traceLines(agentHome, id).length > 10, 'the agent working without the fleet');

    // The file channel works as always while the fleet is away.
    const local = await runRho(['directive', id, '--dir', join(agentHome, 'sessions'), 'local-steer'], {
      env: { RHO_HOME: agentHome },
    });
    expect(local.code).toBe(0);
    await eventually(
      () =>
        seen.some((request) =>
          (request.body.messages as { content: unknown }[]).some(
            (message) => message.content === '[Operator directive] local-steer',
          ),
        ),
      'the local directive delivered',
    );
    const unregistered = JSON.parse((await runRho(['ps', '--json'], { env: operator })).stdout) as Listed[];
    expect(unregistered.map((session) => session.id)).not.toContain(id);

    // The database comes up: the agent registers and the fleet gets the trace from its first record.
    await startProxy(port);
    await eventually(async () => {
      const listed = JSON.parse((await runRho(['ps', '--json'], { env: operator })).stdout) as Listed[];
      return listed.find((session) => session.id === id && session.status === 'running');
    }, 'the agent registered once the database answers');
    const cancelled = await runRho(['cancel', id], { env: operator });
    expect(cancelled.stdout).toBe(`cancel: ${id} (node-e)\n`);
    expect((await agent.done).code).toBe(130);
    expect(agent.stderr().match(/does not answer/g)).toHaveLength(1);
    const lines = traceLines(agentHome, id);
    const [listed] = JSON.parse((await runRho(['ps', '--json'], { env: operator })).stdout) as Listed[];
    expect(listed).toMatchObject({ id, status: 'cancelled', records: lines.length });
    const exported = await runOnNode('node-b', ['export', id], operator);
    const steps = (JSON.parse(exported.stdout) as { steps: { source: string; message: string }[] }).steps;
    expect(steps[0]).toMatchObject({ source: 'user', message: 'task-e: list the files' });
    expect(steps.some((step) => step.message.includes('local-steer'))).toBe(true);
  }, 180_000);

  it('registers the children a run delegates to, under their parent; watch, monitor and connect see them from another node', async () => {
    const operator = { RHO_HOME: fleetHome({ schema }) };
    expect((await runRho(['fleet', 'migrate'], { env: operator })).code).toBe(0);
    const server = await fleet.model({
      respond: (request) => {
        const messages = request.body.messages as { role: string; content: unknown }[];
        if (messages.some((message) => message.role === 'user' && String(message.content).includes('child-task')))
          return { type: 'response', text: 'child done' };
        if (messages.at(-1)?.role === 'tool') return { type: 'response', text: 'parent done' };
        return {
          type: 'response',
          toolCalls: [{ name: 'delegate', arguments: JSON.stringify({ instruction: 'child-task: say done' }) }],
        };
      },
    });
    const agentHome = fleetHome({ schema });
    const work = mkdtempSync(join(tmpdir(), 'rho-fleet-work-'));
    const run = await runOnNode('node-f', ['-y', '--base-url', server.url, '-w', work, 'parent-task: delegate'], {
      RHO_HOME: agentHome,
    });
    expect(run.stdout).toBe('parent done\n');
    const listed = JSON.parse(
      (await runRho(['ps', '--json', '--host', 'node-f'], { env: operator })).stdout,
    ) as (Listed & {
      parent_id: string | null;
    })[];
    const parent = listed.find((session) => session.parent_id === null)!;
    const child = listed.find((session) => session.parent_id !== null)!;
    expect(listed).toHaveLength(2);
    expect(child).toMatchObject({ parent_id: parent.id, status: 'completed', host: 'node-f' });
    expect(child.records).toBe(traceLines(agentHome, child.id).length);
    expect(parent.records).toBe(traceLines(agentHome, parent.id).length);
    const table = await runRho(['ps', '--host', 'node-f'], { env: operator });
    expect(table.stdout).toMatch(new RegExp(`\\n└ ${child.id}\\s+completed\\s+node-f`));
    // Watching the parent from another node shows the child's records too, tagged with its id.
    const watched = await runRho(['watch', parent.id, '--json'], { env: operator });
    const tagged = watched.stdout
      .trim()
      .split('\n')
      .map(
        (line) => JSON.parse(line) as { type: string; child_session_id?: string; content?: string; purpose?: string },
      );
    expect(tagged[0]).toMatchObject({ type: 'run_start' });
    // (The parent's own record of the child's usage names the child too, with purpose child_session.)
    const own = (record: (typeof tagged)[number]) =>
      record.child_session_id === undefined || record.purpose === 'child_session';
    expect(tagged.filter(own)).toHaveLength(parent.records);
    expect(tagged.filter((record) => !own(record) && record.child_session_id === child.id)).toHaveLength(child.records);
    expect(tagged).toContainEqual(
      expect.objectContaining({ type: 'message', content: 'child done', child_session_id: child.id }),
    );
    // The monitor console works on the fleet too (its lines are the same commands).
    const monitor = await runRho(['monitor'], {
      env: operator,
      input: `ps --host node-f --status completed\nwatch ${child.id} --json\nquit\n`,
    });
    expect(monitor.code).toBe(0);
    expect(monitor.stdout).toContain('rho monitor: the fleet');
    expect(monitor.stdout).toMatch(new RegExp(`monitor> ID.*\\n${parent.id}\\s+completed\\s+node-f`));
    const consoleWatch = monitor.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { type: string; content?: string; status?: string });
    expect(consoleWatch[0]).toMatchObject({ type: 'run_start' });
    expect(consoleWatch).toContainEqual(expect.objectContaining({ type: 'message', content: 'child done' }));
    expect(consoleWatch.at(-1)).toMatchObject({ type: 'run_end', status: 'completed' });
    // connect on another node: the coordinator gets the sessions' context from the fleet's mirror.
    const requestsBefore = server.requests.length;
    const connected = await runRho(['connect', parent.id, '--task', 'summarize them'], {
      env: { ...operator, OPENAI_BASE_URL: server.url },
    });
    expect(connected.code).toBe(0);
    const coordinatorPrompt = String(
      (server.requests[requestsBefore]!.body.messages as { role: string; content: unknown }[]).find(
        (message) => message.role === 'user',
      )?.content,
    );
    expect(coordinatorPrompt).toContain('[rho connect]');
    expect(coordinatorPrompt).toContain('parent-task: delegate');
    expect(coordinatorPrompt).toContain('summarize them');
  }, 120_000);

  it('resumes a fleet session without the fleet and with it again: directives once each, the whole trace mirrored', async () => {
    const operator = { RHO_HOME: fleetHome({ schema }) };
    expect((await runRho(['fleet', 'migrate'], { env: operator })).code).toBe(0);
    const server = await fleet.model({
      respond: (request) => {
        const messages = request.body.messages as { role: string; content: unknown }[];
        // The latest instruction decides: the first task and note-zero keep the agent working.
        const text = String(messages.filter((message) => message.role === 'user').at(-1)?.content);
        if (text.includes('loop') || text.includes('note-zero'))
          return { type: 'response', toolCalls: [{ name: 'list', arguments: '{}' }], delayMs: 20 };
        if (text.startsWith('[Operator directive] ')) return { type: 'response', text: `ok: ${text.slice(21)}` };
        return { type: 'response', text: 'done' };
      },
    });
    const agentHome = fleetHome({ schema });
    const work = mkdtempSync(join(tmpdir(), 'rho-fleet-work-'));
    const base = ['--base-url', server.url, '-w', work];
    const first = startOnNode('node-g', [...base, 'loop until told'], { RHO_HOME: agentHome });
    fleet.track(first);
    const id = await eventually(() => readdirSync(join(agentHome, 'sessions'))[0], 'the session');
    await eventually(async () => {
      const [listed] = JSON.parse(
        (await runRho(['ps', '--json', '--host', 'node-g'], { env: operator })).stdout,
      ) as Listed[];
      return listed?.status === 'running';
    }, 'the session running in the fleet');
    // A directive through the file first (the run goes on), then one through the fleet (it ends).
    const sessions = join(agentHome, 'sessions');
    const local = await runRho(['directive', id, '--dir', sessions, 'note-zero'], { env: { RHO_HOME: agentHome } });
    expect(local.code).toBe(0);
    await eventually(
      () =>
        server!.requests.some((request) =>
          (request.body.messages as { content: unknown }[]).some(
            (message) => message.content === '[Operator directive] note-zero',
          ),
        ),
      'the file directive delivered',
    );
    expect((await runRho(['directive', id, 'finish now'], { env: operator })).code).toBe(0);
    expect((await first.done).stdout).toBe('ok: finish now\n');

    // Resumed without the fleet: a new directive through the file is delivered, none of the earlier ones again.
    expect(
      (await runRho(['directive', id, '--dir', sessions, 'local-one'], { env: { RHO_HOME: agentHome } })).code,
    ).toBe(0);
    const count = () => server!.requests.length;
    const before = count();
    const second = await runOnNode('node-g', [...base, '--fleet', '', '--resume', id, 'second task'], {
      RHO_HOME: agentHome,
    });
    expect(second.stdout).toBe('ok: local-one\n');
    const resumedRequest = server.requests[before]!.body.messages as { content: unknown }[];
    const directives = resumedRequest
      .map((message) => String(message.content))
      .filter((text) => text.startsWith('[Operator directive]'));
    expect(directives).toEqual([
      '[Operator directive] note-zero',
      '[Operator directive] finish now',
      '[Operator directive] local-one',
    ]);
    expect(count()).toBe(before + 1);

    // Resumed with the fleet again: the records of the run without it are mirrored too.
    const third = await runOnNode('node-g', [...base, '--resume', id, 'third task'], { RHO_HOME: agentHome });
    expect(third.stdout).toBe('done\n');
    const lines = traceLines(agentHome, id);
    const [listed] = JSON.parse(
      (await runRho(['ps', '--json', '--host', 'node-g'], { env: operator })).stdout,
    ) as Listed[];
    expect(listed).toMatchObject({ id, status: 'completed', records: lines.length });
    const exported = await runOnNode('node-b', ['export', id], operator);
    expect(exported.stdout).toContain('local-one');
    expect(exported.stdout).toContain('second task');
  }, 180_000);

  it('lists this machine when the fleet does not answer, with a warning', async () => {
    const port = await freePort();
    const home = fleetHome({ schema, url: `postgres://postgres@127.0.0.1:${port}/postgres` });
    const outcome = await runRho(['ps'], { env: { RHO_HOME: home } });
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toContain('does not answer');
    expect(outcome.stderr).toContain("Showing this machine's sessions only.");
    expect(outcome.stdout).toContain('No sessions in');
  });

  it("keeps rho's secrets (API key, passwords) out of the fleet's tables and the exported spans", async () => {
    const operator = { RHO_HOME: fleetHome({ schema }) };
    expect((await runRho(['fleet', 'migrate'], { env: operator })).code).toBe(0);
    const key = 'sk-audit-0123456789abcdef';
    const dbPassword = 'pg-pass-4711-xyz';
    const url = `postgres://app:hunter2-url@db.internal/prod`;
    const server = await fleet.model({
      steps: [
        {
          type: 'response',
          toolCalls: [{ name: 'list', arguments: JSON.stringify({ path: '.', note: `${key} ${dbPassword} ${url}` }) }],
        },
        { type: 'response', text: `Done with ${key}.` },
      ],
    });
    const receiver = await startOtlpReceiver();
    try {
      const agentHome = fleetHome({ schema });
      const run = await runOnNode(
        'node-a',
        ['--otel', receiver.url, '--otel-content', '--base-url', server.url, `Use ${key} and ${url}`],
        { RHO_HOME: agentHome, OPENAI_API_KEY: key, PGPASSWORD: dbPassword },
      );
      expect(run.code).toBe(0);
      const [id] = readdirSync(join(agentHome, 'sessions'));
      const sql = postgres(SHARED_URL, { max: 1, onnotice: () => undefined });
      const stored = JSON.stringify([
        await sql.unsafe(`select * from "${schema}".agent_registry where session_id = $1`, [id!]),
        await sql.unsafe(`select record from "${schema}".trace_records where session_id = $1`, [id!]),
      ]);
      await sql.end({ timeout: 1 });
      const exported = receiver.bodies.join('\n');
      for (const sent of [stored, exported]) {
        expect(sent).toContain('[REDACTED]');
        for (const secret of [key, dbPassword, 'hunter2-url']) expect(sent).not.toContain(secret);
      }
      // The local trace is redacted by the same redactor: no secret reaches the model or the trace.
      const local = traceLines(agentHome, id!).join('\n');
      expect(local).toContain('[REDACTED:PGPASSWORD]');
      for (const secret of [key, dbPassword, 'hunter2-url']) expect(local).not.toContain(secret);
    } finally {
      await receiver.close();
    }
  }, 60_000);
});
