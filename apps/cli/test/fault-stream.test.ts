import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { State } from '@rho/core';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer, LoopbackStep } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';
import type { Outcome } from './support/run-rho.js';

// Faults of the model server, played by the loopback server against real `rho` processes: a
// stream that ends before the answer is finished, a page that is not a stream, an answer cut off
// at the output limit, a server that never answers, rate-limit storms. Each case checks the exit
// code, what the user is told, and that the trace holds every record the process reported (with
// --json it reports each record only after appending it), replays cleanly, and that meta.json
// says how the run ended.

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(...steps: LoopbackStep[]): Promise<LoopbackServer> {
  server = await startLoopbackServer({ steps });
  return server;
}

type Record_ = Record<string, unknown> & { type: string };

interface Run extends Outcome {
  home: string;
  work: string;
  /** The JSON lines of stdout (with --json). */
  events: Record_[];
}

async function rho(args: string[], options: { json?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  const home = mkdtempSync(join(tmpdir(), 'rho-fault-home-'));
  const work = mkdtempSync(join(tmpdir(), 'rho-fault-work-'));
  writeFileSync(join(work, 'notes.txt'), 'forty-two\n');
  const outcome = await runRho([...(options.json === true ? ['--json'] : []), '--base-url', server!.url, ...args], {
    cwd: work,
    env: { RHO_HOME: home, ...options.env },
  });
  const events =
    options.json === true
      ? outcome.stdout
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line) as Record_)
      : [];
  return { ...outcome, home, work, events };
}

/**
 * The session's trace after a run: every record the process reported is in it, in order, the
 * trace replays without skipped, torn or invalid lines, and no tool call is left without result.
 */
function traceOf(run: Run): { records: Record_[]; state: State; meta: Record<string, unknown> } {
  const sessions = readdirSync(join(run.home, 'sessions'));
  expect(sessions).toHaveLength(1);
  const directory = join(run.home, 'sessions', sessions[0]!);
  const text = readFileSync(join(directory, 'trace.jsonl'), 'utf8');
  const records = text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record_);
  let position = 0;
  for (const reported of run.events.filter((event) => event.type !== 'text' && event.type !== 'reasoning')) {
    // A reported record may carry extra fields (--json adds some to run_start); the trace's own must match.
    while (position < records.length && !sameRecord(records[position]!, reported)) position += 1;
    expect(position, `reported ${JSON.stringify(reported)} is missing from the trace`).toBeLessThan(records.length);
    position += 1;
  }
  const state = State.fromJsonl(text);
  expect(state.replay).toMatchObject({
    skippedLines: [],
    tornLastLine: false,
    invalidRecords: [],
    interruptedToolCalls: [],
  });
  const meta = JSON.parse(readFileSync(join(directory, 'meta.json'), 'utf8')) as Record<string, unknown>;
  return { records, state, meta };
}

function sameRecord(traced: Record_, reported: Record_): boolean {
  return Object.entries(traced).every(([key, value]) => isDeepStrictEqual(reported[key], value));
}

function textOf(run: Run): string {
  return run.events.flatMap((event) => (event.type === 'text' ? [event.text as string] : [])).join('');
}

