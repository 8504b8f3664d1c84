import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function onlySession(home: string): { meta: Record<string, unknown>; config: string; ends: Record<string, unknown>[] } {
  const sessions = readdirSync(join(home, 'sessions'));
  expect(sessions).toHaveLength(1);
  const directory = join(home, 'sessions', sessions[0]!);
  const records = readFileSync(join(directory, 'trace.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    meta: JSON.parse(readFileSync(join(directory, 'meta.json'), 'utf8')) as Record<string, unknown>,
    config: readFileSync(join(directory, 'config.yaml'), 'utf8'),
    ends: records.filter((record) => record.type === 'llm_end'),
  };
}

const answer = { type: 'response' as const, text: 'hi', usage: { prompt_tokens: 10, completion_tokens: 2 } };

describe('a --base-url run without -m', () => {
  it('refuses, naming them, when the server serves several models (exit 2, before any model call)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'rho-server-model-'));
    server = await startLoopbackServer({ models: [{ id: 'qwen3-8b' }, { id: 'other' }], steps: [answer] });
    const outcome = await runRho(['--base-url', server.url, 'hello'], { env: { RHO_HOME: home } });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain(`serves 2 (qwen3-8b, other): choose one with -m`);
    expect(server.requests).toHaveLength(0);
    // No session is left of it.
    expect(existsSync(join(home, 'sessions')) ? readdirSync(join(home, 'sessions')) : []).toEqual([]);
  });

  it('is named after the model the server serves, and asks for it', async () => {
    const home = mkdtempSync(join(tmpdir(), 'rho-server-model-'));
    server = await startLoopbackServer({ models: [{ id: 'qwen3-8b' }], steps: [answer] });
    const outcome = await runRho(['--base-url', server.url, 'hello'], { env: { RHO_HOME: home } });
    expect(outcome.code).toBe(0);
    expect((server.requests[0]!.body as { model: string }).model).toBe('qwen3-8b');
    const { meta, config, ends } = onlySession(home);
    expect(meta.model).toBe('qwen3-8b');
    expect(config).toMatch(/^model: qwen3-8b$/m);
    expect(ends[0]).toMatchObject({ model: 'qwen3-8b', cost_usd: null });
  });

  it('is recorded as unknown and unpriced when the server lists no model', async () => {
    const home = mkdtempSync(join(tmpdir(), 'rho-server-model-'));
    server = await startLoopbackServer({ steps: [answer] });
    const outcome = await runRho(['--base-url', server.url, 'hello'], { env: { RHO_HOME: home } });
    expect(outcome.code).toBe(0);
    const { meta, ends } = onlySession(home);
    expect(meta.model).toBe('unknown');
    expect(meta.cost_usd).toBeNull();
    expect(ends[0]).toMatchObject({ cost_usd: null });
    expect(JSON.stringify(meta)).not.toContain('gpt-5-mini');
  });

  it('keeps -m when given', async () => {
    const home = mkdtempSync(join(tmpdir(), 'rho-server-model-'));
    server = await startLoopbackServer({ models: [{ id: 'qwen3-8b' }], steps: [answer] });
    const outcome = await runRho(['--base-url', server.url, '-m', 'gpt-5-mini', 'hello'], { env: { RHO_HOME: home } });
    expect(outcome.code).toBe(0);
    expect(onlySession(home).meta.model).toBe('gpt-5-mini');
  });

  it('reads a model list only as JSON and only up to its bound: an endless list is not a model list', async () => {
    const home = mkdtempSync(join(tmpdir(), 'rho-server-model-'));
    const chunk = '{"object":"list","data":[' + '{"id":"m"},'.repeat(10_000);
    let listed = 0;
    const endless = createServer((request, response) => {
      if (request.method === 'GET') {
        if (request.url?.endsWith('/models') === true) listed += 1;
        response.writeHead(200, { 'content-type': 'application/json' });
        const write = (): void => {
          while (!response.destroyed && response.write(chunk));
          if (!response.destroyed) response.once('drain', write);
        };
        write();
        return;
      }
      request.resume();
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const piece = (delta: object, finish: string | null) =>
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'x', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      response.end(`${piece({ content: 'hi' }, null)}${piece({}, 'stop')}data: [DONE]\n\n`);
    });
    await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = endless.address() as AddressInfo;
      const outcome = await runRho(['--base-url', `http://127.0.0.1:${port}/v1`, 'hello'], {
        env: { RHO_HOME: home, OPENAI_API_KEY: 'k' },
      });
      expect(outcome.code, outcome.stderr).toBe(0);
      // Asked for the model, then for its context window: each read stops at its bound.
      expect(listed).toBe(2);
      expect(onlySession(home).meta.model).toBe('unknown');
    } finally {
      endless.closeAllConnections();
      await new Promise((resolve) => endless.close(resolve));
    }
  });
});
