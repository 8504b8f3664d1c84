import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

// Issue 33's stream findings, through real `rho` processes: a model server that drips one
// character at a time is never cut off by the idle timeout (it restarts on every chunk), and a
// never-ending fast stream grew one answer to 2.8 GB. Each is now stopped by its own bound, with
// exit 1, a message naming the bound and how to raise it, and a trace record of bounded size.

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

/** A model server whose every answer is an event stream of `piece` that never finishes. */
async function endlessServer(piece: string, pieceMs: number): Promise<string> {
  const server = createServer((request, response) => {
    request.resume();
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const data = `data: ${JSON.stringify({
      id: 'chatcmpl-endless',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'endless',
      choices: [{ index: 0, delta: { content: piece }, finish_reason: null }],
    })}\n\n`;
    const write = (): void => {
      while (!response.destroyed) {
        if (!response.write(data)) {
          response.once('drain', write);
          return;
        }
        if (pieceMs > 0) {
          setTimeout(write, pieceMs);
          return;
        }
      }
    };
    write();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

/** The largest resident set of a process, in MiB, sampled from /proc until it exits. */
function watchRss(pid: number): { peak: () => number; stop: () => void } {
  let peak = 0;
  const timer = setInterval(() => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const match = /VmRSS:\s+(\d+) kB/.exec(status);
      if (match) peak = Math.max(peak, Number(match[1]) / 1024);
    } catch {
      // The process ended.
    }
  }, 25);
  return { peak: () => peak, stop: () => clearInterval(timer) };
}

function traceLines(home: string): string[] {
  const sessions = readdirSync(join(home, 'sessions'));
  expect(sessions).toHaveLength(1);
  return readFileSync(join(home, 'sessions', sessions[0]!, 'trace.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line !== '');
}

describe('bounds on one model answer, through the CLI', () => {
  it('a server dripping one character at a time is stopped by --max-answer-time (exit 1, the bound named)', async () => {
    const url = await endlessServer('x', 20);
    const home = mkdtempSync(join(tmpdir(), 'rho-bounds-home-'));
    const outcome = await runRho(['--base-url', url, '--max-answer-time', '1', '--idle-timeout', '30', 'hello'], {
      env: { RHO_HOME: home, OPENAI_API_KEY: 'k' },
    });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('took longer than 1 s (answer time limit; raise it with --max-answer-time');
    const error = traceLines(home)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((record) => record['type'] === 'error');
    expect(error).toMatchObject({ code: 'model_api_error' });
  });

  it('RHO_MAX_ANSWER_TIME sets the same bound; a bad value is refused with exit 2', async () => {
    const url = await endlessServer('x', 20);
    const home = mkdtempSync(join(tmpdir(), 'rho-bounds-home-'));
    const env = { RHO_HOME: home, OPENAI_API_KEY: 'k' };
    const bounded = await runRho(['--base-url', url, 'hello'], { env: { ...env, RHO_MAX_ANSWER_TIME: '1' } });
    expect(bounded.code).toBe(1);
    expect(bounded.stderr).toContain('answer time limit');
    const bad = await runRho(['--base-url', url, '--max-answer-size', 'lots', 'hello'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-answer-size must be a whole number of characters');
  });

  it('a never-ending fast stream stops at the default size bound with bounded memory and a bounded trace record', async () => {
    const url = await endlessServer('y'.repeat(4000), 0);
    const home = mkdtempSync(join(tmpdir(), 'rho-bounds-home-'));
    let rss: ReturnType<typeof watchRss> | undefined;
    const outcome = await runRho(['--base-url', url, 'hello'], {
      env: { RHO_HOME: home, OPENAI_API_KEY: 'k' },
      onSpawn: (child) => {
        rss = watchRss(child.pid!);
      },
    });
    rss!.stop();
    const peak = rss!.peak();
    process.stdout.write(`endless stream: peak RSS of rho ${peak.toFixed(0)} MiB (default bound 4 Mi characters)\n`);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('grew past its size limit (more than 4194304 characters');
    // Before the bound the same stream grew one answer to 2.8 GB; the text and its trace record
    // are each a few MiB now.
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(600);
    const longest = Math.max(...traceLines(home).map((line) => line.length));
    expect(longest).toBeLessThan(4_194_304 + 64 * 1024);
  });
});
