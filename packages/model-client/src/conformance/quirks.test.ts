import { afterEach, describe, expect, it } from 'vitest';
import { createModelClient } from '../create-model-client.js';
import { startLoopbackServer } from '../testing/loopback-server.js';
import type { LoopbackServer } from '../testing/loopback-server.js';
import type { ModelStreamEvent } from '../types.js';

// One crafted stream per shape of issue 18 that the assembler got wrong. Each is served as raw
// SSE bytes by the loopback server and read through the real client.

const servers: LoopbackServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function sse(chunks: unknown[]): string {
  return `${chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('')}data: [DONE]\n\n`;
}

function chunk(delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) {
  return {
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  };
}

async function run(body: string, messages = [{ role: 'user' as const, content: 'hi' }]) {
  const server = await startLoopbackServer({ steps: [{ type: 'body', contentType: 'text/event-stream', body }] });
  servers.push(server);
  const client = createModelClient({ model: 'm', baseURL: server.url, apiKey: 'k', maxRetries: 0 });
  const events: ModelStreamEvent[] = [];
  for await (const event of client.stream({ messages })) events.push(event);
  return { events, server };
}

const textOf = (events: ModelStreamEvent[]) =>
  events.flatMap((event) => (event.type === 'text' ? [event.text] : [])).join('');
const reasoningOf = (events: ModelStreamEvent[]) =>
  events.flatMap((event) => (event.type === 'reasoning' ? [event.text] : [])).join('');
const callsOf = (events: ModelStreamEvent[]) =>
  events.flatMap((event) => (event.type === 'tool_call' ? [event.toolCall] : []));
const doneOf = (events: ModelStreamEvent[]) => events.find((event) => event.type === 'done');

