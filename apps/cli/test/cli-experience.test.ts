import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionStore } from '@rho/core';
import { updateSessionMeta } from '@rho/core/internal';
import type { ChatMessage } from '@rho/core';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { bin, runRho } from './support/run-rho.js';

// Headless behaviour of issue 17: the approval notice and exit code, input checks at the edge,
// --json's run_start, sessions, resume precedence, per-project instructions, aliases, EPIPE.

function workspace(): { home: string; work: string } {
  const root = mkdtempSync(join(tmpdir(), 'rho-cli-ux-'));
  return { home: join(root, 'home'), work: mkdtempSync(join(root, 'work-')) };
}

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Body = { messages: ChatMessage[] };

describe('rho without a terminal to approve on', () => {
  it('says in one line before the first model call which tools it cannot offer, naming -y and --profile', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'I can only read.' }] });
    const outcome = await runRho(['--base-url', server.url, '--profile', 'readonly', 'list the files'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(outcome.code).toBe(0);
    // Before the first model call: the notice is the first thing printed, and it is one line.
    const first = outcome.stderr.split('\n')[0]!;
    expect(first).toMatch(
      /^Note: no terminal to approve on, so (.+) are not offered: every call of them needs approval under profile readonly\. Pass -y to approve them, or --profile to choose another profile\.$/,
    );
    expect(first).toContain('bash');
    expect(outcome.stderr).not.toMatch(/nobody can approve in this run/);
    const offered =
      (server.requests[0]!.body as { tools?: { function: { name: string } }[] }).tools?.map(
        (tool) => tool.function.name,
      ) ?? [];
    expect(offered).not.toContain('bash');

    // With -y they are offered and nothing is said.
    server.push({ type: 'response', text: 'ok' });
    const approved = await runRho(['--base-url', server.url, '--profile', 'readonly', '-y', 'list the files'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(approved.code).toBe(0);
    expect(approved.stderr).not.toContain('Note: no terminal');
    expect(
      (server.requests[1]!.body as { tools: { function: { name: string } }[] }).tools.map((tool) => tool.function.name),
    ).toContain('bash');
  });

  it('exits 1 with the reason when every tool call of the run was refused', async () => {
    const { home, work } = workspace();
    writeFileSync(join(work, 'notes.txt'), 'keep me\n');
    server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'bash', arguments: '{"command": "rm -rf notes.txt"}' }] },
        { type: 'response', text: 'I could not delete it.' },
        { type: 'response', toolCalls: [{ name: 'bash', arguments: '{"command": "rm -rf notes.txt"}' }] },
        { type: 'response', text: 'I could not delete it.' },
      ],
    });
    // developer's bash is offered; only calls matching a dangerous pattern need approval. With
    // nobody at a terminal the call waits, and its timeout denies it.
    const outcome = await runRho(
      [
        '--base-url',
        server.url,
        '--profile',
        'developer',
        '--when-unattended',
        'wait',
        '--approval-timeout',
        '1s',
        'delete notes.txt',
      ],
      { env: { RHO_HOME: home }, cwd: work },
    );
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/Waiting for approval: bash.*rm -rf notes\.txt.*\n.*dangerous pattern "rm -rf"/);
    expect(outcome.stderr).toMatch(/rho approve [0-9a-f-]+ +or +rho deny [0-9a-f-]+ --reason/);
    expect(outcome.stderr).toMatch(
      /rho: every tool call was refused \(1\): bash: the approval timed out: nobody answered within 1 s.*Pass -y to approve tool calls, or --profile to choose another profile\./,
    );
    // The old behaviour, on request: the call is refused at once.
    const withheld = await runRho(
      ['--base-url', server.url, '--profile', 'developer', '--when-unattended', 'withhold', 'delete notes.txt'],
      { env: { RHO_HOME: home }, cwd: work },
    );
    expect(withheld.stderr).toMatch(/rho: every tool call was refused \(1\): bash: 'bash' needs approval .*rm -rf/);
    expect(readFileSync(join(work, 'notes.txt'), 'utf8')).toBe('keep me\n');
  });

  it('--json: run_start carries the session id and the working directory; the notice stays on stderr', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'Hello.' }] });
    const outcome = await runRho(['--base-url', server.url, '--json', 'hi'], { env: { RHO_HOME: home }, cwd: work });
    expect(outcome.code).toBe(0);
    const events = outcome.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; session_id?: string; working_dir?: string });
    expect(events[0]).toMatchObject({ type: 'run_start', working_dir: work });
    expect(readdirSync(join(home, 'sessions'))).toEqual([events[0]!.session_id]);
    expect(outcome.stderr).toMatch(/^Note: no terminal to approve on/);
  });
});

