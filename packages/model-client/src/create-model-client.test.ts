import { afterEach, describe, expect, it } from 'vitest';
import { createModelClient, shouldStream } from './create-model-client.js';
import { ModelApiError, ModelResponseError } from './errors.js';
import type { ModelClientOptions } from './create-model-client.js';
import { startLoopbackServer } from './testing/loopback-server.js';
import type { LoopbackServer, LoopbackStep } from './testing/loopback-server.js';
import type { ModelStreamEvent, ModelToolCall } from './types.js';

const servers: LoopbackServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(...steps: LoopbackStep[]): Promise<LoopbackServer> {
  const server = await startLoopbackServer({ steps });
  servers.push(server);
  return server;
}

function client(server: LoopbackServer, options: Partial<ModelClientOptions> = {}) {
  return createModelClient({
    model: 'gpt-4o-mini',
    baseURL: server.url,
    apiKey: 'test-key',
    retryBaseDelayMs: 5,
    retryMaxDelayMs: 20,
    ...options,
  });
}

async function collect(iterable: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of iterable) events.push(event);
  return events;
}

const ask = { messages: [{ role: 'user' as const, content: 'hi' }] };

function textOf(events: ModelStreamEvent[]): string {
  return events.flatMap((event) => (event.type === 'text' ? [event.text] : [])).join('');
}

function toolCallsOf(events: ModelStreamEvent[]): ModelToolCall[] {
  return events.flatMap((event) => (event.type === 'tool_call' ? [event.toolCall] : []));
}

