import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

function workspace(): { home: string; work: string } {
  const root = mkdtempSync(join(tmpdir(), 'rho-ctx-'));
  return { home: join(root, 'home'), work: mkdtempSync(join(root, 'work-')) };
}

type TraceRecord = { type: string; context_window?: number; context_window_source?: string; purpose?: string };

function onlyTrace(home: string): { records: TraceRecord[]; config: string } {
  const sessions = readdirSync(join(home, 'sessions'));
  expect(sessions).toHaveLength(1);
  const directory = join(home, 'sessions', sessions[0]!);
  return {
    records: readFileSync(join(directory, 'trace.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as TraceRecord),
    config: readFileSync(join(directory, 'config.yaml'), 'utf8'),
  };
}

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('rho --context-window', () => {
  it('compacts a model no table knows, with the window llama.cpp reports on /props', async () => {
    const { home, work } = workspace();
    writeFileSync(join(work, 'notes.txt'), 'alpha\n');
    server = await startLoopbackServer({
      props: { default_generation_settings: { n_ctx: 1000 } },
      steps: [
        {
          type: 'response',
          toolCalls: [{ name: 'read', arguments: '{"path": "notes.txt"}' }],
          usage: { prompt_tokens: 800, completion_tokens: 5 },
        },
        { type: 'response', text: 'Summary: read notes.txt.', usage: { prompt_tokens: 820, completion_tokens: 10 } },
        { type: 'response', text: 'It says alpha.', usage: { prompt_tokens: 120, completion_tokens: 4 } },
      ],
    });
    const outcome = await runRho(['--base-url', server.url, '--model', 'my-gguf-q4', 'What is in notes.txt?'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain('It says alpha.');
    const { records } = onlyTrace(home);
    expect(records.filter((record) => record.type === 'compact')).toHaveLength(1);
    const starts = records.filter((record) => record.type === 'llm_start');
    expect(starts.map((record) => [record.context_window, record.context_window_source, record.purpose])).toEqual([
      [1000, 'discovered', undefined],
      [1000, 'discovered', 'compaction'],
      [1000, 'discovered', undefined],
    ]);
    expect(server.discoveryRequests.map((request) => request.path).sort()).toEqual([
      '/api/show',
      '/api/v0/models/my-gguf-q4',
      '/props',
      '/v1/models',
    ]);
  });

  it('takes the flag over the environment over the config, and saves the flag with the session', async () => {
    const { home, work } = workspace();
    mkdirSync(home, { recursive: true });
    const config = join(work, 'agent.yaml');
    writeFileSync(config, 'context_window: 20000\ncontext_windows:\n  local-model: 30000\n');
    server = await startLoopbackServer({
      models: [{ id: 'local-model', max_model_len: 1000 }],
      respond: () => ({ type: 'response', text: 'ok' }),
    });
    const window = async (
      args: string[],
      env: Record<string, string> = {},
    ): Promise<[number | undefined, string | undefined]> => {
      const runHome = mkdtempSync(join(home, 'run-'));
      const outcome = await runRho(['--base-url', server!.url, '--model', 'local-model', ...args, 'hi'], {
        env: { RHO_HOME: runHome, ...env },
        cwd: work,
      });
      expect(outcome.code, outcome.stderr).toBe(0);
      const start = onlyTrace(runHome).records.find((record) => record.type === 'llm_start')!;
      return [start.context_window, start.context_window_source];
    };
    expect(await window(['-c', config, '--context-window', '40000'], { RHO_CONTEXT_WINDOW: '50000' })).toEqual([
      40_000,
      'flag',
    ]);
    expect(await window(['-c', config], { RHO_CONTEXT_WINDOW: '50000' })).toEqual([50_000, 'env']);
    expect(await window(['-c', config])).toEqual([20_000, 'config']);
    writeFileSync(config, 'context_windows:\n  local-model: 30000\n');
    expect(await window(['-c', config])).toEqual([30_000, 'config']);
    expect(await window([])).toEqual([1000, 'discovered']);

    const saved = mkdtempSync(join(home, 'saved-'));
    expect(
      (
        await runRho(['--base-url', server.url, '--model', 'local-model', '--context-window', '40000', 'hi'], {
          env: { RHO_HOME: saved },
          cwd: work,
        })
      ).code,
    ).toBe(0);
    expect(onlyTrace(saved).config).toContain('context_window: 40000');
  });

  it('refuses a window that is not a whole number of tokens, before any model call', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer();
    const flag = await runRho(['--base-url', server.url, '--context-window', '32k', 'hi'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--context-window must be a whole number of tokens, for example 32768 (got "32k").');
    const env = await runRho(['--base-url', server.url, 'hi'], {
      env: { RHO_HOME: home, RHO_CONTEXT_WINDOW: '-5' },
      cwd: work,
    });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('RHO_CONTEXT_WINDOW must be a whole number of tokens');
    expect(server.requests).toEqual([]);
  });
});
