import { spawn } from 'node:child_process';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startLoopbackServer } from './loopback-server.js';
import type { LoopbackServer, LoopbackServerOptions } from './loopback-server.js';

const servers: LoopbackServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function start(options?: LoopbackServerOptions): Promise<LoopbackServer> {
  const server = await startLoopbackServer(options);
  servers.push(server);
  return server;
}

function post(server: LoopbackServer, body: unknown, path = '/chat/completions'): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

function dataLines(text: string): string[] {
  return text
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length));
}

const streamed = {
  model: 'gpt-4o-mini',
  stream: true,
  stream_options: { include_usage: true },
  messages: [{ role: 'user', content: 'hi' }],
};

describe('startLoopbackServer', () => {
  it('listens on 127.0.0.1 with a /v1 base URL', async () => {
    const server = await start();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });

  it('streams real SSE chunks: split tool-call deltas, a usage chunk without choices, then [DONE]', async () => {
    const server = await start({
      steps: [
        {
          type: 'response',
          text: 'hello',
          toolCalls: [{ id: 'call_1', name: 'read', arguments: '{"path":"a"}' }],
          usage: { prompt_tokens: 12, completion_tokens: 5, cached_tokens: 4, reasoning_tokens: 1 },
          chunkSize: 5,
        },
      ],
    });
    const response = await post(server, streamed);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const lines = dataLines(await response.text());
    expect(lines.at(-1)).toBe('[DONE]');
    const chunks = lines.slice(0, -1).map((line) => JSON.parse(line));
    for (const chunk of chunks) expect(chunk).toMatchObject({ object: 'chat.completion.chunk', model: 'gpt-4o-mini' });
    const toolDeltas = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    expect(toolDeltas).toEqual([
      { index: 0, id: 'call_1', type: 'function', function: { name: 'read', arguments: '' } },
      { index: 0, function: { arguments: '{"pat' } },
      { index: 0, function: { arguments: 'h":"a' } },
      { index: 0, function: { arguments: '"}' } },
    ]);
    const finish = chunks.find((chunk) => chunk.choices[0]?.finish_reason);
    expect(finish.choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: {
        prompt_tokens: 12,
        completion_tokens: 5,
        total_tokens: 17,
        prompt_tokens_details: { cached_tokens: 4 },
        completion_tokens_details: { reasoning_tokens: 1 },
      },
    });
    expect(server.requests[0]).toMatchObject({ path: '/v1/chat/completions', body: streamed });
  });

  it('sends usage only when the request asks for it, and none when the step says null', async () => {
    const server = await start({
      steps: [
        { type: 'response', text: 'a' },
        { type: 'response', text: 'b', usage: null },
      ],
    });
    const withoutOption = dataLines(await (await post(server, { ...streamed, stream_options: undefined })).text());
    expect(withoutOption.some((line) => line.includes('"usage"'))).toBe(false);
    const nullUsage = dataLines(await (await post(server, streamed)).text());
    expect(nullUsage.some((line) => line.includes('"usage"'))).toBe(false);
  });

  it('answers a non-streaming request with a chat.completion object built from the same step', async () => {
    const server = await start({
      steps: [
        {
          type: 'response',
          text: 'plain',
          toolCalls: [{ name: 'list', arguments: '{}' }],
          usage: { prompt_tokens: 3, completion_tokens: 2 },
        },
      ],
    });
    const body = await (await post(server, { model: 'm', messages: [] })).json();
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'm',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: 'plain',
            tool_calls: [{ id: 'call_1_1', type: 'function', function: { name: 'list', arguments: '{}' } }],
          },
        },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    });
  });

  it('uses the queue first, then respond(), and fails loudly with neither', async () => {
    const seen: number[] = [];
    const server = await start({
      steps: [{ type: 'response', text: 'queued' }],
      respond: (request, index) => {
        seen.push(index);
        return { type: 'response', text: `answered ${index} for ${request.body.model}` };
      },
    });
    const openai = new OpenAI({ baseURL: server.url, apiKey: 'k', maxRetries: 0 });
    const first = await openai.chat.completions.create({ model: 'x', messages: [] });
    const second = await openai.chat.completions.create({ model: 'x', messages: [] });
    expect(first.choices[0]?.message.content).toBe('queued');
    expect(second.choices[0]?.message.content).toBe('answered 1 for x');
    expect(seen).toEqual([1]);

    const empty = await start();
    const response = await post(empty, streamed);
    expect(response.status).toBe(500);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe(
      'loopback server: no scripted step left for request 1',
    );
    empty.push({ type: 'response', text: 'late' });
    expect(empty.pending()).toBe(1);
    expect((await post(empty, { messages: [] })).status).toBe(200);
    expect(empty.pending()).toBe(0);
  });

  it('sends HTTP errors with Retry-After and extra headers', async () => {
    const server = await start({
      steps: [
        {
          type: 'http_error',
          status: 429,
          message: 'slow down',
          retryAfter: 2,
          headers: { 'x-ratelimit-remaining-requests': '0' },
        },
      ],
    });
    const response = await post(server, streamed);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('2');
    expect(response.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(await response.json()).toMatchObject({ error: { message: 'slow down' } });
  });

  it('drops the connection mid-stream', async () => {
    const server = await start({ steps: [{ type: 'drop', after: 'text', text: 'partial' }] });
    const response = await post(server, streamed);
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
  });

  it('answers unknown routes with 404', async () => {
    const server = await start();
    const response = await fetch(`${server.url}/embeddings`);
    expect(response.status).toBe(404);
    expect(server.requests[0]?.path).toBe('/v1/embeddings');
  });

  it('answers the discovery endpoints it was given, 404 for the others, and records them apart', async () => {
    const server = await startLoopbackServer({ models: [{ id: 'm', max_model_len: 4096 }], props: { n_ctx: 2048 } });
    try {
      expect(await (await fetch(`${server.url}/models`)).json()).toEqual({
        object: 'list',
        data: [{ object: 'model', created: 0, owned_by: 'loopback', id: 'm', max_model_len: 4096 }],
      });
      expect(await (await fetch(`${server.url.replace(/\/v1$/, '')}/props`)).json()).toEqual({ n_ctx: 2048 });
      expect(
        (await fetch(`${server.url.replace(/\/v1$/, '')}/api/show`, { method: 'POST', body: '{"model":"m"}' })).status,
      ).toBe(404);
      expect(server.discoveryRequests.map((request) => request.path)).toEqual(['/v1/models', '/props', '/api/show']);
      expect(server.requests).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('closes while a request hangs', async () => {
    const server = await startLoopbackServer({ steps: [{ type: 'hang' }] });
    const pending = post(server, streamed).catch((error: unknown) => error);
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await server.close();
    expect(await pending).toBeInstanceOf(Error);
  });

  it('serves a child process', async () => {
    const server = await start({ steps: [{ type: 'response', text: 'from the parent', chunkSize: 3 }] });
    const script = `
      const response = await fetch(process.argv[1] + '/chat/completions', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', stream: true, messages: [] }),
      });
      const text = await response.text();
      const pieces = text.split('\\n\\n').filter((line) => line.startsWith('data: {'))
        .map((line) => JSON.parse(line.slice(6)).choices[0]?.delta?.content ?? '');
      process.stdout.write(pieces.join(''));
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, server.url], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (part: Buffer) => {
      output += part.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(output).toBe('from the parent');
  });
});
