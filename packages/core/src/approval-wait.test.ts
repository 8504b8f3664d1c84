import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import type { ApprovalPolicy } from './agent.js';
import { claimApprovalAnswer, readApprovalAnswer } from './approvals.js';
import { ConfigError } from './errors.js';
import type { TraceRecord } from './events.js';
import { FileOperatorChannel } from './operator-channel.js';
import type { Session } from './session.js';
import type { SessionOptions, ToolHooks } from './session-options.js';
import { readSessionMeta } from './session-meta.js';
import { INTERRUPTED_TOOL_RESULT, State } from './state.js';
import { createScriptedModelClient } from './testing/scripted-model-client.js';
import type { ScriptedModelClient } from './testing/scripted-model-client.js';
import { defineTool } from './tool.js';

/** A tool with a side effect the tests can see: each call appends its text to `ran`. */
function shellLike(ran: string[]) {
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

/** Every call needs approval; `rm -rf` is a dangerous pattern. */
const policy: ApprovalPolicy = (_tool, args) =>
  String(args.command).includes('rm -rf')
    ? { required: true, reason: 'the arguments contain the dangerous pattern "rm -rf"', dangerous: 'rm -rf' }
    : { required: true, reason: 'the profile asks for approval of shell' };

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'rho-approval-'));
}

