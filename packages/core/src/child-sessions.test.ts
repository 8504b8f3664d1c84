import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
// Only the public entry, as a third-party tool package would import `@rho/core`.
import type { Budgets, ToolContext, TraceRecord } from './index.js';
import { Agent, defineTool, Session, SessionStore, State } from './index.js';
import { createScriptedModelClient } from './testing/index.js';

/**
 * A tool as a third party would write it: it knows nothing of Session or Agent internals, only
 * `ToolContext.children`. It asks a reviewer agent of its own for a second opinion.
 */
function secondOpinionTool(
  reviewer: Agent,
  seen: { budgets?: Budgets; context?: ToolContext; childBudgets?: Budgets },
) {
  return defineTool({
    name: 'second_opinion',
    description: 'Asks a reviewer for a second opinion on a claim.',
    parameters: { type: 'object', properties: { claim: { type: 'string' } }, required: ['claim'] },
    async handle({ arguments: { claim } }, context) {
      seen.context = context;
      if (context.children === undefined) return { success: false, content: 'second_opinion needs a session.' };
      seen.budgets = context.children.remainingBudgets();
      const child = context.children.spawn({ agent: reviewer });
      if (child instanceof Session) seen.childBudgets = child.remainingBudgets();
      const result = await child.run(`Review: ${claim}`, { signal: context.signal });
      context.children.recordUsage(child.id, result.runUsage, child.client.model);
      return { success: result.status === 'completed', content: result.text, metadata: { reviewer_session: child.id } };
    },
  });
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'rho-children-'));
}

