// Backends decide on their own view (issue 32): with `--backend daytona`, `write` and `edit` were
// refused because the write check resolved the sandbox's working directory on this machine's disk,
// and the restricted shell's `< FILE` and file name patterns were looked up here too. Through the
// built `rho`, the real @daytonaio/sdk in it, and the fake Daytona API the backend's tests use
// (which runs the sandbox's commands under bubblewrap).
import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { startFakeDaytona, type FakeDaytona } from '@rho/backend-daytona/testing';
import { startLoopbackServer, type LoopbackServer } from '@rho/core/testing';
import { sandboxWrapper } from '@rho/permissions';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

const bubblewrap = (await sandboxWrapper()).available;

let server: LoopbackServer | undefined;
let fake: FakeDaytona;

beforeAll(async () => {
  fake = await startFakeDaytona({ snapshots: ['daytonaio/sandbox'] });
});
afterEach(async () => {
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

const call = (name: string, args: Record<string, unknown>) => ({ name, arguments: JSON.stringify(args) });

/** The tool results the model was sent in its last request, in order. */
function toolResults(loopback: LoopbackServer): string[] {
  const messages = loopback.requests.at(-1)?.body.messages as { role: string; content: string }[];
  return messages.filter((message) => message.role === 'tool').map((message) => message.content);
}

describe.runIf(bubblewrap)('the daytona backend decides on its own file system', () => {
  it('write and edit work in the sandbox; a write outside its working directory is refused', async () => {
    const { home, work } = project();
    const before = new Set(fake.sandboxes.keys());
    const remoteDir = `/home/daytona/${basename(work)}`;
    server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [call('write', { path: 'notes.md', content: 'first draft\n' })] },
        {
          type: 'response',
          toolCalls: [call('edit', { path: 'notes.md', old_string: 'first', new_string: 'second' })],
        },
        {
          type: 'response',
          toolCalls: [
            call('write', { path: '/home/daytona/outside.txt', content: 'x\n' }),
            call('write', { path: '../escape.txt', content: 'x\n' }),
          ],
        },
        { type: 'response', text: 'done' },
      ],
    });
    const outcome = await runRho(
      ['--base-url', server.url, '--backend', 'daytona', '--profile', 'developer', '-y', '-p', 'go'],
      { env: { RHO_HOME: home, DAYTONA_API_KEY: fake.apiKey, DAYTONA_API_URL: fake.apiUrl }, cwd: work },
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    const [record] = [...fake.sandboxes.values()].filter((entry) => !before.has(entry.dto.id));
    const results = toolResults(server);
    expect(results[0]).not.toMatch(/does not exist|refused|not allowed/i);
    expect(readFileSync(record!.sandbox.hostPath(`${remoteDir}/notes.md`), 'utf8')).toBe('second draft\n');
    // Nothing was written on this machine.
    expect(existsSync(join(work, 'notes.md'))).toBe(false);
    // Outside the sandbox's working directory: refused, and nothing there.
    expect(results[2]).toContain(`resolves to /home/daytona/outside.txt, outside the working directory (${remoteDir})`);
    expect(results[3]).toContain('outside the working directory');
    expect(existsSync(record!.sandbox.hostPath('/home/daytona/outside.txt'))).toBe(false);
    expect(existsSync(record!.sandbox.hostPath('/home/daytona/escape.txt'))).toBe(false);
  }, 120_000);

  it("the restricted shell reads `< FILE` and expands patterns in the sandbox's working directory", async () => {
    const { home, work } = project();
    // Copied into the sandbox (upload: true); the checks must look there, not at this directory.
    writeFileSync(join(work, 'agent.yaml'), 'backend:\n  name: daytona\n  upload: true\n');
    writeFileSync(join(work, 'alpha.txt'), 'one\ntwo\nthree\n');
    writeFileSync(join(work, 'beta.txt'), 'four\n');
    server = await startLoopbackServer({
      steps: [
        {
          type: 'response',
          toolCalls: [call('bash', { command: 'wc -l < alpha.txt' }), call('bash', { command: 'ls *.txt' })],
        },
        { type: 'response', text: 'done' },
      ],
    });
    const outcome = await runRho(
      ['--base-url', server.url, '-c', 'agent.yaml', '--profile', 'readonly', '-y', '-p', 'go'],
      { env: { RHO_HOME: home, DAYTONA_API_KEY: fake.apiKey, DAYTONA_API_URL: fake.apiUrl }, cwd: work },
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    const [count, listing] = toolResults(server).map(
      (result) => (JSON.parse(result) as { output?: string; error?: string }).output ?? result,
    );
    expect(count).toBe('3\n');
    expect(listing).toBe('alpha.txt\nbeta.txt\n');
  }, 120_000);
});
