import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { startFakeDaytona, type FakeDaytona } from '@rho/backend-daytona/testing';
import { startLoopbackServer, type LoopbackServer } from '@rho/core/testing';
import { sandboxWrapper } from '@rho/permissions';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bin, runRho } from './support/run-rho.js';
import { hasTmux, TmuxSession } from './support/tmux.js';

// `--backend daytona` end to end: the built `rho` process, the real @daytonaio/sdk in it, and a
// fake Daytona API in this process (which runs the sandbox's commands under bubblewrap). There is
// no Daytona service here: the fake stands in for it.
const bubblewrap = (await sandboxWrapper()).available;

let server: LoopbackServer | undefined;
let fake: FakeDaytona;
let terminal: TmuxSession | undefined;

beforeAll(async () => {
  fake = await startFakeDaytona({ snapshots: ['daytonaio/sandbox', 'rho-python'] });
});
afterEach(async () => {
  terminal?.kill();
  terminal = undefined;
  await server?.close();
  server = undefined;
});
afterAll(async () => {
  await fake?.close();
  expect(fake.unknownRoutes).toEqual([]);
});

function project(): { home: string; work: string } {
  return {
    home: mkdtempSync(join(tmpdir(), 'rho-daytona-home-')),
    work: realpathSync(mkdtempSync(join(tmpdir(), 'rho-daytona-work-'))),
  };
}

/** A model that calls bash with `command`, then answers `done`. */
function bashThenDone(command: string) {
  return [
    { type: 'response' as const, toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command }) }] },
    { type: 'response' as const, text: 'done' },
  ];
}

function toolOutput(loopback: LoopbackServer, request = 1): string {
  const messages = loopback.requests[request]?.body.messages as { role: string; content: string }[];
  const tool = messages.findLast((message) => message.role === 'tool');
  return (JSON.parse(tool?.content ?? '{}') as { output?: string }).output ?? '';
}

const newSandboxes = (before: Set<string>) =>
  [...fake.sandboxes.values()].filter((record) => !before.has(record.dto.id));

