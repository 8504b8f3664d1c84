// The same control-channel and operator-channel tests against the file implementation (a session
// directory) and the PostgreSQL implementation (a fleet in a random schema of the shared server).
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileOperatorChannel } from '@rho/core';
import { FileControlChannel } from '@rho/core/internal';
import { afterAll, beforeAll, describe } from 'vitest';
import type { Fleet } from '../src/index.js';
import { connectFleet } from '../src/index.js';
import { approvalConformance } from './support/approval-conformance.js';
import { controlChannelConformance } from './support/control-conformance.js';
import { admin, dropSchema, freshConfig, sharedServer } from './support/postgres.js';

describe('file control channel', () => {
  const root = mkdtempSync(join(tmpdir(), 'rho-fleet-conformance-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const create = async () => {
    const directory = mkdtempSync(join(root, 'session-'));
    writeFileSync(join(directory, 'meta.json'), JSON.stringify({ id: 'x', status: 'running' }));
    return {
      agent: new FileControlChannel(directory),
      operator: () => new FileOperatorChannel(directory),
      appendInvalid: async (raw: string) => appendFileSync(join(directory, 'directives.jsonl'), `${raw}\n`),
      resetQueue: async () => writeFileSync(join(directory, 'directives.jsonl'), ''),
      reopenAgent: async () => new FileControlChannel(directory),
    };
  };
  controlChannelConformance(create);
  approvalConformance(create);
});

describe.skipIf(!sharedServer.available)(
  `PostgreSQL control channel${sharedServer.available ? '' : ` (skipped: ${sharedServer.reason})`}`,
  () => {
    const config = freshConfig();
    let fleet: Fleet;
    let operators: Fleet;
    const sql = admin();
    beforeAll(async () => {
      fleet = await connectFleet(config);
      await fleet.migrate();
      // Operators on their own connections, as `rho cancel` on another node would be.
      operators = await connectFleet(config, { maxConnections: 8 });
    });
    afterAll(async () => {
      await fleet?.close();
      await operators?.close();
      await sql.end({ timeout: 1 });
      await dropSchema(config.schema);
    });
    const create = async () => {
      const id = randomUUID();
      const attachment = await fleet.attachSession({ id, cwd: '/tmp', model: 'test-model' });
      const table = (name: string) => sql.unsafe(`"${config.schema}".${name}`);
      return {
        agent: attachment.control,
        operator: () => operators.operator(id),
        appendInvalid: async (raw: string) => {
          await sql.begin(async (tx) => {
            const [row] = await tx`update ${table('agent_registry')} set signal_seq = signal_seq + 1
              where session_id = ${id} returning signal_seq`;
            await tx`insert into ${table('signal_queue')} (session_id, seq, kind, payload)
              values (${id}, ${row!.signal_seq}, 'directive', ${raw}::jsonb)`;
          });
        },
        resetQueue: async () => {
          await sql.begin(async (tx) => {
            await tx`delete from ${table('signal_queue')} where session_id = ${id}`;
            await tx`update ${table('agent_registry')} set signal_seq = 0 where session_id = ${id}`;
          });
        },
        reopenAgent: async () => (await fleet.attachSession({ id, cwd: '/tmp' })).control,
      };
    };
    controlChannelConformance(create);
    approvalConformance(create);
  },
);