describe('input checks before any network call (exit 2, a message that says what to type)', () => {
  const cases: { args: string[]; env?: NodeJS.ProcessEnv; message: RegExp }[] = [
    {
      args: ['--base-url', 'localhost:11434/v1', 'hi'],
      message: /--base-url must be an http:\/\/ or https:\/\/ URL.*did you mean http:\/\/localhost:11434\/v1\?/,
    },
    {
      args: ['hi'],
      env: { OPENAI_BASE_URL: 'ftp://example.com/v1' },
      message: /OPENAI_BASE_URL must use http:\/\/ or https:\/\/ \(got ftp:\/\/\)/,
    },
    {
      args: ['--max-turns', 'abc', 'hi'],
      message: /--max-turns must be a whole number of at least 1, for example --max-turns 20 \(got "abc"\)/,
    },
    { args: ['--max-cost', '-1', 'hi'], message: /--max-cost must be a number above 0/ },
    {
      args: ['--reasoning-effort', 'extreme', 'hi'],
      message: /--reasoning-effort must be one of none, minimal, low, medium, high, xhigh \(got "extreme"\)/,
    },
    { args: ['--reasoning-effort', 'hihg', 'hi'], message: /did you mean high\?/ },
    { args: ['--modle', 'x', 'hi'], message: /Unknown argument: modle \(--modle: did you mean --model\?\)/ },
    { args: ['wacth', 'ab12'], message: /Unknown command 'wacth'\. Did you mean 'rho watch'\?/ },
    {
      args: ['-s', 'missing.md', '--var', 'nokey', 'hi'],
      message: /--var takes key=value, for example --var who=ZELDA \(got "nokey"\)/,
    },
  ];
  for (const { args, env, message } of cases) {
    it(`rho ${args.join(' ')}`, async () => {
      const { home, work } = workspace();
      const outcome = await runRho(args, { env: { RHO_HOME: home, OPENAI_API_KEY: 'sk-test', ...env }, cwd: work });
      expect(outcome.stderr).toMatch(message);
      expect(outcome.code).toBe(2);
      expect(existsSync(join(home, 'sessions'))).toBe(false);
    });
  }

  it('an empty OPENAI_BASE_URL counts as unset', async () => {
    const { home, work } = workspace();
    const outcome = await runRho(['hi'], { env: { RHO_HOME: home, OPENAI_BASE_URL: '' }, cwd: work });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('Missing API key. Set OPENAI_API_KEY, or pass --base-url');
  });

  it('--var takes one value, so the task after it is the task', async () => {
    const { home, work } = workspace();
    writeFileSync(join(work, 'greet.md'), '---\ndescription: greets\n---\nGreet {{ who }}.\n');
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'Hello ZELDA.' }] });
    const outcome = await runRho(['--base-url', server.url, '-s', 'greet.md', '--var', 'who=ZELDA', 'hi'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(outcome.code, outcome.stderr).toBe(0);
    const body = server.requests[0]!.body as Body;
    expect(body.messages[0]!.content).toContain('Greet ZELDA.');
    expect(body.messages.at(-1)).toEqual({ role: 'user', content: 'hi' });
  });
});

