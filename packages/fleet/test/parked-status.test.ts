// Schema version 4 against the shared PostgreSQL, in a random schema: a fleet created at version 3
// (migrations 1 to 3 as a released node left it) counts a session that waits for approval with its
// agent gone as `dead`; `migrate()` takes it to 4, and from then on the view of `rho stats`, the
// counts of `rho fleet status` and the listing (with its status filter) all say `parked`, as the
// monitor's listing of a sessions directory does. Finished and live sessions keep their status.
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fleet } from '../src/index.js';
import { connectFleet, createFleetSessionSource, LATEST_SCHEMA_VERSION } from '../src/index.js';
import { MIGRATIONS } from '../src/migrations.js';
import { admin, dropSchema, freshConfig, SHARED_URL, sharedServer } from './support/postgres.js';

const skipped = sharedServer.available ? '' : ` (skipped: ${sharedServer.reason})`;

describe.skipIf(!sharedServer.available)(`schema version 4: parked sessions${skipped}`, () => {
  const config = freshConfig();
  let fleet: Fleet;
  beforeAll(async () => {
    // The schema as a node of version 3 migrated it (the same statements, in the same transaction shape).
    const sql = postgres(SHARED_URL, {
      max: 1,
      onnotice: () => undefined,
      connection: { search_path: config.schema },
    });
    try {
      await sql.begin(async (tx) => {
        await tx.unsafe(`create schema "${config.schema}"`);
        await tx.unsafe(`create table "${config.schema}".schema_migrations (
          version integer primary key, description text not null, applied_at timestamptz not null default now())`);
        for (const migration of MIGRATIONS.filter((each) => each.version <= 3)) {
          for (const statement of migration.statements) await tx.unsafe(statement);
          await tx`insert into schema_migrations (version, description) values (${migration.version}, ${migration.description})`;
        }
        // Sessions as agents left them: two whose agents are gone (one waiting, one running), one
        // waiting with its agent alive, one finished long ago.
        await tx.unsafe(`insert into agent_registry (session_id, host, status, heartbeat_at, gone) values
          ('parked-1', 'node-a', 'waiting_approval', now() - interval '1 hour', false),
          ('parked-2', 'node-b', 'waiting_approval', now(), true),
          ('dead-1', 'node-a', 'running', now() - interval '1 hour', false),
          ('waiting-1', 'node-b', 'waiting_approval', now(), false),
          ('done-1', 'node-a', 'completed', now() - interval '1 day', false)`);
      });
    } finally {
      await sql.end({ timeout: 1 });
    }
    fleet = await connectFleet(config);
  });
  afterAll(async () => {
    await fleet?.close();
    await dropSchema(config.schema);
  });

  it('version 3 counted them dead; migrating to 4 makes every view say parked', async () => {
    expect(LATEST_SCHEMA_VERSION).toBe(4);
    // This version's node refuses an older schema: the view is read as a node of version 3 reads it.
    await expect(fleet.stats('sessions_by_status')).rejects.toThrow(/rho fleet migrate/);
    const sql = admin();
    const view = async () =>
      Object.fromEntries(
        (await sql.unsafe(`select status, sessions from "${config.schema}".sessions_by_status`)).map((row) => [
          row.status,
          Number(row.sessions),
        ]),
      );
    try {
      expect(await view()).toEqual({ dead: 3, waiting_approval: 1, completed: 1 });
      expect(await fleet.migrate()).toEqual({ from: 3, to: 4 });
      // The view was replaced in place: a node of version 3 reads the same columns.
      expect(await view()).toEqual({ parked: 2, dead: 1, waiting_approval: 1, completed: 1 });
    } finally {
      await sql.end({ timeout: 1 });
    }
    expect(await fleet.migrate()).toEqual({ from: 4, to: 4 });

    const after = Object.fromEntries(
      (await fleet.stats('sessions_by_status')).map((row) => [row.status, row.sessions]),
    );
    expect(after).toEqual({ parked: 2, dead: 1, waiting_approval: 1, completed: 1 });
    const status = await fleet.status();
    expect(status).toMatchObject({ schemaVersion: 4, latestVersion: 4 });
    expect(status.byStatus).toEqual({ parked: 2, dead: 1, waiting_approval: 1, completed: 1 });
    // A parked session has no agent: it is not counted live on its node.
    expect(status.byHost.map((host) => [host.host, host.sessions, host.live])).toEqual([
      ['node-a', 3, 0],
      ['node-b', 2, 1],
    ]);

    // The listing agrees, and its status filter finds them by the status it shows.
    const parked = await fleet.listSessions({ status: 'parked' });
    expect(parked.map((session) => session.id).sort()).toEqual(['parked-1', 'parked-2']);
    expect(parked.every((session) => session.recordedStatus === 'waiting_approval')).toBe(true);
    expect((await fleet.listSessions({ status: 'dead' })).map((session) => session.id)).toEqual(['dead-1']);
    const source = createFleetSessionSource(fleet);
    const listed = await source.list({ status: ['parked'] });
    expect(listed.sessions.map((session) => [session.id, session.status]).sort()).toEqual([
      ['parked-1', 'parked'],
      ['parked-2', 'parked'],
    ]);
    expect(listed.sessions[0]!.statusReason).toMatch(/rho approve/);
    expect((await source.get('waiting-1'))?.status).toBe('waiting_approval');
  });
});
