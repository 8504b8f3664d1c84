import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionStore } from '@rho/core';
import { afterEach, describe, expect, it } from 'vitest';
import { bin } from './support/run-rho.js';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

function start(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...env },
    cwd: tmpdir(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<number | null>((resolve) => child.on('close', resolve));
  return { child, stdout: () => stdout, stderr: () => stderr, done };
}

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('rho dashboard', () => {
  it('serves the sessions on 127.0.0.1 behind the printed token, and stops on Ctrl+C', async () => {
    const home = mkdtempSync(join(tmpdir(), 'rho-dashboard-cli-'));
    const { id } = new SessionStore(join(home, 'sessions')).create({ model: 'gpt-4o-mini' });
    const dashboard = start(['dashboard', '--port', '0'], { RHO_HOME: home });
    const url = await until('the URL', () => /http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+/.exec(dashboard.stdout())?.[0]);
    const origin = new URL(url).origin;
    expect((await fetch(`${origin}/api/sessions`)).status).toBe(401);
    const login = await fetch(url, { redirect: 'manual' });
    expect(login.status).toBe(303);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const page = (await (await fetch(`${origin}/api/sessions`, { headers: { Cookie: cookie } })).json()) as {
      rows: { id: string }[];
    };
    expect(page.rows.map((row) => row.id)).toEqual([id]);
    expect(dashboard.stderr()).toContain(`serving ${join(home, 'sessions')}`);
    dashboard.child.kill('SIGINT');
    expect(await dashboard.done).toBe(0);
    expect(dashboard.stderr()).toContain('rho dashboard: stopped.');
  });

  it('refuses a sessions directory that does not exist, and is not loaded by other commands', async () => {
    const home = mkdtempSync(join(tmpdir(), 'rho-dashboard-cli-'));
    const missing = start(['dashboard', join(home, 'nowhere')]);
    expect(await missing.done).toBe(2);
    expect(missing.stderr()).toContain('Not a sessions directory');
    const record = join(home, 'imports.txt');
    writeFileSync(record, '');
    const preload = join(import.meta.dirname, 'support', 'record-imports.mjs');
    for (const args of [['--help'], ['ps'], ['--version']]) {
      const child = spawn(process.execPath, ['--import', preload, bin, ...args], {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, RHO_HOME: home, RHO_TEST_IMPORTS: record },
        stdio: 'ignore',
      });
      expect(await new Promise((resolve) => child.on('close', resolve))).toBe(0);
    }
    expect(readFileSync(record, 'utf8')).toBe('');
  });
});
