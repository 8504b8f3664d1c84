// The fleet against the shared PostgreSQL, each describe in its own random schema: migrations,
// the registry and its liveness, refusals, the trace mirror (order, batching, overflow and
// catch-up from the trace file, a resumed session) and a real Session steered through the fleet.
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, createSecretRedactor, defineTool, SessionNotFoundError } from '@rho/core';
import type { TraceRecord } from '@rho/core';
import { createScriptedModelClient } from '@rho/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fleet, FleetWarning } from '../src/index.js';
import { connectFleet, FleetSignalRefusedError, FleetUnavailableError, LATEST_SCHEMA_VERSION } from '../src/index.js';
import { admin, dropSchema, eventually, freshConfig, sharedServer } from './support/postgres.js';

const skipped = sharedServer.available ? '' : ` (skipped: ${sharedServer.reason})`;
const root = mkdtempSync(join(tmpdir(), 'rho-fleet-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function record(type: string, fields: Record<string, unknown> = {}): TraceRecord {
  return { type, ts: new Date().toISOString(), ...fields } as unknown as TraceRecord;
}

describe.skipIf(!sharedServer.available)(`migrations${skipped}`, () => {
  const config = freshConfig();
  afterAll(() => dropSchema(config.schema));

  it('run from two connections at once: one creates the schema, the other finds it done; a re-run does nothing', async () => {
    const [first, second] = await Promise.all([connectFleet(config), connectFleet(config)]);
    try {
      await expect(first.listSessions()).rejects.toSatisfy(
        (error) => FleetUnavailableError.isInstance(error) && /run rho fleet migrate/.test((error as Error).message),
      );
      const results = await Promise.all([first.migrate(), second.migrate()]);
      expect(results).toContainEqual({ from: 0, to: LATEST_SCHEMA_VERSION });
      expect(results).toContainEqual({ from: LATEST_SCHEMA_VERSION, to: LATEST_SCHEMA_VERSION });
      expect(await first.migrate()).toEqual({ from: LATEST_SCHEMA_VERSION, to: LATEST_SCHEMA_VERSION });
      const sql = admin();
      const rows = await sql.unsafe(`select version from "${config.schema}".schema_migrations`);
      await sql.end();
      expect(rows.map((row) => row.version)).toEqual([1, 2, 3, 4]);
      const status = await second.status();
      expect(status).toMatchObject({ schemaVersion: 4, latestVersion: 4, byStatus: {}, byHost: [] });
      expect(status.url).toBe(config.url);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it('says what to fix when the server does not answer, without the password', async () => {
    await expect(
      connectFleet({ ...config, url: 'postgres://rho:hunter2@127.0.0.1:1/rho' }, { connectTimeoutSeconds: 2 }),
    ).rejects.toSatisfy(
      (error) =>
        FleetUnavailableError.isInstance(error) &&
        (error as Error).message.includes('postgres://rho:***@127.0.0.1:1/rho') &&
        !(error as Error).message.includes('hunter2'),
    );
  });
});

describe.skipIf(!sharedServer.available)(`registry${skipped}`, () => {
  const config = freshConfig(undefined, { deadAfterMs: 1_500, heartbeatIntervalMs: 300 });
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await connectFleet(config, { syncIntervalMs: 200 });
    await fleet.migrate();
  });
  afterAll(async () => {
    await fleet?.close();
    await dropSchema(config.schema);
  });

  it('lists sessions across hosts with filters, resolves prefixes fleet-wide, and judges liveness', async () => {
    const a = await fleet.attachSession({ id: 'aa11-first', host: 'node-a', labels: { team: 'data' }, model: 'm1' });
    const b = await fleet.attachSession({ id: 'aa22-second', host: 'node-b', labels: { team: 'ops' }, profile: 'dev' });
    const child = await fleet.attachSession({ id: 'bb33-child', host: 'node-b', parentId: 'aa22-second' });
    expect((await fleet.listSessions()).map((session) => session.id).sort()).toEqual([
      'aa11-first',
      'aa22-second',
      'bb33-child',
    ]);
    expect((await fleet.listSessions({ host: 'node-b' })).map((session) => session.id).sort()).toEqual([
      'aa22-second',
      'bb33-child',
    ]);
    expect((await fleet.listSessions({ label: 'team=data' })).map((session) => session.id)).toEqual(['aa11-first']);
    expect((await fleet.listSessions({ label: 'team' })).length).toBe(2);
    expect((await fleet.listSessions({ idPrefix: 'aa' })).length).toBe(2);
    expect((await fleet.listSessions({ idPrefix: '%' })).length).toBe(0);
    expect((await fleet.resolveSession('bb')).parentId).toBe('aa22-second');
    expect((await fleet.resolveSession('aa11')).model).toBe('m1');
    await expect(fleet.resolveSession('aa')).rejects.toSatisfy(
      (error) =>
        SessionNotFoundError.isInstance(error) &&
        (error as SessionNotFoundError).candidates.length === 2 &&
        /matches 2 sessions/.test((error as Error).message),
    );
    await expect(fleet.resolveSession('zz')).rejects.toSatisfy(
      (error) =>
        SessionNotFoundError.isInstance(error) && /No session in the fleet matches 'zz'/.test((error as Error).message),
    );

    // The attached sessions keep beating; one that stops (its node died) becomes dead.
    await b.close();
    const dead = await eventually(
      async () => (await fleet.resolveSession('aa22')).status === 'dead' || undefined,
      'the stopped session to be judged dead',
    );
    expect(dead).toBe(true);
    expect((await fleet.resolveSession('aa11')).status).toBe('running');
    expect((await fleet.listSessions({ status: 'dead' })).map((session) => session.id)).toEqual(['aa22-second']);
    await expect(fleet.operator('aa22-second').requestCancel()).rejects.toSatisfy(
      (error) =>
        FleetSignalRefusedError.isInstance(error) && /is dead: the cancel was not sent/.test((error as Error).message),
    );
    await expect(fleet.operator('nope').requestPause()).rejects.toSatisfy((error) =>
      SessionNotFoundError.isInstance(error),
    );

    // A finished session refuses signals with a message that says so.
    await child.close({ status: 'completed' });
    await expect(fleet.operator('bb33-child').sendDirective('more')).rejects.toSatisfy(
      (error) =>
        FleetSignalRefusedError.isInstance(error) &&
        /bb33-child is completed: the directive was not sent because it has finished/.test((error as Error).message),
    );
    const status = await fleet.status();
    expect(status.byStatus).toMatchObject({ running: 1, dead: 1, completed: 1 });
    expect(status.byHost.map((host) => [host.host, host.sessions, host.live])).toEqual([
      ['node-a', 1, 1],
      ['node-b', 2, 0],
    ]);
    expect(await fleet.stats('sessions_by_status')).toContainEqual(
      expect.objectContaining({ status: 'dead', sessions: 1 }),
    );
    await a.close({ status: 'completed' });
  });

  it('reconciles a restarted node: its sessions whose process is gone become dead', async () => {
    const host = `node-${randomUUID().slice(0, 8)}`;
    // A process id that is certainly gone: a child that has exited.
    const { spawnSync } = await import('node:child_process');
    const gonePid = Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout);
    const other = await connectFleet(config);
    try {
      const stale = await other.attachSession({ id: `${host}-stale`, host, pid: gonePid });
      const alive = await other.attachSession({ id: `${host}-alive`, host, pid: process.pid });
      // The node restarts: its attachments are gone without a final status.
      await stale.close();
      await alive.close();
      const marked = await fleet.reconcile({ host });
      expect(marked).toContain(`${host}-stale`);
      expect(marked).not.toContain(`${host}-alive`);
      expect((await fleet.resolveSession(`${host}-stale`)).status).toBe('dead');
      expect((await fleet.resolveSession(`${host}-stale`)).recordedStatus).toBe('running');
    } finally {
      await other.close();
    }
  });
});

describe.skipIf(!sharedServer.available)(`trace mirror${skipped}`, () => {
  const config = freshConfig();
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await connectFleet(config);
    await fleet.migrate();
  });
  afterAll(async () => {
    await fleet?.close();
    await dropSchema(config.schema);
  });

  it('mirrors in order with gapless sequence numbers, updates usage and status, and wakes followers', async () => {
    const id = randomUUID();
    const attachment = await fleet.attachSession({ id });
    const followed: number[] = [];
    const follower = (async () => {
      for await (const item of fleet.followRecords(id, { pollIntervalMs: 60_000 })) followed.push(item.seq);
    })();
    attachment.mirror.observe(record('run_start', { prompt: 'go' }));
    for (let index = 0; index < 450; index += 1)
      attachment.mirror.observe(
        record('llm_end', {
          model: 'm',
          input_tokens: 10,
          output_tokens: 1,
          cache_read_tokens: 0,
          reasoning_tokens: 0,
          cost_usd: 0.001,
          duration_ms: index,
        }),
      );
    attachment.mirror.observe(record('tool_end', { tool_name: 'read', success: false, duration_ms: 3 }));
    attachment.mirror.observe(record('tool_end', { tool_name: 'read', success: true, duration_ms: 5 }));
    attachment.mirror.observe(
      record('run_end', { status: 'completed', usage: { input_tokens: 4500, output_tokens: 450, cost_usd: 0.45 } }),
    );
    expect(await attachment.mirror.flush(20_000)).toBe(true);
    expect(attachment.mirror.stats()).toMatchObject({
      observed: 454,
      mirrored: 454,
      pending: 0,
      dropped: 0,
      behind: false,
    });
    await attachment.close();
    await follower;
    // The follower (woken by NOTIFY; its poll is a minute) saw every record once, in order, then ended.
    expect(followed).toEqual(Array.from({ length: 454 }, (_, index) => index + 1));
    const records = await fleet.readRecords(id, 450);
    expect(records.map((item) => item.record.type)).toEqual(['llm_end', 'tool_end', 'tool_end', 'run_end']);
    const session = await fleet.resolveSession(id);
    expect(session).toMatchObject({ status: 'completed', inputTokens: 4500, outputTokens: 450, records: 454 });
    expect(await fleet.stats('tool_calls')).toEqual([
      expect.objectContaining({ tool: 'read', calls: 2, failures: 1, failure_rate: 0.5 }),
    ]);
    const [latency] = await fleet.stats('model_latency');
    expect(latency).toMatchObject({ model: 'm', calls: 450, p50_ms: 224.5, max_ms: 449 });
  });

  it('stores what jsonb cannot hold as close as it can, and one bad batch never holds up the others', async () => {
    const id = randomUUID();
    const other = randomUUID();
    const attachment = await fleet.attachSession({ id });
    const neighbour = await fleet.attachSession({ id: other });
    // A NUL character in a tool's output and a time PostgreSQL cannot read.
    attachment.mirror.observe(record('message', { role: 'tool', content: 'a\u0000b\\u0000c' }));
    attachment.mirror.observe({ type: 'error', ts: 'yesterday-ish', content: 'x' } as unknown as TraceRecord);
    neighbour.mirror.observe(record('run_start', { prompt: 'next door' }));
    expect(await attachment.mirror.flush(20_000)).toBe(true);
    expect(await neighbour.mirror.flush(20_000)).toBe(true);
    const [nul, badTime] = await fleet.readRecords(id);
    expect(nul!.record).toMatchObject({ content: 'a\ufffdb\\u0000c' });
    expect(badTime!.record).toMatchObject({ ts: 'yesterday-ish' });
    expect((await fleet.readRecords(other)).length).toBe(1);
    // Something jsonb refuses (a lone UTF-16 surrogate), written in the same transaction as a
    // neighbour's record: the neighbour's lands, the refused record stays in the local trace only.
    attachment.mirror.observe(record('message', { role: 'tool', content: 'broken \ud800 text' }));
    neighbour.mirror.observe(record('run_end', { status: 'completed' }));
    expect(await neighbour.mirror.flush(20_000)).toBe(true);
    expect(await attachment.mirror.flush(20_000)).toBe(true);
    expect(attachment.mirror.stats()).toMatchObject({ observed: 3, lost: 1 });
    attachment.mirror.observe(record('run_end', { status: 'completed' }));
    expect(await attachment.mirror.flush(20_000)).toBe(true);
    expect((await fleet.readRecords(id)).map((item) => item.seq)).toEqual([1, 2, 4]);
    expect((await fleet.readRecords(other)).map((item) => item.record.type)).toEqual(['run_start', 'run_end']);
    expect(() => fleet.attachSessionInBackground({ id: 'has space' })).toThrow(/without spaces or commas/);
    await attachment.close();
    await neighbour.close();
  });

  it('never blocks: on overflow it drops, says it fell behind, and catches up from the trace file without gaps or duplicates', async () => {
    const id = randomUUID();
    const tracePath = join(root, `${id}.jsonl`);
    const warnings: FleetWarning[] = [];
    // A resumed session: three records from an earlier process, one of which the fleet already has.
    const earlier = [record('run_start', { prompt: 'one' }), record('message', { role: 'user', content: 'one' })];
    appendFileSync(tracePath, `${JSON.stringify(earlier[0])}\n${JSON.stringify(earlier[1])}\n`);
    const attachment = await fleet.attachSession(
      { id },
      { tracePath, bufferLimit: 5, batchSize: 3, onWarning: (w) => warnings.push(w) },
    );
    // It starts by mirroring what the earlier process left unmirrored.
    expect(await attachment.mirror.flush(20_000)).toBe(true);
    expect((await fleet.readRecords(id)).map((item) => item.seq)).toEqual([1, 2]);
    // A burst larger than the buffer, written to the trace first as the session's sink does.
    const burst = Array.from({ length: 40 }, (_, index) =>
      record('message', { role: 'assistant', content: `m${index}` }),
    );
    for (const item of burst) {
      appendFileSync(tracePath, `${JSON.stringify(item)}\n`);
      attachment.mirror.observe(item);
    }
    expect(warnings.map((w) => w.code)).toContain('mirror_behind');
    expect(await attachment.mirror.flush(20_000)).toBe(true);
    expect(warnings.map((w) => w.code)).toContain('mirror_caught_up');
    const mirrored = await fleet.readRecords(id);
    expect(mirrored.map((item) => item.seq)).toEqual(Array.from({ length: 42 }, (_, index) => index + 1));
    const file = readFileSync(tracePath, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(mirrored.map((item) => item.record)).toEqual(file);
    await attachment.close();

    // The process restarts and resumes the session: numbering goes on from the trace, nothing twice.
    const again = await fleet.attachSession({ id }, { tracePath });
    const next = record('run_start', { prompt: 'two' });
    appendFileSync(tracePath, `${JSON.stringify(next)}\n`);
    again.mirror.observe(next);
    expect(await again.mirror.flush(20_000)).toBe(true);
    const all = await fleet.readRecords(id);
    expect(all.map((item) => item.seq)).toEqual(Array.from({ length: 43 }, (_, index) => index + 1));
    expect(all[42]!.record).toEqual(next);
    await again.close();
  });
});

