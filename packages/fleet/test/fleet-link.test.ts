// FleetLink (what `rho --fleet` gives each session of its process) against the shared PostgreSQL:
// the records a session wrote before it was registered are read back from its trace, the rest are
// mirrored as observed, the composite channel takes operators' signals, and a database that does
// not answer is warned about once without the session ever waiting.
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TraceRecord } from '@rho/core';
import { FileOperatorChannel } from '@rho/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fleet } from '../src/index.js';
import { CompositeControlChannel, connectFleet, FleetLink } from '../src/index.js';
import { dropSchema, eventually, freshConfig, sharedServer } from './support/postgres.js';

const skipped = sharedServer.available ? '' : ` (skipped: ${sharedServer.reason})`;

const record = (type: string, fields: Record<string, unknown> = {}) =>
  ({ type, ts: new Date().toISOString(), ...fields }) as unknown as TraceRecord;

describe.skipIf(!sharedServer.available)(`FleetLink${skipped}`, () => {
  const config = freshConfig(undefined, { heartbeatIntervalMs: 300 });
  const root = mkdtempSync(join(tmpdir(), 'rho-fleet-link-'));
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await connectFleet(config, { syncIntervalMs: 200 });
    await fleet.migrate();
  });
  afterAll(async () => {
    await fleet?.close();
    await dropSchema(config.schema);
    rmSync(root, { recursive: true, force: true });
  });

  it('registers a session with its whole trace, mirrors what follows, and records its final status', async () => {
    const directory = join(root, 'link0001');
    const trace = join(directory, 'trace.jsonl');
    mkdirSync(directory, { recursive: true });
    // Written before the session was registered (the database was away, or an earlier run without a fleet).
    appendFileSync(trace, `${JSON.stringify(record('run_start', { prompt: 'task' }))}\n`);
    appendFileSync(trace, `${JSON.stringify(record('message', { role: 'user', content: 'task' }))}\n`);
    const warnings: string[] = [];
    const link = FleetLink.start(config, {
      labels: { team: 'data' },
      host: 'node-l',
      onWarning: (w) => warnings.push(w),
    });
    const options = link.sessionOptions({ id: 'link0001', model: 'm', firstPrompt: 'task' }, directory);
    expect(options.control).toBeInstanceOf(CompositeControlChannel);
    const [session] = await eventually(async () => {
      const found = await fleet.listSessions({ idPrefix: 'link0001' });
      return found.length === 1 && found[0]!.records === 2 ? found : undefined;
    }, 'the registration with the records of the trace');
    expect(session).toMatchObject({ host: 'node-l', labels: { team: 'data' }, model: 'm' });
    // An operator anywhere reaches the session through the composite channel.
    await fleet.operator('link0001').sendDirective('from the fleet');
    await new FileOperatorChannel(directory).sendDirective('from this machine');
    const taken = await eventually(async () => {
      const result = await options.control!.takeDirectives(0);
      return result.texts.length === 2 ? result : undefined;
    }, 'both directives');
    expect([...taken.texts].sort()).toEqual(['from the fleet', 'from this machine']);
    const end = record('run_end', { status: 'completed' });
    appendFileSync(trace, `${JSON.stringify(end)}\n`);
    for (const observe of options.traceObservers ?? []) observe(end);
    await link.close();
    expect((await fleet.readRecords('link0001')).map((mirrored) => [mirrored.seq, mirrored.record.type])).toEqual([
      [1, 'run_start'],
      [2, 'message'],
      [3, 'run_end'],
    ]);
    expect((await fleet.resolveSession('link0001')).recordedStatus).toBe('completed');
    expect(warnings).toEqual([]);
  });

  it('runs on the file channel while the database does not answer, warning once, and closes at once', async () => {
    const warnings: string[] = [];
    const link = FleetLink.start(
      { ...config, url: 'postgres://postgres@127.0.0.1:1/postgres' },
      { onWarning: (warning) => warnings.push(warning), retryMs: 50 },
    );
    const directory = join(root, 'away0001');
    mkdirSync(directory, { recursive: true });
    const options = link.sessionOptions({ id: 'away0001' }, directory);
    await new FileOperatorChannel(directory).requestCancel();
    expect(await options.control!.isCancelRequested()).toBe(true);
    await eventually(() => warnings.length > 0, 'the warning');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^fleet: .*The agent runs on without it/);
    const started = Date.now();
    await link.close(500);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
