import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionNotFoundError } from './errors.js';
import { readSessionMeta, updateSessionMeta } from './session-meta.js';
import { rhoHome, SessionStore } from './session-store.js';
import { pythonTracesDir } from './testing/fixtures.js';

function temporaryStore(): SessionStore {
  return new SessionStore(join(mkdtempSync(join(tmpdir(), 'rho-store-')), 'sessions'));
}

function caught(action: () => unknown): SessionNotFoundError {
  try {
    action();
  } catch (error) {
    if (SessionNotFoundError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('nothing was thrown');
}

describe('rhoHome', () => {
  it('is $RHO_HOME, else $XDG_CONFIG_HOME/rho, else ~/.config/rho', () => {
    expect(rhoHome({ RHO_HOME: '/srv/rho', XDG_CONFIG_HOME: '/home/u/.cfg' })).toBe('/srv/rho');
    expect(rhoHome({ XDG_CONFIG_HOME: '/home/u/.cfg' })).toBe('/home/u/.cfg/rho');
    expect(rhoHome({ RHO_HOME: '', XDG_CONFIG_HOME: '/home/u/.cfg' })).toBe('/home/u/.cfg/rho');
    expect(rhoHome({})).toBe(join(homedir(), '.config', 'rho'));
  });

  it('ignores an empty or relative XDG_CONFIG_HOME, as the XDG base-directory rules say', () => {
    expect(rhoHome({ XDG_CONFIG_HOME: '' })).toBe(join(homedir(), '.config', 'rho'));
    expect(rhoHome({ XDG_CONFIG_HOME: 'relative/config' })).toBe(join(homedir(), '.config', 'rho'));
  });

  it('makes a relative RHO_HOME absolute and expands a leading ~/', () => {
    expect(rhoHome({ RHO_HOME: 'here' })).toBe(join(process.cwd(), 'here'));
    expect(rhoHome({ RHO_HOME: '~/rho-home' })).toBe(join(homedir(), 'rho-home'));
  });
});

describe('SessionStore.lookup', () => {
  function setUp(): SessionStore {
    const store = temporaryStore();
    for (const id of ['abc12345', 'abd99999', 'abc', 'ffff0000']) store.create({ id });
    return store;
  }

  it('records the queued task and attempt a session runs in meta.json from its creation', () => {
    const store = temporaryStore();
    const task = { id: '0b9c3d2e-5f61-4a7b-8c9d-0e1f2a3b4c5d', attempt: 2 };
    const made = store.create({ task, workingDir: '/srv/project' });
    expect(readSessionMeta(made.directory)).toMatchObject({ task_id: task.id, task_attempt: 2, status: 'created' });
    expect(readSessionMeta(store.create().directory)).not.toHaveProperty('task_id');
  });

  it('finds a session by a unique prefix, and an exact id even when it prefixes others', () => {
    const store = setUp();
    expect(store.lookup('abd')).toEqual({ id: 'abd99999', directory: join(store.baseDir, 'abd99999') });
    expect(store.lookup('ff').id).toBe('ffff0000');
    expect(store.lookup('abc').id).toBe('abc');
    expect(store.resolve('abc1')).toBe(join(store.baseDir, 'abc12345'));
  });

  it('lists the matches of an ambiguous prefix, sorted', () => {
    const error = caught(() => setUp().lookup('ab'));
    expect(error.candidates).toEqual(['abc', 'abc12345', 'abd99999']);
    expect(error.message).toBe("Ambiguous prefix 'ab': it matches abc, abc12345, abd99999. Give more characters.");
  });

  it('says when nothing matches, and refuses the empty reference', () => {
    const store = setUp();
    expect(caught(() => store.lookup('zz')).message).toBe(
      `Session not found: zz (no session id in ${store.baseDir} starts with it). Run rho ps or rho --list to see the sessions.`,
    );
    expect(caught(() => store.lookup('')).message).toMatch(/Give a session id/);
    expect(caught(() => temporaryStore().lookup('latest')).message).toMatch(/No sessions in .* yet; run a task first/);
  });

  it('takes latest for the newest session that is not a child agent', () => {
    const store = temporaryStore();
    const parent = store.create({ id: 'parent01' });
    updateSessionMeta(parent.directory, { started_at: '2026-11-21T10:00:00.000Z' });
    const child = store.create({ id: 'child001', parentId: 'parent01' });
    updateSessionMeta(child.directory, { started_at: '2026-11-21T10:05:00.000Z' });
    const older = store.create({ id: 'older001' });
    updateSessionMeta(older.directory, { started_at: '2026-11-20T10:00:00.000Z' });
    expect(store.lookup('latest')).toEqual({ id: 'parent01', directory: parent.directory });
  });

  it('opens a directory given by path, and refuses one that is not a session', () => {
    const store = setUp();
    const python = join(mkdtempSync(join(tmpdir(), 'rho-store-python-')), 'g-cancel');
    cpSync(join(pythonTracesDir, 'g-cancel'), python, { recursive: true });
    expect(store.lookup(python)).toEqual({ id: 'g-cancel', directory: python });
    expect(caught(() => store.lookup(tmpdir())).message).toMatch(/is not a session directory/);
  });
});

describe('SessionStore.match and ids', () => {
  it('matches every session whose id starts with a prefix, an exact id alone, all for the empty prefix', () => {
    const store = temporaryStore();
    for (const id of ['b2', 'a1', 'a10', 'c3']) store.create({ id });
    writeFileSync(join(store.baseDir, 'stray-file'), '');
    expect(store.ids()).toEqual(['a1', 'a10', 'b2', 'c3']);
    expect(store.match('a').map((ref) => ref.id)).toEqual(['a1', 'a10']);
    expect(store.match('a1').map((ref) => ref.id)).toEqual(['a1']);
    expect(store.match('').map((ref) => ref.id)).toEqual(['a1', 'a10', 'b2', 'c3']);
    expect(store.match('z')).toEqual([]);
    expect(new SessionStore(join(store.baseDir, 'missing')).ids()).toEqual([]);
  });
});

describe('SessionStore.list and info', () => {
  it('lists newest first, skipping directories that are not sessions, and says why a meta.json cannot be used', () => {
    const store = temporaryStore();
    const first = store.create({ id: 'first000', model: 'm1' });
    updateSessionMeta(first.directory, {
      started_at: '2020-11-20T10:00:00.000Z',
      first_prompt: 'old task',
      cost_usd: 0.25,
      status: 'completed',
    });
    const second = store.create({ id: 'second00' });
    updateSessionMeta(second.directory, { started_at: '2020-11-21T10:00:00.000Z' });
    // Its start time is the directory's (now), so it lists first.
    const broken = store.create({ id: 'broken00' });
    writeFileSync(join(broken.directory, 'meta.json'), '{"status": "runn');
    writeFileSync(
      join(broken.directory, 'trace.jsonl'),
      `${JSON.stringify({ type: 'run_start', prompt: 'from the trace' })}\n`,
    );
    mkdirSync(join(store.baseDir, 'not-a-session'));
    const listed = store.list();
    expect(listed.map((info) => [info.id, info.status])).toEqual([
      ['broken00', 'unknown'],
      ['second00', 'created'],
      ['first000', 'completed'],
    ]);
    expect(listed[2]).toMatchObject({
      model: 'm1',
      firstPrompt: 'old task',
      costUsd: 0.25,
      startedAt: '2020-11-20T10:00:00.000Z',
      parentId: undefined,
    });
    expect(listed[0]).toMatchObject({
      problem: 'meta.json is not valid JSON',
      firstPrompt: 'from the trace',
      meta: {},
    });
    expect(store.list({ limit: 2 }).map((info) => info.id)).toEqual(['broken00', 'second00']);
    expect(store.info(join(store.baseDir, 'not-a-session'))).toBeUndefined();
  });

  it("reads the Python original's sessions: no meta.json, the prompt from the trace head, +00:00 times", () => {
    const store = temporaryStore();
    mkdirSync(store.baseDir, { recursive: true });
    cpSync(join(pythonTracesDir, 'g-cancel'), join(store.baseDir, 'g-cancel'), { recursive: true });
    const [info] = store.list();
    expect(info).toMatchObject({
      id: 'g-cancel',
      status: 'cancelled',
      model: 'gpt-5-mini',
      firstPrompt: 'List files, then explain them at length.',
      startedAt: '2026-11-21T21:16:16.693Z',
    });
    expect(store.list({ promptFromTrace: false })[0]!.firstPrompt).toBeUndefined();
  });

  it('finds a first prompt longer than one read of the trace head, and one in a trace without its last newline', () => {
    const store = temporaryStore();
    const long = store.create({ id: 'long0000' });
    const prompt = `task ${'é'.repeat(20_000)}`;
    writeFileSync(
      join(long.directory, 'trace.jsonl'),
      `${JSON.stringify({ type: 'llm_start', model: 'm' })}\n${JSON.stringify({ type: 'run_start', prompt })}\n`,
    );
    const short = store.create({ id: 'short000' });
    writeFileSync(
      join(short.directory, 'trace.jsonl'),
      JSON.stringify({ type: 'message', role: 'user', content: 'no newline' }),
    );
    expect(store.info(long.directory)!.firstPrompt).toBe(prompt);
    expect(store.info(short.directory)!.firstPrompt).toBe('no newline');
  });
});
