import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelClient } from '@rho/model-client';
import { describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import { createScriptedModelClient } from './testing/scripted-model-client.js';

describe('Session.run and the model client', () => {
  it('asks the client to preload, and the server for its context window, before the run sets up, without waiting for either', async () => {
    const order: string[] = [];
    const scripted = createScriptedModelClient({ steps: [{ text: 'hello' }] });
    let releasePreload!: () => void;
    const client: ModelClient = {
      model: scripted.model,
      stream(request, signal) {
        order.push('stream');
        return scripted.stream(request, signal);
      },
      complete: (request, signal, options) => scripted.complete(request, signal, options),
      preload() {
        order.push('preload');
        // Resolves only once the run is over: the run must not wait for it.
        return new Promise<void>((resolve) => (releasePreload = resolve));
      },
      discoverContextWindow() {
        order.push('discover');
        return Promise.resolve({ tokens: 32_000, endpoint: '/props', field: 'default_generation_settings.n_ctx' });
      },
    };
    const directory = mkdtempSync(join(tmpdir(), 'rho-preload-'));
    const session = new Agent({ model: 'gpt-4o-mini', client }).createSession({ directory });
    const starts: string[] = [];
    const result = await session.run('hi', {
      onEvent: (event) => (event.type === 'run_start' ? starts.push(order.join(',')) : undefined),
    });
    releasePreload();
    expect(result.status).toBe('completed');
    expect(result.text).toBe('hello');
    // Both were started before the run's first trace record was written, and the model was called once.
    expect(starts).toEqual(['preload,discover']);
    expect(order).toEqual(['preload', 'discover', 'stream']);
    expect(session.contextWindowInfo).toMatchObject({ tokens: 32_000, source: 'discovered' });
  });

  it('runs with clients that have nothing to preload', async () => {
    const session = new Agent({
      model: 'gpt-4o-mini',
      client: createScriptedModelClient({ steps: [{ text: 'ok' }] }),
    }).createSession({});
    expect((await session.run('hi')).text).toBe('ok');
  });
});
