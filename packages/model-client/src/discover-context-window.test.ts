import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONTEXT_WINDOW, resolveContextWindow } from './context-windows.js';
import { createModelClient } from './create-model-client.js';
import { clearContextWindowCache, discoverContextWindow } from './discover-context-window.js';
import { startLoopbackServer } from './testing/loopback-server.js';
import type { LoopbackServer, LoopbackServerOptions } from './testing/loopback-server.js';

let server: LoopbackServer | undefined;

async function serve(options: LoopbackServerOptions): Promise<LoopbackServer> {
  server = await startLoopbackServer(options);
  return server;
}

beforeEach(() => clearContextWindowCache());

/** The discovery paths asked, sorted (the servers' own endpoints are asked together). */
function paths(loopback: LoopbackServer): string[] {
  return loopback.discoveryRequests.map((request) => request.path).sort();
}
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('discoverContextWindow', () => {
  it("reads vLLM's max_model_len from the model list, sending the API key", async () => {
    const loopback = await serve({
      models: [
        { id: 'other', max_model_len: 4096 },
        { id: 'Qwen/Qwen3-8B', max_model_len: 40_960, root: 'Qwen/Qwen3-8B' },
      ],
    });
    expect(await discoverContextWindow({ baseURL: loopback.url, model: 'Qwen/Qwen3-8B', apiKey: 'k-1' })).toEqual({
      tokens: 40_960,
      endpoint: '/v1/models',
      field: 'max_model_len',
    });
    expect(loopback.discoveryRequests.map((request) => request.path)).toEqual(['/v1/models']);
    expect(loopback.discoveryRequests[0]!.headers['authorization']).toBe('Bearer k-1');
  });

  it("reads OpenRouter's and LM Studio's context_length, then top_provider.context_length", async () => {
    const loopback = await serve({
      models: [
        { id: 'mistralai/mistral-small', context_length: 32_000 },
        { id: 'lmstudio-community/qwen', max_context_length: 131_072 },
        { id: 'meta/llama', top_provider: { context_length: 65_536 } },
      ],
    });
    expect(await discoverContextWindow({ baseURL: loopback.url, model: 'mistralai/mistral-small' })).toMatchObject({
      tokens: 32_000,
      field: 'context_length',
    });
    expect(await discoverContextWindow({ baseURL: loopback.url, model: 'lmstudio-community/qwen' })).toMatchObject({
      tokens: 131_072,
      field: 'max_context_length',
    });
    expect(await discoverContextWindow({ baseURL: loopback.url, model: 'meta/llama' })).toMatchObject({
      tokens: 65_536,
      field: 'top_provider.context_length',
    });
  });

  it("falls through to llama.cpp's /props: the slots' n_ctx, else the top-level n_ctx", async () => {
    const loopback = await serve({
      models: [{ id: 'local' }],
      props: { default_generation_settings: { n_ctx: 8192 }, total_slots: 1 },
    });
    expect(await discoverContextWindow({ baseURL: loopback.url, model: 'local' })).toEqual({
      tokens: 8192,
      endpoint: '/props',
      field: 'default_generation_settings.n_ctx',
    });
    expect(paths(loopback)).toEqual(['/api/show', '/api/v0/models/local', '/props', '/v1/models']);
    await loopback.close();

    const newer = await serve({ props: { n_ctx: 16_384 } });
    expect(await discoverContextWindow({ baseURL: newer.url, model: 'local' })).toEqual({
      tokens: 16_384,
      endpoint: '/props',
      field: 'n_ctx',
    });
  });

  it("asks Ollama's /api/show for the model: num_ctx wins over the trained context_length", async () => {
    const loopback = await serve({
      ollamaShow: (model) =>
        model === 'qwen3:8b'
          ? {
              parameters: 'temperature 0.6\nnum_ctx                        12288\nstop "<|im_end|>"',
              model_info: { 'general.architecture': 'qwen3', 'qwen3.context_length': 40_960 },
            }
          : { model_info: { 'general.architecture': 'llama', 'llama.context_length': 131_072 } },
    });
    expect(await discoverContextWindow({ baseURL: loopback.url, model: 'qwen3:8b' })).toEqual({
      tokens: 12_288,
      endpoint: '/api/show',
      field: 'parameters.num_ctx',
    });
    expect(await discoverContextWindow({ baseURL: loopback.url, model: 'llama3.1' })).toEqual({
      tokens: 131_072,
      endpoint: '/api/show',
      field: 'model_info.llama.context_length',
    });
    expect(
      loopback.discoveryRequests.filter((request) => request.path === '/api/show').map((request) => request.body),
    ).toEqual([{ model: 'qwen3:8b' }, { model: 'llama3.1' }]);
  });

  it("asks LM Studio's /api/v0/models/<id>: the loaded context wins over the maximum", async () => {
    const loopback = await serve({
      models: [{ id: 'qwen2.5-7b-instruct' }],
      lmStudioModels: [
        {
          id: 'qwen2.5-7b-instruct',
          type: 'llm',
          state: 'loaded',
          max_context_length: 32_768,
          loaded_context_length: 8192,
        },
        { id: 'publisher/other', type: 'llm', state: 'not-loaded', max_context_length: 131_072 },
      ],
    });
    expect(await discoverContextWindow({ baseURL: loopback.url, model: 'qwen2.5-7b-instruct' })).toEqual({
      tokens: 8192,
      endpoint: '/api/v0/models',
      field: 'loaded_context_length',
    });
    expect(await discoverContextWindow({ baseURL: loopback.url, model: 'publisher/other' })).toEqual({
      tokens: 131_072,
      endpoint: '/api/v0/models',
      field: 'max_context_length',
    });
    expect(paths(loopback)).toContain('/api/v0/models/publisher%2Fother');
  });

  it('answers undefined when no endpoint tells, and caches the answer per base URL and model', async () => {
    const loopback = await serve({ models: [{ id: 'plain' }] });
    expect(await discoverContextWindow({ baseURL: loopback.url, model: 'plain' })).toBeUndefined();
    expect(await discoverContextWindow({ baseURL: `${loopback.url}/`, model: 'plain' })).toBeUndefined();
    expect(paths(loopback)).toEqual(['/api/show', '/api/v0/models/plain', '/props', '/v1/models']);
    await discoverContextWindow({ baseURL: loopback.url, model: 'plain', refresh: true });
    expect(loopback.discoveryRequests).toHaveLength(8);
  });

  it('gives up at the timeout when the server stalls, without throwing', async () => {
    const loopback = await serve({ models: 'hang', props: 'hang' });
    expect(await discoverContextWindow({ baseURL: loopback.url, model: 'slow', timeoutMs: 50 })).toBeUndefined();
    // The timeout bounds the whole discovery: the stalled list stops the rest from being tried.
    expect(loopback.discoveryRequests.map((request) => request.path)).toEqual(['/v1/models']);
  });

  it('answers undefined for an unreachable server and for malformed bodies', async () => {
    const loopback = await serve({
      models: [{ id: 'm', max_model_len: 'lots' }],
      props: { default_generation_settings: { n_ctx: -1 } },
      ollamaShow: { model_info: 'none' },
    });
    const { url } = loopback;
    expect(await discoverContextWindow({ baseURL: url, model: 'm' })).toBeUndefined();
    await loopback.close();
    expect(await discoverContextWindow({ baseURL: url, model: 'gone' })).toBeUndefined();
  });

  it('is what createModelClient().discoverContextWindow asks', async () => {
    const loopback = await serve({ models: [{ id: 'served', max_model_len: 24_576 }] });
    const client = createModelClient({ model: 'served', baseURL: loopback.url, apiKey: 'k' });
    expect(await client.discoverContextWindow?.()).toMatchObject({ tokens: 24_576 });
  });
});

