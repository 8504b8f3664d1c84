import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import { createDelegateTool } from './delegate-tool.js';
import { readSessionMeta } from './session-meta.js';
import { SessionStore } from './session-store.js';
import { State } from './state.js';
import { createScriptedModelClient } from './testing/scripted-model-client.js';
import { defineTool } from './tool.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a word up.',
  parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
  annotations: { readOnly: true },
  async handle({ arguments: { word } }) {
    return { content: `${word}: a thing`, success: true };
  },
});

function parentSession(agent: Agent) {
  const store = new SessionStore(mkdtempSync(join(tmpdir(), 'rho-delegate-')));
  const { id, directory } = store.create({
    model: 'gpt-4o-mini',
    profile: 'readonly',
    config: { model: 'gpt-4o-mini', profile: 'readonly' },
  });
  return { store, session: agent.createSession({ id, directory }) };
}

describe('delegate', () => {
  it('runs a child session with its own trace and parent_id, and answers with its final text', async () => {
    const client = createScriptedModelClient({
      model: 'gpt-4o-mini',
      steps: [
        { toolCalls: [{ id: 'd1', name: 'delegate', arguments: { instruction: 'Look up "apple".' } }] },
        (request) => {
          // The child: the parent's system prompt, no history, no delegate tool.
          expect(request.messages).toEqual([
            { role: 'system', content: 'You are careful.' },
            { role: 'user', content: 'Look up "apple".' },
          ]);
          expect(request.tools!.map((tool) => tool.function.name)).toEqual(['lookup']);
          return {
            toolCalls: [{ name: 'lookup', arguments: { word: 'apple' } }],
            usage: { inputTokens: 300, outputTokens: 10 },
          };
        },
        { text: 'Apple is a thing.', usage: { inputTokens: 320, outputTokens: 8 } },
        { text: 'The sub-agent says apple is a thing.' },
      ],
    });
    const agent = new Agent({ systemPrompt: 'You are careful.', tools: [lookup, createDelegateTool()], client });
    const { store, session } = parentSession(agent);
    const result = await session.run('What is an apple? Delegate it.');
    expect(result.status).toBe('completed');
    client.assertDone();

    const toolResult = session.state.messages.find((message) => message.role === 'tool')!;
    expect(toolResult.content).toBe('Apple is a thing.');
    const children = store.list().filter((info) => info.parentId === session.id);
    expect(children).toHaveLength(1);
    const child = children[0]!;
    expect(readSessionMeta(child.directory)).toMatchObject({
      parent_id: session.id,
      status: 'completed',
      first_prompt: 'Look up "apple".',
    });
    const childState = State.fromJsonl(readFileSync(join(child.directory, 'trace.jsonl')));
    expect(childState.messages.at(-1)).toEqual({ role: 'assistant', content: 'Apple is a thing.' });
    // The child's usage is part of the parent's totals, and survives replay.
    expect(session.state.usage.input_tokens).toBe(100 + 300 + 320 + 100);
    expect(State.fromJsonl(readFileSync(join(session.directory!, 'trace.jsonl'))).usage).toEqual(session.state.usage);
    const end = readFileSync(join(session.directory!, 'trace.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((record) => record.type === 'tool_end')!;
    expect(end.metadata).toMatchObject({ child_session_id: child.id, child_status: 'completed' });
  });

  it('copies the conversation with full_context, without the pending delegate call', async () => {
    const client = createScriptedModelClient({
      steps: [
        { text: 'Noted: the code word is heron.' },
        {
          text: 'Delegating.',
          toolCalls: [{ name: 'delegate', arguments: { instruction: 'Repeat the code word.', full_context: 'true' } }],
        },
        (request) => {
          expect(request.messages.slice(1)).toEqual([
            { role: 'user', content: 'The code word is heron.' },
            { role: 'assistant', content: 'Noted: the code word is heron.' },
            { role: 'user', content: 'Ask a helper for the code word.' },
            { role: 'user', content: 'Repeat the code word.' },
          ]);
          return { text: 'heron' };
        },
        { text: 'It is heron.' },
      ],
    });
    const agent = new Agent({ tools: [createDelegateTool()], client });
    const { session } = parentSession(agent);
    await session.run('The code word is heron.');
    const result = await session.run('Ask a helper for the code word.');
    expect(result.text).toBe('It is heron.');
    client.assertDone();
  });

  it('gives the child no delegate tool: a child that tries gets an unknown-tool error', async () => {
    const client = createScriptedModelClient({
      steps: [
        { toolCalls: [{ name: 'delegate', arguments: { instruction: 'Go deeper.' } }] },
        { toolCalls: [{ name: 'delegate', arguments: { instruction: 'Deeper still.' } }] },
        (request) => {
          expect(request.messages.at(-1)).toMatchObject({
            role: 'tool',
            content: `Error: unknown tool 'delegate': the tool name must be one of "lookup".`,
          });
          return { text: 'Cannot delegate further.' };
        },
        { text: 'ok' },
      ],
    });
    const agent = new Agent({ tools: [lookup, createDelegateTool()], client });
    await agent.createSession().run('Delegate twice.');
    client.assertDone();
  });

  it('ends parent and child within a second when the parent is cancelled mid-child', async () => {
    let childCalling: () => void = () => {};
    const childCalled = new Promise<void>((resolve) => {
      childCalling = resolve;
    });
    const client = createScriptedModelClient({
      steps: [
        { toolCalls: [{ name: 'delegate', arguments: { instruction: 'Think forever.' } }] },
        () => {
          childCalling();
          return { hang: true };
        },
      ],
    });
    const agent = new Agent({ tools: [createDelegateTool()], client });
    const { store, session } = parentSession(agent);
    const running = session.run('Start a long child.');
    // Cancel once the child's model call is under way.
    await childCalled;
    const started = performance.now();
    session.cancel();
    const result = await running;
    const elapsed = performance.now() - started;
    expect(result.status).toBe('cancelled');
    expect(elapsed).toBeLessThan(1000);
    const child = store.list().find((info) => info.parentId === session.id)!;
    expect(readSessionMeta(child.directory)?.status).toBe('cancelled');
    expect(session.state.messages.filter((message) => message.role === 'tool')).toHaveLength(1);
  });

  it("counts the child's cost against the parent's maxCostUsd", async () => {
    const client = createScriptedModelClient({
      steps: [
        { toolCalls: [{ name: 'delegate', arguments: { instruction: 'Spend.' } }], usage: { costUsd: 0.2 } },
        { text: 'Spent a lot.', usage: { costUsd: 0.9 } },
        (request) => {
          expect(request.tools).toBeUndefined();
          return { text: 'Budget reached; the helper found nothing more.' };
        },
      ],
    });
    const agent = new Agent({ tools: [createDelegateTool()], client, budgets: { maxCostUsd: 1 } });
    const { session } = parentSession(agent);
    const result = await session.run('Delegate something expensive.');
    expect(result).toMatchObject({ status: 'limit', limit: 'max_cost_usd' });
    expect(session.state.usage.cost_usd).toBeCloseTo(1.1, 6);
    client.assertDone();
  });

  it('refuses an empty instruction without starting a child', async () => {
    const client = createScriptedModelClient({
      steps: [{ toolCalls: [{ name: 'delegate', arguments: { instruction: '   ' } }] }, { text: 'ok' }],
    });
    const session = new Agent({ tools: [createDelegateTool()], client }).createSession();
    await session.run('go');
    expect(session.state.messages[2]!.content).toBe('Delegate requires a non-empty instruction.');
    client.assertDone();
  });

  it('lets the child ask the parent approver', async () => {
    const asked: string[] = [];
    const client = createScriptedModelClient({
      steps: [
        { toolCalls: [{ name: 'delegate', arguments: { instruction: 'Look up pear.' } }] },
        { toolCalls: [{ name: 'lookup', arguments: { word: 'pear' } }] },
        { text: 'pear: a thing' },
        { text: 'done' },
      ],
    });
    const agent = new Agent({
      tools: [lookup, createDelegateTool()],
      client,
      approvalPolicy: (tool) => tool.name === 'lookup',
    });
    const session = agent.createSession({
      approver: (request) => {
        asked.push(`${request.toolName}:${request.sessionId === session.id ? 'parent' : 'child'}`);
        return true;
      },
    });
    await session.run('go');
    expect(asked).toEqual(['lookup:child']);
  });
});

describe('agent as tool', () => {
  it('runs an independent session per call with a typed input schema', async () => {
    const client = createScriptedModelClient({
      steps: [
        { toolCalls: [{ name: 'translator', arguments: { text: 'hello', language: 'French' } }] },
        (request) => {
          expect(request.messages).toEqual([
            { role: 'system', content: 'You translate.' },
            { role: 'user', content: 'text: hello\nlanguage: French' },
          ]);
          return { text: 'bonjour' };
        },
        { toolCalls: [{ name: 'translator', arguments: { text: 'bye', language: 'German' } }] },
        (request) => {
          // No history from the first call.
          expect(request.messages).toEqual([
            { role: 'system', content: 'You translate.' },
            { role: 'user', content: 'text: bye\nlanguage: German' },
          ]);
          return { text: 'tschüss' };
        },
        { text: 'bonjour, tschüss' },
      ],
    });
    const translator = new Agent({ systemPrompt: 'You translate.', client });
    const tool = translator.asTool({
      name: 'translator',
      description: 'Translates text.',
      parameters: {
        type: 'object',
        properties: { text: { type: 'string' }, language: { type: 'string', enum: ['French', 'German'] } },
        required: ['text', 'language'],
      },
    });
    const session = new Agent({ tools: [tool], client }).createSession();
    const result = await session.run('Translate hello to French, then bye to German.');
    expect(result.text).toBe('bonjour, tschüss');
    const results = session.state.messages
      .filter((message) => message.role === 'tool')
      .map((message) => message.content);
    expect(results).toEqual(['bonjour', 'tschüss']);
    client.assertDone();
  });

  it('validates its typed input before starting a session', async () => {
    const client = createScriptedModelClient({
      steps: [{ toolCalls: [{ name: 'translator', arguments: { text: 'hi', language: 'Klingon' } }] }, { text: 'ok' }],
    });
    const tool = new Agent({ client }).asTool({
      name: 'translator',
      description: 'Translates text.',
      parameters: {
        type: 'object',
        properties: { text: { type: 'string' }, language: { type: 'string', enum: ['French', 'German'] } },
        required: ['text', 'language'],
      },
    });
    const session = new Agent({ tools: [tool], client }).createSession();
    await session.run('go');
    expect(session.state.messages[2]!.content).toMatch(/'language' must be one of "French", "German"/);
    client.assertDone();
  });
});
