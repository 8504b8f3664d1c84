import { appendFileSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionNotFoundError } from '@rho/core';
import { updateSessionMeta } from '@rho/core/internal';
import { readSessionSettings } from '@rho/core/settings';
import { describe, expect, it } from 'vitest';
import { copySession } from './copy-session.js';
import { createDirectorySource } from './directory-source.js';
import { readMonitoredSession } from './list-sessions.js';
import { exitedPid, liveHere, makeSession, temporarySessions } from './test-support/session-fixtures.js';

const llmEnd = (cost: number | null) => ({
  type: 'llm_end',
  model: 'm',
  input_tokens: 10,
  output_tokens: 2,
  cache_read_tokens: 0,
  reasoning_tokens: 0,
  cost_usd: cost,
  duration_ms: 1,
});

describe('createDirectorySource', () => {
  it('lists newest first with the total, keeps older live sessions after a limit, and filters', async () => {
    const base = temporarySessions();
    makeSession(base, { id: 'old0live', status: 'running', started_at: '2026-11-01T00:00:00.000Z', ...liveHere() });
    makeSession(base, { id: 'old0done', status: 'completed', started_at: '2026-11-02T00:00:00.000Z' });
    makeSession(base, { id: 'new0done', status: 'completed', started_at: '2026-11-03T00:00:00.000Z' });
    makeSession(base, {
      id: 'new0dead',
      status: 'running',
      started_at: '2026-11-04T00:00:00.000Z',
      pid: exitedPid(),
      hostname: liveHere().hostname,
      heartbeat_at: new Date().toISOString(),
    });
    const source = createDirectorySource(base);
    expect(source.kind).toBe('directory');
    const ids = async (filter: Parameters<typeof source.list>[0]) =>
      (await source.list(filter)).sessions.map((session) => session.id);
    expect(await source.list({ limit: 1 })).toMatchObject({ total: 4, sessions: [{ id: 'new0dead' }] });
    expect(await ids({ limit: 1, keepLive: true })).toEqual(['new0dead', 'old0live']);
    expect(await ids({ status: ['completed'] })).toEqual(['new0done', 'old0done']);
    expect(await ids({ idPrefix: 'old' })).toEqual(['old0done', 'old0live']);
    expect(await ids({ accepts: 'cancel' })).toEqual(['old0live']);
    expect(await ids({ accepts: 'resume' })).toHaveLength(4);
    // A directory records no labels.
    expect(await ids({ label: 'team' })).toEqual([]);
    const dead = (await source.list({ status: ['dead'] })).sessions[0]!;
    expect(dead).toMatchObject({ status: 'dead', recordedStatus: 'running', directory: join(base, 'new0dead') });
    expect(dead.statusReason).toMatch(/is gone/);
  });

  it('reads a live session’s usage from its trace when asked (null cost when nothing was priced)', async () => {
    const base = temporarySessions();
    makeSession(base, { id: 'priced00', status: 'running', ...liveHere() }, [llmEnd(0.25)]);
    makeSession(base, { id: 'unpriced', status: 'running', ...liveHere() }, [llmEnd(null)]);
    makeSession(base, { id: 'finished', status: 'completed', cost_usd: 0.5 }, [llmEnd(0.1)]);
    const source = createDirectorySource(base);
    const byId = async (liveUsage: boolean) =>
      new Map((await source.list({ liveUsage })).sessions.map((session) => [session.id, session]));
    const plain = await byId(false);
    expect(plain.get('priced00')!.costUsd).toBeUndefined();
    const live = await byId(true);
    expect(live.get('priced00')).toMatchObject({ inputTokens: 10, outputTokens: 2, costUsd: 0.25, unpricedCalls: 0 });
    expect(live.get('unpriced')).toMatchObject({ costUsd: null, unpricedCalls: 1 });
    // A finished session keeps meta.json's figure (the end of its last run).
    expect(live.get('finished')!.costUsd).toBe(0.5);
  });

  it('gets by exact id, resolves prefixes and paths, and says which sessions do not exist', async () => {
    const base = temporarySessions();
    makeSession(base, { id: 'abcd1234', status: 'completed' });
    makeSession(base, { id: 'abce5678', status: 'completed' });
    const elsewhere = temporarySessions();
    const outside = makeSession(elsewhere, { id: 'far00001', status: 'completed' }, [
      { type: 'run_start', prompt: 'x' },
    ]);
    const source = createDirectorySource(base);
    expect((await source.get('abcd1234'))?.id).toBe('abcd1234');
    expect(await source.get('abcd')).toBeUndefined();
    expect(await source.get('../x')).toBeUndefined();
    expect((await source.resolve('abcd')).id).toBe('abcd1234');
    await expect(source.resolve('abc')).rejects.toSatisfy(
      (error) => SessionNotFoundError.isInstance(error) && error.candidates.length === 2,
    );
    await expect(source.resolve('zzzz')).rejects.toSatisfy((error) => SessionNotFoundError.isInstance(error));
    // A session named by its path is followed and read from there afterwards.
    expect((await source.resolve(outside)).id).toBe('far00001');
    expect(await source.readTrace('far00001')).toBe('{"type":"run_start","prompt":"x"}\n');
    expect(await source.readTrace('abcd1234')).toBe('');
  });

  it('sends cancel and pause only to live sessions; resume and directives anywhere', async () => {
    const base = temporarySessions();
    const running = makeSession(base, { id: 'running0', status: 'running', ...liveHere() });
    const done = makeSession(base, { id: 'finished', status: 'completed' });
    const source = createDirectorySource(base);
    expect(await source.control('finished', 'cancel')).toEqual({
      outcome: 'not_live',
      status: 'completed',
      live: false,
    });
    expect(existsSync(join(done, 'cancel'))).toBe(false);
    expect(await source.control('running0', 'cancel')).toEqual({ outcome: 'requested', status: 'running', live: true });
    expect(await source.control('running0', 'cancel')).toMatchObject({ outcome: 'unchanged' });
    expect(existsSync(join(running, 'cancel'))).toBe(true);
    expect(await source.control('running0', 'pause')).toMatchObject({ outcome: 'requested' });
    expect(await source.control('running0', 'resume')).toMatchObject({ outcome: 'requested' });
    expect(await source.control('finished', 'resume')).toEqual({
      outcome: 'unchanged',
      status: 'completed',
      live: false,
    });
    expect(await source.sendDirective('running0', 'focus')).toEqual({ status: 'running', live: true });
    expect(await source.sendDirective('finished', 'later')).toEqual({ status: 'completed', live: false });
    expect(readFileSync(join(done, 'directives.jsonl'), 'utf8')).toContain('later');
  });

  it('follows a session and the child sessions that appear, and ends when its run ends', async () => {
    const base = temporarySessions();
    const parent = makeSession(base, { id: 'parent00', status: 'running', ...liveHere() }, [
      { type: 'run_start', prompt: 'go' },
    ]);
    const source = createDirectorySource(base, { pollIntervalMs: 20 });
    const seen: string[] = [];
    const following = (async () => {
      for await (const { record, childId } of source.follow('parent00'))
        seen.push(`${childId ?? 'parent'}:${record.type}`);
    })();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const child = makeSession(base, { id: 'child000', status: 'completed', parent_id: 'parent00' }, [
      { type: 'run_start', prompt: 'sub' },
      { type: 'run_end', status: 'completed' },
    ]);
    expect(existsSync(child)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    appendFileSync(join(parent, 'trace.jsonl'), `${JSON.stringify({ type: 'run_end', status: 'completed' })}\n`);
    updateSessionMeta(parent, { status: 'completed' });
    await following;
    expect(seen).toEqual(
      expect.arrayContaining(['parent:run_start', 'child000:run_start', 'child000:run_end', 'parent:run_end']),
    );
    // Without children, only the session's own records.
    const own: string[] = [];
    for await (const { record, childId } of source.follow('parent00', { children: false }))
      own.push(`${childId ?? 'parent'}:${record.type}`);
    expect(own).toEqual(['parent:run_start', 'parent:run_end']);
  });

  it('copies a session of any source into a session directory', async () => {
    const base = temporarySessions();
    makeSession(base, { id: 'copy0001', status: 'completed', first_prompt: 'task', model: 'gpt-4o-mini' }, [
      { type: 'run_start', prompt: 'task' },
    ]);
    const source = createDirectorySource(base);
    const root = mkdtempSync(join(tmpdir(), 'rho-copy-'));
    const copied = await copySession(source, await source.resolve('copy0001'), root);
    expect(copied).toEqual({ id: 'copy0001', directory: join(root, 'copy0001') });
    expect(readMonitoredSession(copied.directory)).toMatchObject({
      id: 'copy0001',
      status: 'completed',
      firstPrompt: 'task',
      model: 'gpt-4o-mini',
    });
    expect(readFileSync(join(copied.directory, 'trace.jsonl'), 'utf8')).toBe(await source.readTrace('copy0001'));
    // Written by the one writer of a session's saved settings, and read back by the one reader.
    expect(readFileSync(join(copied.directory, 'config.yaml'), 'utf8')).toBe('model: gpt-4o-mini\n');
    expect(readSessionSettings(copied.directory)?.source.value).toEqual({ model: 'gpt-4o-mini' });
  });
});
