import { appendFileSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import { ConfigError, SessionBusyError } from './errors.js';
import type { SessionEvent, TraceRecord } from './events.js';
import { State } from './state.js';
import { createScriptedModelClient } from './testing/scripted-model-client.js';
import { defineTool } from './tool.js';

const echo = defineTool({
  name: 'echo',
  description: 'Repeats text.',
  parameters: {
    type: 'object',
    properties: { text: { type: 'string' }, times: { type: 'integer' } },
    required: ['text'],
  },
  annotations: { readOnly: true },
  async handle({ arguments: { text, times } }) {
    return { content: text.repeat(times ?? 1), success: true };
  },
});

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'rho-session-'));
}

function readTrace(path: string): TraceRecord[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as TraceRecord);
}

describe('Session', () => {
  it('runs a three-turn task with tools and writes a trace that replays to the same state', async () => {
    const directory = tempDir();
    const client = createScriptedModelClient({
      model: 'gpt-4o-mini',
      steps: [
        {
          text: 'Let me echo.',
          toolCalls: [{ id: 'a', name: 'echo', arguments: { text: 'hi', times: '2' } }],
          usage: { inputTokens: 1000, outputTokens: 10, cachedTokens: 200 },
        },
        { toolCalls: [{ id: 'b', name: 'echo', arguments: { text: 'again' } }] },
        { text: 'Done: hihi and again.' },
      ],
    });
    const agent = new Agent({ systemPrompt: 'sys', tools: [echo], client });
    const session = agent.createSession({ id: 's1', directory });
    const events: SessionEvent[] = [];
    const result = await session.run('please echo', { onEvent: (event) => events.push(event) });

    expect(result.status).toBe('completed');
    expect(result.text).toBe('Done: hihi and again.');
    client.assertDone();
    // Text streamed alongside tool calls stays in history.
    expect(session.state.messages[1]).toMatchObject({ role: 'assistant', content: 'Let me echo.' });
    expect(session.state.messages[2]).toEqual({ role: 'tool', tool_call_id: 'a', content: 'hihi' });
    // The model saw the system prompt and the tools.
    expect(client.requests[0]!.messages[0]).toEqual({ role: 'system', content: 'sys' });
    expect(client.requests[0]!.tools?.map((tool) => tool.function.name)).toEqual(['echo']);

    const records = readTrace(join(directory, 'trace.jsonl'));
    expect(records.map((record) => record.type)).toEqual([
      'run_start',
      'message',
      'llm_start',
      'llm_end',
      'message',
      'tool_start',
      'message',
      'tool_end',
      'llm_start',
      'llm_end',
      'message',
      'tool_start',
      'message',
      'tool_end',
      'llm_start',
      'llm_end',
      'message',
      'run_end',
    ]);
    expect(
      events
        .filter((event) => event.type === 'text')
        .map((event) => (event as { text: string }).text)
        .join(''),
    ).toBe('Let me echo.Done: hihi and again.');
    for (const record of records) expect(record.ts).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);

    const replayed = State.fromJsonl(readFileSync(join(directory, 'trace.jsonl')));
    expect(replayed.messages).toEqual(session.state.messages);
    expect(replayed.usage).toEqual(session.state.usage);
    expect(replayed.status).toBe('completed');
    expect(replayed.runCount).toBe(1);
    expect(session.state.usage.input_tokens).toBe(1200);
    expect(session.state.usage.cached_tokens).toBe(200);
    expect(session.state.usage.cost_usd).toBeGreaterThan(0);
    const meta = JSON.parse(readFileSync(join(directory, 'meta.json'), 'utf8')) as Record<string, unknown>;
    expect(meta).toMatchObject({ id: 's1', status: 'completed', first_prompt: 'please echo', pid: process.pid });
  });

  it('creates the directory it is given (private), parents included, on the first run', async () => {
    const directory = join(tempDir(), 'sessions', 'my-session');
    const client = createScriptedModelClient({ steps: [{ text: 'Hello.' }] });
    const session = new Agent({ tools: [echo], client }).createSession({ directory });
    expect((await session.run('hi')).status).toBe('completed');
    expect(readTrace(join(directory, 'trace.jsonl')).some((record) => record.type === 'run_end')).toBe(true);
    expect(statSync(directory).mode & 0o777).toBe(0o700);
    // A directory that cannot be made is a typed error naming it, not an ENOENT on the lock.
    const blocked = join(tempDir(), 'file');
    writeFileSync(blocked, '');
    const failing = new Agent({ tools: [echo], client: createScriptedModelClient({ steps: [] }) }).createSession({
      directory: join(blocked, 'session'),
    });
    await expect(failing.run('hi')).rejects.toThrow(/Cannot write .*file.session: ENOTDIR/);
  });

  it('answers malformed JSON, unknown tools and invalid arguments with errors the model reads', async () => {
    const client = createScriptedModelClient({
      steps: [
        {
          toolCalls: [
            { id: 'bad', name: 'echo', arguments: '{"text": "unterminated' },
            { id: 'unknown', name: 'rm_rf', arguments: {} },
            { id: 'invalid', name: 'echo', arguments: { times: 'many' } },
          ],
        },
        { text: 'ok' },
      ],
    });
    let ran = 0;
    const counting = defineTool({
      name: echo.name,
      description: echo.description,
      parameters: echo.parameters,
      async handle() {
        ran += 1;
        return { content: 'x', success: true };
      },
    });
    const session = new Agent({ tools: [counting], client }).createSession();
    const result = await session.run('go');
    expect(result.status).toBe('completed');
    expect(ran).toBe(0);
    const results = session.state.messages.filter((message) => message.role === 'tool');
    expect(results).toHaveLength(3);
    expect(results[0]!.content).toMatch(/not valid JSON/);
    expect(results[1]!.content).toBe(`Error: unknown tool 'rm_rf': the tool name must be one of "echo".`);
    expect(results[2]!.content).toMatch(/'times' must be an integer.*'text' is required/);
    // Each tool call has exactly one result, in order.
    expect(results.map((message) => (message as { tool_call_id: string }).tool_call_id)).toEqual([
      'bad',
      'unknown',
      'invalid',
    ]);
  });

  it('runs read-only calls of one response concurrently and others in order', async () => {
    let waiting: (() => void) | undefined;
    const barrier = defineTool({
      name: 'barrier',
      description: 'Waits for a partner call.',
      parameters: { type: 'object', properties: {} },
      annotations: { readOnly: true },
      async handle() {
        if (waiting === undefined) {
          await new Promise<void>((resolve) => {
            waiting = resolve;
          });
        } else {
          waiting();
        }
        return { content: 'met', success: true };
      },
    });
    const order: string[] = [];
    const writer = defineTool({
      name: 'writer',
      description: 'Writes.',
      parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      async handle({ arguments: { id } }) {
        order.push(`start ${id}`);
        // Not a race: a window for a concurrent call to start; in-order calls give one order however long it is.
        await new Promise((resolve) => setTimeout(resolve, 5));
        order.push(`end ${id}`);
        return { content: id, success: true };
      },
    });
    const client = createScriptedModelClient({
      steps: [
        {
          toolCalls: [
            { name: 'barrier', arguments: {} },
            { name: 'barrier', arguments: {} },
          ],
        },
        {
          toolCalls: [
            { name: 'writer', arguments: { id: '1' } },
            { name: 'writer', arguments: { id: '2' } },
          ],
        },
        { text: 'done' },
      ],
    });
    const session = new Agent({ tools: [barrier, writer], client }).createSession();
    const result = await session.run('go');
    expect(result.status).toBe('completed');
    expect(order).toEqual(['start 1', 'end 1', 'start 2', 'end 2']);
  });

  it('cancels a running tool and still gives every call exactly one result', async () => {
    const directory = tempDir();
    const slow = defineTool({
      name: 'slow',
      description: 'Waits until cancelled.',
      parameters: { type: 'object', properties: {} },
      async handle(_invocation, context) {
        markStarted();
        await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
        throw new Error('aborted');
      },
    });
    let markStarted: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      markStarted = resolve;
    });
    const client = createScriptedModelClient({
      steps: [
        {
          toolCalls: [
            { id: 'one', name: 'slow', arguments: {} },
            { id: 'two', name: 'slow', arguments: {} },
          ],
        },
      ],
    });
    const session = new Agent({ tools: [slow], client }).createSession({ directory });
    const running = session.run('go');
    // Cancel once the first tool runs.
    await started;
    session.cancel();
    const result = await running;
    expect(result.status).toBe('cancelled');
    const results = session.state.messages.filter((message) => message.role === 'tool');
    expect(results.map((message) => (message as { tool_call_id: string }).tool_call_id)).toEqual(['one', 'two']);
    expect(results[1]!.content).toMatch(/before this tool call ran/);
    const replayed = State.fromJsonl(readFileSync(join(directory, 'trace.jsonl')));
    expect(replayed.messages).toEqual(session.state.messages);
    expect(replayed.status).toBe('cancelled');
    expect(replayed.replay?.interruptedToolCalls).toEqual([]);
  });

  it('cancels through the cancel file and removes it once stopped', async () => {
    const directory = tempDir();
    const client = createScriptedModelClient({ steps: [{ hang: true }] });
    const session = new Agent({ client }).createSession({ directory, pollIntervalMs: 20 });
    // Request the cancel once the model call is under way.
    const calling = new Promise<void>((resolve) => {
      session.state.addObserver((record) => {
        if (record.type === 'llm_start') resolve();
      });
    });
    const running = session.run('wait');
    await calling;
    writeFileSync(join(directory, 'cancel'), '');
    const result = await running;
    expect(result.status).toBe('cancelled');
    expect(() => readFileSync(join(directory, 'cancel'))).toThrow();
  });

  it('denies calls that need approval when nobody can approve, and tells the model why', async () => {
    const client = createScriptedModelClient({
      steps: [{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, { text: 'I could not.' }],
    });
    const session = new Agent({
      tools: [echo],
      client,
      approvalPolicy: () => ({ required: true, reason: 'profile requires approval' }),
    }).createSession();
    const events: SessionEvent[] = [];
    const result = await session.run('go', { onEvent: (event) => events.push(event) });
    // Every call was refused: the task was not done, whatever the model answered.
    expect(result.status).toBe('refused');
    expect(session.state.messages[2]!.content).toMatch(
      /needs approval \(profile requires approval\), and nobody can approve/,
    );
    expect(events.some((event) => event.type === 'tool_blocked')).toBe(true);
  });

  it('stops after a rejection and answers the remaining calls', async () => {
    const client = createScriptedModelClient({
      steps: [
        {
          toolCalls: [
            { name: 'echo', arguments: { text: 'a' } },
            { name: 'echo', arguments: { text: 'b' } },
          ],
        },
      ],
    });
    const asked: string[] = [];
    const session = new Agent({ tools: [echo], client, approvalPolicy: () => true }).createSession({
      approver: (request) => {
        asked.push(String(request.arguments.text));
        return false;
      },
    });
    const result = await session.run('go');
    expect(result.status).toBe('refused');
    expect(asked).toEqual(['a']);
    const contents = session.state.messages
      .filter((message) => message.role === 'tool')
      .map((message) => message.content);
    expect(contents).toEqual([
      'Command rejected by user. Awaiting new instructions.',
      'Command skipped - user rejected previous command.',
    ]);
  });

  it('ends a run at its turn limit with a final turn without tools', async () => {
    const client = createScriptedModelClient({
      steps: [
        { toolCalls: [{ name: 'echo', arguments: { text: 'a' } }] },
        { toolCalls: [{ name: 'echo', arguments: { text: 'b' } }] },
        (request) => {
          expect(request.tools).toBeUndefined();
          return { text: 'Summary: echoed a and b.' };
        },
      ],
    });
    const session = new Agent({ tools: [echo], client }).createSession();
    const result = await session.run('go', { maxTurns: 2 });
    expect(result).toMatchObject({ status: 'limit', limit: 'max_turns', text: 'Summary: echoed a and b.' });
    client.assertDone();
  });

  it('ends a run when the cost budget is reached', async () => {
    const client = createScriptedModelClient({
      steps: [
        { toolCalls: [{ name: 'echo', arguments: { text: 'a' } }], usage: { costUsd: 0.6 } },
        { toolCalls: [{ name: 'echo', arguments: { text: 'b' } }], usage: { costUsd: 0.6 } },
        { text: 'Out of budget.' },
      ],
    });
    const session = new Agent({ tools: [echo], client, budgets: { maxCostUsd: 1 } }).createSession();
    const result = await session.run('go');
    expect(result).toMatchObject({ status: 'limit', limit: 'max_cost_usd' });
    client.assertDone();
  });

  it('delivers directives exactly once, between turns, as marked user messages', async () => {
    const directory = tempDir();
    const client = createScriptedModelClient({
      steps: [
        () => {
          appendFileSync(join(directory, 'directives.jsonl'), `${JSON.stringify({ text: 'focus on tests' })}\n`);
          return { toolCalls: [{ name: 'echo', arguments: { text: 'a' } }] };
        },
        (request) => {
          expect(request.messages.at(-1)).toEqual({ role: 'user', content: '[Operator directive] focus on tests' });
          return { text: 'ok' };
        },
        (request) => {
          expect(
            request.messages.filter((message) => message.content === '[Operator directive] focus on tests'),
          ).toHaveLength(1);
          return { text: 'still ok' };
        },
      ],
    });
    const agent = new Agent({ tools: [echo], client });
    const session = agent.createSession({ directory });
    await session.run('one');
    // A resumed session does not redeliver.
    const resumed = agent.createSession({
      directory,
      state: State.fromJsonl(readFileSync(join(directory, 'trace.jsonl'))),
    });
    await resumed.run('two');
    client.assertDone();
    expect(readTrace(join(directory, 'trace.jsonl')).filter((record) => record.type === 'directive')).toHaveLength(1);
  });

  it('reports a model API error and ends the run with status error', async () => {
    const client = createScriptedModelClient({
      steps: [{ error: { message: 'API error 400: bad request', statusCode: 400 } }],
    });
    const session = new Agent({ client }).createSession();
    const result = await session.run('go');
    expect(result.status).toBe('error');
    expect(result.error?.message).toBe('API error 400: bad request');
  });
});

