import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createModelClient } from '../create-model-client.js';
import { startLoopbackServer } from '../testing/loopback-server.js';
import type { LoopbackServer } from '../testing/loopback-server.js';
import type { ModelStreamEvent, ModelToolCall, Usage } from '../types.js';

// Streams recorded from real providers (see fixtures/streams/README.md for each one's source and
// licence), replayed byte for byte by the loopback server: each `.chunks.txt` line is one event's
// data, sent as `data: <line>\n\n` exactly as recorded, then `data: [DONE]`; a `.sse` file is the
// raw event stream and is sent unchanged.

const streams = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'streams');

interface Expected {
  file: string;
  text: string;
  reasoning?: string;
  toolCalls?: ModelToolCall[];
  usage: Partial<Usage> | null;
  finishReason: string;
  model: string;
  /** The stream fails after its text: the error event's message contains this. */
  error?: string;
}

const weatherSF = (id: string, spaced = false): ModelToolCall => ({
  id,
  name: 'weather',
  arguments: spaced ? '{"location": "San Francisco"}' : '{"location":"San Francisco"}',
});

const RECORDED: Expected[] = [
  {
    file: 'mistral/mistral-text.chunks.txt',
    text: 'Hello, world! This is a test response.',
    usage: { inputTokens: 13, outputTokens: 8 },
    finishReason: 'stop',
    model: 'mistral-small-latest',
  },
  {
    file: 'mistral/mistral-reasoning.chunks.txt',
    text: '2 + 2 = 4',
    reasoning: 'The user is asking for 2+2. This is basic arithmetic. 2+2=4.',
    usage: { inputTokens: 10, outputTokens: 46 },
    finishReason: 'stop',
    model: 'magistral-medium-2507',
  },
  {
    file: 'mistral/mistral-tool-call.chunks.txt',
    text: '',
    toolCalls: [weatherSF('gSIMJiOkT', true)],
    usage: { inputTokens: 124, outputTokens: 22 },
    finishReason: 'tool_calls',
    model: 'mistral-small-latest',
  },
  {
    file: 'groq/groq-tool-call.chunks.txt',
    text: '',
    toolCalls: [{ id: 'tk85n1k4m', name: 'weather', arguments: '{}' }],
    usage: { inputTokens: 210, outputTokens: 15 },
    finishReason: 'tool_calls',
    model: 'llama-3.3-70b-versatile',
  },
  // xAI: completion_tokens (26) leaves out the 196 reasoning tokens; total_tokens is 291 + 26 + 196.
  {
    file: 'xai/xai-tool-call.chunks.txt',
    text: '',
    reasoning: 'First, the user is',
    toolCalls: [weatherSF('call_55117580')],
    usage: { inputTokens: 291, outputTokens: 222, reasoningTokens: 196, cachedTokens: 290 },
    finishReason: 'tool_calls',
    model: 'grok-3-mini',
  },
  {
    file: 'azure/azure-text.chunks.txt',
    text: 'Hello World',
    usage: { inputTokens: 15, outputTokens: 5, reasoningTokens: 0, cachedTokens: 0 },
    finishReason: 'stop',
    model: 'gpt-4',
  },
  {
    file: 'alibaba/alibaba-tool-call.chunks.txt',
    text: '',
    toolCalls: [{ id: 'call_eee11723464a4b9eb8cee71d', name: 'weather', arguments: '{"location": "San Francisco"}' }],
    usage: { inputTokens: 295, outputTokens: 22, cachedTokens: 0 },
    finishReason: 'tool_calls',
    model: 'qwen3-max',
  },
  {
    file: 'moonshot/moonshotai-stream-indexless-tool-calls.chunks.txt',
    text: '',
    toolCalls: [
      { id: 'weather_0', name: 'weather', arguments: '{"location":"San Francisco"}' },
      { id: 'time_1', name: 'time', arguments: '{"zone":"UTC"}' },
    ],
    usage: { inputTokens: 61, outputTokens: 25 },
    finishReason: 'tool_calls',
    model: 'kimi-k2.5',
  },
  {
    file: 'moonshot/moonshotai-stream-explicit-tool-call-index.chunks.txt',
    text: '',
    toolCalls: [{ id: 'weather_0', name: 'weather', arguments: '{"location": "San Francisco"}' }],
    usage: { inputTokens: 61, outputTokens: 19, reasoningTokens: 1 },
    finishReason: 'tool_calls',
    model: 'kimi-k2.5',
  },
  {
    file: 'mistral/mistral-incremental-tool-call.chunks.txt',
    text: '',
    toolCalls: [
      { id: 'chatcmpl-tool-9f149c74c42f265b', name: 'webSearchTool', arguments: '{"query": "current Berlin weather"}' },
    ],
    usage: { inputTokens: 171, outputTokens: 14, cachedTokens: 128 },
    finishReason: 'tool_calls',
    model: 'zai-glm-5-2',
  },
  // DeepSeek counts reasoning inside completion_tokens (total 92 = 88 + 4): no xAI correction.
  {
    file: 'deepseek/issue-19789-live-usage.chunks.txt',
    text: 'sanitized',
    usage: { inputTokens: 88, outputTokens: 4, reasoningTokens: 4, cachedTokens: 0 },
    finishReason: 'length',
    model: 'deepseek-v4-flash',
  },
  {
    file: 'openai-compatible/issue-20203-empty-tool-calls.chunks.txt',
    text: 'Hello',
    reasoning: 'Think more...',
    usage: null,
    finishReason: 'stop',
    model: 'test-model',
  },
  {
    file: 'moonshot/moonshotai-stream-tool-calls.chunks.txt',
    text: '',
    toolCalls: [
      { id: 'call-weather', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: 'call-time', name: 'get_time', arguments: '{"zone":"UTC"}' },
    ],
    usage: { inputTokens: 11, outputTokens: 6 },
    finishReason: 'tool_calls',
    model: 'kimi-k3',
  },
  {
    file: 'moonshot/moonshotai-stream-choice-usage.chunks.txt',
    text: 'OK.',
    usage: { inputTokens: 12, outputTokens: 5, reasoningTokens: 1 },
    finishReason: 'stop',
    model: 'kimi-k2.5',
  },
  {
    file: 'moonshot/moonshot-cached-tokens.chunks.txt',
    text: 'Hello, world!',
    usage: { inputTokens: 100, outputTokens: 10, cachedTokens: 80 },
    finishReason: 'stop',
    model: 'kimi-k2.5',
  },
  {
    file: 'mistral/mistral-empty-choices.chunks.txt',
    text: 'Hello!',
    usage: { inputTokens: 5, outputTokens: 3 },
    finishReason: 'stop',
    model: 'mistral-small-latest',
  },
  // Usage on every chunk: the last one counts.
  {
    file: 'mistral/mistral-usage-details.chunks.txt',
    text: 'OK',
    usage: { inputTokens: 20, outputTokens: 2, reasoningTokens: 7, cachedTokens: 0 },
    finishReason: 'stop',
    model: 'mistral-small-latest',
  },
  {
    file: 'openai/issue-15789-step-1.chunks.txt',
    text: 'PRE_TOOL',
    toolCalls: [{ id: 'call_NZa7xqfefoaMI2YYHowVXVlU', name: 'weather', arguments: '{}' }],
    usage: { inputTokens: 58, outputTokens: 12, reasoningTokens: 0, cachedTokens: 0 },
    finishReason: 'tool_calls',
    model: 'gpt-4o-2024-08-06',
  },
  {
    file: 'openai/issue-15789-step-2.chunks.txt',
    text: 'POST_TOOL',
    usage: { inputTokens: 86, outputTokens: 2, reasoningTokens: 0, cachedTokens: 0 },
    finishReason: 'stop',
    model: 'gpt-4o-2024-08-06',
  },
  {
    file: 'groq/groq-json-tool-call.chunks.txt',
    text: '',
    toolCalls: [{ id: 'ax9fskhew', name: 'json', arguments: '{"value":"Sparkle Day"}' }],
    usage: { inputTokens: 45, outputTokens: 20 },
    finishReason: 'tool_calls',
    model: 'gemma2-9b-it',
  },
  // xAI through a gateway: a delta with only provider metadata, usage with cost fields.
  {
    file: 'xai/issue-19639-stream.chunks.txt',
    text: 'OK',
    usage: { inputTokens: 675, outputTokens: 1, reasoningTokens: 0, cachedTokens: 674 },
    finishReason: 'stop',
    model: 'spacexai/grok-4.1-fast-non-reasoning',
  },
  {
    file: 'moonshot/moonshotai-tool-call.chunks.txt',
    text: '',
    toolCalls: [{ id: 'call_abc123', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    usage: { inputTokens: 30, outputTokens: 12 },
    finishReason: 'tool_calls',
    model: 'kimi-k3',
  },
  // Perplexity: usage (with cost objects) on every chunk; the last chunk's object is chat.completion.done.
  {
    file: 'perplexity/perplexity-usage-raw-live.chunks.txt',
    text: 'OK',
    usage: { inputTokens: 6, outputTokens: 1 },
    finishReason: 'stop',
    model: 'sonar',
  },
  {
    file: 'mistral/mistral-usage-raw-live.chunks.txt',
    text: 'OK',
    usage: { inputTokens: 19, outputTokens: 2, cachedTokens: 0 },
    finishReason: 'stop',
    model: 'mistral-small-latest',
  },
  {
    file: 'moonshot/moonshotai-usage-live.chunks.txt',
    text: 'OK',
    reasoning:
      'The user is asking me to reply with exactly "OK". This is a simple request with no ambiguity. I should just respond with "OK" and nothing else.',
    usage: { inputTokens: 90, outputTokens: 50, reasoningTokens: 33, cachedTokens: 90 },
    finishReason: 'stop',
    model: 'kimi-k3',
  },
  {
    file: 'moonshot/moonshotai-max-completion-tokens.chunks.txt',
    text: 'OK',
    usage: { inputTokens: 11, outputTokens: 2 },
    finishReason: 'stop',
    model: 'moonshot-v1-8k',
  },
  {
    file: 'openai-compatible/tiny-chunks.chunks.txt',
    text: 'Hi there!',
    reasoning: 'First, the user said: "Hello." That is simple.',
    usage: null,
    finishReason: 'stop',
    model: 'test-model',
  },
  {
    file: 'deepseek/issue-19381-thinking-reasoning.chunks.txt',
    text: '',
    reasoning: 'We need',
    usage: { inputTokens: 87, outputTokens: 2, reasoningTokens: 2, cachedTokens: 0 },
    finishReason: 'length',
    model: 'deepseek-v4-pro',
  },
  {
    file: 'deepseek/deepseek-system-fingerprint.chunks.txt',
    text: 'OK',
    usage: { inputTokens: 9, outputTokens: 1, cachedTokens: 0 },
    finishReason: 'stop',
    model: 'deepseek-v4-flash',
  },
  // Azure: a first chunk with no choices, an empty id and model (prompt filter results).
  {
    file: 'azure/azure-model-router.1.chunks.txt',
    text: 'Capital of Denmark.',
    usage: { inputTokens: 15, outputTokens: 78, reasoningTokens: 64, cachedTokens: 0 },
    finishReason: 'stop',
    model: 'gpt-5-nano-2025-08-07',
  },
  // Qwen3-Coder wrote its call as text inside the reasoning: it stays reasoning, it is not run.
  {
    file: 'alibaba/alibaba-reasoning-tool-call-qwen3-coder.chunks.txt',
    text: '',
    reasoning: 'Need weather for planning.\\n<tool_call><function=get_weather>{"city":"Lisbon"}</function></tool_call>',
    usage: { inputTokens: 10, outputTokens: 20, reasoningTokens: 12, cachedTokens: 0 },
    finishReason: 'stop',
    model: 'qwen3-coder-plus',
  },
  // Usage both inside the choice and on the chunk: the chunk's own wins.
  {
    file: 'moonshot/moonshotai-stream.chunks.txt',
    text: 'Hello!',
    reasoning: 'Thinking aloud. ',
    usage: { inputTokens: 9, outputTokens: 12, reasoningTokens: 7 },
    finishReason: 'stop',
    model: 'kimi-k3',
  },
  {
    file: 'moonshot/moonshot-text.chunks.txt',
    text: 'Hello',
    usage: { inputTokens: 50, outputTokens: 5 },
    finishReason: 'stop',
    model: 'kimi-k2.5',
  },
  {
    file: 'perplexity/perplexity-text.chunks.txt',
    text: '**EcoVista Day**[1][5]',
    usage: { inputTokens: 11, outputTokens: 434 },
    finishReason: 'stop',
    model: 'sonar',
  },
  {
    file: 'alibaba/alibaba-reasoning-tool-call.chunks.txt',
    text: '',
    reasoning:
      '```json\n{"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\\"city\\":\\"Lisbon\\"}"}}]}\n```',
    usage: { inputTokens: 10, outputTokens: 20, reasoningTokens: 12, cachedTokens: 0 },
    finishReason: 'stop',
    model: 'qwen3.5-plus',
  },
  // xAI again: completion_tokens 1 + reasoning 290 (total 303 = 12 + 1 + 290).
  {
    file: 'xai/xai-text.chunks.txt',
    text: 'Hello',
    reasoning: 'First, the user said',
    usage: { inputTokens: 12, outputTokens: 291, reasoningTokens: 290, cachedTokens: 11 },
    finishReason: 'stop',
    model: 'grok-3-mini',
  },
  // A raw SSE recording (data: lines and [DONE] as sent); a single call at index 1.
  {
    file: 'anthropic/anthropic-fallback-tool-call.sse',
    text: 'Reading it.',
    toolCalls: [{ id: 'toolu_sanitized', name: 'read_file', arguments: '{"path": "a.txt"}' }],
    usage: null,
    finishReason: 'tool_calls',
    model: 'claude-haiku-4-5-20251001',
  },
  {
    file: 'moonshot/moonshotai-logprobs.chunks.txt',
    text: 'OK!',
    usage: { inputTokens: 11, outputTokens: 3 },
    finishReason: 'stop',
    model: 'moonshot-v1-8k',
  },
  {
    file: 'deepseek/issue-19377-logprobs.chunks.txt',
    text: 'OK',
    usage: { inputTokens: 9, outputTokens: 1, cachedTokens: 0 },
    finishReason: 'stop',
    model: 'deepseek-v4-flash',
  },
  // An error object in the middle of the stream, after text went out: an error event, no retry.
  {
    file: 'moonshot/moonshotai-stream-error.chunks.txt',
    text: 'Partial',
    usage: null,
    finishReason: '',
    model: '',
    error: 'Stream failed',
  },
  // Mistral Small sending its thinking as content parts; the last parts chunk holds both the end of the thinking and the first text.
  {
    file: 'mistral/issue-13703-mistral-thinking.chunks.txt',
    text: '391',
    reasoning:
      'Okay, the user is asking for the product of 17 and 23. I need to calculate this multiplication. Let me break it down:\n\nFirst, I recall that 17 multiplied by 20 is 340 (since 17 * 20 = 340).\nThen, I need to add 17 multiplied by 3, which is 51 (since 17 * 3 = 51).\nNow, add these two results together: 340 + 51 = 391.\n\nSo, 17 * 23 = 391.',
    usage: { inputTokens: 28, outputTokens: 139, cachedTokens: 0 },
    finishReason: 'stop',
    model: 'mistral-small-latest',
  },
  // DeepSeek cut off by max_tokens while still reasoning: the last chunk's content is empty.
  {
    file: 'deepseek/deepseek-v4-sampling-live.chunks.txt',
    text: '',
    reasoning: 'We need to respond with OK.',
    usage: { inputTokens: 87, outputTokens: 8, reasoningTokens: 7, cachedTokens: 0 },
    finishReason: 'length',
    model: 'deepseek-v4-flash',
  },
  // Reasoning, then a call whose arguments arrive one token at a time; the file has no final newline.
  {
    file: 'deepseek/deepseek-tool-call.chunks.txt',
    text: '',
    reasoning: 'The user asks about the weather in San Francisco. I should use the weather tool.',
    toolCalls: [
      { id: 'call_00_IhCAliIHtM9gKpgfqbBV9873', name: 'weather', arguments: '{"location": "San Francisco"}' },
    ],
    usage: { inputTokens: 374, outputTokens: 61, reasoningTokens: 17, cachedTokens: 256 },
    finishReason: 'tool_calls',
    model: 'deepseek-v4-flash',
  },
  {
    file: 'openai-compatible/placeholder-first-chunk.chunks.txt',
    text: 'Hello',
    usage: { inputTokens: 10, outputTokens: 1 },
    finishReason: 'stop',
    model: 'actual-model-name',
  },
];

const servers: LoopbackServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** The recorded lines as an SSE body, each line's bytes unchanged; a `.sse` file is sent as it is. */
function sseOf(file: string): string {
  if (file.endsWith('.sse')) return readFileSync(join(streams, file), 'utf8');
  const lines = readFileSync(join(streams, file), 'utf8')
    .split('\n')
    .filter((line) => line !== '');
  return `${lines.map((line) => `data: ${line}\n\n`).join('')}data: [DONE]\n\n`;
}

async function replay(body: string): Promise<ModelStreamEvent[]> {
  const server = await startLoopbackServer({ steps: [{ type: 'body', contentType: 'text/event-stream', body }] });
  servers.push(server);
  const client = createModelClient({ model: 'requested-model', baseURL: server.url, apiKey: 'k', maxRetries: 0 });
  const events: ModelStreamEvent[] = [];
  for await (const event of client.stream({ messages: [{ role: 'user', content: 'hi' }] })) events.push(event);
  return events;
}

describe('recorded provider streams, replayed byte for byte', () => {
  it.each(RECORDED)('$file', async (expected) => {
    const events = await replay(sseOf(expected.file));
    const error = events.find((event) => event.type === 'error');
    if (expected.error !== undefined) {
      expect(events.flatMap((event) => (event.type === 'text' ? [event.text] : [])).join('')).toBe(expected.text);
      expect(events.at(-1)).toBe(error);
      expect(error?.type === 'error' ? error.error.message : '').toContain(expected.error);
      return;
    }
    expect(error === undefined ? undefined : error.error.message).toBeUndefined();
    expect(events.flatMap((event) => (event.type === 'text' ? [event.text] : [])).join('')).toBe(expected.text);
    expect(events.flatMap((event) => (event.type === 'reasoning' ? [event.text] : [])).join('')).toBe(
      expected.reasoning ?? '',
    );
    expect(events.flatMap((event) => (event.type === 'tool_call' ? [event.toolCall] : []))).toEqual(
      expected.toolCalls ?? [],
    );
    const done = events.at(-1);
    expect(done?.type).toBe('done');
    if (done?.type !== 'done') return;
    expect(done.finishReason).toBe(expected.finishReason);
    expect(done.model).toBe(expected.model);
    if (expected.usage === null) expect(done.usage).toBeNull();
    else expect(done.usage).toMatchObject(expected.usage);
  });

  it('has at least 40 recorded streams from at least 8 providers', () => {
    expect(RECORDED.length).toBeGreaterThanOrEqual(40);
    expect(new Set(RECORDED.map((entry) => entry.file.split('/')[0])).size).toBeGreaterThanOrEqual(8);
  });
});
