import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoopbackServer, LoopbackStep } from '@rho/core/testing';
import { startLoopbackServer } from '@rho/core/testing';
import type { OtlpReceiver, ReceivedSpan } from '@rho/otel/testing';
import { startOtlpReceiver } from '@rho/otel/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { bin, runRho } from './support/run-rho.js';

const SECRET = 'prompt-secret-0815';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function model(steps: LoopbackStep[]): Promise<LoopbackServer> {
  const server = await startLoopbackServer({ steps });
  cleanups.push(() => server.close());
  return server;
}

async function collector(): Promise<OtlpReceiver> {
  const receiver = await startOtlpReceiver();
  cleanups.push(() => receiver.close());
  return receiver;
}

function workspace() {
  const home = mkdtempSync(join(tmpdir(), 'rho-otel-home-'));
  const work = mkdtempSync(join(tmpdir(), 'rho-otel-work-'));
  writeFileSync(join(work, 'notes.txt'), 'hello\n');
  return { home, work };
}

/** A run with a tool call and a delegate child whose own tool call reads a file. */
const DELEGATING: LoopbackStep[] = [
  { type: 'response', toolCalls: [{ id: 'c1', name: 'list', arguments: '{"path":"."}' }] },
  {
    type: 'response',
    toolCalls: [{ id: 'c2', name: 'delegate', arguments: '{"instruction":"Read notes.txt."}' }],
  },
  { type: 'response', toolCalls: [{ id: 'c3', name: 'read', arguments: '{"path":"notes.txt"}' }] },
  { type: 'response', text: 'It says hello.' },
  { type: 'response', text: 'Done: it says hello.' },
];

function named(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((span) => span.name === name);
  expect(found, name).toHaveLength(1);
  return found[0]!;
}

