import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { State } from '@rho/core';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer, LoopbackStep } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';

// Cancels real `rho` processes through the session's `cancel` file, as `rho cancel` does.
const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'bin.js');

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function runUntil(steps: LoopbackStep[], args: string[], trigger: (event: { type: string }) => boolean) {
  server = await startLoopbackServer({ steps });
  const home = mkdtempSync(join(tmpdir(), 'rho-cancel-home-'));
  const work = mkdtempSync(join(tmpdir(), 'rho-cancel-work-'));
  const child = spawn(process.execPath, [bin, '--json', '--base-url', server.url, ...args], {
    cwd: work,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, RHO_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let buffer = '';
  let cancelledAt = 0;
  child.stderr.resume();
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    for (const line of lines) {
      if (cancelledAt === 0 && trigger(JSON.parse(line) as { type: string })) {
        const [id] = readdirSync(join(home, 'sessions'));
        writeFileSync(join(home, 'sessions', id!, 'cancel'), '');
        cancelledAt = performance.now();
      }
    }
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const [id] = readdirSync(join(home, 'sessions'));
  return {
    code,
    stoppedAfterMs: performance.now() - cancelledAt,
    directory: join(home, 'sessions', id!),
    cancelled: cancelledAt > 0,
  };
}

describe('cancelling a running rho', () => {
  it('ends a run while the answer is streaming, and removes the cancel file', async () => {
    const outcome = await runUntil(
      [{ type: 'response', text: 'word '.repeat(2000), chunkSize: 5, delayMs: 20 }],
      ['Write a long essay.'],
      (event) => event.type === 'text',
    );
    expect(outcome.cancelled).toBe(true);
    expect(outcome.code).toBe(130);
    const state = State.fromJsonl(readFileSync(join(outcome.directory, 'trace.jsonl')));
    expect(state.status).toBe('cancelled');
    // The partial answer is kept.
    expect(state.messages.at(-1)).toMatchObject({ role: 'assistant' });
    expect(existsSync(join(outcome.directory, 'cancel'))).toBe(false);
  });

  it('kills a running `sleep` in bash (the whole process group) and answers the call', async () => {
    const marker = `6${Math.floor(Math.random() * 9)}.${Date.now() % 100_000}`;
    const outcome = await runUntil(
      [
        {
          type: 'response',
          toolCalls: [
            { name: 'bash', arguments: JSON.stringify({ command: `sleep ${marker} & sleep ${marker}; wait` }) },
          ],
        },
      ],
      ['--profile', 'developer', '-y', 'Sleep.'],
      (event) => event.type === 'tool_start',
    );
    expect(outcome.cancelled).toBe(true);
    expect(outcome.code).toBe(130);
    // Far sooner than the sleep: the process group was killed, not waited for.
    expect(outcome.stoppedAfterMs).toBeLessThan(30_000);
    const leftovers = spawnSync('pgrep', ['-f', `sleep ${marker}`], { encoding: 'utf8' }).stdout.trim();
    expect(leftovers).toBe('');
    const state = State.fromJsonl(readFileSync(join(outcome.directory, 'trace.jsonl')));
    expect(state.status).toBe('cancelled');
    expect(state.messages.filter((message) => message.role === 'tool')).toHaveLength(1);
  });
});
