import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { State } from '@rho/core';
import { processGroupMembers, startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer, LoopbackStep } from '@rho/core/testing';
import { sandboxWrapper } from '@rho/permissions';
import { afterEach, describe, expect, it } from 'vitest';
import { bin } from './support/run-rho.js';

// Faults around the processes `bash` starts, with real `rho` processes against the loopback model
// server: a child that ignores SIGTERM and outlives its shell must be gone when the call ends by
// timeout or by cancellation (it used to survive, re-parented to init), and the restricted shell's
// sandbox must keep rho's processes, environment and secrets out of what the model sees.

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Running (not zombie) processes whose process group is `pgid`, from /proc. */
const groupMembers = (pgid: number): number[] => processGroupMembers(pgid) ?? [];

const toolCall = (args: Record<string, unknown>): LoopbackStep => ({
  type: 'response',
  toolCalls: [{ name: 'bash', arguments: JSON.stringify(args) }],
});
const answer = (text: string): LoopbackStep => ({ type: 'response', text });

interface Run {
  code: number | null;
  stderr: string;
  events: { type: string }[];
  home: string;
  work: string;
  rhoPid: number;
  state: State;
}

/**
 * Runs `rho --json` in a fresh working directory and RHO_HOME; `onEvent` sees each event as it
 * is printed, with the session's directory once it exists.
 */