describe('the daytona backend from the CLI', () => {
  it('without DAYTONA_API_KEY, or with both --dockerfile and --snapshot: exit 2 before any model call', async () => {
    const { home, work } = project();
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'never' }] });
    const noKey = await runRho(['--base-url', server.url, '--backend', 'daytona', '-p', 'hi'], {
      env: { RHO_HOME: home, DAYTONA_API_URL: fake.apiUrl },
      cwd: work,
    });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('DAYTONA_API_KEY');
    const both = await runRho(['--base-url', server.url, '--dockerfile', 'Dockerfile', '--snapshot', 's', '-p', 'hi'], {
      env: { RHO_HOME: home, DAYTONA_API_KEY: fake.apiKey, DAYTONA_API_URL: fake.apiUrl },
      cwd: work,
    });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('Cannot use both --dockerfile and --snapshot');
    const otherBackend = await runRho(['--base-url', server.url, '--backend', 'local', '--snapshot', 's', '-p', 'hi'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(otherBackend.code).toBe(2);
    expect(otherBackend.stderr).toContain("belongs to the daytona backend, but the backend is 'local'");
    const wrongKey = await runRho(['--base-url', server.url, '--backend', 'daytona', '-p', 'hi'], {
      env: { RHO_HOME: home, DAYTONA_API_KEY: 'wrong', DAYTONA_API_URL: fake.apiUrl },
      cwd: work,
    });
    expect(wrongKey.code).toBe(2);
    expect(wrongKey.stderr).toContain('Check DAYTONA_API_KEY');
    expect(existsSync(join(home, 'workspaces'))).toBe(false);
    expect(server.requests).toHaveLength(0);
  });

  it.runIf(bubblewrap)(
    'runs bash in the sandbox, in /home/daytona/<directory>, records daytona in config.yaml and deletes the sandbox on exit',
    async () => {
      const { home, work } = project();
      const before = new Set(fake.sandboxes.keys());
      server = await startLoopbackServer({ steps: bashThenDone('pwd; echo made > made.txt; cat made.txt') });
      const outcome = await runRho(
        ['--base-url', server.url, '--profile', 'unrestricted', '--snapshot', 'rho-python', '-y', '-p', 'go'],
        { env: { RHO_HOME: home, DAYTONA_API_KEY: fake.apiKey, DAYTONA_API_URL: fake.apiUrl }, cwd: work },
      );
      expect(outcome.code, outcome.stderr).toBe(0);
      expect(toolOutput(server)).toBe(`/home/daytona/${basename(work)}\nmade\n`);
      // The file was made in the sandbox, not here.
      expect(existsSync(join(work, 'made.txt'))).toBe(false);
      const [record] = newSandboxes(before);
      expect(record?.request.snapshot).toBe('rho-python');
      expect(readFileSync(record!.sandbox.hostPath(`/home/daytona/${basename(work)}/made.txt`), 'utf8')).toBe('made\n');
      expect(record?.dto.state).toBe('destroyed');
      const [id] = readdirSync(join(home, 'sessions'));
      const config = readFileSync(join(home, 'sessions', id!, 'config.yaml'), 'utf8');
      expect(config).toMatch(/backend:\n\s+name: daytona\n\s+snapshot: rho-python/);
    },
    120_000,
  );

  it.runIf(bubblewrap)(
    '--keep-sandbox keeps it; a Dockerfile builds it; upload: true copies the working directory',
    async () => {
      const { home, work } = project();
      writeFileSync(join(work, 'Dockerfile'), 'FROM python:3.12-slim\n');
      writeFileSync(join(work, 'notes.txt'), 'from my machine\n');
      writeFileSync(join(work, 'agent.yaml'), 'backend:\n  name: daytona\n  upload: true\n');
      const before = new Set(fake.sandboxes.keys());
      server = await startLoopbackServer({ steps: bashThenDone('cat notes.txt') });
      const outcome = await runRho(
        [
          '--base-url',
          server.url,
          '-c',
          'agent.yaml',
          '--profile',
          'unrestricted',
          '--dockerfile',
          'Dockerfile',
          '--keep-sandbox',
          '-y',
          '-p',
          'go',
        ],
        { env: { RHO_HOME: home, DAYTONA_API_KEY: fake.apiKey, DAYTONA_API_URL: fake.apiUrl }, cwd: work },
      );
      expect(outcome.code, outcome.stderr).toBe(0);
      expect(toolOutput(server)).toBe('from my machine\n');
      const [record] = newSandboxes(before);
      expect(record?.request.buildInfo?.dockerfileContent).toBe('FROM python:3.12-slim\n');
      expect(record?.dto).toMatchObject({ state: 'started', autoStopInterval: 15 });
      expect(outcome.stderr).toContain(`Warning: the Daytona sandbox ${record?.dto.id} is kept when rho exits`);
    },
    120_000,
  );
});

describe.runIf(bubblewrap && hasTmux)('/upload and /download in the REPL', () => {
  it('copy files into and out of the sandbox, and say what is wrong', async () => {
    const { home, work } = project();
    writeFileSync(join(work, 'notes.txt'), 'from my machine\n');
    const before = new Set(fake.sandboxes.keys());
    server = await startLoopbackServer({ steps: [{ type: 'hang' }] });
    terminal = new TmuxSession(
      `node '${bin}' --base-url ${server.url} --backend daytona`,
      { RHO_HOME: home, DAYTONA_API_KEY: fake.apiKey, DAYTONA_API_URL: fake.apiUrl },
      work,
    );
    await terminal.waitFor(/Type a task/);
    const [record] = newSandboxes(before);
    const remoteDir = `/home/daytona/${basename(work)}`;
    terminal.type('/upload notes.txt');
    terminal.keys('Enter');
    await terminal.waitFor(/Uploaded .*notes\.txt → .*notes\.txt \(1 file, 16 bytes\)/);
    expect(readFileSync(record!.sandbox.hostPath(`${remoteDir}/notes.txt`), 'utf8')).toBe('from my machine\n');
    terminal.type('/download notes.txt back.txt');
    terminal.keys('Enter');
    await terminal.waitFor(/Downloaded .*notes\.txt → .*back\.txt/);
    expect(readFileSync(join(work, 'back.txt'), 'utf8')).toBe('from my machine\n');
    terminal.type('/download missing.txt');
    terminal.keys('Enter');
    await terminal.waitFor(/Download failed: ENOENT/);
    terminal.type('/upload');
    terminal.keys('Enter');
    await terminal.waitFor(/Usage: \/upload LOCAL \[REMOTE\]/);
    terminal.type('/exit');
    terminal.keys('Enter');
    const deadline = Date.now() + 30_000;
    while (record!.dto.state !== 'destroyed' && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(record!.dto.state).toBe('destroyed');
    expect(server.requests).toHaveLength(0);
  }, 120_000);
});
