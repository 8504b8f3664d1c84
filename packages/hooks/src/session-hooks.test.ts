import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApprovalPolicy, SessionOptions, TraceRecord } from '@rho/core';
import { Agent, defineTool, FileOperatorChannel } from '@rho/core';
import { createScriptedModelClient } from '@rho/core/testing';
import { describe, expect, it } from 'vitest';
import { parseHooksSources } from './config.js';
import { createSessionHooks } from './session-hooks.js';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'rho-hooks-'));
}

function traceOf(directory: string): TraceRecord[] {
  return readFileSync(join(directory, 'trace.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as TraceRecord);
}

/** The JSON each hook run read, one file per run. */
function linesOf(directory: string): Record<string, unknown>[] {
  return readdirSync(directory).map(
    (name) => JSON.parse(readFileSync(join(directory, name), 'utf8')) as Record<string, unknown>,
  );
}

function shell(ran: string[]) {
  return defineTool({
    name: 'shell',
    description: 'Runs a command.',
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
    async handle({ arguments: { command } }) {
      ran.push(command);
      return { content: `ran ${command}`, success: true };
    },
  });
}

const EVERY_NOTIFICATION = ['session_end', 'waiting_approval', 'error', 'budget_reached', 'directive_received'];

/** A session whose every notification hook writes its stdin to a file of its own in `out`. */
function setUp(
  steps: unknown[],
  options: {
    hooks?: Record<string, unknown>;
    policy?: ApprovalPolicy;
    session?: SessionOptions;
    maxTurns?: number;
  } = {},
) {
  const directory = tempDir();
  const out = tempDir();
  const record = `cat > ${out}/$RHO_HOOK_EVENT-$$.json`;
  const config = parseHooksSources([
    {
      origin: 'config.yaml:1',
      value: options.hooks ?? Object.fromEntries(EVERY_NOTIFICATION.map((event) => [event, [record]])),
    },
  ]);
  const hooks = createSessionHooks(config);
  const ran: string[] = [];
  const client = createScriptedModelClient({ steps: steps as never[] });
  const session = new Agent({
    tools: [shell(ran)],
    client,
    approvalPolicy: options.policy ?? (() => ({ required: false })),
    ...(options.maxTurns === undefined ? {} : { budgets: { maxTurns: options.maxTurns } }),
  }).createSession({
    id: 'hooked01',
    directory,
    pollIntervalMs: 10,
    ...(hooks.toolHooks === undefined ? {} : { toolHooks: hooks.toolHooks }),
    ...options.session,
  });
  hooks.attach(session);
  return { session, client, ran, directory, out, hooks };
}

describe('notification hooks', () => {
  it('session_end fires once with the documented JSON, and the hook run is in the trace', async () => {
    const { session, hooks, out, directory } = setUp([{ text: 'Done.' }]);
    expect((await session.run('go')).status).toBe('completed');
    await hooks.drain();
    const events = linesOf(out);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      event: 'session_end',
      session_id: 'hooked01',
      ts: expect.any(String),
      text: 'rho session hooked01: run ended, completed',
      status: 'completed',
      usage: expect.objectContaining({ input_tokens: expect.any(Number) }),
      record: expect.objectContaining({ type: 'run_end', status: 'completed' }),
    });
    const hookRecords = traceOf(directory).filter((record) => record.type === 'hook');
    expect(hookRecords).toEqual([
      expect.objectContaining({ type: 'hook', event: 'session_end', outcome: 'ok', duration_ms: expect.any(Number) }),
    ]);
  });

  it('budget_reached fires once with the limit, beside session_end', async () => {
    const { session, hooks, out } = setUp(
      [{ toolCalls: [{ id: 'c1', name: 'shell', arguments: { command: 'ls' } }] }, { text: 'never' }],
      { maxTurns: 1 },
    );
    const result = await session.run('go');
    expect(result.status).toBe('limit');
    await hooks.drain();
    const events = linesOf(out);
    expect(events.map((event) => event.event).sort()).toEqual(['budget_reached', 'session_end']);
    expect(events.find((event) => event.event === 'budget_reached')).toMatchObject({
      session_id: 'hooked01',
      limit: expect.stringContaining('turn'),
      record: expect.objectContaining({ type: 'run_end', status: 'limit' }),
    });
    expect(events.find((event) => event.event === 'session_end')).toMatchObject({ status: 'limit' });
  });

  it('error fires once with the message', async () => {
    const { session, hooks, out } = setUp([{ error: { message: 'the model is down', isRetryable: false } }]);
    expect((await session.run('go')).status).toBe('error');
    await hooks.drain();
    const events = linesOf(out);
    expect(events.filter((event) => event.event === 'error')).toEqual([
      expect.objectContaining({
        event: 'error',
        message: expect.stringContaining('the model is down'),
        text: expect.stringContaining('rho session hooked01: error: '),
        record: expect.objectContaining({ type: 'error' }),
      }),
    ]);
    expect(events.filter((event) => event.event === 'session_end')).toEqual([
      expect.objectContaining({ status: 'error' }),
    ]);
  });

  it('waiting_approval fires once with the tool call and the reason', async () => {
    const { session, hooks, out, ran } = setUp(
      [{ toolCalls: [{ id: 'c1', name: 'shell', arguments: { command: 'make' } }] }, { text: 'ok' }],
      {
        policy: () => ({ required: true, reason: 'the profile asks for approval of shell' }),
        session: { approvals: { unattended: 'wait', timeoutMs: 100 } },
      },
    );
    await session.run('go');
    await hooks.drain();
    expect(ran).toEqual([]);
    const events = linesOf(out).filter((event) => event.event === 'waiting_approval');
    expect(events).toEqual([
      expect.objectContaining({
        session_id: 'hooked01',
        tool_call_id: 'c1',
        tool_name: 'shell',
        tool_args: { command: 'make' },
        reason: 'the profile asks for approval of shell',
        record: expect.objectContaining({ type: 'approval_requested' }),
      }),
    ]);
  });

  it('directive_received fires once with the directive', async () => {
    const { session, hooks, out, directory } = setUp([{ text: 'ok' }]);
    await new FileOperatorChannel(directory).sendDirective('focus on the tests');
    await session.run('go');
    await hooks.drain();
    const events = linesOf(out).filter((event) => event.event === 'directive_received');
    expect(events).toEqual([
      expect.objectContaining({
        directive: 'focus on the tests',
        text: 'rho session hooked01: directive received: focus on the tests',
        record: expect.objectContaining({ type: 'directive', text: 'focus on the tests' }),
      }),
    ]);
  });

  it('one that hangs is killed at its timeout, recorded as a timeout, and the run is not held', async () => {
    const { session, hooks, directory } = setUp([{ text: 'Done.' }], {
      hooks: { session_end: [{ command: 'sleep 30', name: 'stuck', timeout: 0.3 }, { command: 'exit 4' }] },
    });
    const started = performance.now();
    expect((await session.run('go')).status).toBe('completed');
    await hooks.drain();
    expect(performance.now() - started).toBeLessThan(5000);
    const hookRecords = traceOf(directory).filter((record) => record.type === 'hook');
    expect(hookRecords).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          event: 'session_end',
          hook: 'stuck',
          outcome: 'timeout',
          reason: 'killed at its timeout of 0.3 s',
        }),
        expect.objectContaining({ event: 'session_end', hook: 'exit 4', outcome: 'failed', reason: 'exit code 4' }),
      ]),
    );
  });
});