describe('a busy session', () => {
  it('refuses a second concurrent run() and compact() with SessionBusyError, and the first run is unaffected', async () => {
    let entered: () => void = () => {};
    const inTool = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const wait = defineTool({
      name: 'wait',
      description: 'Waits until released.',
      parameters: { type: 'object', properties: {} },
      async handle() {
        entered();
        await released;
        return { content: 'released', success: true };
      },
    });
    const directory = tempDir();
    const client = createScriptedModelClient({
      steps: [{ toolCalls: [{ name: 'wait', arguments: {} }] }, { text: 'first done' }, { text: 'second done' }],
    });
    const session = new Agent({ tools: [wait], client }).createSession({ directory });
    const first = session.run('first');
    await inTool;

    const second = await session.run('second').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(SessionBusyError.isInstance(second)).toBe(true);
    expect(second).toBeInstanceOf(SessionBusyError);
    expect(second).toMatchObject({ code: 'session_busy', operation: 'run', name: 'SessionBusyError' });
    expect((second as Error).message).toMatch(/already running; wait for run\(\) to finish or cancel\(\) it first/);
    // A mistake of the calling code, not bad configuration (the CLI maps ConfigError to exit code 2).
    expect(ConfigError.isInstance(second)).toBe(false);
    await expect(session.compact()).rejects.toMatchObject({ code: 'session_busy', operation: 'compact' });
    expect(session.isRunning).toBe(true);

    release();
    const result = await first;
    expect(result).toMatchObject({ status: 'completed', text: 'first done' });
    // The refused calls left nothing in the trace, and did not take or drop the directory's lock.
    expect(readTrace(join(directory, 'trace.jsonl')).filter((record) => record.type === 'run_start')).toHaveLength(1);
    expect(await session.run('second')).toMatchObject({ status: 'completed', text: 'second done' });
    client.assertDone();
  });

  it('records the queued task a run carries out in run_start (task_id, task_attempt)', async () => {
    const directory = tempDir();
    const client = createScriptedModelClient({ steps: [{ text: 'one' }, { text: 'two' }] });
    const session = new Agent({ tools: [], client }).createSession({ id: 's-task', directory });
    await session.run('first', { task: { id: 'task-1', attempt: 2 } });
    await session.run('second');
    const starts = readTrace(join(directory, 'trace.jsonl')).filter((record) => record.type === 'run_start');
    expect(starts[0]).toMatchObject({ prompt: 'first', task_id: 'task-1', task_attempt: 2 });
    expect(starts[1]).not.toHaveProperty('task_id');
  });
});
