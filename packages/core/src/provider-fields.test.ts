import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createModelClient } from '@rho/model-client';
import { startLoopbackServer } from '@rho/model-client/testing';
import type { LoopbackServer } from '@rho/model-client/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import type { TraceRecord } from './events.js';
import { State } from './state.js';
import { defineTool } from './tool.js';

// Issue 18 in the loop: a refusal is a trace record, Gemini's thought signature goes back to the
// provider with its call (also after a resume), and a call cut by the output limit is reported to
// the model as cut. Served by the loopback server as raw SSE, read by the real client.

const servers: LoopbackServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const echo = defineTool({
  name: 'echo',
  description: 'Repeats text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  annotations: { readOnly: true },
  async handle({ arguments: { text } }) {
    return { content: text, success: true };
  },
});

function sse(deltas: [Record<string, unknown>, string | null][]): string {
  const chunks = deltas.map(([delta, finish]) => ({
    id: 'c',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: finish }],
  }));
  return `${chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('')}data: [DONE]\n\n`;
}

async function agentFor(...bodies: string[]) {
  const server = await startLoopbackServer({
    steps: bodies.map((body) => ({ type: 'body' as const, contentType: 'text/event-stream', body })),
  });
  servers.push(server);
  const client = createModelClient({ model: 'm', baseURL: server.url, apiKey: 'k', maxRetries: 0 });
  return { server, agent: new Agent({ tools: [echo], client }) };
}

function readTrace(directory: string): TraceRecord[] {
  return readFileSync(join(directory, 'trace.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as TraceRecord);
}

const signature = { google: { thought_signature: 'c2lnbmF0dXJl' } };

describe('provider fields and refusals in the loop', () => {
  it('writes a refusal record and replays the trace unchanged', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'rho-refusal-'));
    const { agent } = await agentFor(
      sse([
        [{ role: 'assistant', refusal: "I can't help with that." }, null],
        [{}, 'stop'],
      ]),
    );
    const result = await agent.createSession({ directory }).run('do it');
    expect(result.status).toBe('completed');
    const records = readTrace(directory);
    expect(records.filter((record) => record.type === 'refusal')).toMatchObject([
      { type: 'refusal', content: "I can't help with that." },
    ]);
    const replayed = State.fromJsonl(readFileSync(join(directory, 'trace.jsonl')));
    expect(replayed.messages.at(-1)).toEqual({ role: 'assistant', content: '' });
  });

  it("sends Gemini's thought_signature back with its call, in the run and after a resume", async () => {
    const directory = mkdtempSync(join(tmpdir(), 'rho-signature-'));
    const call = {
      index: 0,
      id: 'call_1',
      type: 'function',
      function: { name: 'echo', arguments: '{"text":"a"}' },
      extra_content: signature,
    };
    const { server, agent } = await agentFor(
      sse([[{ tool_calls: [call] }, 'tool_calls']]),
      sse([[{ content: 'done' }, 'stop']]),
      sse([[{ content: 'again' }, 'stop']]),
    );
    await agent.createSession({ directory }).run('go');
    const sent = {
      id: 'call_1',
      type: 'function',
      function: { name: 'echo', arguments: '{"text":"a"}' },
      extra_content: signature,
    };
    expect(
      server.requests[1]?.body.messages.find((message: { role: string }) => message.role === 'assistant').tool_calls,
    ).toEqual([sent]);
    const resumed = agent.createSession({
      directory,
      state: State.fromJsonl(readFileSync(join(directory, 'trace.jsonl'))),
    });
    await resumed.run('more');
    expect(
      server.requests[2]?.body.messages.find((message: { role: string }) => message.role === 'assistant').tool_calls,
    ).toEqual([sent]);
  });

  it('tells the model its call was cut by the output limit, not that its JSON is bad', async () => {
    const call = {
      index: 0,
      id: 'call_1',
      type: 'function',
      function: { name: 'echo', arguments: '{"text":"a very long' },
    };
    const { server, agent } = await agentFor(
      sse([[{ tool_calls: [call] }, 'length']]),
      sse([[{ content: 'ok' }, 'stop']]),
    );
    await agent.createSession().run('go');
    const result = server.requests[1]?.body.messages.find((message: { role: string }) => message.role === 'tool');
    expect(result.content).toContain('was cut off');
    expect(result.content).toContain('output token limit');
    expect(result.content).not.toContain('not valid JSON');
  });
});
