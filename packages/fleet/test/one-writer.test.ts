// Issue 33: one session id live on two nodes (a session directory restored from a backup without
// its lock) was neither refused nor warned about: the registry row moved to the second node, one
// cancel stopped both, and the fleet's copy of the trace mixed the two runs. Now a live row
// belongs to one process (host, pid, run token): a second process is refused, and a process that
// lost the row (its heartbeat went stale and another registered the session) writes nothing more
// and is asked to stop.
import { randomUUID } from 'node:crypto';
import type { TraceRecord } from '@rho/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fleet, FleetWarning } from '../src/index.js';
import { connectFleet, FleetSessionTakenError, FleetUnavailableError } from '../src/index.js';
import { admin, dropSchema, eventually, freshConfig, sharedServer } from './support/postgres.js';

function message(content: string): TraceRecord {
  return { type: 'message', role: 'assistant', content, ts: new Date().toISOString() } as unknown as TraceRecord;
}

describe.skipIf(!sharedServer.available)('one writer per fleet session', () => {
  const config = freshConfig(undefined, { heartbeatIntervalMs: 200, deadAfterMs: 2_000 });
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await connectFleet(config, { syncIntervalMs: 100 });
    await fleet.migrate();
  });
  afterAll(async () => {
    await fleet?.close();
    await dropSchema(config.schema);
  });

  it('refuses a second live process for a session id, saying who has it; the first keeps its row and its trace', async () => {
    const id = randomUUID();
    const first = await fleet.attachSession({ id, host: 'node-a', pid: 1111 });
    first.mirror.observe(message('a1'));
    expect(await first.mirror.flush(10_000)).toBe(true);
    const refusal = await fleet.attachSession({ id, host: 'node-b', pid: 2222 }).catch((error: unknown) => error);
    expect(FleetUnavailableError.isInstance(refusal)).toBe(true);
    const cause = (refusal as Error).cause;
    expect(FleetSessionTakenError.isInstance(cause)).toBe(true);
    expect((cause as Error).message).toContain(`Session ${id} is live on node-a (pid 1111)`);
    const [row] = await fleet.listSessions({ idPrefix: id });
    expect(row).toMatchObject({ host: 'node-a', pid: 1111, status: 'running' });
    // A background registration (a child session) is refused the same way, once, with a warning.
    const warnings: FleetWarning[] = [];
    const other = await connectFleet(config, { onWarning: (warning) => warnings.push(warning) });
    try {
      other.attachSessionInBackground({ id, host: 'node-c', pid: 3333 });
      await eventually(() => warnings.some((warning) => warning.code === 'session_taken'), 'the refusal warning');
    } finally {
      await other.close();
    }
    first.mirror.observe(message('a2'));
    expect(await first.mirror.flush(10_000)).toBe(true);
    const records: string[] = [];
    for await (const item of fleet.followRecords(id, { untilFinished: false, signal: AbortSignal.timeout(2_000) }))
      records.push(String((item.record as unknown as { content: string }).content));
    expect(records).toEqual(['a1', 'a2']);
    await first.close({ status: 'completed' });
  });

  it('a process whose heartbeat went stale and whose session was taken over is told to stop and writes nothing more', async () => {
    const id = randomUUID();
    const stale = await connectFleet(config, { syncIntervalMs: 100 });
    try {
      const first = await stale.attachSession({ id, host: 'node-a', pid: 1111 });
      first.mirror.observe(message('first run'));
      expect(await first.mirror.flush(10_000)).toBe(true);
      // The first process stops beating (a SIGSTOP, a frozen VM): its row goes stale. Its own
      // heartbeat (every 200 ms) may land between the update and the second attach on a loaded
      // machine, and the second is then rightly refused: age the row again and retry.
      const sql = admin();
      let second: Awaited<ReturnType<Fleet['attachSession']>> | undefined;
      try {
        for (let attempt = 0; second === undefined; attempt += 1) {
          await sql.unsafe(
            `update "${config.schema}".agent_registry set heartbeat_at = now() - interval '1 hour' where session_id = $1`,
            [id],
          );
          try {
            second = await fleet.attachSession({ id, host: 'node-b', pid: 2222 });
          } catch (error) {
            if (attempt >= 20 || !FleetSessionTakenError.isInstance((error as Error).cause)) throw error;
          }
        }
      } finally {
        await sql.end();
      }
      second.mirror.observe(message('second run'));
      expect(await second.mirror.flush(10_000)).toBe(true);
      // The first learns it lost the row: its run is asked to stop.
      await eventually(() => first.control.isCancelRequested(), 'the first process to be told to stop');
      // What it still writes reaches nothing: not the registry row, not the trace.
      first.mirror.observe(message('stale write'));
      await first.mirror.flush(5_000);
      await first.control.reportStatus('running');
      await first.close({ status: 'error' });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const [row] = await fleet.listSessions({ idPrefix: id });
      expect(row).toMatchObject({ host: 'node-b', pid: 2222 });
      const contents: string[] = [];
      for await (const item of fleet.followRecords(id, { untilFinished: false, signal: AbortSignal.timeout(2_000) }))
        contents.push(String((item.record as unknown as { content: string }).content));
      expect(contents).not.toContain('stale write');
      expect(contents).toContain('second run');
      await second.close({ status: 'completed' });
      expect((await fleet.listSessions({ idPrefix: id }))[0]).toMatchObject({ status: 'completed' });
    } finally {
      await stale.close();
    }
  });
});
