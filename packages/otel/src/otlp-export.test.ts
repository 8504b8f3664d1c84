import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Agent, createDelegateTool, createSecretRedactor, defineTool } from '@rho/core';
import type { LoopbackServer } from '@rho/core/testing';
import { startLoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createOtlpTracing } from './otlp-tracing.js';
import { otlpTracesUrl } from './otlp-settings.js';
import type { OtlpReceiver, ReceivedSpan } from './testing/otlp-receiver.js';
import { startOtlpReceiver } from './testing/otlp-receiver.js';

const SECRET = 'the-launch-code-is-4711';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a word up.',
  parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
  annotations: { readOnly: true },
  async handle({ arguments: { word } }) {
    return { content: `${word}: a fruit (${SECRET})`, success: true };
  },
});

const broken = defineTool({
  name: 'broken',
  description: 'Always fails.',
  parameters: { type: 'object', properties: {} },
  annotations: { readOnly: true },
  async handle() {
    return { content: 'the disk is on fire', success: false };
  },
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function loopback(): Promise<LoopbackServer> {
  const server = await startLoopbackServer({
    steps: [
      // The parent: two concurrent read-only calls, one of which fails.
      {
        type: 'response',
        toolCalls: [
          { id: 'call_lookup', name: 'lookup', arguments: '{"word":"apple"}' },
          { id: 'call_broken', name: 'broken', arguments: '{}' },
        ],
        usage: { prompt_tokens: 100, completion_tokens: 20 },
      },
      // The parent delegates.
      {
        type: 'response',
        toolCalls: [{ id: 'call_delegate', name: 'delegate', arguments: '{"instruction":"Look up pear."}' }],
        usage: { prompt_tokens: 150, completion_tokens: 15 },
      },
      // The child: one tool call, then its answer.
      {
        type: 'response',
        toolCalls: [{ id: 'call_child_lookup', name: 'lookup', arguments: '{"word":"pear"}' }],
        usage: { prompt_tokens: 50, completion_tokens: 5 },
      },
      { type: 'response', text: 'Pear is a fruit.', usage: { prompt_tokens: 70, completion_tokens: 6 } },
      // The parent's answer.
      { type: 'response', text: `All done (${SECRET}).`, usage: { prompt_tokens: 200, completion_tokens: 9 } },
    ],
  });
  cleanups.push(() => server.close());
  return server;
}

async function receiver(options: { hang?: boolean } = {}): Promise<OtlpReceiver> {
  const started = await startOtlpReceiver(options);
  cleanups.push(() => started.close());
  return started;
}

function agentFor(server: LoopbackServer): Agent {
  return new Agent({
    systemPrompt: 'You are a careful assistant.',
    model: 'loop-model',
    tools: [lookup, broken, createDelegateTool()],
    clientOptions: { baseURL: server.url, apiKey: 'test-key', maxRetries: 0 },
  });
}

function byName(spans: ReceivedSpan[], name: string): ReceivedSpan[] {
  return spans.filter((span) => span.name === name);
}

function only(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = byName(spans, name);
  expect(found, name).toHaveLength(1);
  return found[0]!;
}

describe('OTLP export of a session', () => {
  it('exports invoke_agent, chat and execute_tool spans with GenAI attributes, the delegate child under its tool call', async () => {
    const server = await loopback();
    const collector = await receiver();
    const errors: Error[] = [];
    const tracing = createOtlpTracing({
      url: otlpTracesUrl(collector.url),
      headers: { 'x-api-key': 'k123' },
      serviceVersion: '9.9.9',
      onExportError: (error) => errors.push(error),
    });
    const session = agentFor(server).createSession();
    tracing.instrument(session);
    const result = await session.run(`Tell me about apples and pears. ${SECRET}`);
    expect(result.status).toBe('completed');
    await tracing.shutdown();
    expect(errors).toEqual([]);
    expect(collector.requestHeaders[0]?.['x-api-key']).toBe('k123');
    expect(collector.requestHeaders[0]?.['content-type']).toBe('application/json');

    const spans = collector.spans;
    expect(spans.map((span) => span.name).sort()).toEqual(
      [
        'invoke_agent rho',
        'chat loop-model',
        'chat loop-model',
        'chat loop-model',
        'execute_tool lookup',
        'execute_tool broken',
        'execute_tool delegate',
        'invoke_agent delegate',
        'chat loop-model',
        'chat loop-model',
        'execute_tool lookup',
      ].sort(),
    );
    // One trace; the resource names the service.
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    expect(spans[0]!.resource).toMatchObject({ 'service.name': 'rho', 'service.version': '9.9.9' });

    const root = only(spans, 'invoke_agent rho');
    const child = only(spans, 'invoke_agent delegate');
    const delegateCall = only(spans, 'execute_tool delegate');
    const brokenCall = only(spans, 'execute_tool broken');
    const lookups = byName(spans, 'execute_tool lookup');
    const parentLookup = lookups.find((span) => span.attributes['gen_ai.tool.call.id'] === 'call_lookup')!;
    const childLookup = lookups.find((span) => span.attributes['gen_ai.tool.call.id'] === 'call_child_lookup')!;
    const chats = byName(spans, 'chat loop-model').sort((a, b) => a.startMs - b.startMs);

    // Parentage: the run is the root; calls of a run are its children; the child's run hangs
    // under the delegate call, and the child's calls under the child's run.
    expect(root.parentSpanId).toBeUndefined();
    for (const span of [parentLookup, brokenCall, delegateCall]) expect(span.parentSpanId).toBe(root.spanId);
    expect(child.parentSpanId).toBe(delegateCall.spanId);
    expect(childLookup.parentSpanId).toBe(child.spanId);
    const parentChats = chats.filter((span) => span.parentSpanId === root.spanId);
    const childChats = chats.filter((span) => span.parentSpanId === child.spanId);
    expect(parentChats).toHaveLength(3);
    expect(childChats).toHaveLength(2);

    // The agent spans.
    expect(root.kind).toBe(1);
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'rho',
      'gen_ai.conversation.id': session.id,
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'loop-model',
      'gen_ai.usage.input_tokens': 100 + 150 + 200 + 50 + 70,
      'gen_ai.usage.output_tokens': 20 + 15 + 9 + 5 + 6,
      'rho.run.status': 'completed',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(server.url).port),
    });
    expect(child.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'delegate',
      'gen_ai.request.model': 'loop-model',
      'rho.parent_session.id': session.id,
      'rho.run.status': 'completed',
    });
    expect(child.attributes['gen_ai.conversation.id']).not.toBe(session.id);
    expect(childLookup.attributes['gen_ai.conversation.id']).toBe(child.attributes['gen_ai.conversation.id']);

    // The chat spans: one per model call, in order, with the response's id, finish reason and usage.
    expect(chats.map((span) => span.attributes['gen_ai.usage.input_tokens'])).toEqual([100, 150, 50, 70, 200]);
    expect(chats.map((span) => span.attributes['gen_ai.usage.output_tokens'])).toEqual([20, 15, 5, 6, 9]);
    expect(chats.map((span) => span.attributes['gen_ai.response.id'])).toEqual(
      [1, 2, 3, 4, 5].map((n) => `chatcmpl-loopback-${n}`),
    );
    expect(chats.map((span) => span.attributes['gen_ai.response.finish_reasons'])).toEqual([
      ['tool_calls'],
      ['tool_calls'],
      ['tool_calls'],
      ['stop'],
      ['stop'],
    ]);
    for (const chat of chats) {
      expect(chat.kind).toBe(3);
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'loop-model',
        'gen_ai.response.model': 'loop-model',
        'gen_ai.provider.name': 'openai',
        'server.address': '127.0.0.1',
      });
      expect(chat.attributes['error.type']).toBeUndefined();
    }

    // The tool spans.
    expect(parentLookup.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup',
      'gen_ai.tool.type': 'function',
    });
    expect(parentLookup.status.code).toBe(0);
    expect(parentLookup.attributes['error.type']).toBeUndefined();
    expect(brokenCall.attributes).toMatchObject({ 'gen_ai.tool.name': 'broken', 'error.type': 'tool_error' });
    expect(brokenCall.status.code).toBe(2);

    // Timing: the calls' own times, nested as they ran (trace timestamps are whole milliseconds).
    const within = (inner: ReceivedSpan, outer: ReceivedSpan) => {
      expect(inner.startMs).toBeGreaterThanOrEqual(outer.startMs);
      expect(inner.endMs).toBeLessThanOrEqual(outer.endMs + 2);
      expect(inner.endMs).toBeGreaterThanOrEqual(inner.startMs);
    };
    for (const span of [...parentChats, parentLookup, brokenCall, delegateCall]) within(span, root);
    within(child, delegateCall);
    for (const span of [...childChats, childLookup]) within(span, child);
    for (let index = 1; index < parentChats.length; index += 1)
      expect(parentChats[index]!.startMs).toBeGreaterThanOrEqual(parentChats[index - 1]!.endMs);

    // Content stays out by default: neither the prompt, nor tool results, nor answers were sent.
    for (const body of collector.bodies) expect(body).not.toContain(SECRET);
    for (const span of spans) {
      for (const key of [
        'gen_ai.input.messages',
        'gen_ai.output.messages',
        'gen_ai.system_instructions',
        'gen_ai.tool.call.arguments',
        'gen_ai.tool.call.result',
      ])
        expect(span.attributes[key], `${span.name} ${key}`).toBeUndefined();
    }
  });

  it('records messages, tool arguments and results when content capture is on', async () => {
    const server = await loopback();
    const collector = await receiver();
    const tracing = createOtlpTracing({ url: otlpTracesUrl(collector.url) });
    const session = agentFor(server).createSession();
    tracing.instrument(session, { captureContent: true, agentName: 'fruit-expert' });
    expect((await session.run(`Tell me about apples. ${SECRET}`)).status).toBe('completed');
    await tracing.shutdown();

    const spans = collector.spans;
    const root = only(spans, 'invoke_agent fruit-expert');
    expect(JSON.parse(root.attributes['gen_ai.input.messages'] as string)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: `Tell me about apples. ${SECRET}` }] },
    ]);
    const chats = byName(spans, 'chat loop-model')
      .filter((span) => span.parentSpanId === root.spanId)
      .sort((a, b) => a.startMs - b.startMs);
    expect(JSON.parse(chats[0]!.attributes['gen_ai.system_instructions'] as string)).toEqual([
      { type: 'text', content: 'You are a careful assistant.' },
    ]);
    expect(JSON.parse(chats[0]!.attributes['gen_ai.input.messages'] as string)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: `Tell me about apples. ${SECRET}` }] },
    ]);
    expect(JSON.parse(chats[0]!.attributes['gen_ai.output.messages'] as string)).toEqual([
      {
        role: 'assistant',
        finish_reason: 'tool_calls',
        parts: [
          { type: 'tool_call', id: 'call_lookup', name: 'lookup', arguments: { word: 'apple' } },
          { type: 'tool_call', id: 'call_broken', name: 'broken', arguments: {} },
        ],
      },
    ]);
    // The second call sends the tool results back.
    const secondInput = JSON.parse(chats[1]!.attributes['gen_ai.input.messages'] as string) as { role: string }[];
    expect(secondInput.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
    expect(secondInput[2]).toEqual({
      role: 'tool',
      parts: [{ type: 'tool_call_response', id: 'call_lookup', response: `apple: a fruit (${SECRET})` }],
    });
    expect(JSON.parse(chats[2]!.attributes['gen_ai.output.messages'] as string)).toEqual([
      { role: 'assistant', finish_reason: 'stop', parts: [{ type: 'text', content: `All done (${SECRET}).` }] },
    ]);
    const lookupCall = byName(spans, 'execute_tool lookup').find(
      (span) => span.attributes['gen_ai.tool.call.id'] === 'call_lookup',
    )!;
    expect(lookupCall.attributes['gen_ai.tool.call.arguments']).toBe('{"word":"apple"}');
    expect(lookupCall.attributes['gen_ai.tool.call.result']).toBe(`apple: a fruit (${SECRET})`);
    // The child's agent spans capture its own task.
    const child = only(spans, 'invoke_agent delegate');
    expect(JSON.parse(child.attributes['gen_ai.input.messages'] as string)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'Look up pear.' }] },
    ]);
  });

  it("keeps the redactor's secrets and any URL's password out of every span, content captured or not", async () => {
    const server = await loopback();
    const collector = await receiver();
    const tracing = createOtlpTracing({
      url: otlpTracesUrl(collector.url),
      redactor: createSecretRedactor([SECRET]),
    });
    const session = agentFor(server).createSession();
    tracing.instrument(session, { captureContent: true });
    const url = 'postgres://app:hunter2-db@db.internal/prod';
    expect((await session.run(`Tell me about apples. ${SECRET} ${url}`)).status).toBe('completed');
    await tracing.shutdown();
    const bodies = collector.bodies.join('\n');
    expect(bodies).toContain('[REDACTED]');
    expect(bodies).toContain('postgres://app:[REDACTED]@db.internal/prod');
    expect(bodies).not.toContain(SECRET);
    expect(bodies).not.toContain('hunter2-db');
    // The spans themselves are intact: names, parentage and the rest of the content.
    const root = only(collector.spans, 'invoke_agent rho');
    expect(root.attributes['gen_ai.input.messages']).toContain('Tell me about apples. [REDACTED]');
    expect(only(collector.spans, 'invoke_agent delegate').parentSpanId).toBeDefined();
  });

  it('marks a failed model call with error.type and the run as an error', async () => {
    const server = await startLoopbackServer({ steps: [{ type: 'http_error', status: 400, message: 'bad request' }] });
    cleanups.push(() => server.close());
    const collector = await receiver();
    const tracing = createOtlpTracing({ url: otlpTracesUrl(collector.url) });
    const session = agentFor(server).createSession();
    tracing.instrument(session);
    const result = await session.run('Hello');
    expect(result.status).toBe('error');
    await tracing.shutdown();
    const chat = only(collector.spans, 'chat loop-model');
    const root = only(collector.spans, 'invoke_agent rho');
    expect(chat.status.code).toBe(2);
    expect(typeof chat.attributes['error.type']).toBe('string');
    expect(chat.attributes['error.type']).toBe(root.attributes['error.type']);
    expect(root.status.code).toBe(2);
    expect(root.attributes['rho.run.status']).toBe('error');
  });

  it('a collector that refuses connections does not fail the run; the failure is reported, not thrown', async () => {
    const server = await loopback();
    const port = await closedPort();
    const errors: Error[] = [];
    const tracing = createOtlpTracing({
      url: otlpTracesUrl(`http://127.0.0.1:${port}`),
      onExportError: (error) => errors.push(error),
    });
    const session = agentFor(server).createSession();
    tracing.instrument(session);
    expect((await session.run('Go.')).status).toBe('completed');
    await tracing.shutdown();
    expect(errors.length).toBeGreaterThan(0);
  });

  it('a collector that never answers does not hang the run or its shutdown (bounded by timeoutMs)', async () => {
    const server = await loopback();
    const collector = await receiver({ hang: true });
    const errors: Error[] = [];
    const tracing = createOtlpTracing({
      url: otlpTracesUrl(collector.url),
      timeoutMs: 300,
      onExportError: (error) => errors.push(error),
    });
    const session = agentFor(server).createSession();
    tracing.instrument(session);
    expect((await session.run('Go.')).status).toBe('completed');
    // Resolves although the collector holds every request open.
    await tracing.shutdown();
    expect(collector.spans).toEqual([]);
    // A second shutdown is the same promise, already settled.
    await tracing.shutdown();
  });
});

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
