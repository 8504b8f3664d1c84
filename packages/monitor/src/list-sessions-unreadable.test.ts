import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listSessions } from './list-sessions.js';
import { makeSession, temporarySessions } from './test-support/session-fixtures.js';

describe('listSessions with sessions it cannot read', () => {
  it('lists a session whose meta.json is not valid JSON as unknown, with the reason, not as completed', () => {
    const base = temporarySessions();
    const directory = makeSession(base, { id: 'torn', status: 'running' }, [{ type: 'run_start', prompt: 'task' }]);
    writeFileSync(join(directory, 'meta.json'), '{"id": "torn", "status": "runn');
    const [session] = listSessions(base);
    expect(session).toMatchObject({
      id: 'torn',
      status: 'unknown',
      recordedStatus: 'unknown',
      problem: 'meta.json is not valid JSON',
    });
  });

  it('lists a session whose meta.json cannot be read or is of the wrong shape, even without a trace', () => {
    const base = temporarySessions();
    // meta.json is a directory: reading it fails with EISDIR.
    const unreadable = makeSession(base, { id: 'dir', status: 'completed' });
    rmSync(join(unreadable, 'meta.json'));
    mkdirSync(join(unreadable, 'meta.json'));
    const array = makeSession(base, { id: 'array', status: 'completed' });
    writeFileSync(join(array, 'meta.json'), '[1, 2]');
    const badStatus = makeSession(base, { id: 'status', status: 'completed' });
    writeFileSync(join(badStatus, 'meta.json'), '{"status": 7}');
    const byId = Object.fromEntries(listSessions(base).map((session) => [session.id, session]));
    expect(byId.dir).toMatchObject({ status: 'unknown', problem: 'meta.json cannot be read (EISDIR)' });
    expect(byId.array).toMatchObject({ status: 'unknown', problem: 'meta.json is not a JSON object' });
    expect(byId.status).toMatchObject({ status: 'unknown', problem: 'meta.json has a status that is not a string' });
  });
});
