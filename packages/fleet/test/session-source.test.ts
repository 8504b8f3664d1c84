// The fleet as a @rho/monitor SessionSource, against the shared PostgreSQL in a random schema:
// the listed-session shape, filters, following a session and its children, signals (refused for a
// session that is not live), the mirrored trace and the telemetry views.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionNotFoundError } from '@rho/core';
import type { TraceRecord } from '@rho/core';
import { copySession } from '@rho/monitor';
import type { SessionSource } from '@rho/monitor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fleet, SessionAttachment } from '../src/index.js';
import {
  connectFleet,
  createFleetSessionSource,
  FleetSignalRefusedError,
  openFleetSessionSource,
} from '../src/index.js';
import { dropSchema, eventually, freshConfig, sharedServer } from './support/postgres.js';

const skipped = sharedServer.available ? '' : ` (skipped: ${sharedServer.reason})`;

function record(type: string, fields: Record<string, unknown> = {}): TraceRecord {
  return { type, ts: new Date().toISOString(), ...fields } as unknown as TraceRecord;
}

describe.skipIf(!sharedServer.available)(`the fleet as a SessionSource${skipped}`, () => {
  const config = freshConfig(undefined, { deadAfterMs: 30_000, heartbeatIntervalMs: 300 });
  let fleet: Fleet;
  let source: SessionSource;
  let running: SessionAttachment;
  let finished: SessionAttachment;
  const root = mkdtempSync(join(tmpdir(), 'rho-fleet-source-'));
  beforeAll(async () => {
    fleet = await connectFleet(config, { syncIntervalMs: 200 });
    await fleet.migrate();
    source = createFleetSessionSource(fleet, { discoverIntervalMs: 100 });
    finished = await fleet.attachSession({
      id: 'ff00-finished',
      host: 'node-a',
      model: 'm1',
      labels: { team: 'data' },
      startedAt: '2026-11-01T00:00:00.000Z',
      firstPrompt: 'old task',
    });
    finished.mirror.observe(record('run_start', { prompt: 'old task' }));
    finished.mirror.observe(
      record('llm_end', { model: 'm1', input_tokens: 5, output_tokens: 1, cost_usd: null, duration_ms: 3 }),
    );
    finished.mirror.observe(record('run_end', { status: 'completed' }));
    await finished.close({ status: 'completed' });
    running = await fleet.attachSession({
      id: 'aa00-running',
      host: 'node-b',
      model: 'm2',
      profile: 'developer',
      cwd: '/work',
      firstPrompt: 'live task',
    });
    running.mirror.observe(record('run_start', { prompt: 'live task' }));
    await running.mirror.flush();
  });
  afterAll(async () => {
    await running?.close();
    await fleet?.close();
    await dropSchema(config.schema);
    rmSync(root, { recursive: true, force: true });
  });

  it('lists sessions in the one listed shape, with filters, and resolves prefixes', async () => {
    expect(source.kind).toBe('fleet');
    expect(source.description).toBe(`the fleet at ${config.url} (schema ${config.schema})`);
    const { sessions, total } = await source.list();
    expect(total).toBeUndefined();
    expect(sessions.map((session) => session.id)).toEqual(['aa00-running', 'ff00-finished']);
    expect(sessions[0]).toMatchObject({
      status: 'running',
      recordedStatus: 'running',
      hostname: 'node-b',
      model: 'm2',
      profile: 'developer',
      cwd: '/work',
      firstPrompt: 'live task',
      records: 1,
    });
    // Nothing was priced: the cost is unknown (null), not zero.
    expect(sessions[1]).toMatchObject({
      status: 'completed',
      labels: { team: 'data' },
      inputTokens: 5,
      costUsd: null,
      unpricedCalls: 1,
    });
    const ids = async (filter: Parameters<SessionSource['list']>[0]) =>
      (await source.list(filter)).sessions.map((session) => session.id);
    expect(await ids({ hostname: 'node-a' })).toEqual(['ff00-finished']);
    expect(await ids({ label: 'team=data' })).toEqual(['ff00-finished']);
    expect(await ids({ status: ['running'] })).toEqual(['aa00-running']);
    expect(await ids({ accepts: 'cancel' })).toEqual(['aa00-running']);
    expect(await ids({ accepts: 'resume' })).toEqual([]);
    // A limit keeps older live sessions in sight when asked to.
    expect(await ids({ limit: 1 })).toEqual(['aa00-running']);
    expect((await source.resolve('ff00')).id).toBe('ff00-finished');
    expect(await source.get('ff00')).toBeUndefined();
    expect((await source.get('ff00-finished'))?.model).toBe('m1');
    await expect(source.resolve('zz')).rejects.toSatisfy((error) => SessionNotFoundError.isInstance(error));
    await expect(source.operator('zz')).rejects.toSatisfy((error) => SessionNotFoundError.isInstance(error));
  });

  it('signals a live session and refuses one that is not live', async () => {
    expect(await source.control('aa00-running', 'pause')).toEqual({
      outcome: 'requested',
      status: 'running',
      live: true,
    });
    await eventually(() => running.control.isPauseRequested(), 'the pause to reach the agent');
    expect(await source.control('aa00-running', 'pause')).toMatchObject({ outcome: 'unchanged' });
    expect(await source.control('aa00-running', 'resume')).toMatchObject({ outcome: 'requested' });
    expect(await source.sendDirective('aa00-running', 'focus on the logs')).toEqual({ status: 'running', live: true });
    await eventually(
      async () => (await running.control.takeDirectives(0)).texts.includes('focus on the logs'),
      'the directive',
    );
    await expect(source.control('ff00-finished', 'cancel')).rejects.toSatisfy((error) =>
      FleetSignalRefusedError.isInstance(error),
    );
    await expect(source.sendDirective('ff00-finished', 'late')).rejects.toSatisfy((error) =>
      FleetSignalRefusedError.isInstance(error),
    );
  });

  it('follows a session and its child sessions as they register, until the run ends', async () => {
    const seen: string[] = [];
    const following = (async () => {
      for await (const { record: followed, childId } of source.follow('aa00'))
        seen.push(`${childId ?? 'parent'}:${followed.type}`);
    })();
    const child = await fleet.attachSession({ id: 'cc00-child', host: 'node-b', parentId: 'aa00-running' });
    child.mirror.observe(record('run_start', { prompt: 'sub task' }));
    child.mirror.observe(record('run_end', { status: 'completed' }));
    await child.close({ status: 'completed' });
    await eventually(() => seen.includes('cc00-child:run_end'), 'the child’s records');
    running.mirror.observe(record('run_end', { status: 'completed' }));
    await running.mirror.flush();
    await running.close({ status: 'completed' });
    await following;
    expect(seen).toEqual(['parent:run_start', 'cc00-child:run_start', 'cc00-child:run_end', 'parent:run_end']);
    // Only what is written from now on, and only the session's own records.
    const after: string[] = [];
    for await (const { record: followed } of source.follow('aa00-running', { fromStart: false, children: false }))
      after.push(followed.type);
    expect(after).toEqual([]);
  });

  it('reads the mirrored trace, copies a session into a directory, and serves the telemetry views', async () => {
    const trace = await source.readTrace('ff00-finished');
    expect(
      trace
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { type: string }).type),
    ).toEqual(['run_start', 'llm_end', 'run_end']);
    const copied = await copySession(source, await source.resolve('ff00'), root);
    expect(readFileSync(join(copied.directory, 'trace.jsonl'), 'utf8')).toBe(trace);
    expect(JSON.parse(readFileSync(join(copied.directory, 'meta.json'), 'utf8'))).toMatchObject({
      id: 'ff00-finished',
      status: 'completed',
      hostname: 'node-a',
      first_prompt: 'old task',
    });
    const byStatus = await source.stats!('sessions_by_status');
    expect(byStatus.find((row) => row.status === 'completed')).toBeDefined();
  });

  it('opens its own connection and closes it with the source', async () => {
    const own = await openFleetSessionSource(config, { maxConnections: 1, connectTimeoutSeconds: 5 });
    expect((await own.list({ limit: 1 })).sessions).toHaveLength(1);
    await own.close();
    await expect(own.list()).rejects.toThrow();
  });
});