describe.skipIf(!sharedServer.available)(`a session steered through the fleet${skipped}`, () => {
  const config = freshConfig();
  let fleet: Fleet;
  let operators: Fleet;
  beforeAll(async () => {
    fleet = await connectFleet(config);
    await fleet.migrate();
    operators = await connectFleet(config);
  });
  afterAll(async () => {
    await fleet?.close();
    await operators?.close();
    await dropSchema(config.schema);
  });

  it('is paused, given a directive and cancelled from another connection; its trace is mirrored exactly', async () => {
    const gates: (() => void)[] = [];
    const entered: number[] = [];
    const gate = defineTool({
      name: 'gate',
      description: 'Waits until the test opens it.',
      parameters: { type: 'object', properties: {} },
      async handle(_invocation, context) {
        entered.push(entered.length + 1);
        await new Promise<void>((resolve) => {
          gates.push(resolve);
          context.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        return { content: 'opened', success: true };
      },
    });
    let secondRequest: unknown;
    const client = createScriptedModelClient({
      model: 'gpt-4o-mini',
      steps: [
        { toolCalls: [{ id: 'g1', name: 'gate', arguments: {} }], usage: { inputTokens: 100, outputTokens: 5 } },
        (request) => {
          secondRequest = request.messages;
          return {
            toolCalls: [{ id: 'g2', name: 'gate', arguments: {} }],
            usage: { inputTokens: 200, outputTokens: 5 },
          };
        },
      ],
    });
    const directory = join(root, 'steered');
    mkdirSync(directory);
    const id = randomUUID();
    const attachment = await fleet.attachSession(
      { id, model: 'gpt-4o-mini', labels: { test: 'steer' } },
      { tracePath: join(directory, 'trace.jsonl') },
    );
    const session = new Agent({ tools: [gate], client }).createSession({
      id,
      directory,
      control: attachment.control,
      traceObservers: [attachment.mirror.observe],
      pollIntervalMs: 50,
    });
    const run = session.run('work through the gates');
    await eventually(() => entered.length === 1, 'the first tool call');
    const operator = operators.operator(id);
    expect(await operator.requestPause()).toBe('requested');
    await operator.sendDirective('use the second gate carefully');
    await eventually(() => attachment.control.isPauseRequested(), 'the pause to arrive');
    gates[0]!();
    await eventually(
      async () => (await operators.resolveSession(id)).status === 'paused',
      'the session to show paused',
    );
    expect(entered).toHaveLength(1);
    expect(await operator.requestResume()).toBe('requested');
    await eventually(() => entered.length === 2, 'the second tool call after resume');
    expect(JSON.stringify(secondRequest)).toContain('[Operator directive] use the second gate carefully');
    expect(await operator.requestCancel()).toBe('requested');
    const result = await run;
    expect(result.status).toBe('cancelled');
    await attachment.close({ status: result.status });
    const trace = readFileSync(join(directory, 'trace.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as TraceRecord);
    const mirrored = await operators.readRecords(id, 0, 10_000);
    expect(mirrored.map((item) => item.record)).toEqual(trace);
    expect(mirrored.map((item) => item.seq)).toEqual(trace.map((_, index) => index + 1));
    expect(await operators.resolveSession(id)).toMatchObject({
      status: 'cancelled',
      inputTokens: 300,
      records: trace.length,
    });
    // The signals were acknowledged by the agent, once each.
    const sql = admin();
    const signals = await sql.unsafe(
      `select kind, acked_at is not null as acked from "${config.schema}".signal_queue where session_id = $1 order by seq`,
      [id],
    );
    await sql.end();
    expect(signals.map((row) => `${row.kind}:${row.acked}`)).toEqual([
      'pause:true',
      'directive:true',
      'resume:true',
      'cancel:true',
    ]);
    await expect(operator.requestCancel()).rejects.toSatisfy((error) => FleetSignalRefusedError.isInstance(error));
  });
});

describe.skipIf(!sharedServer.available)(`secrets${skipped}`, () => {
  const config = freshConfig();
  afterAll(() => dropSchema(config.schema));

  it("keeps the redactor's secrets and any URL's password out of the registry and the mirrored records", async () => {
    const key = 'sk-audit-0123456789abcdef';
    const fleet = await connectFleet(config, { redactor: createSecretRedactor([key]) });
    const sql = admin();
    try {
      await fleet.migrate();
      const id = randomUUID();
      const attachment = await fleet.attachSession({
        id,
        host: 'a',
        firstPrompt: `use ${key} on postgres://app:hunter2-db@db.internal/prod`,
        labels: { token: key },
      });
      attachment.mirror.observe(record('run_start', { prompt: `key ${key}` }));
      attachment.mirror.observe(
        record('tool_start', {
          tool_name: 'bash',
          args: { command: `psql postgres://app:hunter2-db@db/prod -c "${key}"` },
        }),
      );
      expect(await attachment.mirror.flush(10_000)).toBe(true);
      await attachment.close({ status: 'completed' });
      const stored = JSON.stringify([
        await sql.unsafe(`select * from "${config.schema}".agent_registry`),
        await sql.unsafe(`select * from "${config.schema}".trace_records`),
      ]);
      expect(stored).toContain('[REDACTED]');
      expect(stored).toContain('postgres://app:[REDACTED]@db/prod');
      expect(stored).not.toContain(key);
      expect(stored).not.toContain('hunter2-db');
      expect((await fleet.readRecords(id)).length).toBe(2);
    } finally {
      await sql.end({ timeout: 1 });
      await fleet.close();
    }
  });
});
