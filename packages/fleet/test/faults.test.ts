// Fault tests. A private PostgreSQL (never the shared one) is crashed and restarted while an agent
// is attached, records stream and signals are queued: the agent never fails or waits, nothing is
// lost or delivered twice, and the mirror catches up without gaps or duplicates. And an agent
// process killed with SIGKILL leaves a session that becomes dead.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TraceRecord } from '@rho/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fleet, FleetWarning } from '../src/index.js';
import { connectFleet, FleetSignalRefusedError } from '../src/index.js';
import { admin, dropSchema, eventually, freshConfig, sharedServer } from './support/postgres.js';
import type { PrivateServer } from './support/private-server.js';
import { privateServerSupport, startPrivateServer } from './support/private-server.js';

const support = privateServerSupport();
const root = mkdtempSync(join(tmpdir(), 'rho-fleet-faults-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe.skipIf(!support.available)(
  `a PostgreSQL restart under a running agent${support.available ? '' : ` (skipped: ${support.reason})`}`,
  () => {
    let server: PrivateServer;
    beforeAll(async () => {
      server = await startPrivateServer();
    }, 180_000);
    afterAll(() => server?.destroy());

    it('loses nothing and delivers nothing twice; the agent keeps working and catches up', async () => {
      const config = freshConfig(server.url, { heartbeatIntervalMs: 500, deadAfterMs: 60_000 });
      const agentFleet = await connectFleet(config, { syncIntervalMs: 300, connectTimeoutSeconds: 2 });
      const operators = await connectFleet(config, { connectTimeoutSeconds: 2 });
      try {
        await operators.migrate();
        const id = randomUUID();
        const tracePath = join(root, `${id}.jsonl`);
        const warnings: FleetWarning[] = [];
        const attachment = await agentFleet.attachSession(
          { id },
          { tracePath, bufferLimit: 50, batchSize: 20, onWarning: (warning) => warnings.push(warning) },
        );
        // The agent: a record every few milliseconds (to the trace first, as the session's sink
        // does), directives taken by cursor and control flags read, all the time.
        let written = 0;
        let cursor = 0;
        const delivered: string[] = [];
        let agentErrors = 0;
        let stop = false;
        const agent = (async () => {
          while (!stop) {
            const record = {
              type: 'message',
              role: 'assistant',
              content: `step ${written}`,
              ts: new Date().toISOString(),
            } as unknown as TraceRecord;
            appendFileSync(tracePath, `${JSON.stringify(record)}\n`);
            attachment.mirror.observe(record);
            written += 1;
            try {
              await attachment.control.isCancelRequested();
              await attachment.control.isPauseRequested();
              const taken = await attachment.control.takeDirectives(cursor);
              delivered.push(...taken.texts);
              cursor = taken.cursor;
              await attachment.control.heartbeat();
            } catch {
              agentErrors += 1;
            }
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
        })();

        // Signals queued before the crash, some taken, some not yet.
        const operator = operators.operator(id);
        for (let index = 1; index <= 5; index += 1) await operator.sendDirective(`before ${index}`);
        expect(await operator.requestPause()).toBe('requested');
        await eventually(() => written > 100, 'records to flow');

        server.stop('immediate');
        const writtenAtCrash = written;
        // The agent goes on while the database is away, and its calls answer without waiting for it.
        await eventually(() => written > writtenAtCrash + 150, 'the agent to keep working while the database is down');
        expect(warnings.map((warning) => warning.code)).toContain('mirror_behind');
        // A child session spawned while the database is away: it returns at once and registers later.
        const childId = randomUUID();
        const childTrace = join(root, `${childId}.jsonl`);
        const child = agentFleet.attachSessionInBackground({ id: childId, parentId: id }, { tracePath: childTrace });
        for (let index = 0; index < 3; index += 1) {
          const record = { type: 'message', role: 'user', content: `child ${index}`, ts: new Date().toISOString() };
          appendFileSync(childTrace, `${JSON.stringify(record)}\n`);
          child.mirror.observe(record as unknown as TraceRecord);
        }
        server.start();

        // Signals after the restart, from the operators' reconnected pool.
        await eventually(
          async () => {
            await operator.sendDirective('after 1');
            return true;
          },
          'the operators to reconnect',
          60_000,
        );
        for (let index = 2; index <= 3; index += 1) await operator.sendDirective(`after ${index}`);
        expect(await operator.requestCancel()).toBe('requested');
        // The agent's channel sees what was sent before and after, once each, in order.
        await eventually(() => attachment.control.isCancelRequested(), 'the cancel after the restart', 60_000);
        expect(await attachment.control.isPauseRequested()).toBe(true);
        await eventually(() => delivered.length >= 8, 'every directive', 60_000);
        stop = true;
        await agent;
        expect(delivered).toEqual([
          'before 1',
          'before 2',
          'before 3',
          'before 4',
          'before 5',
          'after 1',
          'after 2',
          'after 3',
        ]);
        expect(agentErrors).toBe(0);

        // The mirror catches up from the trace file: exactly the file, numbered 1..n.
        expect(await attachment.mirror.flush(60_000)).toBe(true);
        expect(warnings.map((warning) => warning.code)).toContain('mirror_caught_up');
        const mirrored: TraceRecord[] = [];
        for (let after = 0; ;) {
          const page = await operators.readRecords(id, after, 5_000);
          if (page.length === 0) break;
          page.forEach((item, index) => expect(item.seq).toBe(after + index + 1));
          mirrored.push(...page.map((item) => item.record));
          after = page[page.length - 1]!.seq;
        }
        const file = readFileSync(tracePath, 'utf8')
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as TraceRecord);
        expect(mirrored).toHaveLength(written);
        expect(mirrored).toEqual(file);

        // The child registered once the database was back, with its records.
        await eventually(
          async () => (await operators.resolveSession(childId)).parentId === id,
          'the child to register after the restart',
          60_000,
        );
        expect(await child.mirror.flush(60_000)).toBe(true);
        expect((await operators.readRecords(childId)).map((item) => item.seq)).toEqual([1, 2, 3]);
        await child.close({ status: 'completed' });

        // Every signal was acknowledged by the agent, each once in the queue.
        const sql = admin(server.url);
        try {
          await eventually(async () => {
            const rows = await sql.unsafe(
              `select kind, count(*)::int as n, bool_and(acked_at is not null) as acked
               from "${config.schema}".signal_queue where session_id = $1 group by kind order by kind`,
              [id],
            );
            return rows.every((row) => row.acked) && rows.map((row) => `${row.kind}:${row.n}`).join(' ');
          }, 'every signal to be acknowledged').then((summary) => expect(summary).toBe('cancel:1 directive:8 pause:1'));
        } finally {
          await sql.end({ timeout: 1 });
        }
        await attachment.control.clearCancel();
        await attachment.close({ status: 'cancelled' });
        await expect(operator.requestCancel()).rejects.toSatisfy((error) => FleetSignalRefusedError.isInstance(error));
      } finally {
        await agentFleet.close();
        await operators.close();
      }
    }, 240_000);

    it('a follower (rho watch) waits out the restart and goes on from where it was: every record once', async () => {
      const config = freshConfig(server.url, { heartbeatIntervalMs: 500, deadAfterMs: 60_000 });
      const agentFleet = await connectFleet(config, { syncIntervalMs: 300, connectTimeoutSeconds: 2 });
      const watcherFleet = await connectFleet(config, { connectTimeoutSeconds: 2 });
      try {
        await watcherFleet.migrate();
        const id = randomUUID();
        const tracePath = join(root, `${id}.jsonl`);
        const attachment = await agentFleet.attachSession({ id }, { tracePath });
        const emit = (content: string) => {
          const record = { type: 'message', role: 'assistant', content, ts: new Date().toISOString() };
          appendFileSync(tracePath, `${JSON.stringify(record)}\n`);
          attachment.mirror.observe(record as unknown as TraceRecord);
        };
        const seen: number[] = [];
        const lost: (string | undefined)[] = [];
        const follower = (async () => {
          for await (const item of watcherFleet.followRecords(id, {
            pollIntervalMs: 200,
            onConnectionLost: (error) => lost.push(error === undefined ? undefined : String(error)),
          }))
            seen.push(item.seq);
        })();
        for (let index = 0; index < 20; index += 1) emit(`before ${index}`);
        await eventually(() => seen.length === 20, 'the first records to be followed');
        server.stop('fast');
        await eventually(() => lost.length > 0, 'the follower to notice the database went away');
        for (let index = 0; index < 20; index += 1) emit(`during ${index}`);
        server.start();
        for (let index = 0; index < 20; index += 1) emit(`after ${index}`);
        attachment.mirror.observe({
          type: 'run_end',
          status: 'completed',
          ts: new Date().toISOString(),
        } as unknown as TraceRecord);
        await attachment.close({ status: 'completed', timeoutMs: 30_000 });
        await follower;
        expect(seen).toEqual(Array.from({ length: 61 }, (_, index) => index + 1));
        expect(lost[0]).toBeDefined();
        expect(lost.at(-1)).toBeUndefined();
      } finally {
        await Promise.all([agentFleet.close(), watcherFleet.close()]);
      }
    }, 120_000);
  },
);

describe.skipIf(!sharedServer.available)(
  `an agent process killed${sharedServer.available ? '' : ` (skipped: ${sharedServer.reason})`}`,
  () => {
    const config = freshConfig(undefined, { heartbeatIntervalMs: 300, deadAfterMs: 2_000 });
    let fleet: Fleet;
    beforeAll(async () => {
      fleet = await connectFleet(config);
      await fleet.migrate();
    });
    afterAll(async () => {
      await fleet?.close();
      await dropSchema(config.schema);
    });

    it('leaves a session that becomes dead, and signals to it are refused', async () => {
      const id = randomUUID();
      const entry = fileURLToPath(new URL('../dist/index.js', import.meta.url));
      const script = `
        const { connectFleet } = await import(${JSON.stringify(entry)});
        const fleet = await connectFleet(${JSON.stringify(config)}, { syncIntervalMs: 200 });
        await fleet.attachSession({ id: ${JSON.stringify(id)}, host: 'doomed-node' });
        process.stdout.write('attached\\n');
        setInterval(() => {}, 1000);
      `;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += String(chunk)));
      child.stderr.on('data', (chunk) => (output += String(chunk)));
      await eventually(() => output.includes('attached'), `the agent process to attach (output: ${output})`, 60_000);
      expect((await fleet.resolveSession(id)).status).toBe('running');
      // It keeps beating while alive.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect((await fleet.resolveSession(id)).status).toBe('running');
      child.kill('SIGKILL');
      await eventually(async () => (await fleet.resolveSession(id)).status === 'dead', 'the killed session to be dead');
      await expect(fleet.operator(id).requestPause()).rejects.toThrow(/is dead: the pause was not sent/);
      expect(await fleet.reconcile({ host: 'somewhere-else' })).toContain(id);
    }, 120_000);
  },
);