describe('stream shapes of issue 18', () => {
  it('reads content sent as an array of thinking and text parts (Mistral/Magistral)', async () => {
    const { events } = await run(
      sse([
        chunk({ role: 'assistant', content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'Let me ' }] }] }),
        chunk({ content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'think.' }] }] }),
        chunk({ content: [{ type: 'text', text: 'The answer' }] }),
        chunk({ content: ' is 4.' }),
        chunk({ content: '' }, 'stop', { usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 } }),
      ]),
    );
    expect(reasoningOf(events)).toBe('Let me think.');
    expect(textOf(events)).toBe('The answer is 4.');
    expect(doneOf(events)).toMatchObject({ finishReason: 'stop', usage: { inputTokens: 5, outputTokens: 7 } });
  });

  it('keeps tool calls apart that all say index 0 but carry different ids (relay proxies)', async () => {
    const { events } = await run(
      sse([
        chunk({
          tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '' } }],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path":"a.txt"}' } }] }),
        chunk({
          tool_calls: [{ index: 0, id: 'call_b', type: 'function', function: { name: 'list_dir', arguments: '' } }],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path":"."}' } }] }),
        chunk({}, 'tool_calls'),
      ]),
    );
    expect(callsOf(events)).toEqual([
      { id: 'call_a', name: 'read_file', arguments: '{"path":"a.txt"}' },
      { id: 'call_b', name: 'list_dir', arguments: '{"path":"."}' },
    ]);
  });

  it('takes arguments sent as a JSON object instead of a string', async () => {
    const { events } = await run(
      sse([
        chunk({
          tool_calls: [
            {
              index: 0,
              id: 'call_1',
              type: 'function',
              function: { name: 'read_file', arguments: { path: 'a.txt', limit: 3 } },
            },
          ],
        }),
        chunk({}, 'tool_calls'),
      ]),
    );
    expect(callsOf(events)).toEqual([{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.txt","limit":3}' }]);
  });

  it('replaces a {} placeholder by the full arguments that follow for the same call (Gemini)', async () => {
    const { events } = await run(
      sse([
        chunk({
          tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{}' } }],
        }),
        chunk({
          tool_calls: [
            {
              index: 0,
              id: 'call_1',
              type: 'function',
              function: { name: 'read_file', arguments: '{"path":"a.txt"}' },
            },
          ],
        }),
        chunk({}, 'tool_calls'),
      ]),
    );
    expect(callsOf(events)).toEqual([{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.txt"}' }]);
  });

  it("keeps Gemini's thought_signature on the tool call and sends it back with the call", async () => {
    const signature = 'CiQBVKhc7vB+signature==';
    const { events } = await run(
      sse([
        chunk({
          role: 'assistant',
          tool_calls: [
            {
              index: 0,
              id: 'call_1',
              type: 'function',
              function: { name: 'read_file', arguments: '{"path":"a.txt"}' },
              extra_content: { google: { thought_signature: signature } },
            },
          ],
        }),
        chunk({}, 'tool_calls'),
      ]),
    );
    const [call] = callsOf(events);
    expect(call).toMatchObject({
      id: 'call_1',
      name: 'read_file',
      arguments: '{"path":"a.txt"}',
      extraContent: { google: { thought_signature: signature } },
    });
    // The next request carries the call with its signature, as Gemini requires.
    const { server } = await run(sse([chunk({ content: 'ok' }, 'stop')]), [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'read_file', arguments: '{"path":"a.txt"}' },
            extra_content: { google: { thought_signature: signature } },
          },
        ],
      },
      { role: 'tool', content: 'text', tool_call_id: 'call_1' },
    ] as never);
    expect(server.requests[0]?.body.messages[1].tool_calls[0]).toEqual({
      id: 'call_1',
      type: 'function',
      function: { name: 'read_file', arguments: '{"path":"a.txt"}' },
      extra_content: { google: { thought_signature: signature } },
    });
  });

  it('counts xAI reasoning tokens as output tokens (its completion_tokens excludes them)', async () => {
    const { events } = await run(
      sse([
        chunk({ reasoning_content: 'hmm' }),
        chunk({ content: 'Hi' }),
        chunk({}, 'stop', {
          usage: {
            prompt_tokens: 10,
            completion_tokens: 3,
            total_tokens: 213,
            completion_tokens_details: { reasoning_tokens: 200 },
            prompt_tokens_details: { cached_tokens: 2 },
          },
        }),
      ]),
    );
    expect(doneOf(events)).toMatchObject({
      usage: { inputTokens: 10, outputTokens: 203, reasoningTokens: 200, cachedTokens: 2 },
    });
  });

  it('leaves OpenAI usage alone, where completion_tokens already includes reasoning', async () => {
    const { events } = await run(
      sse([
        chunk({ content: 'Hi' }),
        chunk({}, 'stop', {
          usage: {
            prompt_tokens: 10,
            completion_tokens: 203,
            total_tokens: 213,
            completion_tokens_details: { reasoning_tokens: 200 },
          },
        }),
      ]),
    );
    expect(doneOf(events)).toMatchObject({ usage: { inputTokens: 10, outputTokens: 203, reasoningTokens: 200 } });
  });

  it('reports delta.refusal as a refusal event (OpenAI with a response format)', async () => {
    const { events } = await run(
      sse([
        chunk({ role: 'assistant', content: null, refusal: '' }),
        chunk({ refusal: "I'm sorry, " }),
        chunk({ refusal: "I can't help with that." }),
        chunk({}, 'stop'),
      ]),
    );
    expect(events.filter((event) => event.type === 'refusal')).toEqual([
      { type: 'refusal', text: "I'm sorry, " },
      { type: 'refusal', text: "I can't help with that." },
    ]);
    expect(textOf(events)).toBe('');
    expect(doneOf(events)).toMatchObject({ finishReason: 'stop' });
  });

  it('marks a tool call cut by finish_reason length as truncated', async () => {
    const { events } = await run(
      sse([
        chunk({
          tool_calls: [
            {
              index: 0,
              id: 'call_1',
              type: 'function',
              function: { name: 'write_file', arguments: '{"path":"a.txt","content":"once upon' },
            },
          ],
        }),
        chunk({}, 'length'),
      ]),
    );
    expect(callsOf(events)).toEqual([
      { id: 'call_1', name: 'write_file', arguments: '{"path":"a.txt","content":"once upon', truncated: true },
    ]);
    expect(doneOf(events)).toMatchObject({ finishReason: 'length' });
  });

  it('does not mark a complete tool call as truncated when the finish reason is length', async () => {
    const { events } = await run(
      sse([
        chunk({
          tool_calls: [
            {
              index: 0,
              id: 'call_1',
              type: 'function',
              function: { name: 'read_file', arguments: '{"path":"a.txt"}' },
            },
          ],
        }),
        chunk({}, 'length'),
      ]),
    );
    expect(callsOf(events)).toEqual([{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.txt"}' }]);
  });
});
