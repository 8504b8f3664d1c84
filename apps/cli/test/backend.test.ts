import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandboxWrapper } from '@rho/permissions';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { bin, runRho } from './support/run-rho.js';

// Backend selection end to end: --backend, RHO_BACKEND, `backend:` in an agent config, the
// profile's default, config.yaml on resume, and the container released on every exit path.
const bubblewrap = (await sandboxWrapper()).available;

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function project(): { home: string; work: string } {
  return {
    home: mkdtempSync(join(tmpdir(), 'rho-backend-home-')),
    work: realpathSync(mkdtempSync(join(tmpdir(), 'rho-backend-work-'))),
  };
}

/** A model that calls bash with `command`, then answers `done`. */
function bashThenDone(command: string) {
  return [
    { type: 'response' as const, toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command }) }] },
    { type: 'response' as const, text: 'done' },
  ];
}

/** The output of the bash call, as the model was sent it. */
function toolOutput(loopback: LoopbackServer, request = 1): string {
  const messages = loopback.requests[request]?.body.messages as { role: string; content: string }[];
  const tool = messages.findLast((message) => message.role === 'tool');
  return (JSON.parse(tool?.content ?? '{}') as { output?: string }).output ?? '';
}

function sessionDirectory(home: string): string {
  const [id] = readdirSync(join(home, 'sessions'));
  return join(home, 'sessions', id!);
}

