import { createHmac, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { HookConfig } from './config.js';
import { MAX_HOOK_OUTPUT_BYTES, runHook, signBody } from './run-hook.js';

const command = (text: string, timeoutMs = 5000): HookConfig => ({
  kind: 'command',
  command: text,
  label: text,
  timeoutMs,
  origin: 'test',
});

const input = (body = '{"event":"session_end"}', env: Record<string, string> = {}) => ({
  event: 'session_end',
  body,
  env,
  baseEnv: process.env,
});

/** Whether a process runs (a zombie, killed and not yet reaped, does not). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return existsSync(`/proc/${pid}`);
  }
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe('a command hook', () => {
  it('reads the event as JSON on its standard input, with RHO_* variables', async () => {
    const result = await runHook(
      command('printf "%s|%s|" "$RHO_SESSION_ID" "$RHO_HOOK_EVENT"; cat'),
      input('{"event":"session_end","x":1}', { RHO_SESSION_ID: 's1', RHO_HOOK_EVENT: 'session_end' }),
    );
    expect(result).toMatchObject({
      outcome: 'ok',
      exitCode: 0,
      stdout: 's1|session_end|{"event":"session_end","x":1}',
    });
  });

  it('fails on a non-zero exit, saying its code and keeping its standard error', async () => {
    const result = await runHook(command('echo nope >&2; exit 3'), input());
    expect(result).toMatchObject({ outcome: 'failed', exitCode: 3, error: 'exit code 3', stderr: 'nope\n' });
  });

  it('that hangs is killed at its timeout, with what it started, and reported as a timeout', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'rho-hook-'));
    const pidFile = join(directory, 'pid');
    const started = performance.now();
    const result = await runHook(command(`sleep 30 & echo $! > ${pidFile}; wait`, 300), input());
    const took = performance.now() - started;
    expect(result.outcome).toBe('timeout');
    expect(result.error).toBe('killed at its timeout of 0.3 s');
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(3000);
    expect(existsSync(pidFile)).toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    for (let waited = 0; alive(pid) && waited < 2000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    expect(alive(pid)).toBe(false);
  });

  it('that leaves something running in the background ends when it exits', async () => {
    const started = performance.now();
    const result = await runHook(command('sleep 5 & echo started'), input());
    expect(result).toMatchObject({ outcome: 'ok', stdout: 'started\n' });
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('keeps at most 64 KiB of its output and does not need to read its input', async () => {
    const result = await runHook(command('head -c 200000 /dev/zero | tr "\\0" a'), input('x'.repeat(500_000)));
    expect(result.outcome).toBe('ok');
    expect(result.stdout.length).toBe(MAX_HOOK_OUTPUT_BYTES);
  });

  it('is stopped when its signal aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const result = await runHook(command('sleep 30'), { ...input(), signal: controller.signal });
    expect(result).toMatchObject({ outcome: 'failed', error: 'stopped: the run was cancelled' });
  });
});

/** A loopback server that checks X-Rho-Signature as a receiver would, with node:crypto. */
async function receiver(secret: string, answer: { status?: number; delayMs?: number; body?: string } = {}) {
  const received: { body: string; headers: Record<string, string | string[] | undefined>; verified: boolean }[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
      const given = Buffer.from(String(request.headers['x-rho-signature'] ?? ''));
      const verified = given.length === expected.length && timingSafeEqual(given, expected);
      received.push({ body: raw.toString('utf8'), headers: request.headers, verified });
      setTimeout(() => {
        response.writeHead(verified ? (answer.status ?? 200) : 401, { 'content-type': 'application/json' });
        response.end(answer.body ?? '');
      }, answer.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

const http = (url: string, secret: string | undefined, timeoutMs = 5000): HookConfig => ({
  kind: 'http',
  url,
  label: url,
  timeoutMs,
  origin: 'test',
  ...(secret === undefined ? {} : { secret, secretEnv: 'HOOK_SECRET' }),
});

describe('a URL hook', () => {
  it('POSTs the event as JSON with an HMAC-SHA256 signature of the body that verifies', async () => {
    const server = await receiver('s3cret-key');
    const body = JSON.stringify({ event: 'session_end', text: 'café ✓' });
    const result = await runHook(http(server.url, 's3cret-key'), { ...input(body) });
    expect(result).toMatchObject({ outcome: 'ok', status: 200 });
    expect(server.received).toHaveLength(1);
    expect(server.received[0]).toMatchObject({ body, verified: true });
    expect(server.received[0]!.headers['content-type']).toBe('application/json');
    expect(server.received[0]!.headers['x-rho-event']).toBe('session_end');
    expect(server.received[0]!.headers['x-rho-signature']).toBe(signBody(body, 's3cret-key'));
  });

  it('signed with another secret does not verify, and the refusal is a failure', async () => {
    const server = await receiver('the-right-key');
    const result = await runHook(http(server.url, 'a-wrong-key'), input());
    expect(server.received[0]?.verified).toBe(false);
    expect(result).toMatchObject({ outcome: 'failed', status: 401, error: 'HTTP 401' });
  });

  it('that does not answer in time is a timeout; one that cannot be reached is a failure', async () => {
    const server = await receiver('k', { delayMs: 3000 });
    const slow = await runHook(http(server.url, 'k', 200), input());
    expect(slow).toMatchObject({ outcome: 'timeout', error: 'no answer within its timeout of 0.2 s' });
    const closed = await runHook(http('http://127.0.0.1:1/hook', undefined), input());
    expect(closed.outcome).toBe('failed');
    expect(closed.error).toMatch(/fetch failed/);
  });
});
