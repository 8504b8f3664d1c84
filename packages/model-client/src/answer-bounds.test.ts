import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createModelClient } from './create-model-client.js';
import { ModelResponseError } from './errors.js';
import type { ModelStreamEvent } from './types.js';

// Two hostile servers of the fault round: one that drips a character at a time (the idle timer
// restarts on every chunk, so nothing else ever stops it) and one that streams text as fast as it
// can and never ends (it grew one answer to 2.8 GB). Both are answered by the bounds on one answer.

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

function chunk(text: string): string {
  const body = {
    id: 'chatcmpl-bounds',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'bounds-model',
    choices: [{ index: 0, delta: { content: text }, finish_reason: null }],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

interface EndlessServer {
  url: string;
  /** Bytes written to the socket so far. */
  written: () => number;
  /** Whether the client closed the connection. */
  closed: () => boolean;
}

/** A server that answers every request with an event stream that never finishes. */
async function endless(pieceMs: number, piece: string): Promise<EndlessServer> {
  let written = 0;
  let closed = false;
  const server = createServer((request, response: ServerResponse) => {
    request.resume();
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const write = (): void => {
      if (response.destroyed) return;
      // Writes as fast as the socket takes them (or one piece per interval for the drip).
      for (;;) {
        const data = chunk(piece);
        written += Buffer.byteLength(data);
        if (!response.write(data)) {
          response.once('drain', write);
          return;
        }
        if (pieceMs > 0) {
          setTimeout(write, pieceMs);
          return;
        }
      }
    };
    response.on('close', () => {
      closed = true;
    });
    write();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, written: () => written, closed: () => closed };
}

async function collect(iterable: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of iterable) events.push(event);
  return events;
}

const ask = { messages: [{ role: 'user' as const, content: 'hi' }] };

function errorOf(events: ModelStreamEvent[]): ModelResponseError {
  const last = events.at(-1);
  if (last?.type !== 'error') throw new Error(`expected an error event, got ${JSON.stringify(last)}`);
  expect(ModelResponseError.isInstance(last.error)).toBe(true);
  return last.error as ModelResponseError;
}

describe('bounds on one answer', () => {
  it('stops a stream that drips one character at a time once the answer time limit passes', async () => {
    const server = await endless(20, 'x');
    const client = createModelClient({
      model: 'bounds-model',
      baseURL: server.url,
      apiKey: 'test-key',
      // The idle timeout alone would never fire: a chunk arrives every 20 ms.
      idleTimeoutMs: 5_000,
      maxAnswerMs: 600,
      maxRetries: 3,
    });
    const events = await collect(client.stream(ask));
    const error = errorOf(events);
    expect(error.kind).toBe('answer_too_long');
    expect(error.isRetryable).toBe(false);
    expect(error.attempts).toBe(1);
    expect(error.message).toContain('took longer than 600 ms (answer time limit');
    expect(error.message).toContain('--max-answer-time');
    expect(events.some((event) => event.type === 'text')).toBe(true);
  });

  it('aborts a never-ending fast stream at the size limit, and stops downloading it', async () => {
    const server = await endless(0, 'y'.repeat(1000));
    const client = createModelClient({
      model: 'bounds-model',
      baseURL: server.url,
      apiKey: 'test-key',
      maxAnswerBytes: 200_000,
      maxRetries: 3,
    });
    const events = await collect(client.stream(ask));
    const error = errorOf(events);
    expect(error.kind).toBe('answer_too_large');
    expect(error.attempts).toBe(1);
    expect(error.message).toContain('grew past its size limit (more than 200000 characters');
    const text = events.flatMap((event) => (event.type === 'text' ? [event.text] : [])).join('');
    expect(text.length).toBeLessThanOrEqual(200_000);
    // The connection is closed: the server stops writing (what it wrote is bounded by socket buffers).
    await expect.poll(() => server.closed(), { timeout: 5_000 }).toBe(true);
    const afterClose = server.written();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.written()).toBe(afterClose);
  });

  it('counts tool-call arguments against the size limit', async () => {
    let written = 0;
    const server = createServer((request, response) => {
      request.resume();
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const head = {
        id: 'c',
        object: 'chat.completion.chunk',
        created: 0,
        model: 'm',
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'write', arguments: '' } }],
            },
            finish_reason: null,
          },
        ],
      };
      response.write(`data: ${JSON.stringify(head)}\n\n`);
      const write = (): void => {
        while (!response.destroyed) {
          const body = {
            ...head,
            choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: 'z'.repeat(500) } }] } }],
          };
          const data = `data: ${JSON.stringify(body)}\n\n`;
          written += data.length;
          if (!response.write(data)) {
            response.once('drain', write);
            return;
          }
        }
      };
      write();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const client = createModelClient({
      model: 'm',
      baseURL: `http://127.0.0.1:${port}/v1`,
      apiKey: 'test-key',
      maxAnswerBytes: 50_000,
    });
    const events = await collect(client.stream(ask));
    expect(errorOf(events).kind).toBe('answer_too_large');
    expect(events.some((event) => event.type === 'tool_call')).toBe(false);
    expect(written).toBeGreaterThan(50_000);
  });
});
