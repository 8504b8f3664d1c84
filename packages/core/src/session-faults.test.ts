import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import { traceToAtif } from './atif/trace-to-atif.js';
import { createDelegateTool } from './delegate-tool.js';
import { SessionLockedError, SessionWriteError } from './errors.js';
import type { TraceRecord } from './events.js';
import { SessionLock, sessionLockOwner } from './session-lock.js';
import { readSessionMeta } from './session-meta.js';
import { SessionStore } from './session-store.js';
import { State } from './state.js';
import { createScriptedModelClient } from './testing/scripted-model-client.js';
import type { ScriptedStepSource } from './testing/scripted-model-client.js';
import { defineTool } from './tool.js';

const echo = defineTool({
  name: 'echo',
  description: 'Repeats text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  annotations: { readOnly: true },
  async handle({ arguments: { text } }) {
    return { content: text, success: true };
  },
});

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'rho-faults-'));
}

function readTrace(directory: string): TraceRecord[] {
  return readFileSync(join(directory, 'trace.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as TraceRecord);
}

function replay(directory: string): State {
  return State.fromJsonl(readFileSync(join(directory, 'trace.jsonl')));
}

describe('the loop', () => {
  it('ends cancelled (not completed, not a rejection) when cancelled while an approval is pending', async () => {
    const directory = tempDir();
    const client = createScriptedModelClient({
      steps: [
        {
          toolCalls: [
            { id: 'c1', name: 'echo', arguments: { text: 'a' } },
            { id: 'c2', name: 'echo', arguments: { text: 'b' } },
          ],
        },
      ],
    });
    const agent = new Agent({ tools: [echo], client, approvalPolicy: () => ({ required: true, reason: 'test' }) });
    const session = agent.createSession({ directory });
    let asked = 0;
    session.approver = () => {
      asked += 1;
      // The person never answers; the run is cancelled while it waits.
      queueMicrotask(() => session.cancel());
      return new Promise<boolean>(() => {});
    };
    const result = await session.run('go');
    expect(asked).toBe(1);
    expect(result.status).toBe('cancelled');
    client.assertDone();
    const records = readTrace(directory);
    expect(records.some((record) => record.type === 'tool_blocked')).toBe(false);
    expect(records.at(-1)).toMatchObject({ type: 'run_end', status: 'cancelled' });
    expect(readSessionMeta(directory)?.status).toBe('cancelled');
    // Both calls are answered, as not run.
    const results = session.state.messages.filter((message) => message.role === 'tool');
    expect(results.map((message) => message.tool_call_id)).toEqual(['c1', 'c2']);
    expect(results.every((message) => message.content.startsWith('Cancelled'))).toBe(true);
  });

  it('keeps automatic compaction on when the provider reports no usage', async () => {
    const client = createScriptedModelClient({
      steps: [
        { toolCalls: [{ name: 'echo', arguments: { text: 'x' } }], usage: null },
        (request) => {
          expect(request.messages.at(-1)!.content).toMatch(/^CONTEXT CHECKPOINT COMPACTION/);
          return { text: 'Summary of the work.', usage: null };
        },
        { text: 'done', usage: null },
      ],
    });
    const agent = new Agent({ tools: [echo], client, compaction: { contextWindow: 1000, threshold: 0.7 } });
    const session = agent.createSession();
    // About 1000 tokens by the estimate: past 70 % of the window.
    const result = await session.run('x'.repeat(4000));
    expect(result.status).toBe('completed');
    client.assertDone();
    expect(
      session.state.messages.some(
        (message) => message.role === 'user' && message.content.includes('Summary of the work.'),
      ),
    ).toBe(true);
  });

  it('answers tool calls the model makes in the final turn at a limit, so the history stays valid', async () => {
    const directory = tempDir();
    const client = createScriptedModelClient({
      steps: [
        { toolCalls: [{ id: 'first', name: 'echo', arguments: { text: 'a' } }] },
        (request) => {
          expect(request.tools).toBeUndefined();
          return {
            text: 'I would still like to echo.',
            toolCalls: [
              { id: 'late1', name: 'echo', arguments: { text: 'b' } },
              { id: 'late2', name: 'echo', arguments: '{"text": ' },
            ],
          };
        },
      ],
    });
    const session = new Agent({ tools: [echo], client }).createSession({ directory });
    const result = await session.run('go', { maxTurns: 1 });
    expect(result.status).toBe('limit');
    expect(result.text).toBe('I would still like to echo.');
    client.assertDone();
    const records = readTrace(directory);
    expect(
      records
        .filter((record) => record.type === 'tool_blocked')
        .map((record) => (record as { tool_call_id: string }).tool_call_id),
    ).toEqual(['late1', 'late2']);
    expect(records.some((record) => record.type === 'tool_start' && record.tool_call_id.startsWith('late'))).toBe(
      false,
    );
    const resumed = replay(directory);
    expect(resumed.replay!.interruptedToolCalls).toEqual([]);
    expect(resumed.messages.slice(-2)).toEqual([
      {
        role: 'tool',
        tool_call_id: 'late1',
        content: 'Not run: the run reached its turn limit. No more tools can be called in this run.',
      },
      {
        role: 'tool',
        tool_call_id: 'late2',
        content: 'Not run: the run reached its turn limit. No more tools can be called in this run.',
      },
    ]);
  });

  it('writes llm_start and llm_end for compaction calls, also without usage and when they fail', async () => {
    const directory = tempDir();
    const client = createScriptedModelClient({
      steps: [
        { text: 'answer' },
        { text: 'The summary.', usage: null },
        { error: { message: 'API error 500: boom', statusCode: 500 } },
      ],
    });
    const session = new Agent({ client }).createSession({ directory });
    await session.run('question');
    expect((await session.compact()).ok).toBe(true);
    expect((await session.compact()).ok).toBe(false);
    client.assertDone();
    const calls = readTrace(directory).filter((record) => record.type === 'llm_start' || record.type === 'llm_end');
    expect(calls.map((record) => `${record.type}:${(record as { purpose?: string }).purpose ?? 'turn'}`)).toEqual([
      'llm_start:turn',
      'llm_end:turn',
      'llm_start:compaction',
      'llm_end:compaction',
      'llm_start:compaction',
      'llm_end:compaction',
    ]);
    expect(calls[3]).toMatchObject({ usage_reported: false, cost_usd: null });
    expect(calls[5]).toMatchObject({ usage_reported: false, cost_usd: null, finish_reason: null });
  });

  it("rolls a child's unpriced calls up into the parent's, and reports an unknown cost as null", async () => {
    const store = new SessionStore(tempDir());
    const { id, directory } = store.create({});
    // The scripted model has no price: every call is unpriced.
    const client = createScriptedModelClient({
      steps: [
        { toolCalls: [{ name: 'delegate', arguments: { instruction: 'Look it up.' } }] },
        { text: 'child one' },
        { text: 'parent done' },
      ],
    });
    const session = new Agent({ tools: [createDelegateTool()], client }).createSession({ id, directory });
    const result = await session.run('delegate it');
    expect(result.status).toBe('completed');
    client.assertDone();
    // Two calls of the parent, one of the child.
    expect(session.state.usage.unpriced_calls).toBe(3);
    expect(replay(directory).usage.unpriced_calls).toBe(3);
    const end = readTrace(directory).at(-1)!;
    expect(end).toMatchObject({ type: 'run_end', usage: { cost_usd: null, unpriced_calls: 3 } });
    expect(readSessionMeta(directory)?.cost_usd).toBeNull();
    expect(store.list().find((info) => info.id === id)?.costUsd).toBeUndefined();
    const atif = traceToAtif(readFileSync(join(directory, 'trace.jsonl')));
    expect(atif.final_metrics?.total_cost_usd).toBeNull();
    expect(atif.final_metrics?.extra).toMatchObject({ unpriced_calls: 3 });
  });
});

describe('SessionStore', () => {
  it('lists a session whose meta.json cannot be read as unknown, not completed', () => {
    const store = new SessionStore(tempDir());
    const { directory } = store.create({});
    writeFileSync(join(directory, 'meta.json'), '{"status": "runn');
    expect(store.list()[0]?.status).toBe('unknown');
  });

  it('reports a sessions directory it cannot create as a ConfigError naming it (exit 2 in the CLI)', () => {
    const file = join(tempDir(), 'file');
    writeFileSync(file, '');
    expect(() => new SessionStore(join(file, 'sessions')).create({})).toThrow(
      expect.objectContaining({
        name: 'ConfigError',
        code: 'rho_home_unusable',
        message: expect.stringContaining(`Cannot create sessions in ${join(file, 'sessions')}: ENOTDIR`),
      }),
    );
  });
});

describe('directives', () => {
  function directiveSession(directory: string, steps: ScriptedStepSource[]) {
    const client = createScriptedModelClient({ steps });
    return { client, session: new Agent({ tools: [echo], client }).createSession({ directory }) };
  }

  const delivered = (state: State) =>
    state.messages.flatMap((message) =>
      message.role === 'user' && message.content.startsWith('[Operator directive] ') ? [message.content.slice(21)] : [],
    );

  it('gives each directive record its own cursor: a crash in the middle of a batch neither loses nor repeats one', async () => {
    const directory = tempDir();
    writeFileSync(
      join(directory, 'directives.jsonl'),
      `${JSON.stringify({ text: 'first' })}\n${JSON.stringify({ text: 'second' })}\n`,
    );
    const { session } = directiveSession(directory, [{ text: 'ok' }]);
    await session.run('go');
    expect(delivered(session.state)).toEqual(['first', 'second']);
    const lines = readFileSync(join(directory, 'trace.jsonl'), 'utf8').split('\n');
    // The process died right after the first directive's message was written.
    const firstMessage = lines.findIndex((line) => line.includes('"[Operator directive] first"'));
    const crashed = tempDir();
    writeFileSync(join(crashed, 'trace.jsonl'), `${lines.slice(0, firstMessage + 1).join('\n')}\n`);
    writeFileSync(join(crashed, 'directives.jsonl'), readFileSync(join(directory, 'directives.jsonl')));
    const client = createScriptedModelClient({ steps: [{ text: 'resumed' }] });
    const again = new Agent({ tools: [echo], client }).createSession({ directory: crashed, state: replay(crashed) });
    await again.run('continue');
    client.assertDone();
    expect(delivered(again.state)).toEqual(['first', 'second']);
  });

  it('delivers a directive whose message a crash kept out of the trace, once', async () => {
    const directory = tempDir();
    writeFileSync(join(directory, 'directives.jsonl'), `${JSON.stringify({ text: 'only' })}\n`);
    const { session } = directiveSession(directory, [{ text: 'ok' }]);
    await session.run('go');
    const lines = readFileSync(join(directory, 'trace.jsonl'), 'utf8').split('\n');
    const record = lines.findIndex((line) => line.startsWith('{"type":"directive"'));
    // Died between the directive record and its message.
    writeFileSync(join(directory, 'trace.jsonl'), `${lines.slice(0, record + 1).join('\n')}\n`);
    const state = replay(directory);
    expect(state.replay!.recoveredDirectives).toBe(1);
    expect(delivered(state)).toEqual(['only']);
    const client = createScriptedModelClient({ steps: [{ text: 'resumed' }] });
    const resumed = new Agent({ client }).createSession({ directory, state });
    await resumed.run('continue');
    client.assertDone();
    expect(delivered(resumed.state)).toEqual(['only']);
    // And again after the resumed run: the recovered directive stays where it was, once.
    expect(delivered(replay(directory))).toEqual(['only']);
    expect(replay(directory).messages.map((message) => message.role)).toEqual(
      resumed.state.messages.map((message) => message.role),
    );
  });

  it('refuses lines that are not {"text": string} with a note, and never sends them to the model', async () => {
    const directory = tempDir();
    writeFileSync(
      join(directory, 'directives.jsonl'),
      [
        'plain words',
        '"a JSON string"',
        '{"txt": "typo"}',
        '{"text": 5}',
        '[1]',
        '{"text": "   "}',
        '{"text": "the real one"}',
        '',
      ].join('\n'),
    );
    const client = createScriptedModelClient({
      steps: [
        (request) => {
          const users = request.messages.filter((message) => message.role === 'user').map((message) => message.content);
          expect(users).toEqual(['go', '[Operator directive] the real one']);
          return { text: 'ok' };
        },
      ],
    });
    const session = new Agent({ client }).createSession({ directory });
    await session.run('go');
    client.assertDone();
    const notes = readTrace(directory).filter(
      (record) => record.type === 'error' && record.code === 'directive_refused',
    );
    expect(notes).toHaveLength(6);
    expect((notes[0] as { content: string }).content).toContain('plain words');
  });
});

describe('replay of records of the wrong shape', () => {
  it('skips them with a note instead of failing', () => {
    const trace = [
      { type: 'run_start', prompt: 'go' },
      { type: 'message', role: 'user', content: 'go' },
      { type: 'message', role: 'assistant', content: null, tool_calls: [null] },
      { type: 'message', role: 'assistant', content: 'fine' },
      { type: 'compact', trigger: 'auto', tokens_before: 1, tokens_after: 1, summary: 'S', kept: [null] },
      { type: 'message', role: 'tool', content: 'orphan' },
      { type: 'message', role: 'user', content: 'after' },
    ]
      .map((record) => JSON.stringify(record))
      .join('\n');
    const state = State.fromJsonl(`${trace}\n`);
    expect(state.replay!.invalidRecords).toEqual([
      { line: 3, type: 'message', reason: 'tool_calls[0] is not an object' },
      { line: 5, type: 'compact', reason: 'kept[0] is not an object' },
      { line: 6, type: 'message', reason: 'is a tool result without tool_call_id' },
    ]);
    expect(state.messages).toEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'fine' },
      { role: 'user', content: 'after' },
    ]);
  });
});

