import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, defineTool, State } from '@rho/core';
import { sessionToAtif, validateAtifTrajectory } from '@rho/core/atif';
import type { TraceRecord } from '@rho/core';
import type { ModelStreamEvent } from '@rho/model-client';
import { afterAll, describe, expect, it } from 'vitest';
import { createGgufModelClient } from './gguf-model-client.js';

// A real inference engine nobody here wrote: llama.cpp (node-llama-cpp's prebuilt binaries)
// running the vendored 260K-parameter stories model. Its words are not judged, only that they
// are its words: streamed in pieces, counted, and shaped by the grammar when a call is required.

const modelPath = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'stories260K.gguf');
const clients: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const client of clients) await client.close();
});

function client(options: Parameters<typeof createGgufModelClient>[0] extends infer O ? Partial<O> : never = {}) {
  const created = createGgufModelClient({ modelPath, maxTokens: 48, threads: 1, ...options });
  clients.push(created);
  return created;
}

async function collect(iterable: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of iterable) events.push(event);
  return events;
}

const readFile = defineTool({
  name: 'read_file',
  description: 'Reads a file.',
  parameters: {
    type: 'object',
    properties: { path: { type: 'string', description: 'The path.' }, limit: { type: 'integer' } },
    required: ['path'],
    additionalProperties: false,
  },
  annotations: { readOnly: true },
  async handle({ arguments: { path } }) {
    return { content: `contents of ${path}`, success: true };
  },
});

describe('createGgufModelClient (llama.cpp in process)', () => {
  it('streams a story in several pieces, the same one each time (temperature 0), with usage', async () => {
    const model = client();
    const request = { messages: [{ role: 'user' as const, content: 'Once upon a time' }] };
    const first = await collect(model.stream(request));
    const texts = first.filter((event) => event.type === 'text');
    expect(texts.length).toBeGreaterThan(3);
    const text = texts.map((event) => (event.type === 'text' ? event.text : '')).join('');
    expect(text.trim()).not.toBe('');
    const done = first.at(-1);
    expect(done).toMatchObject({ type: 'done', model: 'gguf:stories260K.gguf' });
    if (done?.type !== 'done') throw new Error('no done event');
    expect(['stop', 'length']).toContain(done.finishReason);
    expect(done.usage?.inputTokens).toBeGreaterThan(0);
    expect(done.usage?.outputTokens).toBeGreaterThan(0);
    expect(done.usage?.costUsd).toBe(0);
    const again = await model.complete(request);
    expect(again.text).toBe(text);
  });

  it('answers with a well-formed call when a tool call is required (grammar from the schema)', async () => {
    const model = client({ toolChoice: 'required', maxTokens: 256 });
    const tools = [
      {
        type: 'function' as const,
        function: {
          name: 'read_file',
          description: 'Reads a file.',
          parameters: readFile.parameters as unknown as Record<string, unknown>,
        },
      },
    ];
    const events = await collect(
      model.stream({ messages: [{ role: 'user', content: 'Read the file about Lily.' }], tools }),
    );
    const calls = events.flatMap((event) => (event.type === 'tool_call' ? [event.toolCall] : []));
    expect(calls).toHaveLength(1);
    expect(calls[0]?.name).toBe('read_file');
    expect(calls[0]?.id).toMatch(/^call_/);
    const args = JSON.parse(calls[0]!.arguments) as Record<string, unknown>;
    expect(typeof args['path']).toBe('string');
    expect(events.at(-1)).toMatchObject({ type: 'done', finishReason: 'tool_calls' });
  });

  it('reports a missing model file as an error event that names the path', async () => {
    const events = await collect(
      createGgufModelClient({ modelPath: join(tmpdir(), 'no-such-model.gguf') }).stream({
        messages: [{ role: 'user', content: 'hi' }],
      }),
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'error' });
    expect(events[0]?.type === 'error' ? events[0].error.message : '').toContain('no-such-model.gguf');
  });

  it('runs a session end to end: a forced tool call, its result, a streamed answer, the trace and its ATIF export', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'rho-gguf-'));
    const model = client({ toolChoice: 'required', maxTokens: 256 });
    const agent = new Agent({ systemPrompt: 'You tell stories.', tools: [readFile], client: model });
    const streamed: string[] = [];
    const session = agent.createSession({ directory });
    const result = await session.run('Read the story of Lily, then tell it.', {
      onEvent: (event) => void (event.type === 'text' && streamed.push(event.text)),
    });
    expect(['completed', 'truncated']).toContain(result.status);
    // The context the client allocated is the window compaction works against.
    const allocated = await model.discoverContextWindow();
    expect(allocated).toMatchObject({ endpoint: 'in-process', field: 'contextSize' });
    expect(allocated!.tokens).toBeGreaterThan(0);
    expect(session.contextWindowInfo).toEqual({
      tokens: allocated!.tokens,
      source: 'discovered',
      detail: 'in-process contextSize',
    });
    expect(streamed.length).toBeGreaterThan(1);
    expect(result.text).toBe(streamed.join(''));
    const records = readFileSync(join(directory, 'trace.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as TraceRecord);
    const toolEnd = records.find((record) => record.type === 'tool_end');
    const toolResult = records.find((record) => record.type === 'message' && record.role === 'tool');
    expect(toolEnd, JSON.stringify(toolResult)).toMatchObject({ tool_name: 'read_file', success: true });
    expect(records.filter((record) => record.type === 'llm_end')).toHaveLength(2);
    expect(records.at(-1)).toMatchObject({ type: 'run_end' });
    const replayed = State.fromJsonl(readFileSync(join(directory, 'trace.jsonl')));
    expect(replayed.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    const trajectory = sessionToAtif(directory);
    expect(validateAtifTrajectory(trajectory)).toEqual([]);
    const agentSteps = trajectory.steps.filter((step) => step.source === 'agent');
    expect(agentSteps[0]?.tool_calls?.[0]).toMatchObject({ function_name: 'read_file' });
    expect(agentSteps.at(-1)?.message).toBe(result.text);
  });
});