describe('ToolContext.children', () => {
  it("lets a third-party tool spawn a child session, run it and add its usage to the parent's", async () => {
    const client = createScriptedModelClient({
      model: 'gpt-4o-mini',
      steps: [
        {
          toolCalls: [{ id: 'c1', name: 'second_opinion', arguments: { claim: 'water is wet' } }],
          usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.01 },
        },
        (request) => {
          // The reviewer's own system prompt and no history of the parent.
          expect(request.messages).toEqual([
            { role: 'system', content: 'You review claims.' },
            { role: 'user', content: 'Review: water is wet' },
          ]);
          return { text: 'Agreed.', usage: { inputTokens: 40, outputTokens: 4, costUsd: 0.002 } };
        },
        { text: 'The reviewer agrees.', usage: { inputTokens: 150, outputTokens: 6, costUsd: 0.015 } },
      ],
    });
    const reviewer = new Agent({ systemPrompt: 'You review claims.', client });
    const seen: Parameters<typeof secondOpinionTool>[1] = {};
    const directory = tempDir();
    const session = new Agent({ tools: [secondOpinionTool(reviewer, seen)], client }).createSession({ directory });
    const result = await session.run('Is water wet? Get a second opinion.');
    expect(result.status).toBe('completed');
    client.assertDone();

    expect(seen.context).toBeDefined();
    expect('session' in seen.context!).toBe(false);
    expect(session.state.messages.find((message) => message.role === 'tool')?.content).toBe('Agreed.');
    expect(result.runUsage).toMatchObject({ input_tokens: 290, output_tokens: 20 });
    expect(result.runUsage.cost_usd).toBeCloseTo(0.027, 9);

    const trace = readFileSync(join(directory, 'trace.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as TraceRecord);
    const rollUp = trace.find((record) => record.type === 'llm_end' && record.purpose === 'child_session');
    const childId = (trace.find((record) => record.type === 'tool_end') as { metadata?: { reviewer_session?: string } })
      .metadata?.reviewer_session;
    expect(rollUp).toMatchObject({
      model: 'gpt-4o-mini',
      input_tokens: 40,
      output_tokens: 4,
      child_session_id: childId,
    });
    // The roll-up survives replay, and does not become the conversation's context size.
    const replayed = State.fromJsonl(readFileSync(join(directory, 'trace.jsonl')));
    expect(replayed.usage).toEqual(session.state.usage);
    expect(replayed.lastInputTokens).toBe(150);
  });

  it('reports what is left of the budgets, and gives a child the tighter of its own and the rest', async () => {
    const client = createScriptedModelClient({
      steps: [
        {
          toolCalls: [{ name: 'second_opinion', arguments: { claim: 'x' } }],
          usage: { inputTokens: 100, outputTokens: 20, costUsd: 0.25 },
        },
        { text: 'fine', usage: { inputTokens: 1, outputTokens: 1, costUsd: 0 } },
        { text: 'done', usage: { inputTokens: 1, outputTokens: 1, costUsd: 0 } },
      ],
    });
    const reviewer = new Agent({ client, budgets: { maxTurns: 2, maxCostUsd: 5 } });
    const seen: Parameters<typeof secondOpinionTool>[1] = {};
    const session = new Agent({ tools: [secondOpinionTool(reviewer, seen)], client }).createSession({
      budgets: { maxTurns: 10, maxTokens: 1_000, maxCostUsd: 1, maxDurationMs: 600_000 },
    });
    await session.run('go');
    client.assertDone();

    expect(seen.budgets).toMatchObject({ maxTurns: 10, maxTokens: 880, maxCostUsd: 0.75 });
    expect(seen.budgets!.maxDurationMs).toBeGreaterThan(0);
    expect(seen.budgets!.maxDurationMs).toBeLessThanOrEqual(600_000);
    // maxTurns and maxCostUsd: the tighter of the reviewer's own (2, 5) and the rest (10, 0.75);
    // maxTokens and maxDurationMs only the parent limits.
    expect(seen.childBudgets).toMatchObject({ maxTurns: 2, maxTokens: 880, maxCostUsd: 0.75 });
    expect(seen.childBudgets!.maxDurationMs).toBeLessThanOrEqual(seen.budgets!.maxDurationMs!);
    // Between runs, no time of a run is spent.
    expect(session.remainingBudgets()).toEqual({
      maxTurns: 10,
      maxTokens: 1_000 - 122 - 2,
      maxCostUsd: 0.75,
      maxDurationMs: 600_000,
    });
  });

  it('reports no budgets when the session has none, and the child keeps its own', async () => {
    const client = createScriptedModelClient({
      steps: [
        { toolCalls: [{ name: 'second_opinion', arguments: { claim: 'x' } }] },
        { text: 'fine' },
        { text: 'done' },
      ],
    });
    const seen: Parameters<typeof secondOpinionTool>[1] = {};
    const reviewer = new Agent({ client, budgets: { maxTurns: 3 } });
    await new Agent({ tools: [secondOpinionTool(reviewer, seen)], client }).createSession().run('go');
    expect(seen.budgets).toEqual({});
    expect(seen.childBudgets).toEqual({ maxTurns: 3 });
  });

  it("has the child ask the parent's approver, with the child's session id", async () => {
    const lookup = defineTool({
      name: 'lookup',
      description: 'Looks a word up.',
      parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
      async handle({ arguments: { word } }) {
        return { content: `${word}: found`, success: true };
      },
    });
    const client = createScriptedModelClient({
      steps: [
        { toolCalls: [{ name: 'second_opinion', arguments: { claim: 'x' } }] },
        { toolCalls: [{ name: 'lookup', arguments: { word: 'x' } }] },
        { text: 'checked' },
        { text: 'done' },
      ],
    });
    const reviewer = new Agent({ client, tools: [lookup], approvalPolicy: (tool) => tool.name === 'lookup' });
    const asked: string[] = [];
    const session = new Agent({ tools: [secondOpinionTool(reviewer, {})], client }).createSession({
      approver: (request) => {
        asked.push(`${request.toolName}:${request.sessionId === session.id ? 'parent' : 'child'}`);
        return true;
      },
    });
    await session.run('go');
    client.assertDone();
    expect(asked).toEqual(['lookup:child']);
  });

  it("spawns a copy of the running agent without named tools, in a directory under the parent's with parent_id", async () => {
    let spawned: { id: string; tools: string[]; history: number } | undefined;
    const probe = defineTool({
      name: 'probe',
      description: 'Spawns a copy of this agent without itself.',
      parameters: { type: 'object', properties: {} },
      async handle(_invocation, context) {
        const child = context.children!.spawn({ withoutTools: ['probe'], copyHistory: true });
        spawned = {
          id: child.id,
          tools: child instanceof Session ? child.agent.registry.specs().map((spec) => spec.function.name) : [],
          history: child.state.messages.length,
        };
        return { content: 'spawned', success: true };
      },
    });
    const other = defineTool({
      name: 'other',
      description: 'Does nothing.',
      parameters: { type: 'object', properties: {} },
      async handle() {
        return { content: '', success: true };
      },
    });
    const client = createScriptedModelClient({
      steps: [{ toolCalls: [{ name: 'probe', arguments: {} }] }, { text: 'ok' }],
    });
    const agent = new Agent({ tools: [probe, other], client });
    const store = new SessionStore(tempDir());
    const { id, directory } = store.create({ model: 'scripted-model', config: { model: 'scripted-model' } });
    await agent.createSession({ id, directory }).run('Probe.');
    client.assertDone();
    expect(spawned!.tools).toEqual(['other']);
    // The user's task only: the assistant message whose call is still running is left out.
    expect(spawned!.history).toBe(1);
    expect(store.list().find((info) => info.id === spawned!.id)).toMatchObject({ parentId: id });
    // The parent still has its own tool.
    expect(
      agent.registry
        .specs()
        .map((spec) => spec.function.name)
        .sort(),
    ).toEqual(['other', 'probe']);
  });

  it("refuses withoutTools for an agent of the tool's own, and is absent outside a session", async () => {
    let thrown: unknown;
    const probe = defineTool({
      name: 'probe',
      description: 'Misuses spawn.',
      parameters: { type: 'object', properties: {} },
      async handle(_invocation, context) {
        try {
          context.children!.spawn({ agent: new Agent({ client: createScriptedModelClient() }), withoutTools: ['x'] });
        } catch (error) {
          thrown = error;
        }
        return { content: 'ok', success: true };
      },
    });
    const client = createScriptedModelClient({
      steps: [{ toolCalls: [{ name: 'probe', arguments: {} }] }, { text: 'ok' }],
    });
    await new Agent({ tools: [probe], client }).createSession().run('go');
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as Error).message).toMatch(/withoutTools applies only to the copy/);

    const seen: Parameters<typeof secondOpinionTool>[1] = {};
    const direct = await secondOpinionTool(new Agent({ client }), seen).handle(
      { callId: 'c', toolName: 'second_opinion', arguments: { claim: 'x' } },
      { signal: new AbortController().signal, sessionId: 's', workingDir: tempDir(), backend: new Agent().backend },
    );
    expect(direct).toEqual({ success: false, content: 'second_opinion needs a session.' });
  });
});