describe('rho against a faulty model server', () => {
  it('a stream closed cleanly mid-text is an error that says what arrived; the partial text is kept with it', async () => {
    await serve({ type: 'close', text: 'The answer is forty' }, { type: 'close', text: 'The answer is forty' });
    const human = await rho(['What is in notes.txt?']);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain('The answer is forty');
    expect(human.stderr).toContain(
      'ended before the answer was finished (no finish_reason; received 4 chunks, 19 characters of text)',
    );
    expect(human.stderr).toContain('not retried because part of the answer was already streamed');

    const json = await rho(['What is in notes.txt?'], { json: true });
    expect(json.code).toBe(1);
    expect(json.events.at(-1)).toMatchObject({ type: 'run_end', status: 'error' });
    const { records, state, meta } = traceOf(json);
    const error = records.find((record) => record.type === 'error');
    expect(error).toMatchObject({ code: 'model_api_error', partial_text: textOf(json) });
    expect(textOf(json)).toBe('The answer is forty');
    // The unfinished text is not an answer: it is not in the history the next run continues.
    expect(state.messages.map((message) => message.role)).toEqual(['user']);
    expect(meta.status).toBe('error');
    expect(server!.requests).toHaveLength(2);
  });

  it('a stream closed mid-tool-call runs no tool and leaves no call without a result', async () => {
    const partial: LoopbackStep = {
      type: 'close',
      text: 'Reading it.',
      toolCalls: [{ name: 'read', arguments: '{"path": "notes.txt"}' }],
      partial: true,
    };
    await serve(partial, partial);
    const human = await rho(['--max-retries', '0', 'Read notes.txt']);
    expect(human.code).toBe(1);
    expect(human.stderr).toContain('an unfinished tool call to read');
    expect(human.stderr).not.toContain('→ read');

    const json = await rho(['--max-retries', '0', 'Read notes.txt'], { json: true });
    expect(json.code).toBe(1);
    const { records, state, meta } = traceOf(json);
    expect(records.some((record) => record.type === 'tool_start')).toBe(false);
    expect(state.messages.some((message) => message.role === 'assistant')).toBe(false);
    expect(meta.status).toBe('error');
  });

  it('an HTML page served with status 200 to a streaming request is refused, quoted, and not retried', async () => {
    const page: LoopbackStep = {
      type: 'body',
      body: '<!DOCTYPE html><html><body><h1>Welcome to nginx!</h1></body></html>',
    };
    await serve(page, page);
    const human = await rho(['Say hello']);
    expect(human.code).toBe(1);
    expect(human.stderr).toContain('answered a streaming request with a text/html body instead of an event stream');
    expect(human.stderr).toContain('Welcome to nginx!');
    expect(human.stderr).toContain('check OPENAI_BASE_URL or --base-url');

    const json = await rho(['Say hello'], { json: true });
    expect(json.code).toBe(1);
    expect(traceOf(json).meta.status).toBe('error');
    expect(server!.requests).toHaveLength(2);
  });

  it('a JSON body served with status 200 to a streaming request is refused with its content', async () => {
    await serve({ type: 'body', contentType: 'application/json', body: '{"detail":"Not Found: use /api/chat"}' });
    const json = await rho(['Say hello'], { json: true });
    expect(json.code).toBe(1);
    const error = json.events.find((event) => event.type === 'error');
    expect(error?.content).toContain('application/json body instead of an event stream');
    expect(error?.content).toContain('Not Found: use /api/chat');
    traceOf(json);
  });

  it('a stream of only empty choices is no answer, never a completed run', async () => {
    const empty: LoopbackStep = {
      type: 'chunks',
      chunks: [
        { id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [] },
        {
          id: 'c',
          object: 'chat.completion.chunk',
          created: 0,
          model: 'm',
          choices: [],
          usage: { prompt_tokens: 5, completion_tokens: 0, total_tokens: 5 },
        },
      ],
    };
    await serve(empty, empty);
    const human = await rho(['--max-retries', '0', 'Say hello']);
    expect(human.code).toBe(1);
    expect(human.stderr).toContain('ended with no answer at all (2 chunks, none with a choice)');

    const json = await rho(['--max-retries', '0', 'Say hello'], { json: true });
    expect(json.code).toBe(1);
    expect(json.events.at(-1)).toMatchObject({ type: 'run_end', status: 'error' });
    expect(traceOf(json).meta.status).toBe('error');
  });

  it('an answer cut off at finish_reason length ends the run truncated (exit 1), and -o does not write it', async () => {
    const cut: LoopbackStep = { type: 'response', text: 'Part one of the answer, and then', finishReason: 'length' };
    await serve(cut, cut);
    const human = await rho(['-o', 'answer.md', 'Write the report']);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain('Part one of the answer, and then');
    expect(human.stderr).toContain(
      "Incomplete: the model's answer was cut off at its output-token limit (finish_reason: length)",
    );
    expect(human.stderr).toContain(
      "answer.md was not written: the answer is incomplete (cut off at the model's output limit)",
    );
    expect(existsSync(join(human.work, 'answer.md'))).toBe(false);

    const json = await rho(['-o', 'answer.md', 'Write the report'], { json: true });
    expect(json.code).toBe(1);
    expect(json.events.at(-1)).toMatchObject({ type: 'run_end', status: 'truncated', finish_reason: 'length' });
    expect(json.events.find((event) => event.type === 'llm_end')).toMatchObject({ finish_reason: 'length' });
    expect(existsSync(join(json.work, 'answer.md'))).toBe(false);
    const { state, meta } = traceOf(json);
    // What the model wrote stays in the history (a resumed session can ask it to continue).
    expect(state.messages.at(-1)).toEqual({ role: 'assistant', content: 'Part one of the answer, and then' });
    expect(state.status).toBe('truncated');
    expect(meta.status).toBe('truncated');
  });

  it('a server that never sends headers times out after the configured first-byte timeout, with the retry shown', async () => {
    await serve({ type: 'hang' }, { type: 'hang' }, { type: 'hang' }, { type: 'hang' });
    const human = await rho(['--first-byte-timeout', '0.4', '--max-retries', '1', 'Say hello']);
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(
      /no response from http:\/\/127\.0\.0\.1:\d+\/v1 within 400 ms, retrying in \d+ ms, attempt 2 of 2\n/,
    );
    expect(human.stderr).toContain(
      'within 400 ms (first-byte timeout; a slow or busy model may need more: --first-byte-timeout or RHO_FIRST_BYTE_TIMEOUT) (after 2 attempts)',
    );

    // The same settings from the environment, with --json: the retry is an event and a trace record.
    const json = await rho(['Say hello'], { json: true, env: { RHO_FIRST_BYTE_TIMEOUT: '0.4', RHO_MAX_RETRIES: '1' } });
    expect(json.code).toBe(1);
    const retries = json.events.filter((event) => event.type === 'retry');
    expect(retries).toEqual([
      expect.objectContaining({ attempt: 2, max_attempts: 2, reason: expect.stringContaining('within 400 ms') }),
    ]);
    const { records, meta } = traceOf(json);
    expect(records.filter((record) => record.type === 'retry')).toHaveLength(1);
    expect(meta.status).toBe('error');
    expect(server!.requests).toHaveLength(4);
  });

  it('a 429 storm is retried visibly and the run completes; the retry records replay and the session resumes', async () => {
    const limited = (retryAfterMs: string): LoopbackStep => ({
      type: 'http_error',
      status: 429,
      message: 'Rate limit reached for requests',
      headers: { 'retry-after-ms': retryAfterMs },
    });
    await serve(
      limited('30'),
      limited('30'),
      limited('30'),
      { type: 'response', text: 'Finally through.' },
      limited('30'),
      { type: 'response', text: 'Again.' },
    );
    const json = await rho(['Say hello'], { json: true });
    expect(json.code).toBe(0);
    expect(textOf(json)).toBe('Finally through.');
    const retries = json.events.filter((event) => event.type === 'retry');
    expect(retries.map((event) => [event.attempt, event.max_attempts, event.reason, event.status_code])).toEqual([
      [2, 9, 'rate limited (429)', 429],
      [3, 9, 'rate limited (429)', 429],
      [4, 9, 'rate limited (429)', 429],
    ]);
    for (const retry of retries) expect(retry.delay_ms).toBeGreaterThanOrEqual(30);
    const { records, state, meta } = traceOf(json);
    expect(records.filter((record) => record.type === 'retry')).toHaveLength(3);
    expect(state.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(meta.status).toBe('completed');

    // `rho watch` shows the retries of a session, as the run itself did.
    const watched = await runRho(['watch', String(meta.id)], { env: { RHO_HOME: json.home } });
    expect(watched.code).toBe(0);
    expect(watched.stdout.match(/rate limited \(429\), retrying in [\d.]+ m?s, attempt \d of 9/g)).toHaveLength(3);

    // Resuming a trace with retry records: they change nothing in the history sent to the model.
    const resumed = await runRho(['--base-url', server!.url, '-r', 'latest', 'Once more'], {
      cwd: json.work,
      env: { RHO_HOME: json.home },
    });
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(/rate limited \(429\), retrying in \d+ ms, attempt 2 of 9\n/);
    const sent = server!.requests.at(-1)!.body as { messages: { role: string; content: string }[] };
    expect(sent.messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'user']);
  });

  it('a 429 storm longer than --max-retries fails with exit 1 after showing each retry', async () => {
    const limited: LoopbackStep = {
      type: 'http_error',
      status: 429,
      message: 'Rate limit reached for requests',
      headers: { 'retry-after-ms': '20' },
    };
    await serve(limited, limited, limited, { type: 'response', text: 'never reached' });
    const human = await rho(['--max-retries', '2', 'Say hello']);
    expect(human.code).toBe(1);
    const lines = human.stderr.split('\n').filter((line) => line.startsWith('rate limited (429), retrying in'));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/attempt 2 of 3$/);
    expect(lines[1]).toMatch(/attempt 3 of 3$/);
    expect(human.stderr).toContain(
      'API error 429 (after 3 attempts): Rate limit reached for requests (rate limited or out of quota',
    );
    expect(server!.pending()).toBe(1);
  });

  it('refuses bad timeout and retry settings from flags, the environment and the agent config with exit 2', async () => {
    await serve();
    const flag = await rho(['--first-byte-timeout', 'soon', 'Say hello']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain(
      '--first-byte-timeout must be a positive number of seconds, for example 300 (got "soon").',
    );
    const variable = await rho(['Say hello'], { env: { RHO_MAX_RETRIES: '-1' } });
    expect(variable.code).toBe(2);
    expect(variable.stderr).toContain('RHO_MAX_RETRIES must be a whole number of retries, 0 or more (got "-1").');
    const idle = await rho(['--idle-timeout', '0', 'Say hello']);
    expect(idle.code).toBe(2);
    expect(idle.stderr).toContain('--idle-timeout must be a positive number of seconds');
    const configDir = mkdtempSync(join(tmpdir(), 'rho-fault-config-'));
    writeFileSync(join(configDir, 'agent.yaml'), 'idle_timeout: fast\n');
    const config = await rho(['-c', join(configDir, 'agent.yaml'), 'Say hello']);
    expect(config.code).toBe(2);
    expect(config.stderr).toContain('\'idle_timeout\' must be a positive number of seconds (got "fast").');
    expect(server!.requests).toHaveLength(0);
  });
});