function traceOf(directory: string): TraceRecord[] {
  return readFileSync(join(directory, 'trace.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as TraceRecord);
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let waited = 0; waited < 20_000; waited += 10) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const waiting = (directory: string) => () =>
  existsSync(join(directory, 'trace.jsonl')) &&
  traceOf(directory).some((record) => record.type === 'approval_requested');

function setUp(
  steps: unknown[],
  options: SessionOptions = {},
): { session: Session; client: ScriptedModelClient; ran: string[]; directory: string } {
  const directory = tempDir();
  const ran: string[] = [];
  const client = createScriptedModelClient({ steps: steps as never[] });
  const session = new Agent({ tools: [shellLike(ran)], client, approvalPolicy: policy }).createSession({
    id: 'parked01',
    directory,
    pollIntervalMs: 10,
    approvals: { unattended: 'wait' },
    ...options,
  });
  return { session, client, ran, directory };
}

const callOnce = (command: string, id = 'call-1') => [
  { toolCalls: [{ id, name: 'shell', arguments: { command } }] },
  { text: 'Done.' },
];

/** Runs `command` until its call waits, then stops the run from outside: the session is parked. */
async function parkedAt(command: string): Promise<string> {
  const { session, directory } = setUp(callOnce(command));
  const stop = new AbortController();
  const running = session.run('go', { signal: stop.signal });
  await until(waiting(directory), 'the approval request');
  stop.abort();
  expect((await running).status).toBe('waiting_approval');
  return directory;
}

/** The parked session of `directory`, replayed from its trace as a new process would, with `options`. */
function resumeParked(
  directory: string,
  steps: unknown[],
  options: SessionOptions = {},
): { session: Session; ran: string[] } {
  const ran: string[] = [];
  const client = createScriptedModelClient({ steps: steps as never[] });
  const session = new Agent({ tools: [shellLike(ran)], client, approvalPolicy: policy }).createSession({
    id: 'parked01',
    directory,
    state: State.fromJsonl(readFileSync(join(directory, 'trace.jsonl'))),
    pollIntervalMs: 10,
    approvals: { unattended: 'wait' },
    ...options,
  });
  return { session, ran };
}

describe('approvals that wait', () => {
  it('parks a call nobody can approve, shows waiting_approval, and runs it once an operator approves', async () => {
    const { session, ran, directory } = setUp(callOnce('make clean'));
    const running = session.run('clean the build');
    await until(waiting(directory), 'the approval request');
    expect(readSessionMeta(directory)?.status).toBe('waiting_approval');
    expect(session.pendingApprovals()).toEqual([
      expect.objectContaining({
        toolCallId: 'call-1',
        toolName: 'shell',
        arguments: { command: 'make clean' },
        reason: 'the profile asks for approval of shell',
        onTimeout: 'deny',
      }),
    ]);
    expect(ran).toEqual([]);
    const answer = await new FileOperatorChannel(directory).answerApproval('call-1', {
      decision: 'approve',
      by: 'ana@laptop',
    });
    expect(answer.outcome).toBe('answered');
    const result = await running;
    expect(result.status).toBe('completed');
    expect(ran).toEqual(['make clean']);
    const records = traceOf(directory);
    const types = records.map((record) => record.type);
    expect(types.indexOf('approval_requested')).toBeLessThan(types.indexOf('approval_answered'));
    expect(types.indexOf('approval_answered')).toBeLessThan(types.indexOf('tool_start'));
    expect(records.find((record) => record.type === 'approval_answered')).toMatchObject({
      decision: 'approve',
      scope: 'once',
      by: 'ana@laptop',
      source: 'operator',
    });
    expect(records.filter((record) => record.type === 'status').map((record) => record.status)).toEqual([
      'waiting_approval',
      'running',
    ]);
    expect(session.pendingApprovals()).toEqual([]);
  });

  it('a denial ends that call with the reason given to the model; a run whose only call was denied is refused', async () => {
    const { session, client, ran, directory } = setUp(callOnce('make clean'));
    const running = session.run('clean the build');
    await until(waiting(directory), 'the approval request');
    await new FileOperatorChannel(directory).answerApproval('call-1', {
      decision: 'deny',
      reason: 'use the Makefile target dist-clean',
      by: 'ana@laptop',
    });
    const result = await running;
    expect(ran).toEqual([]);
    expect(result.status).toBe('refused');
    expect(JSON.stringify(client.requests[1]?.messages)).toContain(
      'Not run: denied by ana@laptop: use the Makefile target dist-clean',
    );
    expect(traceOf(directory).find((record) => record.type === 'tool_blocked')).toMatchObject({
      reason: 'denied by ana@laptop: use the Makefile target dist-clean',
    });
  });

  it('two answers racing: exactly one is applied, the other is told which won', async () => {
    const { session, ran, directory } = setUp(callOnce('make clean'));
    const running = session.run('go');
    await until(waiting(directory), 'the approval request');
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        new FileOperatorChannel(directory).answerApproval('call-1', {
          decision: index % 2 === 0 ? 'approve' : 'deny',
          by: `operator${index}`,
        }),
      ),
    );
    const winners = outcomes.filter((outcome) => outcome.outcome === 'answered');
    expect(winners).toHaveLength(1);
    for (const outcome of outcomes) expect(outcome.answer.by).toBe(winners[0]!.answer.by);
    await running;
    const answered = traceOf(directory).filter((record) => record.type === 'approval_answered');
    expect(answered).toHaveLength(1);
    expect(answered[0]).toMatchObject({ by: winners[0]!.answer.by });
    expect(ran).toEqual(winners[0]!.answer.decision === 'approve' ? ['make clean'] : []);
  });

  it('a timeout denies, or approves when told to, but never approves a dangerous call', async () => {
    const denied = setUp(callOnce('make clean'), { approvals: { unattended: 'wait', timeoutMs: 50 } });
    expect((await denied.session.run('go')).status).toBe('refused');
    expect(traceOf(denied.directory).find((record) => record.type === 'approval_answered')).toMatchObject({
      decision: 'deny',
      source: 'timeout',
    });
    expect(readApprovalAnswer(denied.directory, 'call-1')).toMatchObject({ decision: 'deny', source: 'timeout' });

    const approved = setUp(callOnce('make clean'), {
      approvals: { unattended: 'wait', timeoutMs: 50, onTimeout: 'approve' },
    });
    expect((await approved.session.run('go')).status).toBe('completed');
    expect(approved.ran).toEqual(['make clean']);

    const dangerous = setUp(callOnce('rm -rf build'), {
      approvals: { unattended: 'wait', timeoutMs: 50, onTimeout: 'approve' },
    });
    expect((await dangerous.session.run('go')).status).toBe('refused');
    expect(dangerous.ran).toEqual([]);
    expect(traceOf(dangerous.directory).find((record) => record.type === 'approval_requested')).toMatchObject({
      dangerous: 'rm -rf',
      on_timeout: 'deny',
    });
  });

  it("the approvals' deadline cuts a wait short: the call gets the timeout's answer then, not at its timeout", async () => {
    const deadline = new Date(Date.now() + 300);
    const { session, ran, directory } = setUp(callOnce('make clean'), {
      approvals: { unattended: 'wait', timeoutMs: 60 * 60_000, deadline },
    });
    const started = Date.now();
    expect((await session.run('go')).status).toBe('refused');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(ran).toEqual([]);
    const records = traceOf(directory);
    expect(records.find((record) => record.type === 'approval_requested')).toMatchObject({
      expires_at: deadline.toISOString(),
      on_timeout: 'deny',
    });
    expect(records.find((record) => record.type === 'approval_answered')).toMatchObject({
      decision: 'deny',
      source: 'timeout',
      reason: expect.stringMatching(/^nobody answered within \d+ s \(the approval deadline, .+Z\)$/),
    });
    // A deadline already past answers at once; a later one leaves the timeout in force.
    const late = setUp(callOnce('make clean'), {
      approvals: { unattended: 'wait', timeoutMs: 50, deadline: new Date(Date.now() + 60 * 60_000) },
    });
    expect((await late.session.run('go')).status).toBe('refused');
    expect(traceOf(late.directory).find((record) => record.type === 'approval_answered')).toMatchObject({
      reason: 'nobody answered within 0 s (the approval timeout)',
    });
  });

  it('a person answering just before the timeout wins over it', async () => {
    const { session, ran, directory } = setUp(callOnce('make clean'), {
      approvals: { unattended: 'wait', timeoutMs: 60_000 },
    });
    // The answer is on disk before the wait starts: the first look finds it.
    claimApprovalAnswer(directory, 'call-1', { decision: 'approve', by: 'early' });
    expect((await session.run('go')).status).toBe('completed');
    expect(ran).toEqual(['make clean']);
    // The timeout's own claim would lose: the call has its answer.
    expect(claimApprovalAnswer(directory, 'call-1', { decision: 'deny', source: 'timeout' })).toMatchObject({
      outcome: 'already_answered',
      answer: { by: 'early' },
    });
  });

  it('a run stopped while a call waits parks; resumed after a crash, it honours the answer given meanwhile', async () => {
    const { session, directory } = setUp([
      {
        toolCalls: [
          { id: 'first', name: 'shell', arguments: { command: 'make' } },
          { id: 'second', name: 'shell', arguments: { command: 'make install' } },
        ],
      },
    ]);
    claimApprovalAnswer(directory, 'first', { decision: 'approve', by: 'ana' });
    const stop = new AbortController();
    const running = session.run('build and install', { signal: stop.signal });
    await until(
      () =>
        existsSync(join(directory, 'trace.jsonl')) &&
        traceOf(directory).some((record) => record.type === 'approval_requested' && record.tool_call_id === 'second'),
      'the second request',
    );
    stop.abort();
    expect((await running).status).toBe('waiting_approval');
    expect(readSessionMeta(directory)?.status).toBe('waiting_approval');

    // The process is gone; someone answers; a new process resumes from the trace.
    claimApprovalAnswer(directory, 'second', { decision: 'approve', by: 'ben', scope: 'once' });
    const replayed = State.fromJsonl(readFileSync(join(directory, 'trace.jsonl')));
    expect(replayed.parkedToolCalls.map((call) => call.id)).toEqual(['second']);
    expect([...replayed.pendingApprovals.keys()]).toEqual(['second']);
    expect(replayed.replay?.interruptedToolCalls).toEqual([]);
    const ran: string[] = [];
    const client = createScriptedModelClient({ steps: [{ text: 'Built and installed.' }] });
    const resumed = new Agent({ tools: [shellLike(ran)], client, approvalPolicy: policy }).createSession({
      id: 'parked01',
      directory,
      state: replayed,
      pollIntervalMs: 10,
      approvals: { unattended: 'wait' },
    });
    const result = await resumed.run('');
    expect(result.status).toBe('completed');
    expect(ran).toEqual(['make install']);
    // The model sees both results, in call order, and nothing interrupted.
    const tools = client.requests[0]!.messages.filter((message) => message.role === 'tool');
    expect(tools.map((message) => message.content)).toEqual(['ran make', 'ran make install']);
    expect(JSON.stringify(client.requests[0]!.messages)).not.toContain(INTERRUPTED_TOOL_RESULT);
  });

  it('an answer given while parked applies on resume before an approver is asked or withhold refuses', async () => {
    for (const resumeWith of ['approver', 'withhold', 'approver-answers'] as const) {
      const directory = await parkedAt('make clean');
      if (resumeWith !== 'approver-answers')
        claimApprovalAnswer(directory, 'call-1', { decision: 'approve', by: 'ana' });
      const asked: string[] = [];
      const { session: resumed, ran } = resumeParked(directory, [{ text: 'Cleaned.' }], {
        approvals: { unattended: resumeWith === 'withhold' ? 'withhold' : 'wait' },
        ...(resumeWith === 'withhold'
          ? {}
          : {
              approver: (request: { toolCallId: string }) => {
                asked.push(request.toolCallId);
                return resumeWith === 'approver-answers';
              },
            }),
      });
      const result = await resumed.run('');
      expect(result.status, resumeWith).toBe('completed');
      expect(ran, resumeWith).toEqual(['make clean']);
      expect(asked, resumeWith).toEqual(resumeWith === 'approver-answers' ? ['call-1'] : []);
      const answered = traceOf(directory).filter((record) => record.type === 'approval_answered');
      expect(answered, resumeWith).toHaveLength(1);
      expect(answered[0], resumeWith).toMatchObject({
        decision: 'approve',
        by: resumeWith === 'approver-answers' ? 'approver' : 'ana',
      });
      expect(State.fromJsonl(readFileSync(join(directory, 'trace.jsonl'))).pendingApprovals.size).toBe(0);
      // The terminal's answer is settled on the channel: a later answer from elsewhere is told it lost.
      expect(claimApprovalAnswer(directory, 'call-1', { decision: 'deny', by: 'late' }).outcome, resumeWith).toBe(
        'already_answered',
      );
    }
  });

  it('an answer given elsewhere while an approver asks about a listed call closes the question and applies', async () => {
    const directory = await parkedAt('make clean');
    let asked: AbortSignal | undefined;
    const { session: resumed, ran } = resumeParked(directory, [{ text: 'Cleaned.' }], {
      // A person at a terminal who never answers: the prompt stays until it is withdrawn.
      approver: (request) =>
        new Promise<boolean>((resolve) => {
          asked = request.signal;
          request.signal?.addEventListener('abort', () => resolve(false), { once: true });
        }),
    });
    const result = resumed.run('');
    await until(() => asked !== undefined, 'the question');
    expect(asked!.aborted).toBe(false);
    claimApprovalAnswer(directory, 'call-1', { decision: 'approve', by: 'remote' });
    expect((await result).status).toBe('completed');
    expect(asked!.aborted).toBe(true);
    expect(ran).toEqual(['make clean']);
    const answered = traceOf(directory).filter((record) => record.type === 'approval_answered');
    expect(answered).toEqual([expect.objectContaining({ decision: 'approve', by: 'remote' })]);
  });

  it('a trace that ends at the request (the process was killed) resumes into the same wait', async () => {
    const directory = await parkedAt('make clean');
    // Cut the trace back to the request, as a SIGKILL would have left it.
    const lines = readFileSync(join(directory, 'trace.jsonl'), 'utf8').trim().split('\n');
    const at = lines.findIndex((line) => line.includes('"approval_requested"'));
    writeFileSync(join(directory, 'trace.jsonl'), `${lines.slice(0, at + 1).join('\n')}\n`);
    const { session: resumed, ran } = resumeParked(directory, [{ text: 'ok' }]);
    const again = resumed.run('');
    await until(
      () => traceOf(directory).filter((record) => record.type === 'approval_requested').length === 2,
      'the wait of the resumed run',
    );
    expect(resumed.pendingApprovals().map((pending) => pending.toolCallId)).toEqual(['call-1']);
    await resumed.answerApproval('call-1', { decision: 'approve' });
    expect((await again).status).toBe('completed');
    expect(ran).toEqual(['make clean']);
  });

  it('remembers "always this tool" but asks again for a dangerous call; "always this call" covers only that call', async () => {
    const { session, ran, directory } = setUp([
      { toolCalls: [{ id: 'a', name: 'shell', arguments: { command: 'ls' } }] },
      { toolCalls: [{ id: 'b', name: 'shell', arguments: { command: 'pwd' } }] },
      { toolCalls: [{ id: 'c', name: 'shell', arguments: { command: 'rm -rf build' } }] },
      { text: 'Done.' },
    ]);
    const running = session.run('go');
    await until(waiting(directory), 'the first request');
    await session.answerApproval('a', { decision: 'approve', scope: 'tool' });
    await until(
      () => traceOf(directory).some((record) => record.type === 'approval_requested' && record.tool_call_id === 'c'),
      'the dangerous call to ask',
    );
    expect(ran).toEqual(['ls', 'pwd']);
    await session.answerApproval('c', { decision: 'approve', scope: 'call' });
    expect((await running).status).toBe('completed');
    expect(ran).toEqual(['ls', 'pwd', 'rm -rf build']);
    const replayed = State.fromJsonl(readFileSync(join(directory, 'trace.jsonl')));
    expect([...replayed.approvalGrants.tools]).toEqual(['shell']);
    expect(replayed.approvalGrants.calls.size).toBe(1);
  });

  it('refuses answers to calls that do not wait, and answers of the wrong shape, changing nothing', async () => {
    const { session, directory } = setUp(callOnce('make clean'));
    await expect(session.answerApproval('nope', { decision: 'approve' })).rejects.toSatisfy(
      (error) => ConfigError.isInstance(error) && error.code === 'approval_not_pending',
    );
    const running = session.run('go');
    await until(waiting(directory), 'the approval request');
    await expect(session.answerApproval('nope', { decision: 'approve' })).rejects.toThrow(/waiting: call-1/);
    await expect(session.answerApproval('call-1', { decision: 'maybe' as 'approve' })).rejects.toThrow(
      /"approve" or "deny"/,
    );
    await expect(session.answerApproval('call-1', { decision: 'deny', scope: 'tool' })).rejects.toThrow(
      /A denial applies to this call only/,
    );
    expect(readApprovalAnswer(directory, 'call-1')).toBeUndefined();
    writeFileSync(join(directory, 'cancel'), '');
    expect((await running).status).toBe('cancelled');
  });

  it('without a directory, the library answers in process; withhold refuses at once as before', async () => {
    const ran: string[] = [];
    const client = createScriptedModelClient({ steps: callOnce('make') });
    const session = new Agent({ tools: [shellLike(ran)], client, approvalPolicy: policy }).createSession({
      approvals: { unattended: 'wait' },
      pollIntervalMs: 10,
    });
    const running = session.run('go');
    await until(() => session.pendingApprovals().length === 1, 'the approval request');
    expect(await session.answerApproval('call-1', { decision: 'approve' })).toMatchObject({ outcome: 'answered' });
    expect(await session.answerApproval('call-1', { decision: 'deny' }).catch(() => 'not pending')).toBe('not pending');
    expect((await running).status).toBe('completed');
    expect(ran).toEqual(['make']);

    const withheld = new Agent({
      tools: [shellLike(ran)],
      client: createScriptedModelClient({ steps: callOnce('make') }),
      approvalPolicy: policy,
    }).createSession();
    expect((await withheld.run('go')).status).toBe('refused');
  });
});

