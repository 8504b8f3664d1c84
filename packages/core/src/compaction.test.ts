import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clearContextWindowCache, DEFAULT_CONTEXT_WINDOW } from '@rho/model-client';
import { startLoopbackServer } from '@rho/model-client/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import { SUMMARY_PREFIX } from './compaction.js';
import { State } from './state.js';
import { createScriptedModelClient } from './testing/scripted-model-client.js';
import { defineTool } from './tool.js';

const note = defineTool({
  name: 'note',
  description: 'Takes a note.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  async handle({ arguments: { text } }) {
    return { content: `noted: ${text}`, success: true };
  },
});

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'rho-compact-'));
}

describe('compaction', () => {
  it('replaces history with a summary, keeps the task and latest user messages, and resumes from it', async () => {
    const directory = tempDir();
    const client = createScriptedModelClient({
      steps: [
        { text: 'a1' },
        { text: 'a2' },
        { text: 'a3' },
        { text: 'a4' },
        { text: 'a5' },
        (request) => {
          expect(request.messages.at(-1)!.content).toMatch(
            /^CONTEXT CHECKPOINT COMPACTION[\s\S]*User guidance: keep the numbers$/,
          );
          return { text: 'We answered five questions.', usage: { inputTokens: 500, outputTokens: 50 } };
        },
        (request) => {
          expect(request.messages.slice(1).map((message) => message.content)).toEqual([
            'q1',
            'q3',
            'q4',
            'q5',
            `${SUMMARY_PREFIX}\n\nWe answered five questions.`,
            'q6',
          ]);
          return { text: 'a6' };
        },
      ],
    });
    const agent = new Agent({ client, tools: [note] });
    const session = agent.createSession({ directory });
    for (const question of ['q1', 'q2', 'q3', 'q4', 'q5']) await session.run(question);
    const usageBefore = session.state.usage.input_tokens;
    const result = await session.compact({ instructions: 'keep the numbers' });
    expect(result).toMatchObject({ ok: true, summary: 'We answered five questions.', trigger: 'manual' });
    expect(session.state.usage.input_tokens).toBe(usageBefore + 500);

    const resumed = agent.createSession({
      directory,
      state: State.fromJsonl(readFileSync(join(directory, 'trace.jsonl'))),
    });
    expect(resumed.state.messages).toEqual(session.state.messages);
    expect(resumed.state.usage).toEqual(session.state.usage);
    await resumed.run('q6');
    client.assertDone();
  });

  it('leaves history untouched and reports the error when summarisation fails', async () => {
    const client = createScriptedModelClient({
      steps: [{ text: 'a1' }, { error: { message: 'API error 500: overloaded', statusCode: 500 } }],
    });
    const session = new Agent({ client }).createSession();
    await session.run('q1');
    const before = structuredClone(session.state.messages);
    const result = await session.compact();
    expect(result).toEqual({
      ok: false,
      trigger: 'manual',
      error: 'Compaction failed, history left unchanged: API error 500: overloaded',
    });
    expect(session.state.messages).toEqual(before);
  });

  it('compacts automatically once when the context passes the threshold of the window', async () => {
    const client = createScriptedModelClient({
      steps: [
        { toolCalls: [{ name: 'note', arguments: { text: 'x' } }], usage: { inputTokens: 800 } },
        // Compaction call, then the turn continues on the summary.
        { text: 'Summary: noted x.', usage: { inputTokens: 820, outputTokens: 10 } },
        (request) => {
          expect(request.messages.slice(1).map((message) => message.role)).toEqual(['user', 'user']);
          return { text: 'done', usage: { inputTokens: 100 } };
        },
      ],
    });
    const session = new Agent({ client, tools: [note], compaction: { contextWindow: 1000 } }).createSession();
    const events: string[] = [];
    const result = await session.run('take a note', { onEvent: (event) => events.push(event.type) });
    expect(result.status).toBe('completed');
    expect(events.filter((type) => type === 'compact')).toHaveLength(1);
    client.assertDone();
  });

  it('keeps budgets across resume: tokens used before count against maxTokens', async () => {
    const directory = tempDir();
    const client = createScriptedModelClient({
      steps: [
        { text: 'first', usage: { inputTokens: 900, outputTokens: 50 } },
        { text: 'Out of tokens; nothing more was done.' },
      ],
    });
    const agent = new Agent({ client, budgets: { maxTokens: 900 } });
    await agent.createSession({ directory }).run('one');
    const resumed = agent.createSession({
      directory,
      state: State.fromJsonl(readFileSync(join(directory, 'trace.jsonl'))),
    });
    const result = await resumed.run('two');
    expect(result).toMatchObject({ status: 'limit', limit: 'max_tokens' });
    const records = readFileSync(join(directory, 'trace.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; limit?: string });
    expect(records.at(-1)).toMatchObject({ type: 'run_end', status: 'limit', limit: 'max_tokens' });
    client.assertDone();
  });
});

describe('context window', () => {
  afterEach(() => clearContextWindowCache());

  type Record_ = { type: string; context_window?: number; context_window_source?: string; purpose?: string };
  const records = (directory: string): Record_[] =>
    readFileSync(join(directory, 'trace.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record_);

  it('compacts a model the tables do not know, with the window its server reports', async () => {
    const server = await startLoopbackServer({
      models: [{ id: 'local-qwen-unpriced', max_model_len: 1000 }],
      steps: [
        {
          type: 'response',
          toolCalls: [{ name: 'note', arguments: '{"text":"x"}' }],
          usage: { prompt_tokens: 800, completion_tokens: 5 },
        },
        { type: 'response', text: 'Summary: noted x.', usage: { prompt_tokens: 820, completion_tokens: 10 } },
        { type: 'response', text: 'done', usage: { prompt_tokens: 100, completion_tokens: 2 } },
      ],
    });
    try {
      const directory = tempDir();
      const agent = new Agent({
        model: 'local-qwen-unpriced',
        tools: [note],
        clientOptions: { baseURL: server.url, apiKey: 'k', maxRetries: 0 },
      });
      const session = agent.createSession({ directory });
      const result = await session.run('take a note');
      expect(result.status).toBe('completed');
      expect(session.contextWindowInfo).toEqual({
        tokens: 1000,
        source: 'discovered',
        detail: '/v1/models max_model_len',
      });
      const trace = records(directory);
      expect(trace.filter((record) => record.type === 'compact')).toHaveLength(1);
      const starts = trace.filter((record) => record.type === 'llm_start');
      expect(starts).toHaveLength(3);
      for (const start of starts)
        expect(start).toMatchObject({ context_window: 1000, context_window_source: 'discovered' });
      expect(starts[1]!.purpose).toBe('compaction');
      // Asked once, before the first call; the answer is cached for the next session too.
      expect(server.discoveryRequests.map((request) => request.path)).toEqual(['/v1/models']);
      server.push({ type: 'response', text: 'again' });
      const second = agent.createSession();
      await second.run('hello');
      expect(second.contextWindowInfo?.source).toBe('discovered');
      expect(server.discoveryRequests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('uses the setting over the server, and does not ask the server then', async () => {
    const server = await startLoopbackServer({
      models: [{ id: 'served', max_model_len: 1000 }],
      steps: [
        { type: 'response', text: 'ok' },
        { type: 'response', text: 'ok' },
      ],
    });
    try {
      const clientOptions = { baseURL: server.url, apiKey: 'k', maxRetries: 0 };
      const flagged = new Agent({
        model: 'served',
        clientOptions,
        compaction: { contextWindow: 50_000, contextWindowSource: 'flag' },
      }).createSession();
      await flagged.run('hi');
      expect(flagged.contextWindowInfo).toEqual({ tokens: 50_000, source: 'flag' });
      const perModel = new Agent({
        model: 'served',
        clientOptions,
        compaction: { contextWindows: { served: 60_000 } },
      }).createSession();
      await perModel.run('hi');
      expect(perModel.contextWindowInfo).toEqual({ tokens: 60_000, source: 'config' });
      expect(server.discoveryRequests).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('falls back to the table, then to the default, so compaction runs for every model', async () => {
    const known = new Agent({
      client: createScriptedModelClient({ model: 'gpt-4o', steps: [{ text: 'ok' }] }),
    }).createSession();
    await known.run('hi');
    expect(known.contextWindowInfo).toEqual({ tokens: 128_000, source: 'table' });

    const client = createScriptedModelClient({
      model: 'never-heard-of-it',
      steps: [
        {
          toolCalls: [{ name: 'note', arguments: { text: 'x' } }],
          usage: { inputTokens: Math.floor(DEFAULT_CONTEXT_WINDOW * 0.7) + 1 },
        },
        { text: 'Summary.', usage: { inputTokens: 10, outputTokens: 1 } },
        { text: 'done', usage: { inputTokens: 10 } },
      ],
    });
    const session = new Agent({ client, tools: [note] }).createSession();
    const events: string[] = [];
    await session.run('take a note', { onEvent: (event) => events.push(event.type) });
    expect(session.contextWindowInfo).toEqual({ tokens: 32_768, source: 'default' });
    expect(events.filter((type) => type === 'compact')).toHaveLength(1);
    client.assertDone();
  });

  it('skips the server when discovery is off', async () => {
    const server = await startLoopbackServer({
      models: [{ id: 'served', max_model_len: 1000 }],
      steps: [{ type: 'response', text: 'ok' }],
    });
    try {
      const session = new Agent({
        model: 'served',
        clientOptions: { baseURL: server.url, apiKey: 'k', maxRetries: 0 },
        compaction: { discover: false },
      }).createSession();
      await session.run('hi');
      expect(session.contextWindowInfo).toEqual({ tokens: DEFAULT_CONTEXT_WINDOW, source: 'default' });
      expect(server.discoveryRequests).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