describe('sessions and resume', () => {
  it('on resume, OPENAI_BASE_URL beats the saved base_url; a failed prompt is not sent twice', async () => {
    const { home, work } = workspace();
    const first = await startLoopbackServer({ steps: [{ type: 'http_error', status: 400, message: 'bad request' }] });
    const failed = await runRho(['--base-url', first.url, 'count the files'], { env: { RHO_HOME: home }, cwd: work });
    expect(failed.code).toBe(1);
    await first.close();
    const [id] = readdirSync(join(home, 'sessions'));
    // The saved endpoint is gone; the environment names the new one.
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'There are none.' }] });
    const resumed = await runRho(['-r', id!, 'count the files'], {
      env: { RHO_HOME: home, OPENAI_BASE_URL: server.url },
      cwd: work,
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    const body = server.requests[0]!.body as Body;
    expect(body.messages.filter((message) => message.role === 'user')).toEqual([
      { role: 'user', content: 'count the files' },
    ]);
  });

  it('ps and --list share columns and wording; cost shows what is known', async () => {
    const { home } = workspace();
    const store = new SessionStore(join(home, 'sessions'));
    updateSessionMeta(store.create({ id: 'aaaa0001', model: 'gpt-4o-mini' }).directory, {
      status: 'completed',
      started_at: '2026-11-01T00:00:00.000Z',
      cost_usd: 0.0123,
      first_prompt: 'priced',
    });
    updateSessionMeta(store.create({ id: 'bbbb0002', model: 'local-model' }).directory, {
      status: 'completed',
      started_at: '2026-11-02T00:00:00.000Z',
      cost_usd: null,
      first_prompt: 'unpriced',
    });
    const ps = await runRho(['ps'], { env: { RHO_HOME: home } });
    const list = await runRho(['--list'], { env: { RHO_HOME: home } });
    // (The AGE column may tick between the two runs.)
    const withoutAge = (text: string) => text.replace(/\b\d+(h\d+m|m\d+s|s|d)\b/g, 'AGE');
    expect(withoutAge(ps.stdout)).toBe(withoutAge(list.stdout));
    expect(ps.stdout).toMatch(/^ID\s+STATUS\s+MODEL\s+AGE\s+COST\s+PROMPT$/m);
    expect(ps.stdout).toMatch(/^aaaa0001\s+completed\s+gpt-4o-mini\s+\S+\s+\$0\.0123\s+priced$/m);
    expect(ps.stdout).toMatch(/^bbbb0002\s+completed\s+local-model\s+\S+\s+unknown\s+unpriced$/m);
    const empty = workspace();
    expect((await runRho(['ps'], { env: { RHO_HOME: empty.home } })).stdout).toBe(
      (await runRho(['--list'], { env: { RHO_HOME: empty.home } })).stdout,
    );
  });

  it('kill is cancel; unpause is resume; "latest" resolves and a clear message says when nothing matches', async () => {
    const { home } = workspace();
    const store = new SessionStore(join(home, 'sessions'));
    updateSessionMeta(store.create({ id: 'cccc0003' }).directory, {
      status: 'completed',
      started_at: '2026-11-03T00:00:00.000Z',
    });
    const kill = await runRho(['kill', 'cccc'], { env: { RHO_HOME: home } });
    expect(kill.code).toBe(0);
    expect(kill.stdout).toContain('cccc0003: completed, not running; nothing to cancel');
    const unpause = await runRho(['unpause', 'latest'], { env: { RHO_HOME: home } });
    expect(unpause.code).toBe(2);
    expect(unpause.stderr).toMatch(
      /No paused session to unpause: 'latest' means the newest paused one here .*To continue a finished session with a new task, use rho --resume latest "task"\./,
    );
    const resume = await runRho(['resume', 'cccc0003'], { env: { RHO_HOME: home } });
    expect(resume.stdout).toContain(
      'cccc0003: not paused (completed); nothing to unpause. To continue it with a new task: rho --resume cccc0003 "task"',
    );
  });

  it('rho ps | head, rho monitor | head: a reader that goes away ends rho quietly', async () => {
    const { home } = workspace();
    const store = new SessionStore(join(home, 'sessions'));
    // Enough rows to overflow the pipe's buffer, so rho is still writing when head leaves.
    for (let index = 0; index < 1500; index += 1)
      updateSessionMeta(store.create({ id: `dddd${String(index).padStart(4, '0')}` }).directory, {
        status: 'completed',
        first_prompt: 'x'.repeat(100),
      });
    const outcome = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(
        'bash',
        [
          '-c',
          `node '${bin}' ps | head -1; echo "ps=\${PIPESTATUS[0]}" >&2; node '${bin}' monitor < /dev/null | head -2; echo "monitor=\${PIPESTATUS[0]}" >&2`,
        ],
        { env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', RHO_HOME: home } },
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(outcome.stderr).not.toMatch(/EPIPE|Error/);
    expect(outcome.stderr).toMatch(/ps=0/);
    expect(outcome.stderr).toMatch(/monitor=0/);
  });
});