describe('a trace that cannot be written', () => {
  it('ends the run with a SessionWriteError naming the file and errno, and meta.json not running', async () => {
    const directory = tempDir();
    // trace.jsonl is a directory: opening it for appending fails with EISDIR.
    mkdirSync(join(directory, 'trace.jsonl'));
    const client = createScriptedModelClient({ steps: [] });
    const session = new Agent({ client }).createSession({ directory });
    const result = await session.run('go');
    expect(result.status).toBe('error');
    expect(SessionWriteError.isInstance(result.error)).toBe(true);
    expect(result.error).toMatchObject({ errno: 'EISDIR', path: join(directory, 'trace.jsonl') });
    expect(result.error!.message).toContain(`Cannot write ${join(directory, 'trace.jsonl')}: EISDIR`);
    expect(readSessionMeta(directory)?.status).toBe('error');
    // Nothing was half-applied: the state holds no record the trace lacks.
    expect(session.state.runCount).toBe(0);
    expect(existsSync(join(directory, 'lock'))).toBe(false);
  });

  it('names ENOSPC and the file when the device is full', async () => {
    const { JsonlTraceSink } = await import('./trace-sink.js');
    // /dev/full accepts the open and fails every write with ENOSPC.
    if (!existsSync('/dev/full')) return;
    const full = new JsonlTraceSink('/dev/full');
    expect(() => full.append({ type: 'run_start', prompt: 'a', ts: 't' })).toThrow(
      /^Cannot write \/dev\/full: ENOSPC \(no space left on the device\)\. The run stopped/,
    );
    full.close();
  });
});

