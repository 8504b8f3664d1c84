// The GRANT script: agents reach only the sessions of their own login role and cannot send
// signals; operators read all and send. Roles are cluster-wide, so this file makes its own with
// a random suffix and drops them.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fleet } from '../src/index.js';
import { connectFleet, fleetRolesSql } from '../src/index.js';
import { admin, dropSchema, eventually, freshConfig, sharedServer, SHARED_URL } from './support/postgres.js';

it('sql/roles.sql is the script for the default names', () => {
  const shipped = readFileSync(fileURLToPath(new URL('../sql/roles.sql', import.meta.url)), 'utf8');
  expect(shipped).toBe(fleetRolesSql());
  expect(() => fleetRolesSql({ agentRole: 'x; drop table y' })).toThrow(/not a lower-case SQL identifier/);
});

describe.skipIf(!sharedServer.available)(
  `roles${sharedServer.available ? '' : ` (skipped: ${sharedServer.reason})`}`,
  () => {
    const suffix = randomBytes(4).toString('hex');
    const roles = {
      agent: `rho_agent_${suffix}`,
      operator: `rho_operator_${suffix}`,
      nodeA: `node_a_${suffix}`,
      nodeB: `node_b_${suffix}`,
      alice: `alice_${suffix}`,
    };
    const config = freshConfig();
    const sql = admin();
    const as = (role: string) => ({ ...config, url: SHARED_URL.replace('postgres@', `${role}@`) });
    let owner: Fleet;
    let nodeA: Fleet;
    let nodeB: Fleet;
    let alice: Fleet;

    beforeAll(async () => {
      owner = await connectFleet(config);
      await owner.migrate();
      await sql.unsafe(fleetRolesSql({ schema: config.schema, agentRole: roles.agent, operatorRole: roles.operator }));
      // Idempotent: a second run changes nothing and does not fail.
      await sql.unsafe(fleetRolesSql({ schema: config.schema, agentRole: roles.agent, operatorRole: roles.operator }));
      await sql.unsafe(`create role ${roles.nodeA} login in role ${roles.agent}`);
      await sql.unsafe(`create role ${roles.nodeB} login in role ${roles.agent}`);
      await sql.unsafe(`create role ${roles.alice} login in role ${roles.operator}`);
      [nodeA, nodeB, alice] = await Promise.all([
        connectFleet(as(roles.nodeA)),
        connectFleet(as(roles.nodeB)),
        connectFleet(as(roles.alice)),
      ]);
    });
    afterAll(async () => {
      await Promise.all([nodeA?.close(), nodeB?.close(), alice?.close(), owner?.close()]);
      await dropSchema(config.schema);
      for (const role of [roles.nodeA, roles.nodeB, roles.alice, roles.agent, roles.operator])
        await sql.unsafe(`drop role if exists ${role}`).catch(() => undefined);
      await sql.end({ timeout: 1 });
    });

    it('lets an agent run its session through the fleet, and an operator see and steer it', async () => {
      const id = randomUUID();
      const attachment = await nodeA.attachSession({ id, host: 'a' });
      attachment.mirror.observe({ type: 'run_start', prompt: 'x', ts: new Date().toISOString() } as never);
      expect(await attachment.mirror.flush(10_000)).toBe(true);
      expect((await alice.resolveSession(id)).records).toBe(1);
      expect(await alice.operator(id).requestPause()).toBe('requested');
      await alice.operator(id).sendDirective('look here');
      await eventually(() => attachment.control.isPauseRequested(), 'the pause to reach the agent');
      expect((await attachment.control.takeDirectives(0)).texts).toEqual(['look here']);
      await attachment.control.reportStatus('paused');
      await eventually(
        async () => (await alice.resolveSession(id)).recordedStatus === 'paused',
        'the status the agent reported',
      );
      expect((await alice.stats('sessions_by_status')).length).toBeGreaterThan(0);
      expect(await alice.reconcile({ host: 'elsewhere' })).toEqual([]);
      await attachment.close({ status: 'completed' });
    });

    it("keeps an agent out of another role's sessions, signals and records, and from sending signals", async () => {
      const id = randomUUID();
      const attachment = await nodeA.attachSession({ id, host: 'a' });
      attachment.mirror.observe({ type: 'run_start', prompt: 'secret task', ts: new Date().toISOString() } as never);
      await attachment.mirror.flush(10_000);
      await alice.operator(id).sendDirective('for node a only');

      // Node B sees nothing of it.
      expect(await nodeB.listSessions()).toEqual([]);
      expect(await nodeB.readRecords(id)).toEqual([]);
      // Nor does its content search; its own role's and an operator's (a dashboard's) find it.
      expect(await nodeB.searchContent({ query: 'secret task', limit: 10 })).toEqual({
        hits: [],
        sessionsSearched: 0,
        complete: true,
      });
      for (const fleet of [nodeA, alice])
        expect((await fleet.searchContent({ query: 'SECRET', limit: 10 })).hits).toEqual([
          expect.objectContaining({ sessionId: id, record: 0, field: 'prompt', snippet: 'secret task' }),
        ]);
      const intruder = await nodeB.attachSession({ id: randomUUID(), host: 'b' });
      const b = admin(as(roles.nodeB).url);
      try {
        const schema = config.schema;
        expect(await b.unsafe(`select * from "${schema}".signal_queue where session_id = $1`, [id])).toEqual([]);
        // Nor can it read node A's directives through its own channel's queries.
        const stolen = await b.unsafe(`select payload from "${schema}".signal_queue`);
        expect(stolen).toEqual([]);
        // Sending signals: no insert into the queue, no flags, not even for its own session.
        await expect(
          b.unsafe(
            `insert into "${schema}".signal_queue (session_id, seq, kind, payload) values ($1, 99, 'cancel', null)`,
            [id],
          ),
        ).rejects.toThrow(/permission denied/);
        await expect(
          b.unsafe(`update "${schema}".agent_registry set pause_requested = true where session_id = $1`, [id]),
        ).rejects.toThrow(/permission denied/);
        // Taking over node A's session by registering the same id fails.
        await expect(nodeB.attachSession({ id, host: 'b' })).rejects.toThrow(/row-level security|could not register/);
        // Writing records into node A's session fails.
        await expect(
          b.unsafe(
            `insert into "${schema}".trace_records (session_id, seq, type, record) values ($1, 1000, 'message', '{}')`,
            [id],
          ),
        ).rejects.toThrow(/row-level security/);
        // Node B's operator-side channel is refused too.
        await expect(nodeB.operator(id).requestCancel()).rejects.toThrow(/no session|permission denied/i);
      } finally {
        await b.end({ timeout: 1 });
        await intruder.close();
      }
      // Node A still gets its directive, once.
      expect((await attachment.control.takeDirectives(0)).texts).toEqual(['for node a only']);
      await attachment.close({ status: 'completed' });
    });

    it("lets an operator answer a waiting call and an agent settle its own, never another role's", async () => {
      const id = randomUUID();
      const attachment = await nodeA.attachSession({ id, host: 'a' });
      const b = admin(as(roles.nodeB).url);
      try {
        expect(await alice.operator(id).answerApproval!('c1', { decision: 'approve', by: 'alice' })).toMatchObject({
          outcome: 'answered',
        });
        expect(await eventually(() => attachment.control.takeApprovalAnswer!('c1'), 'the answer')).toMatchObject({
          by: 'alice',
        });
        expect(await attachment.control.settleApproval!('c2', { decision: 'deny', source: 'timeout' })).toMatchObject({
          outcome: 'answered',
        });
        const schema = config.schema;
        expect(await b.unsafe(`select * from "${schema}".approval_answers`)).toEqual([]);
        await expect(
          b.unsafe(
            `insert into "${schema}".approval_answers (session_id, tool_call_id, decision) values ($1, 'c3', 'approve')`,
            [id],
          ),
        ).rejects.toThrow(/row-level security/);
        await expect(b.unsafe(`update "${schema}".approval_answers set decision = 'deny'`)).rejects.toThrow(
          /permission denied/,
        );
        await expect(nodeB.operator(id).answerApproval!('c3', { decision: 'approve' })).rejects.toThrow(
          /permission denied/i,
        );
      } finally {
        await b.end({ timeout: 1 });
        await attachment.close({ status: 'completed' });
      }
    });

    it("does not let an agent pass its sessions off as children of another role's session", async () => {
      const [parentId, childId, forgedId] = [randomUUID(), randomUUID(), randomUUID()];
      const parent = await nodeA.attachSession({ id: parentId, host: 'a' });
      const child = await nodeA.attachSession({ id: childId, host: 'a', parentId });
      const forged = await nodeB.attachSession({ id: forgedId, host: 'b', parentId });
      try {
        const listed = new Map((await alice.listSessions()).map((session) => [session.id, session]));
        expect(listed.get(childId)?.parentId).toBe(parentId);
        expect(listed.get(forgedId)).toBeDefined();
        expect(listed.get(forgedId)?.parentId).toBeUndefined();
      } finally {
        await Promise.all([forged, child, parent].map((attachment) => attachment.close({ status: 'completed' })));
      }
    });

    it("ignores a NOTIFY forged by another role: only the registry row's flags count", async () => {
      const id = randomUUID();
      const attachment = await nodeA.attachSession({ id, host: 'a' });
      const b = admin(as(roles.nodeB).url);
      const seen: string[] = [];
      const channel = `${config.schema}.signals`;
      const { unlisten } = await sql.listen(channel, (payload) => seen.push(payload));
      try {
        // NOTIFY needs no privilege: any role that can connect can send one on the fleet's channel.
        await b`select pg_notify(${channel}, ${`${id} cancel 999`})`;
        await b`select pg_notify(${channel}, ${`${id} pause 1000`})`;
        await eventually(() => seen.length >= 2, 'the forged notifications to be delivered');
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(await attachment.control.isCancelRequested()).toBe(false);
        expect(await attachment.control.isPauseRequested()).toBe(false);
        // And a real signal after the forged ones (with their high numbers) still arrives.
        expect(await alice.operator(id).requestPause()).toBe('requested');
        await eventually(() => attachment.control.isPauseRequested(), 'the real pause to reach the agent');
        expect(await attachment.control.isCancelRequested()).toBe(false);
      } finally {
        await unlisten();
        await b.end({ timeout: 1 });
        await attachment.close({ status: 'completed' });
      }
    });
  },
);