describe('tool hooks', () => {
  const hooks = (verdict: Awaited<ReturnType<NonNullable<ToolHooks['beforeToolCall']>>>, seen: string[] = []) => ({
    async beforeToolCall() {
      return verdict;
    },
    async afterToolCall(call: { toolName: string }, result: { content: string }) {
      seen.push(`${call.toolName}: ${result.content}`);
    },
  });

  it('a pre_tool deny reaches the model and the call does not run', async () => {
    const { session, client, ran } = setUp(callOnce('make clean'), {
      toolHooks: hooks({ decision: 'deny', reason: 'no builds on Fridays' }),
    });
    expect((await session.run('go')).status).toBe('refused');
    expect(ran).toEqual([]);
    expect(JSON.stringify(client.requests[1]?.messages)).toContain('denied by a pre_tool hook: no builds on Fridays');
  });

  it('a pre_tool allow spares the question, except for a dangerous call, which still waits; post_tool sees results', async () => {
    const seen: string[] = [];
    const plain = setUp(callOnce('make clean'), { toolHooks: hooks({ decision: 'allow' }, seen) });
    expect((await plain.session.run('go')).status).toBe('completed');
    expect(plain.ran).toEqual(['make clean']);
    expect(seen).toEqual(['shell: ran make clean']);

    const dangerous = setUp(callOnce('rm -rf build'), {
      toolHooks: hooks({ decision: 'allow' }),
      approvals: { unattended: 'wait', timeoutMs: 50 },
    });
    expect((await dangerous.session.run('go')).status).toBe('refused');
    expect(dangerous.ran).toEqual([]);
  });

  it('a pre_tool ask makes a call that needs no approval wait for one', async () => {
    const directory = tempDir();
    const ran: string[] = [];
    const session = new Agent({
      tools: [shellLike(ran)],
      client: createScriptedModelClient({ steps: callOnce('ls') }),
      approvalPolicy: () => ({ required: false }),
    }).createSession({
      directory,
      pollIntervalMs: 10,
      approvals: { unattended: 'wait', timeoutMs: 50 },
      toolHooks: hooks({ decision: 'ask', reason: 'the hook wants a person to look' }),
    });
    expect((await session.run('go')).status).toBe('refused');
    expect(traceOf(directory).find((record) => record.type === 'approval_requested')).toMatchObject({
      reason: 'the hook wants a person to look',
    });
  });
});
