import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { State } from '@rho/core';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

// Tools of a tool package that misbehave in ways no built-in tool does: a promise that never
// settles, and a tool that ignores the run's abort signal. Neither may end rho without a word
// (Node's exit 13) or keep a cancelled run waiting for ever.

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const PACKAGE = `
const tool = (name, handle) => ({
  name, description: name, parameters: { type: 'object', properties: {} }, annotations: { readOnly: true }, handle,
});
export const tools = [
  tool('never', () => new Promise(() => {})),
  tool('deaf', async () => { await new Promise((resolve) => setTimeout(resolve, 600_000)); return { success: true, content: 'late' }; }),
];
`;

function project(): { home: string; work: string } {
  const home = mkdtempSync(join(tmpdir(), 'rho-tools-home-'));
  const work = mkdtempSync(join(tmpdir(), 'rho-tools-work-'));
  writeFileSync(join(work, 'misbehaving.mjs'), PACKAGE);
  return { home, work };
}

function onlySession(home: string): { directory: string; meta: { status: string }; state: State } {
  const [id] = readdirSync(join(home, 'sessions'));
  const directory = join(home, 'sessions', id!);
  const meta = JSON.parse(readFileSync(join(directory, 'meta.json'), 'utf8')) as { status: string };
  return { directory, meta, state: State.fromJsonl(readFileSync(join(directory, 'trace.jsonl'), 'utf8')) };
}

describe('misbehaving package tools', () => {
  it('a promise that never settles: exit 1 with a message (not a silent 13), and the session resumes', async () => {
    const { home, work } = project();
    server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'never', arguments: '{}' }] },
        { type: 'response', text: 'resumed' },
      ],
    });
    const outcome = await runRho(['--base-url', server.url, '--tool-package', './misbehaving.mjs', 'go'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('rho: stopped: nothing is left that could finish the command');
    const resumed = await runRho(['--base-url', server.url, '-r', 'latest', 'go on'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('resumed');
  });

  it('SIGTERM while a tool ignores the abort signal: the run stops waiting, exit 130, the trace replays', async () => {
    const { home, work } = project();
    server = await startLoopbackServer({
      steps: [{ type: 'response', toolCalls: [{ name: 'deaf', arguments: '{}' }] }],
    });
    const started = Date.now();
    let killedAt = 0;
    const outcome = await runRho(['--json', '--base-url', server.url, '--tool-package', './misbehaving.mjs', 'go'], {
      env: { RHO_HOME: home },
      cwd: work,
      onSpawn: (child) => {
        child.stdout!.on('data', (chunk: Buffer) => {
          if (killedAt === 0 && chunk.toString().includes('"tool_start"')) {
            killedAt = Date.now();
            child.kill('SIGTERM');
          }
        });
      },
    });
    expect(killedAt).toBeGreaterThan(started);
    expect(outcome.code).toBe(130);
    // Ended by the tool's 5 s to stop (then at most the 2 s rho gives stray handles at exit), not
    // by a second signal: before, it waited until the test's own time-out.
    const { meta, state } = onlySession(home);
    expect(meta.status).toBe('cancelled');
    expect(state.replay).toMatchObject({ skippedLines: [], tornLastLine: false, invalidRecords: [] });
    const trace = outcome.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { type: string; metadata?: Record<string, unknown> });
    expect(trace.find((event) => event.type === 'tool_end')?.metadata).toMatchObject({
      error: 'cancelled',
      abandoned: true,
    });
  }, 30_000);
});
