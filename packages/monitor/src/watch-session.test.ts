import { appendFileSync, cpSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { updateSessionMeta } from '@rho/core/internal';
import { describe, expect, it } from 'vitest';
import { pythonTracesDir } from '@rho/core/testing';
import { watchSession } from './watch-session.js';
import { exitedPid, liveHere, makeSession, temporarySessions } from './test-support/session-fixtures.js';

const pythonTraces = pythonTracesDir;
const record = (type: string, fields: object = {}) => ({ type, ts: new Date().toISOString(), ...fields });

describe('watchSession', () => {
  it('replays a finished session and ends', async () => {
    const directory = makeSession(temporarySessions(), { id: 'done0001', status: 'completed' }, [
      record('run_start', { prompt: 'p' }),
      record('run_end', { status: 'completed' }),
    ]);
    const types: string[] = [];
    for await (const event of watchSession(directory, { pollIntervalMs: 20 })) types.push(event.type);
    expect(types).toEqual(['run_start', 'run_end']);
  });

  it('follows a running session until its run ends and meta.json says so', async () => {
    const directory = makeSession(temporarySessions(), { id: 'live0001', status: 'running', ...liveHere() }, [
      record('run_start', { prompt: 'p' }),
    ]);
    const types: string[] = [];
    const watching = (async () => {
      for await (const event of watchSession(directory, { pollIntervalMs: 20 })) {
        types.push(event.type);
        if (event.type === 'run_start') {
          // A simulated writer's pacing, not a race: the watcher follows until meta.json says the run ended.
          setTimeout(
            () =>
              appendFileSync(
                join(directory, 'trace.jsonl'),
                `${JSON.stringify(record('tool_start', { tool_name: 'list', tool_call_id: 'c1', tool_args: {} }))}\n`,
              ),
            50,
          );
        }
        if (event.type === 'tool_start') {
          // The run ends: the trace first, meta.json a moment later (as Session does).
          appendFileSync(
            join(directory, 'trace.jsonl'),
            `${JSON.stringify(record('run_end', { status: 'completed' }))}\n`,
          );
          setTimeout(() => updateSessionMeta(directory, { status: 'completed' }), 80);
        }
      }
    })();
    await watching;
    expect(types).toEqual(['run_start', 'tool_start', 'run_end']);
  });

  it('stops when the agent process is gone', async () => {
    const directory = makeSession(
      temporarySessions(),
      {
        id: 'dead0001',
        status: 'running',
        pid: exitedPid(),
        hostname: hostname(),
        heartbeat_at: new Date().toISOString(),
      },
      [record('run_start', { prompt: 'p' })],
    );
    const types: string[] = [];
    for await (const event of watchSession(directory, { pollIntervalMs: 20 })) types.push(event.type);
    expect(types).toEqual(['run_start']);
  });

  it('keeps following a finished session when asked to, until aborted', async () => {
    const directory = makeSession(temporarySessions(), { id: 'follow01', status: 'completed' }, [
      record('run_end', { status: 'completed' }),
    ]);
    const controller = new AbortController();
    const types: string[] = [];
    // A simulated writer's pacing, not a race: a following watcher reads the record whenever it lands.
    setTimeout(
      () =>
        appendFileSync(
          join(directory, 'trace.jsonl'),
          `${JSON.stringify(record('run_start', { prompt: 'resumed' }))}\n`,
        ),
      60,
    );
    for await (const event of watchSession(directory, {
      follow: true,
      signal: controller.signal,
      pollIntervalMs: 20,
    })) {
      types.push(event.type);
      if (event.type === 'run_start') controller.abort();
    }
    expect(types).toEqual(['run_end', 'run_start']);
  });

  it('ends a meta.json-less Python session at its run_end', async () => {
    const base = temporarySessions();
    mkdirSync(base, { recursive: true });
    const directory = join(base, 'py');
    cpSync(join(pythonTraces, 'a-readonly-text', 'trace.jsonl'), join(directory, 'trace.jsonl'));
    const types: string[] = [];
    for await (const event of watchSession(directory, { pollIntervalMs: 20 })) types.push(event.type);
    expect(types.at(-1)).toBe('run_end');
    expect(types[0]).toBe('run_start');
  });
});