describe('resolveContextWindow', () => {
  const discovered = async () => ({ tokens: 8192, endpoint: '/props' as const, field: 'n_ctx' });

  it('takes the explicit setting over everything, with its source', async () => {
    let asked = false;
    const info = await resolveContextWindow({
      model: 'gpt-4o',
      explicit: { tokens: 5000, source: 'flag' },
      perModel: { 'gpt-4o': 6000 },
      discover: async () => ((asked = true), undefined),
    });
    expect(info).toEqual({ tokens: 5000, source: 'flag' });
    expect(asked).toBe(false);
    expect(await resolveContextWindow({ model: 'x', explicit: { tokens: 7000, source: 'env' } })).toEqual({
      tokens: 7000,
      source: 'env',
    });
  });

  it('then the per-model setting (matched like the table), then the table, then the server, then the default', async () => {
    expect(
      await resolveContextWindow({
        model: 'Qwen3-Coder-2025-07-01',
        perModel: { 'qwen3-coder': 131_072 },
        discover: discovered,
      }),
    ).toEqual({ tokens: 131_072, source: 'config' });
    // A known (hosted) model is not asked about: no round trips before its first request.
    let asked = 0;
    const counting = async () => {
      asked += 1;
      return discovered();
    };
    expect(await resolveContextWindow({ model: 'gpt-4o', discover: counting })).toEqual({
      tokens: 128_000,
      source: 'table',
    });
    expect(asked).toBe(0);
    expect(await resolveContextWindow({ model: 'my-local-model', discover: counting })).toEqual({
      tokens: 8192,
      source: 'discovered',
      detail: '/props n_ctx',
    });
    expect(asked).toBe(1);
    expect(await resolveContextWindow({ model: 'my-local-model', discover: async () => undefined })).toEqual({
      tokens: DEFAULT_CONTEXT_WINDOW,
      source: 'default',
    });
    expect(DEFAULT_CONTEXT_WINDOW).toBe(32_768);
    expect(
      await resolveContextWindow({ model: 'my-local-model', discover: () => Promise.reject(new Error('boom')) }),
    ).toEqual({ tokens: DEFAULT_CONTEXT_WINDOW, source: 'default' });
  });
});