describe('SessionLock', () => {
  it('refuses a second writer with a SessionLockedError naming the owner, and frees the lock on release', () => {
    const directory = tempDir();
    const lock = SessionLock.acquire(directory);
    let refused: unknown;
    try {
      SessionLock.acquire(directory);
    } catch (error) {
      refused = error;
    }
    expect(SessionLockedError.isInstance(refused)).toBe(true);
    const error = refused as SessionLockedError;
    expect(error.owner).toMatchObject({ pid: process.pid, hostname: hostname(), since: lock.owner.since });
    expect(error.message).toContain(`process ${process.pid} on this host (${hostname()}) since ${lock.owner.since}`);
    expect(sessionLockOwner(directory)?.pid).toBe(process.pid);
    lock.release();
    expect(existsSync(join(directory, 'lock'))).toBe(false);
    SessionLock.acquire(directory).release();
  });

  it('adds one exit hook for any number of locks held at once', () => {
    const before = process.listenerCount('exit');
    const locks = Array.from({ length: 20 }, () => SessionLock.acquire(tempDir()));
    expect(process.listenerCount('exit') - before).toBeLessThanOrEqual(1);
    for (const lock of locks) lock.release();
  });

  it('takes over a lock whose owner is provably dead: gone, or its pid reused by another process', async () => {
    const directory = tempDir();
    const dead = await exitedPid();
    writeFileSync(
      join(directory, 'lock'),
      JSON.stringify({ pid: dead, hostname: hostname(), since: '2026-01-01T00:00:00.000Z' }),
    );
    const taken = SessionLock.acquire(directory);
    expect(JSON.parse(readFileSync(join(directory, 'lock'), 'utf8'))).toMatchObject({ pid: process.pid });
    taken.release();
    if (!existsSync(`/proc/${process.pid}/stat`)) return;
    // This process's pid, but another start time: the pid was reused, the owner is gone.
    writeFileSync(
      join(directory, 'lock'),
      JSON.stringify({ pid: process.pid, hostname: hostname(), since: '2026-01-01T00:00:00.000Z', start_time: '1' }),
    );
    SessionLock.acquire(directory).release();
  });

  it('never takes over a lock of a live process or of another host', () => {
    const directory = tempDir();
    writeFileSync(
      join(directory, 'lock'),
      JSON.stringify({ pid: 1, hostname: hostname(), since: '2026-01-01T00:00:00.000Z' }),
    );
    expect(() => SessionLock.acquire(directory)).toThrow(/already running in process 1 on this host/);
    writeFileSync(
      join(directory, 'lock'),
      JSON.stringify({ pid: 999_999_999, hostname: 'elsewhere.example', since: '2026-01-01T00:00:00.000Z' }),
    );
    expect(() => SessionLock.acquire(directory)).toThrow(
      /process 999999999 on host elsewhere.example since 2026-01-01T00:00:00.000Z/,
    );
  });

  it('is taken by run() for the run and released when it ends; a locked session refuses to run', async () => {
    const directory = tempDir();
    const client = createScriptedModelClient({
      steps: [
        () => {
          expect(sessionLockOwner(directory)?.pid).toBe(process.pid);
          return { text: 'ok' };
        },
      ],
    });
    const session = new Agent({ client }).createSession({ directory });
    await session.run('go');
    client.assertDone();
    expect(existsSync(join(directory, 'lock'))).toBe(false);
    const other = SessionLock.acquire(directory);
    await expect(session.run('again')).rejects.toThrow(SessionLockedError);
    other.release();
    // Nothing was written by the refused run.
    expect(readTrace(directory).filter((record) => record.type === 'run_start')).toHaveLength(1);
  });
});

function exitedPid(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', () => resolve(child.pid!));
  });
}

describe('the scripted model client', () => {
  it('keeps what a step throws and rethrows it from assertDone(), so an expect inside a step fails the test', async () => {
    const client = createScriptedModelClient({
      steps: [
        () => {
          throw new Error('expected the system prompt to be "x"');
        },
      ],
    });
    const result = await new Agent({ client }).createSession().run('go');
    // The loop only sees a failed model call...
    expect(result.status).toBe('error');
    // ...and the test sees the assertion.
    expect(client.stepErrors).toHaveLength(1);
    expect(() => client.assertDone()).toThrow('expected the system prompt to be "x"');
  });
});
