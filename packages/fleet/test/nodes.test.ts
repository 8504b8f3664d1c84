// Several nodes on one machine: two agent processes, each with its own host name (its own UTS
// namespace when the test runs as root, else a `host` given to attachSession), run real
// sessions against the shared PostgreSQL; this process, a third node, lists them, watches one,
// pauses, steers and cancels them through the fleet alone.
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TraceRecord } from '@rho/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fleet } from '../src/index.js';
import { connectFleet } from '../src/index.js';
import { dropSchema, eventually, freshConfig, sharedServer } from './support/postgres.js';

const root = mkdtempSync(join(tmpdir(), 'rho-fleet-nodes-'));
const ownNamespaces = userInfo().uid === 0 && spawnSync('unshare', ['--uts', 'true'], { stdio: 'ignore' }).status === 0;

/** An agent node: a process running one session until it completes or is cancelled. */
function startNode(host: string, sessionId: string, config: object): { child: ChildProcess; output: () => string } {
  const fleetEntry = fileURLToPath(new URL('../dist/index.js', import.meta.url));
  const coreEntry = fileURLToPath(new URL('../../core/dist/index.js', import.meta.url));
  const testingEntry = fileURLToPath(new URL('../../core/dist/testing/index.js', import.meta.url));
  const directory = join(root, sessionId);
  const script = `
    import { mkdirSync } from 'node:fs';
    import { join } from 'node:path';
    const { connectFleet } = await import(${JSON.stringify(fleetEntry)});
    const { Agent, defineTool } = await import(${JSON.stringify(coreEntry)});
    const { createScriptedModelClient } = await import(${JSON.stringify(testingEntry)});
    const directory = ${JSON.stringify(directory)};
    mkdirSync(directory, { recursive: true });
    const fleet = await connectFleet(${JSON.stringify(config)}, { syncIntervalMs: 300 });
    const attachment = await fleet.attachSession(
      { id: ${JSON.stringify(sessionId)}, ${ownNamespaces ? '' : `host: ${JSON.stringify(host)},`} labels: { node: ${JSON.stringify(host)} } },
      { tracePath: join(directory, 'trace.jsonl') },
    );
    const tick = defineTool({
      name: 'tick', description: 'Waits a moment.', parameters: { type: 'object', properties: {} },
      async handle(_, context) { await new Promise((resolve) => setTimeout(resolve, 100)); return { content: 'tock', success: true }; },
    });
    // The model works tick after tick until an operator's directive says to finish.
    const step = (request) => JSON.stringify(request.messages).includes('[Operator directive] finish')
      ? { text: 'finished as asked', usage: { inputTokens: 10, outputTokens: 2 } }
      : { toolCalls: [{ id: 't' + Math.random().toString(36).slice(2), name: 'tick', arguments: {} }], usage: { inputTokens: 10, outputTokens: 2 } };
    const client = createScriptedModelClient({ model: 'gpt-4o-mini', steps: Array.from({ length: 5000 }, () => step) });
    const session = new Agent({ tools: [tick], client }).createSession({
      id: ${JSON.stringify(sessionId)}, directory, control: attachment.control,
      traceObservers: [attachment.mirror.observe], pollIntervalMs: 50,
    });
    process.stdout.write('started\\n');
    const result = await session.run('tick until told');
    await attachment.close({ status: result.status });
    await fleet.close();
    process.stdout.write('ended ' + result.status + ' ' + result.text + '\\n');
  `;
  const command = ownNamespaces ? 'unshare' : process.execPath;
  const args = ownNamespaces
    ? ['--uts', 'sh', '-c', `hostname ${host} && exec "$0" --input-type=module -e "$1"`, process.execPath, script]
    : ['--input-type=module', '-e', script];
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += String(chunk)));
  child.stderr!.on('data', (chunk) => (output += String(chunk)));
  return { child, output: () => output };
}

