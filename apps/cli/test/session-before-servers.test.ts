import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import { describe, expect, it } from 'vitest';
import { bin, runRho } from './support/run-rho.js';

// Issue 33: an MCP server that never answers `initialize` held a run in silence before any
// session existed, so `rho ps` and `rho cancel` could not see it. The session now exists (its
// directory, meta.json and lock) before the servers start.
describe('a session whose MCP server is slow to start', () => {
  it('is listed by rho ps and cancelled by rho cancel while the server starts; no model call is made', async () => {
    const model = await startLoopbackServer({ steps: [{ type: 'response', text: 'never asked' }] });
    try {
      const home = mkdtempSync(join(tmpdir(), 'rho-early-'));
      const work = mkdtempSync(join(tmpdir(), 'rho-early-work-'));
      // A server that reads its input and never answers, given 20 s to start.
      writeFileSync(
        join(work, 'agent.yaml'),
        [
          'mcp_servers:',
          '  mute:',
          `    command: ${JSON.stringify(process.execPath)}`,
          `    args: ["-e", "process.stdin.resume(); setInterval(() => {}, 1000)"]`,
          '    startup_timeout: 20',
          '',
        ].join('\n'),
      );
      const env = { RHO_HOME: home, OPENAI_API_KEY: 'k' };
      let stderr = '';
      const child = spawn(
        process.execPath,
        [bin, '--base-url', model.url, '--profile', 'developer', '-c', join(work, 'agent.yaml'), '-w', work, 'hello'],
        {
          env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      // The slow start is said on screen, and the session is there meanwhile.
      const started = Date.now();
      while (!stderr.includes('starting MCP server mute') && Date.now() - started < 30_000)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(stderr).toContain('starting MCP server mute');
      const listed = await runRho(['ps', '--json'], { env });
      const sessions = JSON.parse(listed.stdout) as { id: string; status: string }[];
      expect(sessions).toHaveLength(1);
      expect(sessions[0]!.status).toBe('created');
      const cancelled = await runRho(['cancel', sessions[0]!.id], { env });
      expect(cancelled.code, cancelled.stderr).toBe(0);
      expect(await exited).toBe(130);
      expect(model.requests).toHaveLength(0);
    } finally {
      await model.close();
    }
  });

  it('a set-up that fails before the run leaves no session behind', async () => {
    const home = mkdtempSync(join(tmpdir(), 'rho-early-fail-'));
    const outcome = await runRho(['--tool-package', './no-such-package.mjs', 'hello'], {
      env: { RHO_HOME: home, OPENAI_API_KEY: 'k' },
    });
    expect(outcome.code).toBe(2);
    const sessions = join(home, 'sessions');
    expect(existsSync(sessions) ? readdirSync(sessions) : []).toEqual([]);
  });
});
