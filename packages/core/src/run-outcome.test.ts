import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import type { SessionEvent } from './events.js';
import { State } from './state.js';
import { createScriptedModelClient } from './testing/scripted-model-client.js';

function traceOf(directory: string): Record<string, unknown>[] {
  return readFileSync(join(directory, 'trace.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('how a run ends when the model answer is not whole', () => {
  it('ends truncated when the last answer stopped at finish_reason length, keeping the text in the history', async () => {
    const client = createScriptedModelClient({ steps: [{ text: 'The first half of', finishReason: 'length' }] });
    const directory = mkdtempSync(join(tmpdir(), 'rho-truncated-'));
    const session = new Agent({ systemPrompt: 'Be brief.', model: 'scripted-model' }).createSession({
      client,
      directory,
    });
    const result = await session.run('Write a long report');
    client.assertDone();
    expect(result.status).toBe('truncated');
    expect(result.text).toBe('The first half of');
    const records = traceOf(directory);
    expect(records.at(-1)).toMatchObject({ type: 'run_end', status: 'truncated', finish_reason: 'length' });
    const replayed = State.fromJsonl(readFileSync(join(directory, 'trace.jsonl')));
    expect(replayed.status).toBe('truncated');
    expect(replayed.messages.at(-1)).toEqual({ role: 'assistant', content: 'The first half of' });
  });

  it('a length finish on a turn with tool calls is not the last answer: the loop goes on', async () => {
    const client = createScriptedModelClient({
      steps: [{ toolCalls: [{ name: 'missing_tool', arguments: '{"a":' }], finishReason: 'length' }, { text: 'Done.' }],
    });
    const session = new Agent({ systemPrompt: 'x', model: 'scripted-model' }).createSession({ client });
    const result = await session.run('Go');
    client.assertDone();
    expect(result.status).toBe('completed');
  });

  it('writes each retry as a retry record and event, which replay ignores', async () => {
    const client = createScriptedModelClient({
      steps: [
        {
          text: 'Hello.',
          retries: [
            { attempt: 2, maxAttempts: 9, delayMs: 1200, reason: 'rate limited (429)', statusCode: 429 },
            { attempt: 3, maxAttempts: 9, delayMs: 2400, reason: 'server error 503', statusCode: 503 },
          ],
        },
      ],
    });
    const directory = mkdtempSync(join(tmpdir(), 'rho-retry-'));
    const events: SessionEvent[] = [];
    const session = new Agent({ systemPrompt: 'x', model: 'scripted-model' }).createSession({
      client,
      directory,
      onEvent: (event) => events.push(event),
    });
    const result = await session.run('Hi');
    client.assertDone();
    expect(result.status).toBe('completed');
    const retries = traceOf(directory).filter((record) => record.type === 'retry');
    expect(retries).toEqual([
      {
        type: 'retry',
        ts: expect.any(String),
        attempt: 2,
        max_attempts: 9,
        delay_ms: 1200,
        reason: 'rate limited (429)',
        status_code: 429,
      },
      {
        type: 'retry',
        ts: expect.any(String),
        attempt: 3,
        max_attempts: 9,
        delay_ms: 2400,
        reason: 'server error 503',
        status_code: 503,
      },
    ]);
    expect(events.filter((event) => event.type === 'retry')).toHaveLength(2);
    const text = readFileSync(join(directory, 'trace.jsonl'), 'utf8');
    const withoutRetries = text
      .split('\n')
      .filter((line) => line === '' || (JSON.parse(line) as { type: string }).type !== 'retry')
      .join('\n');
    const replayed = State.fromJsonl(text);
    expect(replayed.replay).toMatchObject({ skippedLines: [], invalidRecords: [] });
    expect(replayed.messages).toEqual(State.fromJsonl(withoutRetries).messages);
    expect(replayed.usage).toEqual(State.fromJsonl(withoutRetries).usage);
  });

  it('records the retries of a compaction call too, marked with its purpose', async () => {
    const client = createScriptedModelClient({
      steps: [
        { text: 'First answer.' },
        {
          text: 'Summary of the work.',
          retries: [{ attempt: 2, maxAttempts: 3, delayMs: 500, reason: 'server error 502', statusCode: 502 }],
        },
      ],
    });
    const directory = mkdtempSync(join(tmpdir(), 'rho-compact-retry-'));
    const session = new Agent({ systemPrompt: 'x', model: 'scripted-model' }).createSession({ client, directory });
    await session.run('Hi');
    const compacted = await session.compact();
    client.assertDone();
    expect(compacted.ok).toBe(true);
    expect(traceOf(directory).filter((record) => record.type === 'retry')).toEqual([
      {
        type: 'retry',
        ts: expect.any(String),
        attempt: 2,
        max_attempts: 3,
        delay_ms: 500,
        reason: 'server error 502',
        status_code: 502,
        purpose: 'compaction',
      },
    ]);
  });
});