describe('createModelClient streaming', () => {
  it('streams text in pieces and ends with done', async () => {
    const server = await serve({ type: 'response', text: 'Hello there, streaming world!', chunkSize: 3 });
    const events = await collect(client(server).stream(ask));
    expect(events.filter((event) => event.type === 'text').length).toBe(10);
    expect(textOf(events)).toBe('Hello there, streaming world!');
    const last = events.at(-1);
    expect(last).toMatchObject({ type: 'done', finishReason: 'stop', model: 'gpt-4o-mini' });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
      model: 'gpt-4o-mini',
    });
    expect(server.requests[0]?.headers['authorization']).toBe('Bearer test-key');
  });

  it('assembles a tool call split at every character of its arguments', async () => {
    const argumentsText = '{"path":"src/ü.ts","limit":5,"note":"a \\"quoted\\" word"}';
    const server = await serve({
      type: 'response',
      text: 'Let me look.',
      toolCalls: [{ id: 'call_a', name: 'read', arguments: argumentsText }],
      chunkSize: 1,
    });
    const events = await collect(client(server).stream({ ...ask, tools: [readTool] }));
    expect(toolCallsOf(events)).toEqual([{ id: 'call_a', name: 'read', arguments: argumentsText }]);
    expect(textOf(events)).toBe('Let me look.');
    expect(events.at(-1)).toMatchObject({ type: 'done', finishReason: 'tool_calls' });
  });
  it('assembles parallel tool calls, sent one after another or interleaved', async () => {
    const calls = [
      { id: 'call_1', name: 'read', arguments: '{"path":"a.txt"}' },
      { id: 'call_2', name: 'grep', arguments: '{"pattern":"TODO","path":"src"}' },
      { id: 'call_3', name: 'list', arguments: '{}' },
    ];
    const server = await serve(
      { type: 'response', toolCalls: calls, chunkSize: 2 },
      { type: 'response', toolCalls: calls, chunkSize: 2, toolCallOrder: 'interleaved' },
    );
    const modelClient = client(server);
    expect(toolCallsOf(await collect(modelClient.stream({ ...ask, tools: [readTool] })))).toEqual(calls);
    expect(toolCallsOf(await collect(modelClient.stream({ ...ask, tools: [readTool] })))).toEqual(calls);
  });

  it('takes ids and names that arrive after the first argument fragment', async () => {
    const calls = [
      { id: 'call_x', name: 'write', arguments: '{"path":"x","content":"y"}' },
      { id: 'call_y', name: 'edit', arguments: '{"path":"z"}' },
    ];
    const server = await serve({
      type: 'response',
      toolCalls: calls,
      chunkSize: 4,
      toolCallHeader: 'late',
      toolCallOrder: 'interleaved',
    });
    expect(toolCallsOf(await collect(client(server).stream({ ...ask, tools: [readTool] })))).toEqual(calls);
  });

  it('reports a stream without a finish reason as unfinished, never as tool calls or done', async () => {
    const server = await serve({
      type: 'response',
      toolCalls: [{ id: 'c', name: 'read', arguments: '{"a":1}' }],
      noFinishReason: true,
    });
    const events = await collect(client(server, { maxRetries: 0 }).stream({ ...ask, tools: [readTool] }));
    expect(events.map((event) => event.type)).toEqual(['error']);
    const error = errorOf(events);
    expect(ModelResponseError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ kind: 'incomplete_stream', isRetryable: true });
    expect(error.message).toContain('ended before the answer was finished (no finish_reason; received');
    expect(error.message).toContain('an unfinished tool call to read');
  });

  it('reports usage with cached and reasoning tokens, priced from the table', async () => {
    const server = await serve({
      type: 'response',
      text: 'ok',
      model: 'gpt-4o-2024-08-06',
      usage: { prompt_tokens: 1000, completion_tokens: 200, cached_tokens: 400, reasoning_tokens: 50 },
    });
    const events = await collect(client(server, { model: 'gpt-4o' }).stream(ask));
    const done = events.at(-1);
    if (done?.type !== 'done') throw new Error('expected done last');
    expect(done.model).toBe('gpt-4o-2024-08-06');
    expect(done.usage).toMatchObject({ inputTokens: 1000, outputTokens: 200, cachedTokens: 400, reasoningTokens: 50 });
    expect(done.usage?.costUsd).toBeCloseTo(0.004, 12);
  });

  it('reports cost null for a model that is not in the price table', async () => {
    const server = await serve({ type: 'response', text: 'ok', usage: { prompt_tokens: 10, completion_tokens: 3 } });
    const events = await collect(client(server, { model: 'my-local-llama' }).stream(ask));
    expect(events.at(-1)).toMatchObject({
      type: 'done',
      usage: { inputTokens: 10, outputTokens: 3, cachedTokens: 0, reasoningTokens: 0, costUsd: null },
    });
  });

  it('uses a caller price table for models it adds', async () => {
    const server = await serve({
      type: 'response',
      text: 'ok',
      usage: { prompt_tokens: 1_000_000, completion_tokens: 0 },
    });
    const priceTable = { 'my-local-llama': { inputPerMillion: 0.5, outputPerMillion: 1 } };
    const events = await collect(client(server, { model: 'my-local-llama', priceTable }).stream(ask));
    expect(events.at(-1)).toMatchObject({ type: 'done', usage: { costUsd: 0.5 } });
  });

  it('still ends with done, usage null, when the provider sends no usage chunk', async () => {
    const server = await serve({ type: 'response', text: 'no usage here', usage: null });
    const events = await collect(client(server).stream(ask));
    expect(events.at(-1)).toEqual({
      type: 'done',
      usage: null,
      finishReason: 'stop',
      model: 'gpt-4o-mini',
      responseId: 'chatcmpl-loopback-1',
    });
  });

  it('turns reasoning deltas into reasoning events', async () => {
    const server = await serve(
      { type: 'response', reasoning: 'First, think about it.', text: 'Answer.' },
      {
        type: 'chunks',
        chunks: [
          chunk({ role: 'assistant', reasoning: 'Via the reasoning field.' }),
          chunk({ content: 'Done.' }),
          chunk({}, 'stop'),
        ],
      },
    );
    const modelClient = client(server);
    const first = await collect(modelClient.stream(ask));
    const reasoning = first.flatMap((event) => (event.type === 'reasoning' ? [event.text] : [])).join('');
    expect(reasoning).toBe('First, think about it.');
    expect(first.findIndex((event) => event.type === 'reasoning')).toBeLessThan(
      first.findIndex((event) => event.type === 'text'),
    );
    const second = await collect(modelClient.stream(ask));
    expect(second.slice(0, 2)).toEqual([
      { type: 'reasoning', text: 'Via the reasoning field.' },
      { type: 'text', text: 'Done.' },
    ]);
  });

  it('sends reasoning_effort, service_tier and response_format, and drops temperature next to reasoning_effort', async () => {
    const server = await serve({ type: 'response', text: '{}' }, { type: 'response', text: 'hi' });
    const responseFormat = { type: 'json_object' as const };
    await collect(
      client(server, { reasoningEffort: 'low', temperature: 0.3, serviceTier: 'flex', responseFormat }).stream(ask),
    );
    await collect(client(server, { temperature: 0.3 }).stream(ask));
    const [withEffort, withTemperature] = server.requests.map((request) => request.body);
    expect(withEffort).toMatchObject({
      reasoning_effort: 'low',
      service_tier: 'flex',
      response_format: { type: 'json_object' },
    });
    expect(withEffort).not.toHaveProperty('temperature');
    expect(withTemperature).toMatchObject({ temperature: 0.3 });
    expect(withTemperature).not.toHaveProperty('reasoning_effort');
    expect(withTemperature).not.toHaveProperty('service_tier');
    expect(withTemperature).not.toHaveProperty('response_format');
  });

  it('sends history in the OpenAI shape, tools included', async () => {
    const server = await serve({ type: 'response', text: 'ok' });
    await collect(
      client(server).stream({
        model: 'gpt-5-nano',
        tools: [readTool],
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'read a' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } }],
          },
          { role: 'tool', content: 'contents of a', tool_call_id: 'c1' },
          { role: 'assistant', content: 'Read it.', tool_calls: [] },
        ],
      }),
    );
    const body = server.requests[0]?.body;
    expect(body.model).toBe('gpt-5-nano');
    expect(body.tools).toEqual([readTool]);
    expect(body.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'read a' },
      {
        role: 'assistant',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } }],
      },
      { role: 'tool', content: 'contents of a', tool_call_id: 'c1' },
      { role: 'assistant', content: 'Read it.' },
    ]);
  });

  it('sends requests through a caller-supplied fetch', async () => {
    const server = await serve({ type: 'response', text: 'fetched' });
    const urls: string[] = [];
    const countingFetch: typeof fetch = (input, init) => {
      urls.push(input instanceof Request ? input.url : String(input));
      return fetch(input, init);
    };
    const events = await collect(client(server, { fetch: countingFetch }).stream(ask));
    expect(textOf(events)).toBe('fetched');
    expect(urls).toEqual([`${server.url}/chat/completions`]);
  });

  it('does not time out while the consumer is slow to take the next event', async () => {
    const server = await serve({ type: 'response', text: 'abcdefghij', chunkSize: 5 });
    const events: ModelStreamEvent[] = [];
    for await (const event of client(server, { timeoutMs: 300, maxRetries: 0 }).stream(ask)) {
      events.push(event);
      // Deliberate slowness, not a race: the consumer dawdles past the 300 ms timeout.
      await new Promise((resolve) => setTimeout(resolve, 600));
    }
    expect(events.map((event) => event.type)).toEqual(['text', 'text', 'done']);
  });
});