describe.skipIf(!sharedServer.available)(
  `nodes${sharedServer.available ? '' : ` (skipped: ${sharedServer.reason})`}${ownNamespaces ? ' in their own UTS namespaces' : ''}`,
  () => {
    const config = freshConfig(undefined, { heartbeatIntervalMs: 500 });
    let fleet: Fleet;
    const children: ChildProcess[] = [];
    beforeAll(async () => {
      fleet = await connectFleet(config);
      await fleet.migrate();
    });
    afterAll(async () => {
      for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
      await fleet?.close();
      await dropSchema(config.schema);
      rmSync(root, { recursive: true, force: true });
    });

    it('lists, watches, pauses, steers and cancels sessions of two other nodes', async () => {
      const a = startNode('fleet-node-a', 'alpha-session', config);
      const b = startNode('fleet-node-b', 'bravo-session', config);
      children.push(a.child, b.child);
      await eventually(async () => (await fleet.listSessions()).length === 2, 'both nodes to register', 60_000);
      const listed = await fleet.listSessions();
      expect(listed.map((session) => [session.id, session.host, session.status]).sort()).toEqual([
        ['alpha-session', 'fleet-node-a', 'running'],
        ['bravo-session', 'fleet-node-b', 'running'],
      ]);
      expect((await fleet.listSessions({ host: 'fleet-node-b' })).map((session) => session.id)).toEqual([
        'bravo-session',
      ]);
      expect((await fleet.listSessions({ label: 'node=fleet-node-a' })).map((session) => session.id)).toEqual([
        'alpha-session',
      ]);

      // Watch alpha from here while it is steered.
      const watched: TraceRecord[] = [];
      const watcher = (async () => {
        for await (const item of fleet.followRecords((await fleet.resolveSession('alp')).id)) watched.push(item.record);
      })();
      await eventually(() => watched.some((record) => record.type === 'tool_end'), 'alpha to work', 60_000);

      // Pause alpha: it holds, and its status says so.
      const alpha = fleet.operator('alpha-session');
      expect(await alpha.requestPause()).toBe('requested');
      await eventually(async () => (await fleet.resolveSession('alpha')).status === 'paused', 'alpha paused', 60_000);
      await eventually(
        () => watched.some((record) => record.type === 'status' && record.status === 'paused'),
        'the paused status in the watched trace',
        60_000,
      );
      await new Promise((resolve) => setTimeout(resolve, 700));
      const heldAt = watched.findIndex((record) => record.type === 'status' && record.status === 'paused');
      // Held: nothing ran after the pause was recorded.
      expect(
        watched.slice(heldAt + 1).filter((record) => record.type === 'tool_start' || record.type === 'llm_start'),
      ).toEqual([]);
      // Steer it and let it go on: it finishes as the directive says.
      await alpha.sendDirective('finish');
      expect(await alpha.requestResume()).toBe('requested');
      await watcher;
      expect(watched.find((record) => record.type === 'directive')).toMatchObject({ text: 'finish' });
      expect(watched[watched.length - 1]).toMatchObject({ type: 'run_end', status: 'completed' });

      // Cancel bravo.
      expect(await fleet.operator((await fleet.resolveSession('bravo')).id).requestCancel()).toBe('requested');
      await eventually(() => b.output().includes('ended'), `bravo to end (${b.output()})`, 60_000);
      await eventually(() => a.output().includes('ended'), `alpha to end (${a.output()})`, 60_000);
      expect(a.output()).toContain('ended completed finished as asked');
      expect(b.output()).toContain('ended cancelled');
      expect((await fleet.resolveSession('alpha')).status).toBe('completed');
      expect((await fleet.resolveSession('bravo')).status).toBe('cancelled');

      // What the fleet holds is each node's trace, exactly.
      for (const id of ['alpha-session', 'bravo-session']) {
        const trace = readFileSync(join(root, id, 'trace.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as TraceRecord);
        expect((await fleet.readRecords(id, 0, 100_000)).map((item) => item.record)).toEqual(trace);
      }
      await expect(fleet.operator('alpha-session').sendDirective('again')).rejects.toThrow(/is completed/);
    }, 180_000);
  },
);
