import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SessionStore } from '@rho/core';
import type { ChatMessage } from '@rho/core';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer, LoopbackStep, RecordedRequest } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'bin.js');

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A started `rho` process whose output is collected as it arrives. */
interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  done: Promise<Outcome>;
}

const children: ChildProcess[] = [];
let server: LoopbackServer | undefined;
const gates: (() => void)[] = [];

afterEach(async () => {
  for (const open of gates.splice(0)) open();
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await server?.close();
  server = undefined;
});

function home(): string {
  return join(mkdtempSync(join(tmpdir(), 'rho-monitor-cli-')), 'home');
}

function start(args: string[], rhoHome: string, input?: string): Running {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', RHO_HOME: rhoHome };
  const child = spawn(process.execPath, [bin, ...args], {
    env,
    cwd: tmpdir(),
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  if (input !== undefined) child.stdin!.end(input);
  const done = new Promise<Outcome>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { child, stdout: () => stdout, stderr: () => stderr, done };
}

function rho(args: string[], rhoHome: string, input?: string): Promise<Outcome> {
  return start(args, rhoHome, input).done;
}

async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A promise the server awaits before answering, opened by the test. */
function gate(): { open: () => void; wait: Promise<void> } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  gates.push(open);
  return { open, wait };
}

interface PsEntry {
  id: string;
  status: string;
  recorded_status: string;
  pid: number | null;
  first_prompt: string | null;
  directory: string;
}

async function ps(rhoHome: string): Promise<PsEntry[]> {
  const outcome = await rho(['ps', '--json'], rhoHome);
  expect(outcome.code).toBe(0);
  return JSON.parse(outcome.stdout) as PsEntry[];
}

/** Waits until the session started with `prompt` shows `status` in `rho ps --json`. */
function sessionWithStatus(rhoHome: string, prompt: string, status: string): Promise<PsEntry> {
  return waitFor(`a ${status} session for '${prompt}'`, async () =>
    (await ps(rhoHome)).find((entry) => entry.first_prompt === prompt && entry.status === status),
  );
}

function firstUserText(request: RecordedRequest): string {
  const messages = (request.body as { messages: ChatMessage[] }).messages;
  const user = messages.find((message) => message.role === 'user');
  return typeof user?.content === 'string' ? user.content : '';
}

function agentsOf(requests: RecordedRequest[], prompt: string): RecordedRequest[] {
  return requests.filter((request) => firstUserText(request) === prompt);
}

/** Routes each request to a script by its task (first user message), so several agents share one server. */
async function serve(
  scripts: Record<string, (turn: number) => LoopbackStep | Promise<LoopbackStep>>,
): Promise<LoopbackServer> {
  const turns = new Map<string, number>();
  server = await startLoopbackServer({
    respond: (request) => {
      const task = firstUserText(request);
      const script = Object.entries(scripts).find(([prefix]) => task.startsWith(prefix))?.[1];
      if (script === undefined)
        return { type: 'http_error', status: 400, message: `no script for task ${task.slice(0, 40)}` };
      const turn = turns.get(task) ?? 0;
      turns.set(task, turn + 1);
      return script(turn);
    },
  });
  return server;
}

const listCall = { name: 'list', arguments: '{"path": "."}' };

describe('monitor commands against real rho processes', () => {
  it('ps shows a running agent with its pid, then its final status', async () => {
    const rhoHome = home();
    const hold = gate();
    const loopback = await serve({
      'Count the files': async () => (await hold.wait, { type: 'response', text: 'There are none.' }),
    });
    const agent = start(['--base-url', loopback.url, '--model', 'gpt-4o-mini', 'Count the files'], rhoHome);
    const running = await sessionWithStatus(rhoHome, 'Count the files', 'running');
    expect(running.pid).toBe(agent.child.pid);
    const table = await rho(['ps'], rhoHome);
    expect(table.stdout).toMatch(
      new RegExp(`^${running.id}\\s+running\\s+gpt-4o-mini\\s+\\S+\\s+-\\s+Count the files$`, 'm'),
    );
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+STATUS\s+MODEL\s+AGE\s+COST\s+PROMPT$/);
    // Colour codes only on a TTY: never in a pipe.
    expect(table.stdout).not.toContain('\u001b[');
    hold.open();
    expect((await agent.done).code).toBe(0);
    const [finished] = await ps(rhoHome);
    expect(finished).toMatchObject({ id: running.id, status: 'completed', recorded_status: 'completed' });
  });

  it('watch shows events as they happen and ends with the run', async () => {
    const rhoHome = home();
    const hold = gate();
    const loopback = await serve({
      'Look around': async (turn) => {
        if (turn === 0)
          return {
            type: 'response',
            text: 'Listing first.',
            toolCalls: [listCall],
            usage: { prompt_tokens: 1200, completion_tokens: 30 },
          };
        await hold.wait;
        return {
          type: 'response',
          text: 'The directory is empty.',
          usage: { prompt_tokens: 1300, completion_tokens: 8 },
        };
      },
    });
    const agent = start(['--base-url', loopback.url, '--model', 'gpt-4o-mini', 'Look around'], rhoHome);
    const session = await sessionWithStatus(rhoHome, 'Look around', 'running');
    const watcher = start(['watch', session.id.slice(0, 5)], rhoHome);
    // The tool call is shown while the agent is still waiting for its second model answer.
    await waitFor('the tool call in watch', () => watcher.stdout().includes('✓ list ok'));
    // The watcher can show the tool's result before the agent has sent its next request.
    await waitFor('the second model call', () => agentsOf(loopback.requests, 'Look around').length === 2);
    expect(watcher.child.exitCode).toBeNull();
    const sofar = watcher.stdout();
    expect(sofar).toContain('▶ run started: Look around');
    expect(sofar).toMatch(/◆ gpt-4o-mini: 1\.2K in, 30 out, \$0\.\d{4}/);
    expect(sofar).toContain("→ list(path='.')");
    expect(sofar).toContain('assistant: Listing first.');
    expect(sofar).not.toContain('run ended');
    hold.open();
    const watched = await watcher.done;
    expect(watched.code).toBe(0);
    expect(watched.stdout).toContain('assistant: The directory is empty.');
    expect(watched.stdout).toMatch(/■ run ended: completed/);
    expect(watched.stderr).toContain(`Session ${session.id} ended (completed)`);
    expect((await agent.done).code).toBe(0);
  });

  it('watch --json prints the trace records as JSON lines', async () => {
    const rhoHome = home();
    const loopback = await serve({ 'Say hi': () => ({ type: 'response', text: 'hi' }) });
    expect((await rho(['--base-url', loopback.url, 'Say hi'], rhoHome)).code).toBe(0);
    const [session] = await ps(rhoHome);
    const watched = await rho(['watch', session!.id, '--json'], rhoHome);
    expect(watched.code).toBe(0);
    const types = watched.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { type: string }).type);
    expect(types[0]).toBe('run_start');
    expect(types.at(-1)).toBe('run_end');
    expect(types).toContain('llm_end');
  });

  it('Ctrl+C stops watch, not the agent', async () => {
    const rhoHome = home();
    const loopback = await serve({ 'Keep going': () => ({ type: 'hang' }) });
    start(['--base-url', loopback.url, 'Keep going'], rhoHome);
    const session = await sessionWithStatus(rhoHome, 'Keep going', 'running');
    const watcher = start(['watch', session.id], rhoHome);
    await waitFor('the run start in watch', () => watcher.stdout().includes('▶ run started: Keep going'));
    watcher.child.kill('SIGINT');
    const watched = await watcher.done;
    expect(watched.code).toBe(0);
    expect(watched.stderr).toContain('Stopped watching.');
    expect((await ps(rhoHome))[0]).toMatchObject({ id: session.id, status: 'running' });
  });

  it('cancel stops a running agent', async () => {
    const rhoHome = home();
    const loopback = await serve({ 'Wait forever': () => ({ type: 'hang' }) });
    const agent = start(['--base-url', loopback.url, 'Wait forever'], rhoHome);
    const session = await sessionWithStatus(rhoHome, 'Wait forever', 'running');
    await waitFor('the model call', () => loopback.requests.length === 1);
    const cancelled = await rho(['cancel', session.id.slice(0, 4)], rhoHome);
    expect(cancelled).toMatchObject({ code: 0, stdout: `cancel: ${session.id}\n` });
    const outcome = await agent.done;
    expect(outcome.code).toBe(130);
    const [after] = await ps(rhoHome);
    expect(after).toMatchObject({ id: session.id, status: 'cancelled' });
    // The agent removes the sentinel once stopped, so a later resume is not cancelled at once.
    expect(existsSync(join(session.directory, 'cancel'))).toBe(false);
    const again = await rho(['cancel', session.id], rhoHome);
    expect(again.stdout).toBe(`${session.id}: cancelled, not running; nothing to cancel\n`);
  });

  it('cancel --all stops every running agent and leaves finished ones alone', async () => {
    const rhoHome = home();
    const loopback = await serve({
      'Hang one': () => ({ type: 'hang' }),
      'Hang two': () => ({ type: 'hang' }),
      Finish: () => ({ type: 'response', text: 'done' }),
    });
    expect((await rho(['--base-url', loopback.url, 'Finish'], rhoHome)).code).toBe(0);
    const first = start(['--base-url', loopback.url, 'Hang one'], rhoHome);
    const second = start(['--base-url', loopback.url, 'Hang two'], rhoHome);
    await sessionWithStatus(rhoHome, 'Hang one', 'running');
    await sessionWithStatus(rhoHome, 'Hang two', 'running');
    const outcome = await rho(['cancel', '--all'], rhoHome);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toMatch(/Sent cancel to 2 sessions\n$/);
    expect((await first.done).code).toBe(130);
    expect((await second.done).code).toBe(130);
    const finished = (await ps(rhoHome)).find((entry) => entry.first_prompt === 'Finish')!;
    expect(existsSync(join(finished.directory, 'cancel'))).toBe(false);
  });

  it('pause holds an agent before its next tool call and resume releases it', async () => {
    const rhoHome = home();
    const hold = gate();
    const loopback = await serve({
      'Pause me': async (turn) => {
        if (turn === 0) {
          await hold.wait;
          return { type: 'response', toolCalls: [listCall] };
        }
        return { type: 'response', text: 'Resumed and finished.' };
      },
    });
    const agent = start(['--base-url', loopback.url, 'Pause me'], rhoHome);
    const session = await sessionWithStatus(rhoHome, 'Pause me', 'running');
    expect((await rho(['pause', session.id], rhoHome)).stdout).toBe(`pause: ${session.id}\n`);
    hold.open();
    await sessionWithStatus(rhoHome, 'Pause me', 'paused');
    const trace = () => readFileSync(join(session.directory, 'trace.jsonl'), 'utf8');
    expect(trace()).not.toContain('"tool_start"');
    // Still held a moment later: no tool ran, no second model call. A fixed wait, not a race:
    // it proves something does not happen, and there is no event to wait for.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(trace()).not.toContain('"tool_start"');
    expect(loopback.requests).toHaveLength(1);
    expect(agent.child.exitCode).toBeNull();
    expect((await rho(['resume', session.id.slice(0, 3)], rhoHome)).stdout).toBe(`resume: ${session.id}\n`);
    const outcome = await agent.done;
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain('Resumed and finished.');
    expect(loopback.requests).toHaveLength(2);
    expect(trace()).toMatch(/"status":"paused"[\s\S]*"status":"running"[\s\S]*"tool_start"/);
  });

  it('a directive reaches the model in its next request', async () => {
    const rhoHome = home();
    const hold = gate();
    const loopback = await serve({
      'Summarise the logs': async (turn) => {
        if (turn === 0) {
          await hold.wait;
          return { type: 'response', toolCalls: [listCall] };
        }
        return { type: 'response', text: 'Focused on errors.' };
      },
    });
    const agent = start(['--base-url', loopback.url, 'Summarise the logs'], rhoHome);
    const session = await sessionWithStatus(rhoHome, 'Summarise the logs', 'running');
    const sent = await rho(['directive', session.id.slice(0, 6), 'Only look at errors, and be brief.'], rhoHome);
    expect(sent).toMatchObject({ code: 0, stdout: `directive queued for ${session.id}\n` });
    hold.open();
    expect((await agent.done).code).toBe(0);
    const second = loopback.requests[1]!.body as { messages: ChatMessage[] };
    const last = second.messages.filter((message) => message.role === 'user').at(-1);
    expect(last).toEqual({ role: 'user', content: '[Operator directive] Only look at errors, and be brief.' });
    expect(
      (loopback.requests[0]!.body as { messages: ChatMessage[] }).messages.some((message) =>
        String(message.content).includes('Operator directive'),
      ),
    ).toBe(false);
  });

  it('shows an agent killed with SIGKILL as dead', async () => {
    const rhoHome = home();
    const loopback = await serve({ 'Be killed': () => ({ type: 'hang' }) });
    const agent = start(['--base-url', loopback.url, 'Be killed'], rhoHome);
    const session = await sessionWithStatus(rhoHome, 'Be killed', 'running');
    agent.child.kill('SIGKILL');
    await agent.done;
    const [dead] = await ps(rhoHome);
    expect(dead).toMatchObject({ id: session.id, status: 'dead', recorded_status: 'running' });
    expect((await rho(['ps'], rhoHome)).stdout).toMatch(new RegExp(`^${session.id}\\s+dead\\s`, 'm'));
    expect((await rho(['pause', session.id], rhoHome)).stdout).toBe(
      `${session.id}: dead, not running; nothing to pause\n`,
    );
    const watched = await rho(['watch', session.id], rhoHome);
    expect(watched.code).toBe(0);
    expect(watched.stderr).toMatch(/is dead: process \d+ is gone/);
  });

  it('rejects unknown and ambiguous prefixes with exit 2, listing the matches', async () => {
    const rhoHome = home();
    const store = new SessionStore(join(rhoHome, 'sessions'));
    store.create({ id: 'abc11111' });
    store.create({ id: 'abc22222' });
    const ambiguous = await rho(['watch', 'abc'], rhoHome);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toBe(
      "rho: Ambiguous prefix 'abc': it matches abc11111, abc22222. Give more characters.\n",
    );
    for (const args of [
      ['cancel', 'abc'],
      ['directive', 'abc', 'x'],
      ['pause', 'zzz'],
      ['cancel'],
      ['ps', join(rhoHome, 'missing')],
    ]) {
      const outcome = await rho(args, rhoHome);
      expect(outcome.code, args.join(' ')).toBe(2);
    }
    expect((await rho(['pause', 'zzz'], rhoHome)).stderr).toMatch(/Session not found: zzz/);
  });

  it('the interactive monitor runs commands from its input', async () => {
    const rhoHome = home();
    const store = new SessionStore(join(rhoHome, 'sessions'));
    store.create({ id: 'feed0001' });
    const outcome = await rho(
      ['monitor'],
      rhoHome,
      'help\nps\nwatch zz\ndirective feed "stay on task"\nbogus\nresume all\nquit\n',
    );
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain(`rho monitor: ${join(rhoHome, 'sessions')}`);
    expect(outcome.stdout).toContain('connect <prefixes..>');
    expect(outcome.stdout).toMatch(/cancel \[prefix\][\s\S]*\[aliases: kill\]/);
    expect(outcome.stdout).toMatch(/^feed0001\s+created/m);
    expect(outcome.stderr).toContain('Session not found: zz');
    expect(outcome.stdout).toContain('directive queued for feed0001');
    expect(outcome.stderr).toContain('Unknown command: bogus');
    expect(outcome.stdout).toContain('No paused sessions to resume');
    expect(readFileSync(join(rhoHome, 'sessions', 'feed0001', 'directives.jsonl'), 'utf8')).toBe(
      '{"text":"stay on task"}\n',
    );
  });

  it('connect starts a coordinator whose first request holds both agents’ contexts', async () => {
    const rhoHome = home();
    const holdAlpha = gate();
    const holdBeta = gate();
    const agentScript =
      (marker: string, hold: { wait: Promise<void> }) =>
      async (turn: number): Promise<LoopbackStep> => {
        if (turn === 0)
          return { type: 'response', text: `Found the ${marker} marker in app.log.`, toolCalls: [listCall] };
        await hold.wait;
        return { type: 'response', text: 'Done.' };
      };
    const loopback = await serve({
      'Trace alpha-7731': agentScript('alpha-7731', holdAlpha),
      'Trace beta-4402': agentScript('beta-4402', holdBeta),
      '[rho connect]': () => ({
        type: 'response',
        text: 'Both agents looked at app.log; alpha and beta overlap there.',
      }),
    });
    const alpha = start(['--base-url', loopback.url, '--model', 'gpt-4o-mini', 'Trace alpha-7731'], rhoHome);
    const beta = start(['--base-url', loopback.url, '--model', 'gpt-4o-mini', 'Trace beta-4402'], rhoHome);
    const alphaSession = await sessionWithStatus(rhoHome, 'Trace alpha-7731', 'running');
    const betaSession = await sessionWithStatus(rhoHome, 'Trace beta-4402', 'running');
    await waitFor(
      'both agents at their second model call',
      () =>
        agentsOf(loopback.requests, 'Trace alpha-7731').length === 2 &&
        agentsOf(loopback.requests, 'Trace beta-4402').length === 2,
    );
    const monitor = await rho(['monitor'], rhoHome, `connect ${alphaSession.id.slice(0, 6)} ${betaSession.id}\nquit\n`);
    expect(monitor.code).toBe(0);
    expect(monitor.stdout).toContain('Both agents looked at app.log');
    const coordinatorRequests = loopback.requests.filter((request) =>
      firstUserText(request).startsWith('[rho connect]'),
    );
    expect(coordinatorRequests).toHaveLength(1);
    const first = coordinatorRequests[0]!.body as { model: string; messages: ChatMessage[] };
    expect(first.model).toBe('gpt-4o-mini');
    const prompt = firstUserText(coordinatorRequests[0]!);
    for (const expected of [
      alphaSession.id,
      betaSession.id,
      'Trace alpha-7731',
      'Found the alpha-7731 marker in app.log.',
      'Trace beta-4402',
      'Found the beta-4402 marker in app.log.',
      'ASSISTANT called list({"path": "."})',
    ]) {
      expect(prompt).toContain(expected);
    }
    const coordinator = (await ps(rhoHome)).find((entry) => entry.first_prompt?.startsWith('[rho connect]') === true);
    expect(coordinator).toMatchObject({ status: 'completed' });
    expect(monitor.stderr).toContain(`Coordinator session: ${coordinator!.id}`);
    // The agents were only read, not disturbed.
    expect(alpha.child.exitCode).toBeNull();
    holdAlpha.open();
    holdBeta.open();
    expect((await alpha.done).code).toBe(0);
    expect((await beta.done).code).toBe(0);
  });
});
