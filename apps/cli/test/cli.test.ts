import { connect } from 'node:net';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { State } from '@rho/core';
import type { ChatMessage } from '@rho/core';
import { pythonTracesDir, startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

function workspace(): { home: string; work: string } {
  const root = mkdtempSync(join(tmpdir(), 'rho-cli-'));
  return { home: join(root, 'home'), work: mkdtempSync(join(root, 'work-')) };
}

function onlySession(home: string): string {
  const sessions = readdirSync(join(home, 'sessions'));
  expect(sessions).toHaveLength(1);
  return join(home, 'sessions', sessions[0]!);
}

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('rho (built binary)', () => {
  it('runs a three-turn task with tool calls and leaves a trace that replays to what the model saw', async () => {
    const { home, work } = workspace();
    writeFileSync(join(work, 'notes.txt'), 'alpha\nbeta\ngamma\n');
    server = await startLoopbackServer({
      steps: [
        {
          type: 'response',
          text: 'I will look around.',
          toolCalls: [{ name: 'list', arguments: '{"path": "."}' }],
          usage: { prompt_tokens: 1200, completion_tokens: 30, cached_tokens: 1000 },
        },
        {
          type: 'response',
          toolCalls: [
            { name: 'read', arguments: '{"path": "notes.txt"}' },
            { name: 'grep', arguments: '{"pattern": "beta", "path": "."}' },
          ],
          usage: { prompt_tokens: 1500, completion_tokens: 40 },
        },
        {
          type: 'response',
          text: 'notes.txt has three lines; beta is on line 2.',
          usage: { prompt_tokens: 1900, completion_tokens: 20 },
        },
      ],
    });
    const outcome = await runRho(['--base-url', server.url, '--model', 'gpt-4o-mini', 'What is in notes.txt?'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(outcome.stderr).not.toMatch(/Error/);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain('notes.txt has three lines; beta is on line 2.');
    expect(outcome.stderr).toMatch(/→ list\(path='\.'\)/);
    expect(server.pending()).toBe(0);
    expect(server.requests).toHaveLength(3);

    const directory = onlySession(home);
    const state = State.fromJsonl(readFileSync(join(directory, 'trace.jsonl')));
    // The replayed history is exactly what the model was sent last, plus its final answer.
    const lastRequest = server.requests[2]!.body as { messages: ChatMessage[]; model: string };
    expect(lastRequest.model).toBe('gpt-4o-mini');
    // (The client leaves out `content: null` of assistant tool-call messages on the wire.)
    const sent = lastRequest.messages
      .slice(1)
      .map((message) =>
        message.role === 'assistant' && !('content' in message) ? { ...(message as object), content: null } : message,
      );
    expect(state.messages).toEqual([
      ...sent,
      { role: 'assistant', content: 'notes.txt has three lines; beta is on line 2.' },
    ]);
    const toolResults = state.messages.filter((message) => message.role === 'tool');
    expect(toolResults).toHaveLength(3);
    expect(toolResults[1]!.content).toContain('beta');
    expect(state.usage).toMatchObject({ input_tokens: 4600, output_tokens: 90, cached_tokens: 1000 });
    expect(state.usage.cost_usd).toBeGreaterThan(0);
    expect(state.status).toBe('completed');
    const meta = JSON.parse(readFileSync(join(directory, 'meta.json'), 'utf8')) as Record<string, unknown>;
    expect(meta).toMatchObject({
      status: 'completed',
      model: 'gpt-4o-mini',
      profile: 'readonly',
      first_prompt: 'What is in notes.txt?',
    });
    expect(readFileSync(join(directory, 'config.yaml'), 'utf8')).toContain('model: gpt-4o-mini');
  });

  it('prints every event as one JSON line with --json', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'Hello there.' }] });
    const outcome = await runRho(['--json', '--base-url', server.url, 'hi'], { env: { RHO_HOME: home }, cwd: work });
    expect(outcome.code).toBe(0);
    const events = outcome.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; text?: string });
    expect(events[0]!.type).toBe('run_start');
    expect(events.at(-1)!.type).toBe('run_end');
    expect(
      events
        .filter((event) => event.type === 'text')
        .map((event) => event.text)
        .join(''),
    ).toBe('Hello there.');
    expect(events.map((event) => event.type)).toContain('llm_end');
  });

  it('says what to set when there is no API key and no base URL', async () => {
    const { home } = workspace();
    const outcome = await runRho(['do something'], { env: { RHO_HOME: home } });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr.trim().split('\n')).toHaveLength(1);
    expect(outcome.stderr).toMatch(/Set OPENAI_API_KEY, or pass --base-url/);
  });

  it('reads OPENAI_BASE_URL from .env in the current directory', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'from dotenv' }] });
    writeFileSync(join(work, '.env'), `OPENAI_BASE_URL=${server.url}\n# comment\nOPENAI_MODEL="gpt-4o"\n`);
    const outcome = await runRho(['hi'], { env: { RHO_HOME: home }, cwd: work });
    expect(outcome.code).toBe(0);
    expect((server.requests[0]!.body as { model: string }).model).toBe('gpt-4o');
  });

  it('fails with exit 1 and a one-line reason when the endpoint is unreachable', async () => {
    const { home } = workspace();
    const closed = await startLoopbackServer();
    const url = closed.url;
    await closed.close();
    const outcome = await runRho(['--base-url', url, 'hi'], { env: { RHO_HOME: home } });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/cannot reach .* is the server running\? set OPENAI_BASE_URL or --base-url/);
  });

  it('exits 1 on a model API error, 3 at a turn limit', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({
      steps: [{ type: 'http_error', status: 400, message: 'model gpt-x does not exist' }],
    });
    const failed = await runRho(['--base-url', server.url, 'hi'], { env: { RHO_HOME: home }, cwd: work });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('model gpt-x does not exist');

    server.push(
      { type: 'response', toolCalls: [{ name: 'list', arguments: '{}' }] },
      { type: 'response', text: 'Stopped early: listed the directory.' },
    );
    const limited = await runRho(['--base-url', server.url, '--max-turns', '1', 'hi'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(limited.code).toBe(3);
    expect(limited.stdout).toContain('Stopped early');
    expect((server.requests.at(-1)!.body as { tools?: unknown }).tools).toBeUndefined();
  });

  it('cancels on SIGINT with exit 130 and records the cancellation', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ steps: [{ type: 'hang' }] });
    const outcome = await runRho(['--base-url', server.url, 'wait forever'], {
      env: { RHO_HOME: home },
      cwd: work,
      onSpawn: (child) => {
        const timer = setInterval(() => {
          if (server!.requests.length > 0) {
            clearInterval(timer);
            child.kill('SIGINT');
          }
        }, 20);
      },
    });
    expect(outcome.code).toBe(130);
    const state = State.fromJsonl(readFileSync(join(onlySession(home), 'trace.jsonl')));
    expect(state.status).toBe('cancelled');
  });

  it('answers --version and --help', async () => {
    const version = await runRho(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const help = await runRho(['--help']);
    expect(help.code).toBe(0);
    // The help printed without loading yargs is exactly what yargs renders.
    const rendered = await runRho(['--help'], { env: { RHO_RENDER_HELP: '1' } });
    expect(help.stdout).toBe(rendered.stdout);
    expect(help.stdout).toContain('--base-url');
    expect(help.stdout).toContain('--json');
  });

  it('rejects unknown flags with exit 2', async () => {
    const outcome = await runRho(['--no-such-flag', 'x']);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(/Unknown argument/);
  });

  it('renders a prompt file with --var and --vars-file and sends its initial prompt', async () => {
    const { home, work } = workspace();
    writeFileSync(
      join(work, 'prompt.md'),
      '---\ndescription: d\nvariables:\n  service: {required: true}\n  env: {default: staging}\ninitial_prompt: Check the {{ service }} logs in {{ env }}.\n---\nYou investigate {{ service }} ({{ env }}, {{ region }}).',
    );
    writeFileSync(join(work, 'vars.yaml'), 'env: prod\nregion: eu\n');
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'ok' }] });
    const outcome = await runRho(
      [
        '--base-url',
        server.url,
        '-s',
        'prompt.md',
        '--vars-file',
        'vars.yaml',
        '--var',
        'service=api',
        '--var',
        'region=us',
      ],
      { env: { RHO_HOME: home }, cwd: work },
    );
    expect(outcome.stderr).toBe(outcome.stderr.replace(/Error/, ''));
    expect(outcome.code).toBe(0);
    const messages = (server.requests[0]!.body as { messages: ChatMessage[] }).messages;
    expect(messages[0]).toEqual({ role: 'system', content: 'You investigate api (prod, us).' });
    expect(messages[1]).toEqual({ role: 'user', content: 'Check the api logs in prod.' });

    const missing = await runRho(['--base-url', server.url, '-s', 'prompt.md', 'go'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('Prompt configuration error: Missing required variable: service');
  });

  it('uses $RHO_HOME/default.md as the default system prompt', async () => {
    const { home, work } = workspace();
    mkdirSync(home, { recursive: true });
    writeFileSync(
      join(home, 'default.md'),
      'Custom default on {{ platform }} in {{ working_dir }} as {{ profile_name }}.',
    );
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'ok' }] });
    const outcome = await runRho(['--base-url', server.url, 'hi'], { env: { RHO_HOME: home }, cwd: work });
    expect(outcome.code).toBe(0);
    const system = (server.requests[0]!.body as { messages: ChatMessage[] }).messages[0]!;
    expect(system.content).toMatch(/^Custom default on \w+ in .*work-.* as readonly\.$/);
  });

  it('runs from an agent config, flags overriding it', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'ok' }] });
    writeFileSync(
      join(work, 'agent.yaml'),
      `system_prompt: You are terse.\nmodel: gpt-4o\nprofile: readonly\nbase_url: ${server.url}\nbudgets:\n  max_turns: 4\n`,
    );
    const outcome = await runRho(['-c', 'agent.yaml', '--model', 'gpt-4o-mini', 'hi'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(outcome.code).toBe(0);
    const body = server.requests[0]!.body as { messages: ChatMessage[]; model: string };
    expect(body.model).toBe('gpt-4o-mini');
    expect(body.messages[0]).toEqual({ role: 'system', content: 'You are terse.' });
    const saved = readFileSync(join(onlySession(home), 'config.yaml'), 'utf8');
    expect(saved).toContain('system_prompt: You are terse.');
    expect(saved).toContain('max_turns: 4');

    const bad = await runRho(['-c', 'missing.yaml', 'hi'], { env: { RHO_HOME: home }, cwd: work });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Config file not found:');
  });

  it('resumes the latest session with its history and usage, and lists sessions', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({
      steps: [
        { type: 'response', text: 'The answer is 4.', usage: { prompt_tokens: 100, completion_tokens: 5 } },
        { type: 'response', text: 'Then 8.' },
      ],
    });
    const first = await runRho(['--base-url', server.url, 'What is 2+2?'], { env: { RHO_HOME: home }, cwd: work });
    expect(first.code).toBe(0);
    const second = await runRho(['--base-url', server.url, '-r', 'latest', 'And doubled?'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(second.code).toBe(0);
    expect(second.stderr).toContain('Resuming session:');
    const messages = (server.requests[1]!.body as { messages: ChatMessage[] }).messages.slice(1);
    expect(messages).toEqual([
      { role: 'user', content: 'What is 2+2?' },
      { role: 'assistant', content: 'The answer is 4.' },
      { role: 'user', content: 'And doubled?' },
    ]);
    const state = State.fromJsonl(readFileSync(join(onlySession(home), 'trace.jsonl')));
    expect(state.runCount).toBe(2);
    expect(state.usage.input_tokens).toBeGreaterThanOrEqual(100);

    const list = await runRho(['--list'], { env: { RHO_HOME: home } });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^ID\s+STATUS\s+MODEL\s+AGE\s+COST\s+PROMPT/);
    expect(list.stdout).toContain('What is 2+2?');

    const unknown = await runRho(['--base-url', server.url, '-r', 'ffffffff', 'x'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Session not found: ffffffff');
  });

  it('resumes a session written by the Python original and continues it', async () => {
    const { home, work } = workspace();
    const fixture = join(pythonTracesDir, 'e-multiturn-resume');
    const directory = join(home, 'sessions', 'py-session');
    cpSync(fixture, directory, { recursive: true });
    const before = State.fromJsonl(readFileSync(join(directory, 'trace.jsonl')));
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'Continuing from Python.' }] });
    const outcome = await runRho(
      ['--base-url', server.url, '--working-dir', work, '-r', 'py-session', 'One more thing.'],
      { env: { RHO_HOME: home }, cwd: work },
    );
    expect(outcome.stderr).not.toMatch(/Error/);
    expect(outcome.code).toBe(0);
    const sent = (server.requests[0]!.body as { messages: ChatMessage[] }).messages.slice(1);
    expect(sent.length).toBe(before.messages.length + 1);
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'One more thing.' });
    const after = State.fromJsonl(readFileSync(join(directory, 'trace.jsonl')));
    expect(after.runCount).toBe(before.runCount + 1);
    expect(after.messages.at(-1)).toEqual({ role: 'assistant', content: 'Continuing from Python.' });
  });

  it('writes the final answer with -o and never overwrites', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'Final answer.' }] });
    const outcome = await runRho(['--base-url', server.url, '-o', 'out/answer.md', 'go'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(outcome.code).toBe(0);
    expect(readFileSync(join(work, 'out', 'answer.md'), 'utf8')).toBe('Final answer.\n');
    const again = await runRho(['--base-url', server.url, '-o', 'out/answer.md', 'go'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('Output file already exists');
    expect(existsSync(join(home, 'sessions'))).toBe(true);
  });

  it('refuses to open the REPL without a terminal', async () => {
    const outcome = await runRho(['--base-url', 'http://127.0.0.1:9/v1'], {});
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('Non-interactive terminal detected');
  });

  it('reports and answers a tool call interrupted by a crash when resuming', async () => {
    const { home, work } = workspace();
    const directory = join(home, 'sessions', 'crashed1');
    mkdirSync(directory, { recursive: true });
    const records = [
      { type: 'run_start', prompt: 'Run the slow thing.' },
      { type: 'message', role: 'user', content: 'Run the slow thing.' },
      {
        type: 'message',
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_slow', type: 'function', function: { name: 'list', arguments: '{}' } }],
      },
      { type: 'tool_start', tool_call_id: 'call_slow', tool_name: 'list', tool_args: {} },
    ].map((record) => JSON.stringify({ ...record, ts: '2026-01-01T00:00:00.000Z' }));
    writeFileSync(join(directory, 'trace.jsonl'), `${records.join('\n')}\n{"type": "tool_e`);
    writeFileSync(
      join(directory, 'meta.json'),
      JSON.stringify({ id: 'crashed1', status: 'running', started_at: '2026-01-01T00:00:00.000Z' }),
    );
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'Recovered.' }] });
    const outcome = await runRho(['--base-url', server.url, '-r', 'crashed1', 'What happened?'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toContain('Note: tool call list (call_slow) was interrupted');
    expect(outcome.stderr).toContain('Note: the last line of the trace was cut off by a crash and was ignored.');
    const sent = (server.requests[0]!.body as { messages: ChatMessage[] }).messages.slice(1);
    expect(sent.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(sent[2]!.content).toMatch(/interrupted/);
    // The torn bytes are kept (never destroyed); new records start on a fresh line after them.
    const state = State.fromJsonl(readFileSync(join(directory, 'trace.jsonl')));
    expect(state.replay!.skippedLines).toEqual([5]);
    expect(state.status).toBe('completed');
    expect(state.messages.at(-1)).toEqual({ role: 'assistant', content: 'Recovered.' });
  });

  it('gives the agent read-only database tools from --db-config', async () => {
    const { home, work } = workspace();
    // Chinook is vendored by @rho/tools-db (see its test/fixtures/chinook/README.md).
    const chinook = join(
      dirname(fileURLToPath(import.meta.url)),
      '..',
      '..',
      '..',
      'packages',
      'tools-db',
      'test',
      'fixtures',
      'chinook',
      'Chinook_Sqlite.sqlite',
    );
    cpSync(chinook, join(work, 'chinook.sqlite'));
    writeFileSync(join(work, 'databases.yaml'), 'databases:\n  music:\n    type: sqlite\n    path: ./chinook.sqlite\n');
    server = await startLoopbackServer({
      steps: [
        {
          type: 'response',
          toolCalls: [
            {
              name: 'sqlite',
              arguments: '{"database": "music", "operation": "query", "sql": "SELECT COUNT(*) AS artists FROM Artist"}',
            },
            { name: 'sqlite', arguments: '{"database": "music", "operation": "query", "sql": "DELETE FROM Artist"}' },
          ],
        },
        { type: 'response', text: 'There are 275 artists.' },
      ],
    });
    const outcome = await runRho(
      ['--base-url', server.url, '-y', '--db-config', 'databases.yaml', 'How many artists?'],
      { env: { RHO_HOME: home }, cwd: work },
    );
    expect(outcome.code).toBe(0);
    const first = server.requests[0]!.body as { tools: { function: { name: string } }[] };
    expect(first.tools.map((tool) => tool.function.name)).toContain('sqlite');
    const results = (server.requests[1]!.body as { messages: ChatMessage[] }).messages.filter(
      (message) => message.role === 'tool',
    );
    expect(results[0]!.content).toContain('275');
    expect(results[1]!.content).toMatch(/Refused/);
  });

  it('exits promptly after using a PostgreSQL connection (connections are closed)', async () => {
    const reachable = await new Promise<boolean>((resolve) => {
      const socket = connect(5432, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (!reachable) {
      if (process.env.CI === 'true') throw new Error('PostgreSQL must answer on 127.0.0.1:5432 in CI');
      return;
    }
    const { home, work } = workspace();
    writeFileSync(
      join(work, 'databases.yaml'),
      'databases:\n  main:\n    type: postgres\n    host: 127.0.0.1\n    port: 5432\n    user: postgres\n    database: test\n',
    );
    server = await startLoopbackServer({
      steps: [
        {
          type: 'response',
          toolCalls: [
            {
              name: 'postgres',
              arguments: '{"database": "main", "operation": "query", "sql": "SELECT 40 + 2 AS answer"}',
            },
          ],
        },
        { type: 'response', text: 'The answer is 42.' },
      ],
    });
    const outcome = await runRho(
      ['--base-url', server.url, '-y', '--db-config', 'databases.yaml', 'Ask the database.'],
      { env: { RHO_HOME: home }, cwd: work },
    );
    expect(outcome.code).toBe(0);
    const results = (server.requests[1]!.body as { messages: ChatMessage[] }).messages.filter(
      (message) => message.role === 'tool',
    );
    expect(results[0]!.content).toContain('42');
  });
});
