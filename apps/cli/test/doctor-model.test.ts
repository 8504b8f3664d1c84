// `rho doctor`'s model check, through the built CLI: without --online it says which endpoint and
// where the key comes from (never the key) and fails as a run would without either; with
// --online it asks GET /models of rho's loopback OpenAI-compatible server, and fails against a
// closed port, a server that refuses the key and one that never answers (within --timeout).
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import { describe, expect, it } from 'vitest';
import { around, closedPort, doctor, KEY, NO_SANDBOX, privateHome } from './support/doctor.js';

describe('rho doctor: the model endpoint', () => {
  it('says which endpoint and where the key comes from (never the key), and fails with neither', async () => {
    const home = privateHome();
    const key = await doctor(NO_SANDBOX, around(home));
    expect(key.get('model').detail).toBe(
      'model gpt-5-mini at https://api.openai.com/v1 (the default), the API key of $OPENAI_API_KEY (rho doctor --online asks the endpoint)',
    );
    writeFileSync(join(dirname(home), '.env'), `OPENAI_API_KEY=${KEY}-from-dotenv\n`);
    const dotenv = await doctor(NO_SANDBOX, around(home, { OPENAI_API_KEY: '' }));
    expect(dotenv.get('model').detail).toContain('the API key of OPENAI_API_KEY of ./.env');
    expect(dotenv.stdout).not.toContain(KEY);
    const local = await doctor(
      ['--base-url', 'http://127.0.0.1:1/v1', ...NO_SANDBOX],
      around(privateHome(), { OPENAI_API_KEY: '' }),
    );
    expect(local.get('model')).toMatchObject({
      status: 'ok',
      detail: expect.stringContaining('http://127.0.0.1:1/v1 (--base-url), no API key'),
    });
    const neither = await doctor(NO_SANDBOX, around(privateHome(), { OPENAI_API_KEY: '' }));
    expect(neither.get('model')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('no API key: a run stops here'),
      fix: expect.stringContaining('set OPENAI_API_KEY'),
    });
    expect(neither.code).toBe(1);
  });

  it('--online: asks GET /models of the loopback server with the key, and passes when it lists the model', async () => {
    const server = await startLoopbackServer({ models: [{ id: 'loop-model' }, { id: 'other' }] });
    try {
      const env = { OPENAI_BASE_URL: server.url, OPENAI_MODEL: 'loop-model' };
      const offline = await doctor(NO_SANDBOX, around(privateHome(), env));
      expect(offline.get('model').status).toBe('ok');
      expect(server.discoveryRequests).toHaveLength(0);
      const online = await doctor(['--online', ...NO_SANDBOX], around(privateHome(), env));
      expect(online.get('model')).toMatchObject({
        status: 'ok',
        detail: expect.stringContaining('lists loop-model among 2 models'),
      });
      expect(server.discoveryRequests.map((request) => [request.path, request.headers.authorization])).toEqual([
        ['/v1/models', `Bearer ${KEY}`],
      ]);
      expect(online.stdout).not.toContain(KEY);
      const unknown = await doctor(['--online', '--model', 'absent', ...NO_SANDBOX], around(privateHome(), env));
      expect(unknown.get('model')).toMatchObject({
        status: 'warn',
        detail: expect.stringContaining('absent is not among the 2 models it lists (loop-model, other)'),
      });
      expect(unknown.code).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('--online: fails against a closed port, a key the endpoint refuses and an endpoint that never answers, in time', async () => {
    const port = await closedPort();
    const closed = await doctor(
      ['--online', ...NO_SANDBOX],
      around(privateHome(), { OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` }),
    );
    expect(closed.get('model')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining(`GET http://127.0.0.1:${port}/v1/models failed: connect ECONNREFUSED`),
    });
    expect(closed.code).toBe(1);
    const refusing = createServer((_request, response) => {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: 'Incorrect API key provided' } }));
    });
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const hanging = await startLoopbackServer({ models: 'hang' });
    try {
      const address = refusing.address() as { port: number };
      const refused = await doctor(
        ['--online', ...NO_SANDBOX],
        around(privateHome(), { OPENAI_BASE_URL: `http://127.0.0.1:${address.port}/v1` }),
      );
      expect(refused.get('model')).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining('the endpoint refused the key (HTTP 401: Incorrect API key provided)'),
        fix: expect.stringContaining('OPENAI_API_KEY'),
      });
      const stalled = await doctor(
        ['--online', '--timeout', '1', ...NO_SANDBOX],
        around(privateHome(), { OPENAI_BASE_URL: hanging.url }),
      );
      expect(stalled.get('model')).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining('no answer within 1 s'),
      });
      expect(stalled.elapsedMs).toBeLessThan(10_000);
    } finally {
      await hanging.close();
      await new Promise<void>((resolve) => refusing.close(() => resolve()));
    }
  });
});
