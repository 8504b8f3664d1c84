/**
 * Runs every allowed command of the shell policy's corpus (`@rho/permissions`
 * test/shell-corpus.json) through the restricted `bash` tool, exactly as a session would: the
 * policy checks it, the hardened plan runs without a shell (inside bubblewrap when it is
 * available), in a scratch directory prepared by the entry's `setup`. Each must succeed, which
 * shows the policy's allowlist and the tool's executor agree. `{PORT}` is a loopback HTTP server.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLocalBackend } from '@rho/core';
import { builtinProfile } from '@rho/permissions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBashTool } from '../src/bash-tool.js';
import { restrictedShellGate } from '../src/restricted-shell-gate.js';

interface CorpusEntry {
  command: string;
  allowed: boolean;
  why: string;
  setup?: string;
}

const corpusPath = fileURLToPath(new URL('../../permissions/test/shell-corpus.json', import.meta.url));
const corpus: CorpusEntry[] = existsSync(corpusPath)
  ? (JSON.parse(readFileSync(corpusPath, 'utf8')) as CorpusEntry[])
  : [];
const allowed = corpus.filter((entry) => entry.allowed);
const profile = builtinProfile('readonly');
if (profile === undefined) throw new Error('the readonly profile is missing');
const bash = createBashTool({ mode: 'restricted', gate: restrictedShellGate(profile), timeoutSeconds: 30 });

let server: Server;
let port = 0;
let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rho-corpus-run-'));
  server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(request.method === 'HEAD' ? undefined : '<p>ok</p>\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(root, { recursive: true, force: true });
});

describe('the shell corpus through the restricted bash tool', () => {
  it('has allowed entries to run', () => {
    expect(allowed.length).toBeGreaterThan(0);
  });

  it.each(allowed.map((entry, index) => [index, entry.command, entry] as const))(
    '#%i %s',
    async (index, _command, entry) => {
      const scratch = join(root, `case-${index}`);
      await mkdir(join(scratch, '.home'), { recursive: true });
      if (entry.setup) {
        const setup = spawnSync('bash', ['-c', entry.setup], {
          cwd: scratch,
          env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: join(scratch, '.home') },
          encoding: 'utf8',
        });
        expect(setup.status, `setup failed: ${setup.stderr}`).toBe(0);
      }
      const command = entry.command.replaceAll('{PORT}', String(port));
      const result = await bash.handle(
        { callId: `corpus-${index}`, toolName: 'bash', arguments: { command } },
        {
          signal: new AbortController().signal,
          sessionId: 'corpus',
          workingDir: scratch,
          backend: createLocalBackend(),
        },
      );
      expect(result.success, `${command} (${entry.why}) failed:\n${result.content}`).toBe(true);
    },
  );
});
