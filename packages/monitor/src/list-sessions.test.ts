import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pythonTracesDir } from '@rho/core/testing';
import { flattenSessionTree, groupSessions } from './group-sessions.js';
import { listSessions } from './list-sessions.js';
import { exitedPid, liveHere, makeSession, temporarySessions } from './test-support/session-fixtures.js';

const pythonTraces = pythonTracesDir;

describe('listSessions', () => {
  it('lists sessions newest first with their live status, model, cost and first prompt', () => {
    const base = temporarySessions();
    makeSession(base, {
      id: 'aaaa1111',
      status: 'completed',
      started_at: '2026-11-20T10:00:00.000Z',
      first_prompt: 'old task',
      cost_usd: 0.25,
    });
    makeSession(base, {
      id: 'bbbb2222',
      status: 'running',
      started_at: '2026-11-21T10:00:00.000Z',
      first_prompt: 'live task',
      ...liveHere(),
    });
    makeSession(base, {
      id: 'cccc3333',
      status: 'running',
      started_at: '2026-11-21T09:00:00.000Z',
      pid: exitedPid(),
      hostname: hostname(),
      heartbeat_at: new Date().toISOString(),
    });
    makeSession(base, { id: 'dddd4444', status: 'paused', started_at: '2026-11-21T08:00:00.000Z', ...liveHere() });
    const sessions = listSessions(base);
    expect(sessions.map((session) => [session.id, session.status])).toEqual([
      ['bbbb2222', 'running'],
      ['cccc3333', 'dead'],
      ['dddd4444', 'paused'],
      ['aaaa1111', 'completed'],
    ]);
    expect(sessions[0]).toMatchObject({
      model: 'gpt-4o-mini',
      firstPrompt: 'live task',
      pid: process.pid,
      recordedStatus: 'running',
      directory: join(base, 'bbbb2222'),
    });
    expect(sessions[1]).toMatchObject({
      recordedStatus: 'running',
      statusReason: expect.stringMatching(/is gone/) as unknown,
    });
    expect(sessions[3]!.costUsd).toBe(0.25);
    expect(listSessions(base, { limit: 2 }).map((session) => session.id)).toEqual(['bbbb2222', 'cccc3333']);
  });

  it('reads session directories of the Python original, taking the prompt from the trace head', () => {
    const base = temporarySessions();
    mkdirSync(base, { recursive: true });
    cpSync(join(pythonTraces, 'g-cancel'), join(base, 'g-cancel'), { recursive: true });
    cpSync(join(pythonTraces, 'a-readonly-text'), join(base, 'a-readonly-text'), { recursive: true });
    const sessions = listSessions(base);
    expect(sessions).toHaveLength(2);
    const cancelled = sessions.find((session) => session.id === 'g-cancel')!;
    expect(cancelled).toMatchObject({
      status: 'cancelled',
      model: 'gpt-5-mini',
      firstPrompt: 'List files, then explain them at length.',
    });
    // Python's "+00:00" offsets are normalised so that sorting by string works.
    expect(cancelled.startedAt).toBe('2026-11-21T21:16:16.693Z');
  });

  it('skips directories that are not sessions and lists a session with a corrupt meta.json as unknown', () => {
    const base = temporarySessions();
    mkdirSync(join(base, 'not-a-session'), { recursive: true });
    writeFileSync(join(base, 'stray-file'), 'x');
    const broken = makeSession(base, { id: 'broken00', status: 'running' }, [
      { type: 'run_start', prompt: 'from the trace', ts: '2026-11-21T10:00:00Z' },
    ]);
    writeFileSync(join(broken, 'meta.json'), '{"status": "runn');
    const sessions = listSessions(base);
    expect(sessions.map((session) => [session.id, session.status, session.firstPrompt])).toEqual([
      ['broken00', 'unknown', 'from the trace'],
    ]);
    expect(listSessions(join(base, 'missing'))).toEqual([]);
  });

  it('groups child agents under their parent', () => {
    const base = temporarySessions();
    makeSession(base, { id: 'parent01', status: 'running', started_at: '2026-11-21T10:00:00.000Z', ...liveHere() });
    makeSession(base, {
      id: 'child001',
      status: 'running',
      started_at: '2026-11-21T10:01:00.000Z',
      parent_id: 'parent01',
      ...liveHere(),
    });
    makeSession(base, {
      id: 'grandkid',
      status: 'completed',
      started_at: '2026-11-21T10:02:00.000Z',
      parent_id: 'child001',
    });
    makeSession(base, {
      id: 'orphan01',
      status: 'completed',
      started_at: '2026-11-21T09:00:00.000Z',
      parent_id: 'gone0000',
    });
    makeSession(base, {
      id: 'loop000a',
      status: 'completed',
      started_at: '2026-11-21T08:00:00.000Z',
      parent_id: 'loop000b',
    });
    makeSession(base, {
      id: 'loop000b',
      status: 'completed',
      started_at: '2026-11-21T07:00:00.000Z',
      parent_id: 'loop000a',
    });
    const rows = flattenSessionTree(groupSessions(listSessions(base)));
    expect(rows.map((row) => `${'  '.repeat(row.depth)}${row.session.id}`)).toEqual([
      'parent01',
      '  child001',
      '    grandkid',
      'orphan01',
      'loop000a',
      'loop000b',
    ]);
  });
});
