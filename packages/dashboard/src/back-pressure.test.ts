import { appendFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { SessionStore } from '@rho/core';
import { afterEach, describe, expect, it } from 'vitest';
import { temporarySessions, waitFor } from '../test/support.js';
import { startDashboard } from './dashboard-server.js';
import type { DashboardServer } from './dashboard-server.js';
import { createFileSource } from './file-source.js';
import { boundedPieces, SSE_EVENT_BYTES } from './internal/api.js';

// Issue 33: ten dashboard clients that never read took the dashboard from 108 MB to 2 GB, because
// `response.write()`'s back-pressure was ignored and every record of a trace was queued for each
// of them; and a 537 MB record was sent as one event. Now each stream waits for 'drain' before
// it reads more of the trace, and records go out in bounded events.

let server: DashboardServer | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await server?.close();
  server = undefined;
});

/** A session whose trace holds `records` tool results of `size` characters each (one line, written again and again). */
function bigSession(base: string, records: number, size: number): string {
  const { id, directory } = new SessionStore(base).create({ model: 'gpt-4o-mini' });
  const line = `${JSON.stringify({
    type: 'tool_end',
    ts: new Date(0).toISOString(),
    tool_call_id: 'call_0',
    name: 'read',
    success: true,
    output: 'x'.repeat(size),
  })}\n`;
  // One line appended many times: building the whole trace in memory would raise the baseline.
  for (let index = 0; index < records; index += 1) appendFileSync(join(directory, 'trace.jsonl'), line);
  return id;
}

/** Opens the session's event stream and never reads from it (the socket is paused at once). */
function stalledClient(origin: string, token: string, id: string): Promise<Socket> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.write(
        `GET /api/sessions/${id}/events HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${token}\r\n\r\n`,
      );
      socket.pause();
      resolve(socket);
    });
    socket.on('error', reject);
    sockets.push(socket);
  });
}

function megabytes(bytes: number): number {
  return Math.round(bytes / (1024 * 1024));
}

describe('dashboard back-pressure', () => {
  it('ten clients that never read hold a bounded amount of memory, not the whole trace each', async () => {
    const base = temporarySessions();
    // 400 records of 256 KiB: 100 MiB of trace, which each stalled client used to get queued whole
    // (over 1 GiB for ten). Bounded, the growth does not depend on the trace's size: socket
    // buffers and a few chunks of 4 MiB per client, with their garbage, which a loaded machine
    // collects late (about 280 MiB measured here at load 4).
    const id = bigSession(base, 400, 256 * 1024);
    server = await startDashboard({ source: createFileSource(base, { refreshMs: 100 }), statusIntervalMs: 50 });
    global.gc?.();
    const before = process.memoryUsage();
    const clients = await Promise.all(
      Array.from({ length: 10 }, () => stalledClient(server!.origin, server!.token, id)),
    );
    expect(clients).toHaveLength(10);
    // Wait until every stream has written as much as its stalled socket takes and waits for drain.
    await waitFor('the streams to stall', async () => {
      await new Promise((resolve) => setTimeout(resolve, 500));
      return true;
    });
    let peak = 0;
    for (let sample = 0; sample < 10; sample += 1) {
      const now = process.memoryUsage();
      peak = Math.max(peak, now.rss - before.rss);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    process.stdout.write(
      `10 stalled clients on a 100 MiB trace: RSS grew ${megabytes(peak)} MiB (before the fix: the whole trace queued per client, over 1 GiB)\n`,
    );
    // Socket buffers (a few MiB per connection on loopback) and a few chunks each, never 10 x 100 MiB.
    expect(megabytes(peak)).toBeLessThan(700);
  });

  it('sends a batch in events of at most 256 KiB, a too-large record alone and cut, with a note', () => {
    const small = Array.from({ length: 100 }, (_, index) => ({ type: 'status', n: index, text: 'y'.repeat(10_000) }));
    const huge = { type: 'tool_end', output: 'z'.repeat(5_000_000), nested: { more: 'w'.repeat(100_000) } };
    const pieces = [...boundedPieces([...small, huge, ...small])];
    for (const piece of pieces) {
      const size = piece.reduce((sum, json) => sum + json.length, 0);
      expect(piece.length === 1 || size <= SSE_EVENT_BYTES).toBe(true);
    }
    expect(pieces.flat()).toHaveLength(201);
    const cut = pieces.flat().map((json) => JSON.parse(json) as Record<string, unknown>)[100]!;
    expect(JSON.stringify(cut).length).toBeLessThan(SSE_EVENT_BYTES);
    expect(cut['dashboard_cut']).toMatchObject({ original_bytes: JSON.stringify(huge).length });
    expect(String(cut['output'])).toContain('more characters not sent to the dashboard: see the trace file');
  });
});