describe('tool hooks', () => {
  const callShell = (command: string) => [
    { toolCalls: [{ id: 'c1', name: 'shell', arguments: { command } }] },
    { text: 'Done.' },
  ];

  it('a pre_tool deny (exit 2, the reason on stderr) reaches the model and the call does not run', async () => {
    const { session, client, ran, directory } = setUp(callShell('deploy'), {
      hooks: { pre_tool: ['echo "no deploys on Fridays" >&2; exit 2'] },
    });
    expect((await session.run('go')).status).toBe('refused');
    expect(ran).toEqual([]);
    expect(JSON.stringify(client.requests[1]?.messages)).toContain(
      'Not run: denied by a pre_tool hook: no deploys on Fridays',
    );
    expect(traceOf(directory).find((record) => record.type === 'hook')).toMatchObject({
      event: 'pre_tool',
      outcome: 'ok',
      decision: 'deny',
      reason: 'no deploys on Fridays',
      tool_call_id: 'c1',
    });
  });

  it('pre_tool reads the call as JSON; verdicts combine to the strictest; a bad answer is no opinion, recorded as failed', async () => {
    const dir = tempDir();
    const seen = join(dir, 'pre.json');
    const { session, client, ran, directory } = setUp(callShell('make'), {
      hooks: {
        pre_tool: [
          `cat > ${seen}; echo '{"decision":"allow"}'`,
          { command: `echo '{"decision":"deny","reason":"make is frozen"}'`, tools: ['shell'] },
          { command: 'echo not json', name: 'chatty' },
          { command: `echo '{"decision":"deny","reason":"never"}'`, tools: ['write'] },
        ],
      },
    });
    expect((await session.run('go')).status).toBe('refused');
    expect(ran).toEqual([]);
    expect(JSON.stringify(client.requests[1]?.messages)).toContain('denied by a pre_tool hook: make is frozen');
    expect(JSON.parse(readFileSync(seen, 'utf8'))).toMatchObject({
      event: 'pre_tool',
      session_id: 'hooked01',
      tool_call_id: 'c1',
      tool_name: 'shell',
      arguments: { command: 'make' },
      approval: { required: false },
    });
    const records = traceOf(directory).filter((record) => record.type === 'hook');
    expect(records).toHaveLength(3);
    expect(records.find((record) => record.hook === 'chatty')).toMatchObject({
      outcome: 'failed',
      reason: expect.stringContaining('not JSON'),
    });
  });

  it('a pre_tool allow spares the approval question; a pre_tool that hangs is no opinion; post_tool sees the result', async () => {
    const dir = tempDir();
    const post = join(dir, 'post.json');
    const { session, ran, directory } = setUp(callShell('make'), {
      policy: () => ({ required: true, reason: 'asks' }),
      session: { approvals: { unattended: 'wait', timeoutMs: 100 } },
      hooks: {
        pre_tool: [`echo '{"decision":"allow"}'`, { command: 'sleep 30', name: 'slow', timeout: 0.2 }],
        post_tool: [`cat > ${post}`],
      },
    });
    expect((await session.run('go')).status).toBe('completed');
    expect(ran).toEqual(['make']);
    expect(JSON.parse(readFileSync(post, 'utf8'))).toMatchObject({
      event: 'post_tool',
      tool_name: 'shell',
      result: { success: true, content: 'ran make', duration_ms: expect.any(Number) },
    });
    const records = traceOf(directory).filter((record) => record.type === 'hook');
    expect(records.map((record) => [record.event, record.hook, record.outcome])).toEqual([
      ['pre_tool', `echo '{"decision":"allow"}'`, 'ok'],
      ['pre_tool', 'slow', 'timeout'],
      ['post_tool', `cat > ${post}`, 'ok'],
    ]);
  });

  it('a pre_tool allow does not approve a call that matched a dangerous pattern', async () => {
    const { session, ran } = setUp(callShell('rm -rf /'), {
      policy: () => ({ required: true, reason: 'dangerous', dangerous: 'rm -rf' }),
      session: { approvals: { unattended: 'wait', timeoutMs: 100 } },
      hooks: { pre_tool: [`echo '{"decision":"allow"}'`] },
    });
    expect((await session.run('go')).status).toBe('refused');
    expect(ran).toEqual([]);
  });
});

describe('hook records', () => {
  it('of tool calls made before attach are written once attached', async () => {
    const config = parseHooksSources([{ origin: 'x', value: { pre_tool: ['true'] } }]);
    const hooks = createSessionHooks(config);
    const appended: unknown[] = [];
    await hooks.toolHooks!.beforeToolCall!(
      { sessionId: 's', toolCallId: 'c', toolName: 'shell', arguments: {}, approval: { required: false } },
      new AbortController().signal,
    );
    expect(appended).toEqual([]);
    hooks.attach({
      id: 's',
      state: { append: (record: unknown) => appended.push(record), addObserver: () => () => {} } as never,
    });
    expect(appended).toEqual([
      expect.objectContaining({ type: 'hook', event: 'pre_tool', hook: 'true', outcome: 'ok' }),
    ]);
  });
});
