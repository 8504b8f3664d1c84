/**
 * Proves that every blocked line of the shell corpus is a real abuse: each one is run with real
 * `bash -c` in a scratch directory (HOME pointing inside it), and the effect the corpus names is
 * observed: a file created, modified or deleted, a file's modification time changed, a write-like
 * request (PUT, POST, DELETE) or a file's content reaching a local HTTP server, or a secret from
 * the environment of this or another process printed.
 *
 * Skipped, and counted below (EXPECTED_SKIPS), are the cases whose effect cannot be produced safely
 * on a shared machine:
 * - `date -s ...` would set the system clock for every process;
 * - `hostname evil` would rename the host for every process;
 * - `git push origin main` needs a remote repository and the network (the other git writes prove
 *   the same class of effect locally).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

interface CorpusCase {
  command: string;
  allowed: boolean;
  why: string;
  setup?: string;
  effect?: {
    creates?: string;
    modifies?: string;
    deletes?: string;
    /** The file's modification time changes (its content may not). */
    touches?: string;
    request?: string;
    /** Text that reaches the HTTP server, in a header or the body. */
    sends?: string;
    /**
     * A variable holding a random secret, set in the command's environment and in the environment
     * of another process started by the test (`sleep`): the command prints the secret.
     */
    leaks?: string;
    skip?: string;
  };
}

const EXPECTED_SKIPS = 3;
const corpus = JSON.parse(readFileSync(new URL('./shell-corpus.json', import.meta.url), 'utf8')) as CorpusCase[];
const blocked = corpus.filter((entry) => !entry.allowed);
const requests: { method: string; bodyBytes: number; text: string }[] = [];
let server: Server;
let port = 0;

beforeAll(async () => {
  server = createServer((request, response) => {
    let bodyBytes = 0;
    let text = `${request.rawHeaders.join('\n')}\n`;
    request.on('data', (chunk: Buffer) => {
      bodyBytes += chunk.length;
      text += chunk.toString();
    });
    request.on('end', () => {
      requests.push({ method: request.method ?? '', bodyBytes, text });
      response.writeHead(200, { 'content-type': 'text/html', 'set-cookie': 'session=1; Path=/' });
      response.end(request.method === 'HEAD' ? undefined : '<p>ok</p>\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function environment(scratch: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: join(scratch, '.home'),
    LANG: 'C.UTF-8',
    GIT_AUTHOR_NAME: 'test',
    GIT_AUTHOR_EMAIL: 'test@example.com',
    GIT_COMMITTER_NAME: 'test',
    GIT_COMMITTER_EMAIL: 'test@example.com',
    GIT_CONFIG_NOSYSTEM: '1',
  };
}

/** Run with real bash, asynchronously so that the in-process HTTP server keeps answering. */
function bash(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('every blocked corpus line has a real effect under bash', () => {
  test('skips are the documented ones', () => {
    const skipped = blocked.filter((entry) => entry.effect?.skip);
    expect(skipped.length).toBe(EXPECTED_SKIPS);
    for (const entry of skipped) expect(entry.effect?.skip?.length).toBeGreaterThan(20);
    for (const entry of blocked) expect(entry.effect, entry.command).toBeDefined();
  });

  test.each(blocked.filter((entry) => !entry.effect?.skip).map((entry) => [entry.command, entry] as const))(
    '%s',
    async (_name, entry) => {
      const scratch = mkdtempSync(join(tmpdir(), 'rho-effects-'));
      const env = environment(scratch);
      mkdirSync(join(scratch, '.home'));
      if (entry.setup) {
        const setup = await bash(entry.setup, scratch, env);
        expect(setup.status, `setup failed: ${setup.stderr}`).toBe(0);
      }
      const effect = entry.effect ?? {};
      const command = entry.command.replaceAll('{PORT}', String(port));
      const before = effect.modifies ? readFileSync(join(scratch, effect.modifies)) : undefined;
      const mtimeBefore = effect.touches ? statSync(join(scratch, effect.touches)).mtimeMs : undefined;
      const secret = `rho-canary-${randomBytes(8).toString('hex')}`;
      const commandEnv = effect.leaks ? { ...env, [effect.leaks]: secret } : env;
      // Another process of the same user holding the secret, as rho's own process does.
      const holder = effect.leaks
        ? spawn('sleep', ['30'], { env: { ...env, [effect.leaks]: secret }, stdio: 'ignore' })
        : undefined;
      if (effect.creates)
        expect(existsSync(join(scratch, effect.creates)), `${effect.creates} exists before`).toBe(false);
      if (effect.deletes)
        expect(existsSync(join(scratch, effect.deletes)), `${effect.deletes} missing before`).toBe(true);
      requests.length = 0;
      const run = await bash(command, scratch, commandEnv);
      holder?.kill();
      const detail = `${entry.why}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;
      if (effect.creates)
        expect(existsSync(join(scratch, effect.creates)), `${effect.creates} was not created. ${detail}`).toBe(true);
      if (effect.deletes)
        expect(existsSync(join(scratch, effect.deletes)), `${effect.deletes} was not deleted. ${detail}`).toBe(false);
      if (effect.modifies && before) {
        const after = readFileSync(join(scratch, effect.modifies));
        expect(after.equals(before), `${effect.modifies} was not modified. ${detail}`).toBe(false);
      }
      if (effect.touches && mtimeBefore !== undefined) {
        expect(
          statSync(join(scratch, effect.touches)).mtimeMs,
          `${effect.touches} kept its modification time. ${detail}`,
        ).not.toBe(mtimeBefore);
      }
      if (effect.sends) {
        expect(
          requests.some((request) => request.text.includes(effect.sends ?? '')),
          `${JSON.stringify(effect.sends)} never reached the server. ${detail}`,
        ).toBe(true);
      }
      if (effect.leaks)
        expect(run.stdout.includes(secret), `the secret in ${effect.leaks} was not printed. ${detail}`).toBe(true);
      if (effect.request) {
        expect(
          requests.some((request) => request.method === effect.request),
          `no ${effect.request} request. ${detail}`,
        ).toBe(true);
      }
    },
  );
});