/** Host processes whose command line contains `marker`. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (commandLine.includes(marker) && state.slice(state.lastIndexOf(')') + 2)[0] !== 'Z') found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

describe('backend selection', () => {
  it('refuses an unknown backend before any model call, with exit 2 and the known names', async () => {
    const { home, work } = project();
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'never' }] });
    const flag = await runRho(['--base-url', server.url, '--backend', 'nowhere', '-p', 'hi'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("Unknown backend 'nowhere' (--backend): choose one of local, sandbox, daytona");
    writeFileSync(join(work, 'agent.yaml'), 'backend: nowhere-else\n');
    const config = await runRho(['--base-url', server.url, '--config', 'agent.yaml', '-p', 'hi'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(config.code).toBe(2);
    expect(config.stderr).toContain(`Unknown backend 'nowhere-else' (${join(work, 'agent.yaml')}:1)`);
    const environment = await runRho(['--base-url', server.url, '-p', 'hi'], {
      env: { RHO_HOME: home, RHO_BACKEND: 'elsewhere' },
      cwd: work,
    });
    expect(environment.code).toBe(2);
    expect(environment.stderr).toContain("Unknown backend 'elsewhere' (RHO_BACKEND)");
    writeFileSync(join(work, 'opts.yaml'), 'backend:\n  name: local\n  network: true\n');
    const options = await runRho(['--base-url', server.url, '--backend', 'local', '-c', 'opts.yaml', '-p', 'hi'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(options.code).toBe(2);
    expect(options.stderr).toContain("Backend 'local' takes no options (got network in --backend).");
    expect(server.requests).toHaveLength(0);
    expect(existsSync(join(home, 'sessions'))).toBe(false);
  });

  it('refuses the sandbox where bubblewrap cannot be found, naming what to install', async () => {
    const { home, work } = project();
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'never' }] });
    const outcome = await runRho(['--base-url', server.url, '--backend', 'sandbox', '-p', 'hi'], {
      // A PATH without bwrap (node is started by its full path).
      env: { RHO_HOME: home, PATH: join(work, 'no-programs') },
      cwd: work,
    });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain("Backend 'sandbox' is not available");
    expect(outcome.stderr).toContain('install bubblewrap');
    expect(server.requests).toHaveLength(0);
  });
});

// Without bubblewrap these skip, except in CI, where they must run (and fail without it).
describe.skipIf(!bubblewrap && process.env['CI'] !== 'true')('the sandbox backend from the CLI', () => {
  it('runs the tools in the container, records the backend in config.yaml and keeps it on resume', async () => {
    const { home, work } = project();
    server = await startLoopbackServer({
      steps: [
        ...bashThenDone('hostname; echo "secret=${RHO_TEST_SECRET:-none}"; echo made > made.txt'),
        ...bashThenDone('hostname'),
      ],
    });
    const first = await runRho(
      ['--base-url', server.url, '--profile', 'developer', '--backend', 'sandbox', '-y', 'go'],
      {
        env: { RHO_HOME: home, RHO_TEST_SECRET: 'hunter2' },
        cwd: work,
      },
    );
    expect(first.code).toBe(0);
    expect(toolOutput(server, 1)).toBe('rho-sandbox\nsecret=none\n');
    expect(readFileSync(join(work, 'made.txt'), 'utf8')).toBe('made\n');
    const directory = sessionDirectory(home);
    expect(readFileSync(join(directory, 'config.yaml'), 'utf8')).toMatch(/^backend: sandbox$/m);
    // Resumed without --backend: the session's config.yaml decides.
    const resumed = await runRho(['--base-url', server.url, '--resume', 'latest', '-y', 'again'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(resumed.code).toBe(0);
    expect(toolOutput(server, 3)).toBe('rho-sandbox\n');
  });

  it('fails the run (exit 1) when the container stops under it, instead of going on with every call failing', async () => {
    const { home, work } = project();
    server = await startLoopbackServer({
      steps: [
        ...bashThenDone('pkill -9 -f sandbox-server; echo killed').slice(0, 1),
        { type: 'response', toolCalls: [{ name: 'read', arguments: JSON.stringify({ path: 'x.txt' }) }] },
        { type: 'response', text: 'All good.' },
      ],
    });
    const outcome = await runRho(['--base-url', server.url, '--profile', 'unrestricted', '-y', 'go'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).not.toContain('All good.');
    expect(outcome.stderr).toContain("The sandbox backend's container stopped during the run");
    // No model call after the container stopped.
    expect(server.requests).toHaveLength(1);
    const trace = readFileSync(join(sessionDirectory(home), 'trace.jsonl'), 'utf8');
    expect(trace).toContain('"code":"backend_stopped"');
  });

  it('is the default of the unrestricted and eval profiles; --backend local and RHO_BACKEND choose', async () => {
    const { home, work } = project();
    server = await startLoopbackServer({
      steps: [...bashThenDone('hostname'), ...bashThenDone('hostname'), ...bashThenDone('hostname')],
    });
    const base = ['--base-url', server.url, '-y'];
    expect((await runRho([...base, '--profile', 'eval', 'go'], { env: { RHO_HOME: home }, cwd: work })).code).toBe(0);
    expect(toolOutput(server, 1)).toBe('rho-sandbox\n');
    expect(
      (
        await runRho([...base, '--profile', 'unrestricted', '--backend', 'local', 'go'], {
          env: { RHO_HOME: home },
          cwd: work,
        })
      ).code,
    ).toBe(0);
    expect(toolOutput(server, 3)).not.toBe('rho-sandbox\n');
    expect(
      (
        await runRho([...base, '--profile', 'developer', 'go'], {
          env: { RHO_HOME: home, RHO_BACKEND: 'sandbox' },
          cwd: work,
        })
      ).code,
    ).toBe(0);
    expect(toolOutput(server, 5)).toBe('rho-sandbox\n');
  });

  it('takes the backend options of an agent config and saves them with the session', async () => {
    const { home, work } = project();
    writeFileSync(
      join(work, 'agent.yaml'),
      'profile: developer\nbackend:\n  name: sandbox\n  working_dir: read-only\n',
    );
    server = await startLoopbackServer({ steps: bashThenDone('touch x 2>&1; echo $?') });
    const outcome = await runRho(['--base-url', server.url, '-c', 'agent.yaml', '-y', 'go'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(outcome.code).toBe(0);
    expect(toolOutput(server, 1)).toMatch(/Read-only file system\n1\n$/);
    expect(readFileSync(join(sessionDirectory(home), 'config.yaml'), 'utf8')).toMatch(
      /^backend:\n {2}name: sandbox\n {2}working_dir: read-only$/m,
    );
  });

  for (const [how, signals] of [
    ['SIGTERM', ['SIGTERM']],
    ['a second Ctrl+C', ['SIGINT', 'SIGINT']],
  ] as const) {
    it(`releases the container on ${how}: nothing it started is left`, async () => {
      const { home, work } = project();
      const marker = `7${Math.floor(Math.random() * 9)}.${Date.now() % 100_000}`;
      // The child escapes its process group (setsid) and ignores SIGTERM: only the end of the container ends it.
      server = await startLoopbackServer({
        steps: bashThenDone(`setsid bash -c "trap '' TERM; sleep ${marker}" & sleep ${marker}; wait`),
      });
      const child = spawn(
        process.execPath,
        [bin, '--json', '--base-url', server.url, '--profile', 'developer', '--backend', 'sandbox', '-y', 'go'],
        {
          cwd: work,
          env: { PATH: process.env.PATH, HOME: process.env.HOME, RHO_HOME: home },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      child.stderr.resume();
      let sent = false;
      child.stdout.on('data', () => {
        if (sent || processesWith(`sleep ${marker}`).length < 2) return;
        sent = true;
        for (const signal of signals) child.kill(signal);
      });
      // The tool may start before any further output: look for the sleeps until they are there.
      const poll = setInterval(() => {
        if (sent || processesWith(`sleep ${marker}`).length < 2) return;
        sent = true;
        for (const signal of signals) child.kill(signal);
      }, 50);
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      clearInterval(poll);
      expect(sent).toBe(true);
      expect(code).toBe(130);
      const deadline = Date.now() + 10_000;
      while (processesWith(`sleep ${marker}`).length > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(processesWith(`sleep ${marker}`)).toEqual([]);
    });
  }
});