describe('createModelClient preload', () => {
  it('sends nothing, resolves to undefined, and the next call goes out as usual', async () => {
    const server = await serve({ type: 'response', text: 'after preload' });
    const model = client(server);
    await expect(Promise.all([model.preload!(), model.preload!()])).resolves.toEqual([undefined, undefined]);
    expect(server.requests).toHaveLength(0);
    expect(server.discoveryRequests).toHaveLength(0);
    expect((await model.complete({ messages: [{ role: 'user', content: 'hi' }] })).text).toBe('after preload');
    expect(server.requests).toHaveLength(1);
  });

  it('resolves without a key, and the call still fails saying what to set', async () => {
    const server = await serve();
    const model = client(server, { apiKey: '' });
    await expect(model.preload!()).resolves.toBeUndefined();
    await expect(model.complete({ messages: [{ role: 'user', content: 'hi' }] })).rejects.toThrow(/set OPENAI_API_KEY/);
    expect(server.requests).toHaveLength(0);
  });
});

describe('createModelClient without streaming', () => {
  it('makes a plain request when configured, with the same events', async () => {
    const server = await serve({
      type: 'response',
      text: 'Checking.',
      reasoning: 'hmm',
      toolCalls: [{ id: 'call_p', name: 'read', arguments: '{"path":"p"}' }],
      usage: { prompt_tokens: 100, completion_tokens: 20, cached_tokens: 50 },
    });
    const events = await collect(client(server, { streaming: 'never' }).stream({ ...ask, tools: [readTool] }));
    expect(server.requests[0]?.body.stream).not.toBe(true);
    expect(server.requests[0]?.body).not.toHaveProperty('stream_options');
    expect(events).toEqual([
      { type: 'reasoning', text: 'hmm' },
      { type: 'text', text: 'Checking.' },
      { type: 'tool_call', toolCall: { id: 'call_p', name: 'read', arguments: '{"path":"p"}' } },
      {
        type: 'done',
        finishReason: 'tool_calls',
        model: 'gpt-4o-mini',
        responseId: 'chatcmpl-loopback-1',
        usage: {
          inputTokens: 100,
          outputTokens: 20,
          cachedTokens: 50,
          reasoningTokens: 0,
          costUsd: (50 * 0.15 + 50 * 0.075 + 20 * 0.6) / 1_000_000,
        },
      },
    ]);
  });

  it('switches to plain requests for a cerebras base URL when tools are offered', async () => {
    const server = await serve(
      { type: 'response', toolCalls: [{ id: 'call_c', name: 'read', arguments: '{}' }] },
      { type: 'response', text: 'streamed' },
    );
    const cerebras = client(server, { baseURL: server.url.replace(/\/v1$/, '/cerebras/v1') });
    const withTools = await collect(cerebras.stream({ ...ask, tools: [readTool] }));
    expect(toolCallsOf(withTools)).toEqual([{ id: 'call_c', name: 'read', arguments: '{}' }]);
    const withoutTools = await collect(cerebras.stream(ask));
    expect(textOf(withoutTools)).toBe('streamed');
    expect(server.requests.map((request) => [request.path, request.body.stream === true])).toEqual([
      ['/cerebras/v1/chat/completions', false],
      ['/cerebras/v1/chat/completions', true],
    ]);
  });

  it('selects streaming by mode, provider and tools', () => {
    expect(shouldStream('auto', 'https://api.cerebras.ai/v1', true)).toBe(false);
    expect(shouldStream('auto', 'https://API.Cerebras.ai/v1', true)).toBe(false);
    expect(shouldStream('auto', 'https://api.cerebras.ai/v1', false)).toBe(true);
    expect(shouldStream('auto', 'https://api.openai.com/v1', true)).toBe(true);
    expect(shouldStream('always', 'https://api.cerebras.ai/v1', true)).toBe(true);
    expect(shouldStream('never', 'https://api.openai.com/v1', false)).toBe(false);
  });

  it('complete() returns the whole answer', async () => {
    const server = await serve({
      type: 'response',
      text: 'Summary.',
      toolCalls: [{ id: 'k', name: 'read', arguments: '{"x":1}' }],
      usage: { prompt_tokens: 7, completion_tokens: 2 },
    });
    const response = await client(server).complete({ ...ask, tools: [readTool] });
    expect(response).toEqual({
      text: 'Summary.',
      toolCalls: [{ id: 'k', name: 'read', arguments: '{"x":1}' }],
      usage: {
        inputTokens: 7,
        outputTokens: 2,
        cachedTokens: 0,
        reasoningTokens: 0,
        costUsd: (7 * 0.15 + 2 * 0.6) / 1_000_000,
      },
      finishReason: 'tool_calls',
      model: 'gpt-4o-mini',
      responseId: 'chatcmpl-loopback-1',
    });
    expect(server.requests[0]?.body.stream).not.toBe(true);
  });

  it('complete() retries a 500 and throws ModelApiError on a 400', async () => {
    const server = await serve(
      { type: 'http_error', status: 500 },
      { type: 'response', text: 'second time lucky' },
      { type: 'http_error', status: 400, message: "Invalid value for 'messages'" },
    );
    const modelClient = client(server);
    expect((await modelClient.complete(ask)).text).toBe('second time lucky');
    const failure = await modelClient.complete(ask).catch((error: unknown) => error);
    expect(ModelApiError.isInstance(failure)).toBe(true);
    expect(failure).toMatchObject({
      statusCode: 400,
      isRetryable: false,
      attempts: 1,
      providerMessage: "Invalid value for 'messages'",
    });
    expect(server.requests).toHaveLength(3);
  });

  it('complete() rejects with the abort reason when aborted', async () => {
    const server = await serve({ type: 'hang' });
    const controller = new AbortController();
    const pending = client(server).complete(ask, controller.signal);
    await waitFor(() => server.requests.length === 1);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('createModelClient retries and errors', () => {
  it('waits for Retry-After after a 429, then succeeds', async () => {
    const server = await serve(
      { type: 'http_error', status: 429, message: 'Rate limit reached', retryAfter: 1 },
      { type: 'response', text: 'after the wait' },
    );
    const events = await collect(client(server).stream(ask));
    expect(textOf(events)).toBe('after the wait');
    expect(server.requests).toHaveLength(2);
    const [first, second] = server.requests;
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it('honours retry-after-ms', async () => {
    const server = await serve(
      { type: 'http_error', status: 503, headers: { 'retry-after-ms': '300' } },
      { type: 'response', text: 'ok' },
    );
    await collect(client(server).stream(ask));
    const [first, second] = server.requests;
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(280);
  });

  it('retries a 500, then succeeds', async () => {
    const server = await serve(
      { type: 'http_error', status: 500, message: 'boom' },
      { type: 'response', text: 'fine' },
    );
    const events = await collect(client(server).stream(ask));
    expect(events.map((event) => event.type)).toEqual(['retry', 'text', 'done']);
    expect(events[0]).toMatchObject({
      type: 'retry',
      attempt: 2,
      maxAttempts: 9,
      reason: 'server error 500',
      statusCode: 500,
    });
    expect(server.requests).toHaveLength(2);
  });

  it('does not retry a 400, and carries the provider message', async () => {
    const server = await serve(
      { type: 'http_error', status: 400, message: 'This model does not support tools' },
      { type: 'response', text: 'never reached' },
    );
    const error = errorOf(await collect(client(server).stream(ask)));
    expect(error.message).toBe('API error 400 (after 1 attempt): This model does not support tools');
    expect(error).toMatchObject({
      statusCode: 400,
      isRetryable: false,
      attempts: 1,
      providerMessage: 'This model does not support tools',
    });
    expect(server.requests).toHaveLength(1);
    expect(server.pending()).toBe(1);
  });

  it('says what to check on 401 and 404', async () => {
    const server = await serve(
      { type: 'http_error', status: 401, message: 'Incorrect API key provided' },
      { type: 'http_error', status: 404, message: 'The model `gpt-9` does not exist' },
    );
    const unauthorized = errorOf(await collect(client(server).stream(ask)));
    expect(unauthorized.message).toContain('Incorrect API key provided');
    expect(unauthorized.message).toContain('check OPENAI_API_KEY');
    const notFound = errorOf(await collect(client(server, { model: 'gpt-9' }).stream(ask)));
    expect(notFound.message).toContain('check the model name (gpt-9)');
  });

  it('does not retry a stream that dropped after a tool call was emitted', async () => {
    const server = await serve(
      {
        type: 'drop',
        after: 'tool_call',
        text: 'Running it.',
        toolCalls: [{ id: 'call_d', name: 'bash', arguments: '{"command":"rm x"}' }],
      },
      { type: 'response', text: 'a retry would land here' },
    );
    const events = await collect(client(server).stream({ ...ask, tools: [readTool] }));
    expect(events.map((event) => event.type)).toEqual(['text', 'text', 'tool_call', 'error']);
    const error = errorOf(events);
    expect(error.message).toContain('dropped');
    expect(error.message).toContain('not retried');
    expect(error.attempts).toBe(1);
    expect(server.requests).toHaveLength(1);
    expect(server.pending()).toBe(1);
  });

  it('does not retry a stream that dropped after text was emitted', async () => {
    const server = await serve(
      { type: 'drop', after: 'text', text: 'Partial answ' },
      { type: 'response', text: 'unused' },
    );
    const events = await collect(client(server).stream(ask));
    expect(textOf(events)).toBe('Partial answ');
    expect(events.at(-1)?.type).toBe('error');
    expect(server.requests).toHaveLength(1);
  });

  it('retries a stream that dropped before any output', async () => {
    const server = await serve({ type: 'drop', after: 'headers' }, { type: 'response', text: 'recovered' });
    const events = await collect(client(server).stream(ask));
    expect(textOf(events)).toBe('recovered');
    expect(events.at(-1)?.type).toBe('done');
    expect(server.requests).toHaveLength(2);
  });

  it('retries a transient error sent inside the stream before any output', async () => {
    const server = await serve(
      { type: 'chunks', chunks: [{ error: { message: 'Overloaded', type: 'server_error' } }] },
      { type: 'response', text: 'second try' },
    );
    const events = await collect(client(server).stream(ask));
    expect(textOf(events)).toBe('second try');
    expect(server.requests).toHaveLength(2);
  });

  it('times out a request that never answers', async () => {
    const server = await serve({ type: 'hang' });
    const events = await collect(client(server, { timeoutMs: 200, maxRetries: 0 }).stream(ask));
    const error = errorOf(events);
    expect(error.message).toContain('within 200 ms');
    expect(error).toMatchObject({ isRetryable: true, attempts: 1 });
  });

  it('retries after a timeout', async () => {
    const server = await serve({ type: 'hang' }, { type: 'response', text: 'awake' });
    const events = await collect(client(server, { timeoutMs: 500, maxRetries: 1 }).stream(ask));
    expect(textOf(events)).toBe('awake');
    expect(server.requests).toHaveLength(2);
  });

  it('times out a stream that stalls mid-answer, without retrying', async () => {
    const server = await serve(
      { type: 'response', text: 'slow stream', chunkSize: 4, delayMs: 1500 },
      { type: 'response', text: 'unused' },
    );
    const events = await collect(client(server, { timeoutMs: 400 }).stream(ask));
    expect(events.map((event) => event.type)).toEqual(['text', 'error']);
    expect(errorOf(events).message).toContain('nothing arrived for 400 ms (idle timeout');
    expect(server.requests).toHaveLength(1);
  });

  it('ends without an error event when aborted during a hang', async () => {
    const server = await serve({ type: 'hang' });
    const controller = new AbortController();
    const collecting = collect(client(server).stream(ask, controller.signal));
    await waitFor(() => server.requests.length === 1);
    controller.abort();
    expect(await collecting).toEqual([]);
  });

  it('ends without an error event when aborted mid-stream', async () => {
    const server = await serve({ type: 'response', text: 'a long answer that keeps going', chunkSize: 2, delayMs: 50 });
    const controller = new AbortController();
    const events: ModelStreamEvent[] = [];
    for await (const event of client(server).stream(ask, controller.signal)) {
      events.push(event);
      if (events.length === 2) controller.abort();
    }
    expect(events.map((event) => event.type)).toEqual(['text', 'text']);
  });

  it('ends without an error event when aborted while waiting to retry', async () => {
    const server = await serve(
      { type: 'http_error', status: 429, retryAfter: 30 },
      { type: 'response', text: 'unused' },
    );
    const controller = new AbortController();
    const types: string[] = [];
    for await (const event of client(server).stream(ask, controller.signal)) {
      types.push(event.type);
      // Abort once the client has told of the retry (before: once the server saw the request,
      // which could cancel the request itself). Landing just before or during the 30 s wait, the
      // abort must end the stream without an error event.
      if (event.type === 'retry') setTimeout(() => controller.abort(), 0);
    }
    expect(types).toEqual(['retry']);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a plain request whose connection dropped', async () => {
    const server = await serve({ type: 'drop', after: 'headers' }, { type: 'response', text: 'whole answer' });
    const events = await collect(client(server, { streaming: 'never' }).stream(ask));
    expect(textOf(events)).toBe('whole answer');
    expect(server.requests).toHaveLength(2);
  });

  it('says what to check on 403', async () => {
    const server = await serve({
      type: 'http_error',
      status: 403,
      message: 'Project does not have access to model o3',
    });
    const error = errorOf(await collect(client(server, { model: 'o3' }).stream(ask)));
    expect(error.message).toContain('Project does not have access to model o3');
    expect(error.message).toContain('check OPENAI_API_KEY');
    expect(error.statusCode).toBe(403);
  });

  it('ends at once when the signal is already aborted', async () => {
    const server = await serve({ type: 'response', text: 'unused' });
    expect(await collect(client(server).stream(ask, AbortSignal.abort()))).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });

  it('explains a refused connection', async () => {
    const server = await startLoopbackServer();
    const url = server.url;
    await server.close();
    const events = await collect(
      createModelClient({ model: 'gpt-4o', baseURL: url, apiKey: 'k', retryBaseDelayMs: 1 }).stream(ask),
    );
    const error = errorOf(events);
    expect(error.message).toContain(`cannot reach ${url}`);
    expect(error.message).toContain('is the server running? set OPENAI_BASE_URL or --base-url');
    expect(error).toMatchObject({ statusCode: undefined, isRetryable: false, attempts: 1 });
  });

  it('counts the attempts when retries are exhausted', async () => {
    const server = await serve(
      { type: 'http_error', status: 503, message: 'Service Unavailable' },
      { type: 'http_error', status: 503, message: 'Service Unavailable' },
      { type: 'http_error', status: 503, message: 'Service Unavailable' },
    );
    const error = errorOf(await collect(client(server, { maxRetries: 2 }).stream(ask)));
    expect(error.message).toBe('API error 503 (after 3 attempts): Service Unavailable');
    expect(error).toMatchObject({ statusCode: 503, isRetryable: true, attempts: 3 });
    expect(server.requests).toHaveLength(3);
  });

  it('reports a missing API key as an error event without a request', async () => {
    const server = await serve({ type: 'response', text: 'unused' });
    const saved = process.env['OPENAI_API_KEY'];
    delete process.env['OPENAI_API_KEY'];
    try {
      const error = errorOf(await collect(createModelClient({ model: 'gpt-4o', baseURL: server.url }).stream(ask)));
      expect(error.message).toContain('set OPENAI_API_KEY');
      expect(server.requests).toHaveLength(0);
    } finally {
      if (saved !== undefined) process.env['OPENAI_API_KEY'] = saved;
    }
  });

  it('reports a stream closed cleanly mid-text as unfinished, with what arrived, and does not retry it', async () => {
    const server = await serve({ type: 'close', text: 'The answer is forty' }, { type: 'response', text: 'unused' });
    const events = await collect(client(server).stream(ask));
    expect(textOf(events)).toBe('The answer is forty');
    const error = errorOf(events);
    expect(error).toMatchObject({ kind: 'incomplete_stream', received: '4 chunks, 19 characters of text' });
    expect(error.message).toContain('not retried because part of the answer was already streamed');
    expect(events.some((event) => event.type === 'done')).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a stream closed mid-tool-call (nothing of it was handed out), then reports what arrived', async () => {
    const partial = {
      type: 'close' as const,
      toolCalls: [{ id: 'call_p', name: 'bash', arguments: '{"command":"rm -rf build"}' }],
      partial: true,
    };
    const server = await serve(partial, partial);
    const events = await collect(client(server, { maxRetries: 1 }).stream({ ...ask, tools: [readTool] }));
    expect(events.map((event) => event.type)).toEqual(['retry', 'error']);
    expect(events[0]).toMatchObject({ reason: 'an unfinished answer', attempt: 2, maxAttempts: 2 });
    expect(errorOf(events)).toMatchObject({ kind: 'incomplete_stream', attempts: 2 });
    expect(errorOf(events).message).toContain('an unfinished tool call to bash');
  });

  it('refuses an HTML or JSON page served with 200 to a streaming request, quoting it', async () => {
    const server = await serve(
      { type: 'body', body: '<html><head><title>Sign in</title></head><body>Proxy login required</body></html>' },
      { type: 'body', contentType: 'application/json', body: '{"status":"ok","detail":"wrong endpoint"}' },
    );
    const html = errorOf(await collect(client(server).stream(ask)));
    expect(html).toMatchObject({ kind: 'not_a_stream', statusCode: 200, isRetryable: false, attempts: 1 });
    expect(html.message).toContain('answered a streaming request with a text/html body instead of an event stream');
    expect(html.message).toContain('Proxy login required');
    const json = errorOf(await collect(client(server).stream(ask)));
    expect(json.message).toContain('application/json body');
    expect(json.message).toContain('wrong endpoint');
    expect(server.requests).toHaveLength(2);
  });

  it('reports a stream of only empty choices as no answer', async () => {
    const empty = {
      type: 'chunks' as const,
      chunks: [{ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [] }],
    };
    const server = await serve(empty);
    const events = await collect(client(server, { maxRetries: 0 }).stream(ask));
    expect(events.map((event) => event.type)).toEqual(['error']);
    expect(errorOf(events)).toMatchObject({ kind: 'no_choices', received: '1 chunk, none with a choice' });
  });

  it('reports finish_reason length in done', async () => {
    const server = await serve({ type: 'response', text: 'cut sho', finishReason: 'length' });
    const events = await collect(client(server).stream(ask));
    expect(events.at(-1)).toMatchObject({ type: 'done', finishReason: 'length' });
  });

  it('waits the first-byte timeout for the answer to start and the idle timeout between chunks', async () => {
    // The answer starts after 600 ms: longer than the idle timeout, within the first-byte one.
    const late = await startLoopbackServer({
      respond: async () => {
        // Deliberate delay of a slow server, not a race: it must outlast the idle timeout.
        await new Promise((resolve) => setTimeout(resolve, 600));
        return { type: 'response', text: 'abcdefgh', chunkSize: 2 };
      },
    });
    servers.push(late);
    const events = await collect(
      client(late, { firstByteTimeoutMs: 10_000, idleTimeoutMs: 300, maxRetries: 0 }).stream(ask),
    );
    expect(textOf(events)).toBe('abcdefgh');
    const hung = await serve({ type: 'hang' });
    const error = errorOf(
      await collect(client(hung, { firstByteTimeoutMs: 300, idleTimeoutMs: 60_000, maxRetries: 0 }).stream(ask)),
    );
    expect(error.message).toContain('within 300 ms (first-byte timeout');
  });

  it('hands out retries of plain requests as retry events, and to onRetry for complete()', async () => {
    const server = await serve(
      { type: 'http_error', status: 429, retryAfter: 0 },
      { type: 'response', text: 'plain' },
      { type: 'http_error', status: 503 },
      { type: 'response', text: 'completed' },
    );
    const events = await collect(client(server, { streaming: 'never' }).stream(ask));
    expect(events.map((event) => event.type)).toEqual(['retry', 'text', 'done']);
    expect(events[0]).toMatchObject({ reason: 'rate limited (429)', statusCode: 429, attempt: 2 });
    const notices: unknown[] = [];
    const response = await client(server, { onRetry: (notice) => notices.push(notice) }).complete(ask);
    expect(response.text).toBe('completed');
    expect(notices).toMatchObject([{ reason: 'server error 503', attempt: 2, maxAttempts: 9 }]);
  });

  it('fails loudly when the loopback script runs out', async () => {
    const server = await serve();
    const error = errorOf(await collect(client(server, { maxRetries: 0 }).stream(ask)));
    expect(error.message).toContain('no scripted step left for request 1');
  });
});

function errorOf(events: ModelStreamEvent[]): ModelApiError & Partial<ModelResponseError> {
  const last = events.at(-1);
  if (last?.type !== 'error') throw new Error(`expected an error event last, got ${JSON.stringify(events)}`);
  expect(ModelApiError.isInstance(last.error)).toBe(true);
  return last.error;
}

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return {
    id: 'chatcmpl-raw',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

const readTool = {
  type: 'function' as const,
  function: { name: 'read', description: 'Read a file', parameters: { type: 'object', properties: {} } },
};