describe('the Markdown renderer', () => {
  it('is not loaded when the answer is not rendered (stdout piped), nor for --help or --version', async () => {
    const { home, work } = workspace();
    const record = join(work, 'imports.txt');
    writeFileSync(record, '');
    server = await startLoopbackServer({ steps: [{ type: 'response', text: '# Title\n\nSome **bold** text.\n' }] });
    const preload = join(import.meta.dirname, 'support', 'record-imports.mjs');
    const run = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string }>((resolve) => {
        const child = spawn(process.execPath, ['--import', preload, bin, ...args], {
          cwd: work,
          env: {
            PATH: process.env.PATH,
            HOME: process.env.HOME,
            NO_COLOR: '1',
            RHO_HOME: home,
            RHO_TEST_IMPORTS: record,
          },
        });
        let stdout = '';
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
        });
        child.on('close', (code) => resolve({ code, stdout }));
      });
    const answer = await run(['--base-url', server!.url, 'hi']);
    expect(answer.code).toBe(0);
    // Piped: the text as the model wrote it.
    expect(answer.stdout).toBe('# Title\n\nSome **bold** text.\n');
    expect((await run(['--help'])).code).toBe(0);
    expect((await run(['--version'])).code).toBe(0);
    expect(readFileSync(record, 'utf8')).toBe('');
  });
});

describe('per-project instructions', () => {
  it('adds AGENTS.md and .rho/instructions.md from the working directory up to the repository root, outermost first', async () => {
    const { home, work } = workspace();
    mkdirSync(join(work, '.git'));
    writeFileSync(join(work, 'AGENTS.md'), 'Root rule: run the tests with pnpm.\n');
    const sub = join(work, 'packages', 'app');
    mkdirSync(join(sub, '.rho'), { recursive: true });
    writeFileSync(join(sub, '.rho', 'instructions.md'), 'App rule: never touch dist/.\n');
    // Above the repository root: not read.
    writeFileSync(join(work, '..', 'AGENTS.md'), 'Outside rule.\n');
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'ok' }] });
    const outcome = await runRho(['--base-url', server.url, 'hi'], { env: { RHO_HOME: home }, cwd: sub });
    expect(outcome.code, outcome.stderr).toBe(0);
    const system = String((server.requests[0]!.body as Body).messages[0]!.content);
    expect(system).toContain(`### ${join(work, 'AGENTS.md')}\n\nRoot rule: run the tests with pnpm.`);
    expect(system).toContain(`### ${join(sub, '.rho', 'instructions.md')}\n\nApp rule: never touch dist/.`);
    expect(system.indexOf('Root rule')).toBeLessThan(system.indexOf('App rule'));
    expect(system).not.toContain('Outside rule.');
    expect(readFileSync(join(work, 'AGENTS.md'), 'utf8')).toContain('Root rule');
  });
});