describe('SessionOptions.traceObservers and childSessionOptions', () => {
  it('give every record to the observers, and let an app choose the options of every child and grandchild', async () => {
    const client = createScriptedModelClient({
      model: 'gpt-4o-mini',
      steps: [
        { toolCalls: [{ id: 'c1', name: 'nest', arguments: { depth: 2 } }] },
        { toolCalls: [{ id: 'c2', name: 'nest', arguments: { depth: 1 } }] },
        { text: 'grandchild done' },
        { text: 'child done' },
        { text: 'parent done' },
      ],
    });
    const nest = defineTool({
      name: 'nest',
      description: 'Runs a child that may nest again.',
      parameters: { type: 'object', properties: { depth: { type: 'integer' } }, required: ['depth'] },
      async handle(_invocation, context) {
        const child = context.children!.spawn();
        const result = await child.run('go deeper', { signal: context.signal });
        return { success: true, content: result.text, metadata: { child: child.id } };
      },
    });
    const observed = new Map<string, TraceRecord[]>();
    const observer = (id: string) => (record: TraceRecord) => {
      if (!observed.has(id)) observed.set(id, []);
      observed.get(id)!.push(record);
    };
    const spawned: { id: string; parentId: string; directory: string | undefined }[] = [];
    const directory = tempDir();
    const session = new Agent({ tools: [nest], client }).createSession({
      id: 'parent',
      directory,
      traceObservers: [observer('parent')],
      childSessionOptions: (child) => {
        spawned.push(child);
        return { traceObservers: [observer(child.id)] };
      },
    });
    const result = await session.run('nest twice');
    expect(result.status).toBe('completed');
    client.assertDone();
    expect(spawned).toHaveLength(2);
    expect(spawned[0]!.parentId).toBe('parent');
    expect(spawned[1]!.parentId).toBe(spawned[0]!.id);
    // Children of a session with a directory get their own beside it.
    expect(spawned[0]!.directory).toBe(join(dirname(directory), spawned[0]!.id));
    // The observers saw exactly what each trace holds, in order.
    for (const [id, place] of [
      ['parent', directory],
      [spawned[0]!.id, spawned[0]!.directory!],
      [spawned[1]!.id, spawned[1]!.directory!],
    ] as const) {
      const trace = readFileSync(join(place, 'trace.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as TraceRecord);
      expect(observed.get(id)).toEqual(trace);
    }
  });
});