async function runRho(
  steps: LoopbackStep[] | ((rhoPid: number) => LoopbackStep[]),
  args: string[],
  options: {
    env?: NodeJS.ProcessEnv;
    onEvent?: (event: { type: string }, context: { work: string; sessionDir: () => string }) => void;
  } = {},
): Promise<Run> {
  let rhoPid = 0;
  // Steps may depend on rho's pid, known once it runs: each is made when its request arrives.
  server = await startLoopbackServer({
    respond: (_request, index) =>
      (typeof steps === 'function' ? steps(rhoPid) : steps)[index] ?? answer('no step left'),
  });
  const home = mkdtempSync(join(tmpdir(), 'rho-fault-process-home-'));
  const work = mkdtempSync(join(tmpdir(), 'rho-fault-process-work-'));
  const child = spawn(process.execPath, [bin, '--json', '--base-url', server.url, ...args], {
    cwd: work,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, RHO_HOME: home, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  rhoPid = child.pid!;
  const sessionDir = (): string => join(home, 'sessions', readdirSync(join(home, 'sessions'))[0]!);
  const events: { type: string }[] = [];
  let buffer = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    for (const line of lines) {
      const event = JSON.parse(line) as { type: string };
      events.push(event);
      options.onEvent?.(event, { work, sessionDir });
    }
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const state = State.fromJsonl(readFileSync(join(sessionDir(), 'trace.jsonl')));
  return { code, stderr, events, home, work, rhoPid: child.pid!, state };
}

/** The shell records its own pid (its process group's id) and its child's; the child ignores SIGTERM. */
const stubbornChild = `(trap '' TERM; exec sleep 63.25) & echo "$$ $!" > pids; echo started; wait`;

function pidsIn(work: string): { group: number; child: number } | undefined {
  const file = join(work, 'pids');
  if (!existsSync(file)) return undefined;
  const words = readFileSync(file, 'utf8').trim().split(' ');
  if (words.length !== 2) return undefined;
  return { group: Number(words[0]), child: Number(words[1]) };
}

function toolResults(state: State): string[] {
  return state.messages.filter((message) => message.role === 'tool').map((message) => String(message.content));
}

describe.skipIf(process.platform !== 'linux')('rho: processes end when their tool ends', () => {
  it('a bash timeout kills a child that ignores SIGTERM after its shell exited; the run goes on and completes', async () => {
    const run = await runRho(
      [toolCall({ command: stubbornChild, timeout: 1 }), answer('The command timed out.')],
      ['--profile', 'developer', '-y', 'Run it.'],
    );
    expect(run.code).toBe(0);
    const pids = pidsIn(run.work);
    expect(pids).toBeDefined();
    expect(groupMembers(pids!.group)).toEqual([]);
    expect(run.state.status).toBe('completed');
    const [result] = toolResults(run.state);
    expect(result).toContain('[Command timed out after 1s and was killed]');
    expect(result).toContain('started');
  });

  it('a cancellation kills a child that ignores SIGTERM after its shell exited; the run ends cancelled (130)', async () => {
    let cancelled = false;
    const run = await runRho(
      [toolCall({ command: stubbornChild }), answer('not reached')],
      ['--profile', 'developer', '-y', 'Run it.'],
      {
        onEvent: (event, { work, sessionDir }) => {
          if (cancelled || event.type !== 'tool_start') return;
          cancelled = true;
          // Cancel once the shell and its child both run, as `rho cancel` does (the cancel file).
          const waitForChild = (): void => {
            if (pidsIn(work) === undefined) {
              setTimeout(waitForChild, 20);
              return;
            }
            writeFileSync(join(sessionDir(), 'cancel'), '');
          };
          waitForChild();
        },
      },
    );
    expect(cancelled).toBe(true);
    expect(run.code).toBe(130);
    const pids = pidsIn(run.work)!;
    expect(groupMembers(pids.group)).toEqual([]);
    expect(run.state.status).toBe('cancelled');
    expect(toolResults(run.state)).toHaveLength(1);
  });
});

describe.skipIf(process.platform !== 'linux')('rho: the restricted shell sandbox', () => {
  it('readonly: ps and /proc inside the sandbox show nothing of rho, and its secrets never reach the model', async (context) => {
    const wrapper = await sandboxWrapper();
    if (!wrapper.available) {
      if (process.env.CI === 'true')
        throw new Error(`CI must run the sandbox tests: ${wrapper.unavailableReason ?? ''}`);
      context.skip('bubblewrap is not available here');
    }
    const secret = 'sk-fault-process-8c1f';
    const run = await runRho(
      [toolCall({ command: 'ps -eo pid,args' }), answer('Only the sandbox is there.')],
      ['--profile', 'readonly', '-y', 'Look around.'],
      {
        env: { OPENAI_API_KEY: secret, ACME_SERVICE_PASS: 'acme-fault-7d2e' },
      },
    );
    expect(run.code).toBe(0);
    const [ps] = toolResults(run.state);
    const listed = JSON.parse(ps!) as { output: string };
    const pids = listed.output
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => Number(line.trim().split(/\s+/)[0]));
    expect(pids).not.toContain(run.rhoPid);
    expect(listed.output).not.toMatch(/node|bin\.js/);
    // What the model was sent, request by request: no secret of rho's environment anywhere.
    const sent = JSON.stringify(server!.requests.map((request) => request.body));
    expect(sent).not.toContain(secret);
    expect(sent).not.toContain('acme-fault-7d2e');
  });

  it("readonly: rho's own /proc entry does not exist inside the sandbox", async (context) => {
    const wrapper = await sandboxWrapper();
    if (!wrapper.available) {
      if (process.env.CI === 'true')
        throw new Error(`CI must run the sandbox tests: ${wrapper.unavailableReason ?? ''}`);
      context.skip('bubblewrap is not available here');
    }
    // The model asks for rho's command line by its pid: outside the sandbox it names bin.js.
    const run = await runRho(
      (rhoPid) => [toolCall({ command: `cat /proc/${rhoPid}/cmdline` }), answer('done')],
      ['--profile', 'readonly', '-y', 'Look around.'],
    );
    expect(run.code).toBe(0);
    const [result] = toolResults(run.state);
    expect(result).toContain(`/proc/${run.rhoPid}/cmdline: No such file or directory`);
    expect(result).not.toContain('bin.js');
  });

  it('without bubblewrap on PATH, readonly refuses bash commands with how to install it, and warns at start', async () => {
    server = await startLoopbackServer({ steps: [toolCall({ command: 'ls' }), answer('No shell here.')] });
    const home = mkdtempSync(join(tmpdir(), 'rho-fault-process-home-'));
    const work = mkdtempSync(join(tmpdir(), 'rho-fault-process-work-'));
    writeFileSync(join(work, 'visible.txt'), 'x');
    // node is started by its absolute path; bwrap (like ls) lives where this PATH does not look.
    const child = spawn(
      process.execPath,
      [bin, '--base-url', server.url, '--profile', 'readonly', '-y', 'List the files.'],
      {
        cwd: work,
        env: { PATH: home, HOME: process.env.HOME, RHO_HOME: home, NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.resume();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(stderr).toContain(
      'Warning: every bash command will be refused: restricted commands run inside the bubblewrap sandbox, and bwrap was not found on PATH: install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap;',
    );
    const state = State.fromJsonl(
      readFileSync(join(home, 'sessions', readdirSync(join(home, 'sessions'))[0]!, 'trace.jsonl')),
    );
    const [result] = toolResults(state);
    expect(result).toMatch(
      /^Command blocked: no sandbox: restricted commands run inside the bubblewrap sandbox, and bwrap was not found on PATH: install bubblewrap/,
    );
    expect(result).not.toContain('visible.txt');
    // The model was told the same.
    expect(JSON.stringify(server.requests.at(-1)?.body)).toContain('Command blocked: no sandbox');
  });

  it('a profile with `sandbox: off` warns on every run', async () => {
    const profileDir = mkdtempSync(join(tmpdir(), 'rho-fault-process-profile-'));
    const profile = join(profileDir, 'lab.yaml');
    writeFileSync(profile, 'profile: lab\nshell: restricted\nsandbox: off\napproval: none\n');
    for (let round = 0; round < 2; round += 1) {
      server = await startLoopbackServer({ steps: [answer('hi')] });
      const home = mkdtempSync(join(tmpdir(), 'rho-fault-process-home-'));
      const child = spawn(process.execPath, [bin, '--base-url', server.url, '--profile', profile, 'Say hi.'], {
        cwd: profileDir,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, RHO_HOME: home, NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdout.resume();
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code).toBe(0);
      expect(stderr).toContain(
        'Warning: profile lab sets `sandbox: off`: restricted shell commands run without the operating-system sandbox',
      );
      await server.close();
      server = undefined;
    }
  });
});
