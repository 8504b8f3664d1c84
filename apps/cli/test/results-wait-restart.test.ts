// Issue 33: `rho results --wait` died on a database restart with "this is a bug in rho". It now
// says the queue's database went away, waits for it, and goes on to the task's result. The
// restart is played by a TCP proxy in front of the shared PostgreSQL: its connections are cut and
// it refuses new ones for a while, as a restarting server does.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { probePostgres } from '@rho/fleet/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startPgProxy } from './support/pg-proxy.js';
import { dropSchemas, POSTGRES_URL, waitFor } from './support/queue.js';
import { bin, runRho } from './support/run-rho.js';

const { available } = await probePostgres(POSTGRES_URL);
const schema = `rho_queue_restart_${randomBytes(5).toString('hex')}`;

describe.skipIf(!available)('rho results --wait across a database restart', { timeout: 120_000 }, () => {
  let model: LoopbackServer | undefined;
  afterAll(async () => {
    await model?.close();
    if (available) await dropSchemas(schema);
  });

  it('says the database went away, waits for it, and returns the result', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    model = await startLoopbackServer({
      respond: async () => {
        await gate;
        return { type: 'response', text: 'the answer' };
      },
    });
    const env = {
      RHO_QUEUE_SCHEMA: schema,
      OPENAI_BASE_URL: model.url,
      OPENAI_API_KEY: 'test',
      OPENAI_MODEL: 'scripted',
      RHO_HOME: mkdtempSync(join(tmpdir(), 'rho-restart-')),
    };
    const direct = { ...env, RHO_FLEET_URL: POSTGRES_URL };
    const submitted = await runRho(['submit', '--json', '--label', 'restart', 'hold on'], { env: direct });
    expect(submitted.code, submitted.stderr).toBe(0);
    const [id] = JSON.parse(submitted.stdout) as string[];
    const worker = spawn(process.execPath, [bin, 'worker', '--labels', 'restart', '--poll', '0.2'], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ...direct,
        RHO_HOME: mkdtempSync(join(tmpdir(), 'rho-w-')),
      },
      stdio: 'ignore',
    });
    const port = await freePort();
    const proxy = await startPgProxy(port);
    try {
      let stderr = '';
      let stdout = '';
      const waiting = spawn(process.execPath, [bin, 'results', '--json', '--wait', id!], {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          ...env,
          RHO_FLEET_URL: `postgres://postgres@127.0.0.1:${port}/postgres`,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      waiting.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      waiting.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => waiting.on('close', resolve));
      await waitFor(() => proxy.connections() > 0, 'results --wait to connect');
      await waitFor(async () => {
        const listed = await runRho(['tasks', '--json', id!], { env: direct });
        return (JSON.parse(listed.stdout) as { state: string }[])[0]?.state === 'running';
      }, 'the task to run');
      // The restart: the database is away for a moment.
      await proxy.down();
      await waitFor(() => stderr.includes("The queue's database went away"), 'results --wait to say so');
      await proxy.up();
      await waitFor(() => stderr.includes("The queue's database answers again"), 'results --wait to see it back');
      release();
      expect(await exited).toBe(0);
      expect(stderr).not.toContain('bug in rho');
      expect(JSON.parse(stdout.trim())).toMatchObject({ id, state: 'done', answer: 'the answer' });
    } finally {
      release();
      worker.kill('SIGKILL');
      await proxy.close();
    }
  });
});