describe('rho --otel', () => {
  it('exports the run, its model and tool calls and the delegate child to the collector given', async () => {
    const server = await model(DELEGATING);
    const receiver = await collector();
    const { home, work } = workspace();
    const outcome = await runRho(
      ['--otel', receiver.url, '--json', '-y', '--base-url', server.url, '-m', 'loop-model', `Read it. ${SECRET}`],
      { env: { RHO_HOME: home }, cwd: work },
    );
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    const sessionId = (JSON.parse(outcome.stdout.split('\n')[0]!) as { session_id: string }).session_id;
    // Everything was exported before the process exited.
    const spans = receiver.spans;
    expect(spans.map((span) => span.name).sort()).toEqual(
      [
        'invoke_agent rho',
        'chat loop-model',
        'chat loop-model',
        'chat loop-model',
        'execute_tool list',
        'execute_tool delegate',
        'invoke_agent delegate',
        'chat loop-model',
        'chat loop-model',
        'execute_tool read',
      ].sort(),
    );
    const root = named(spans, 'invoke_agent rho');
    const delegateCall = named(spans, 'execute_tool delegate');
    const child = named(spans, 'invoke_agent delegate');
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    expect(root.parentSpanId).toBeUndefined();
    expect(named(spans, 'execute_tool list').parentSpanId).toBe(root.spanId);
    expect(delegateCall.parentSpanId).toBe(root.spanId);
    expect(child.parentSpanId).toBe(delegateCall.spanId);
    expect(named(spans, 'execute_tool read').parentSpanId).toBe(child.spanId);
    expect(root.attributes).toMatchObject({
      'gen_ai.conversation.id': sessionId,
      'gen_ai.request.model': 'loop-model',
      'rho.run.status': 'completed',
    });
    expect(root.resource['service.name']).toBe('rho');
    // No content without --otel-content.
    for (const body of receiver.bodies) expect(body).not.toContain(SECRET);
  });

  it('takes the endpoint from RHO_OTEL_ENDPOINT, exports content with --otel-content, and a word after --otel is the task', async () => {
    const server = await model([{ type: 'response', text: 'Hi there.' }]);
    const receiver = await collector();
    const { home, work } = workspace();
    const outcome = await runRho(['--base-url', server.url, '--otel-content', '--otel', SECRET], {
      env: { RHO_HOME: home, RHO_OTEL_ENDPOINT: receiver.url },
      cwd: work,
    });
    expect(outcome.code).toBe(0);
    expect(server.requests[0]!.body.messages.at(-1)).toEqual({ role: 'user', content: SECRET });
    const chat = receiver.spans.find((span) => span.name.startsWith('chat '))!;
    expect(JSON.parse(chat.attributes['gen_ai.input.messages'] as string)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: SECRET }] },
    ]);
  });

  it('reads otel: from $RHO_HOME/config.yaml (endpoint and headers)', async () => {
    const server = await model([{ type: 'response', text: 'Hi.' }]);
    const receiver = await collector();
    const { home, work } = workspace();
    writeFileSync(
      join(home, 'config.yaml'),
      `otel:\n  endpoint: ${receiver.url}/v1/traces\n  headers: {x-team-key: sesame}\n`,
    );
    const outcome = await runRho(['--base-url', server.url, 'hi'], { env: { RHO_HOME: home }, cwd: work });
    expect(outcome.code).toBe(0);
    expect(receiver.spans.some((span) => span.name === 'invoke_agent rho')).toBe(true);
    expect(receiver.requestHeaders[0]?.['x-team-key']).toBe('sesame');
  });

  it('a collector that is down is a warning: the run completes with its usual exit code', async () => {
    const server = await model([{ type: 'response', text: 'Fine.' }]);
    const { home, work } = workspace();
    const port = await closedPort();
    // The collector's URL carries a credential, which the warning does not print.
    const outcome = await runRho(
      ['--otel', `http://team:tok-4711-secret@127.0.0.1:${port}`, '--base-url', server.url, 'hi'],
      {
        env: { RHO_HOME: home },
        cwd: work,
      },
    );
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toBe('Fine.\n');
    expect(outcome.stderr).toMatch(
      /Warning: OpenTelemetry export to http:\/\/team:\[REDACTED\]@127\.0\.0\.1:\d+\/v1\/traces failed/,
    );
    expect(outcome.stderr).not.toContain('tok-4711-secret');
  });

  it('an endpoint that is not a URL is exit 2 before any model call', async () => {
    const server = await model([]);
    const { home, work } = workspace();
    const outcome = await runRho(['--base-url', server.url, 'hi'], {
      env: { RHO_HOME: home, RHO_OTEL_ENDPOINT: 'localhost:4318' },
      cwd: work,
    });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(/OpenTelemetry endpoint from RHO_OTEL_ENDPOINT: .*http\(s\) URL/);
    expect(server.requests).toEqual([]);
  });

  it('flushes the spans of a run ended by SIGTERM', async () => {
    const server = await model([{ type: 'hang' }]);
    const receiver = await collector();
    const { home, work } = workspace();
    const child = spawn(process.execPath, [bin, '--otel', receiver.url, '--json', '--base-url', server.url, 'wait'], {
      cwd: work,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, RHO_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr.resume();
    let buffer = '';
    // One SIGTERM: a second one, sent on a later chunk (the run's end) after rho let go of its
    // handler, would end the process by the signal itself (exit code null), which is not what this tests.
    let sent = false;
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      if (!sent && buffer.includes('"type":"llm_start"')) {
        sent = true;
        child.kill('SIGTERM');
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(130);
    const root = named(receiver.spans, 'invoke_agent rho');
    expect(root.attributes['rho.run.status']).toBe('cancelled');
    const chat = receiver.spans.find((span) => span.name.startsWith('chat '))!;
    expect(chat.parentSpanId).toBe(root.spanId);
  });

  it('loads no OpenTelemetry code for --help, --version or a run without --otel; loads it with --otel', async () => {
    const server = await model([
      { type: 'response', text: 'One.' },
      { type: 'response', text: 'Two.' },
    ]);
    const receiver = await collector();
    const { home, work } = workspace();
    const record = join(work, 'imports.txt');
    writeFileSync(record, '');
    const preload = join(import.meta.dirname, 'support', 'record-imports.mjs');
    const run = (args: string[]) =>
      new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, ['--import', preload, bin, ...args], {
          cwd: work,
          env: { PATH: process.env.PATH, HOME: process.env.HOME, RHO_HOME: home, RHO_TEST_IMPORTS: record },
          stdio: 'ignore',
        });
        child.on('close', resolve);
      });
    expect(await run(['--help'])).toBe(0);
    expect(await run(['--version'])).toBe(0);
    expect(await run(['--base-url', server.url, 'one'])).toBe(0);
    expect(
      readFileSync(record, 'utf8')
        .split('\n')
        .filter((line) => /opentelemetry|@rho\/otel/.test(line)),
    ).toEqual([]);
    expect(await run(['--otel', receiver.url, '--base-url', server.url, 'two'])).toBe(0);
    expect(readFileSync(record, 'utf8')).toMatch(/@rho\/otel/);
    expect(readFileSync(record, 'utf8')).toMatch(/@opentelemetry\/sdk-trace\b/);
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
