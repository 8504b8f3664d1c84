import { appendFileSync, cpSync, readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import type { RawTraceRecord } from '@rho/core';
import { afterEach, describe, expect, it } from 'vitest';
import { startScriptedRun, temporarySessions, waitFor } from '../test/support.js';
import type { ScriptedRun } from '../test/support.js';
import { startDashboard } from './dashboard-server.js';
import type { DashboardServer } from './dashboard-server.js';
import { createFileSource } from './file-source.js';
import type { TraceSpan } from './internal/span-tree.js';
import { SpanTreeBuilder } from './internal/span-tree.js';

const fixtures = join(import.meta.dirname, '..', 'test', 'fixtures', 'viewer-sessions');
let server: DashboardServer | undefined;
const runs: ScriptedRun[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const run of runs.splice(0)) await run.server.close();
});

function records(id: string): RawTraceRecord[] {
  return readFileSync(join(fixtures, id, 'trace.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as RawTraceRecord);
}

const ids = readdirSync(fixtures);
const meta = (id: string) =>
  JSON.parse(readFileSync(join(fixtures, id, 'meta.json'), 'utf8')) as { parent_id?: string };
const child = ids.find((id) => typeof meta(id).parent_id === 'string')!;
const parent = meta(child).parent_id!;

function get(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${server!.origin}${path}`,
      { headers: { Authorization: `Bearer ${server!.token}` } },
      (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode!, body }));
      },
    );
    request.on('error', reject);
    request.end();
  });
}

/** Reads a server-sent event stream until `until` says stop; returns its events. */
function events(
  path: string,
  until: (seen: { event: string; data: unknown }[]) => boolean,
): Promise<{ event: string; data: unknown }[]> {
  return new Promise((resolve, reject) => {
    const seen: { event: string; data: unknown }[] = [];
    const request = httpRequest(
      `${server!.origin}${path}`,
      { headers: { Authorization: `Bearer ${server!.token}` } },
      (response) => {
        let buffer = '';
        response.on('data', (chunk: Buffer) => {
          buffer += chunk.toString();
          let end;
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = /^event: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (event !== undefined && data !== undefined) seen.push({ event, data: JSON.parse(data) });
          }
          if (until(seen)) {
            request.destroy();
            resolve(seen);
          }
        });
      },
    );
    request.on('error', (error) => (seen.length > 0 ? resolve(seen) : reject(error)));
    request.end();
  });
}

describe('the span tree', () => {
  it('builds the recorded session the same whether records come one by one or all at once', () => {
    const all = records(parent);
    const whole = new SpanTreeBuilder();
    for (const record of all) whole.add(record);
    const stepwise = new SpanTreeBuilder();
    const seen = new Map<string, TraceSpan>();
    for (const record of all) {
      stepwise.add(record);
      for (const span of stepwise.takeChanged()) seen.set(span.id, structuredClone(span));
    }
    // What went out as changes, last version of each, is the whole tree.
    expect([...seen.values()]).toEqual(whole.spans.map((span) => structuredClone(span)));
    expect(whole.spans.filter((span) => span.kind === 'run').map((span) => span.status)).toEqual([
      'completed',
      'completed',
    ]);
    const bash = whole.spans.filter((span) => span.name === 'bash');
    expect(bash.map((span) => span.status)).toEqual(['refused', 'ok', 'failed']);
    const spawned = whole.spans.find((span) => span.kind === 'child')!;
    expect(spawned.childId).toBe(child);
    expect(whole.spans.find((span) => span.id === spawned.parent)!.name).toBe('delegate');
    // Every record of a tool call is its own: the call, its approval, its result.
    const sql = whole.spans.find((span) => span.name === 'sqlite')!;
    expect(sql.records.map((index) => all[index]!.type)).toEqual([
      'approval_requested',
      'approval_answered',
      'tool_start',
      'message',
      'tool_end',
    ]);
  });

  it('leaves the spans of a run that ended mid-call closed as cancelled, and a call waiting across runs', () => {
    const builder = new SpanTreeBuilder();
    const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds)).toISOString();
    builder.add({ type: 'run_start', ts: at(0), prompt: 'p' });
    builder.add({ type: 'llm_start', ts: at(1), model: 'm', context_size: 10 });
    builder.add({
      type: 'llm_end',
      ts: at(2),
      model: 'm',
      input_tokens: 10,
      output_tokens: 2,
      cost_usd: null,
      duration_ms: 1000,
    });
    builder.add({
      type: 'tool_start',
      ts: at(3),
      tool_call_id: 'c',
      tool_name: 'bash',
      tool_args: { command: 'sleep 9' },
    });
    builder.add({ type: 'run_end', ts: at(5), status: 'cancelled' });
    const tool = builder.spans.find((span) => span.kind === 'tool')!;
    expect(tool.status).toBe('cancelled');
    expect(tool.end! - tool.start).toBe(2000);
    expect(builder.spans.find((span) => span.kind === 'llm')!.costUsd).toBeNull();
    // A torn trace without run_start still gets a run.
    const torn = new SpanTreeBuilder();
    torn.add({
      type: 'tool_blocked',
      ts: at(0),
      tool_call_id: 'x',
      tool_name: 'write',
      tool_args: {},
      reason: 'path.hidden',
    });
    expect(torn.spans.map((span) => [span.kind, span.status])).toEqual([
      ['run', 'open'],
      ['tool', 'refused'],
    ]);
  });
});

describe('GET /api/sessions/:id/spans and /records', () => {
  it('streams the tree, says when it is whole, and gives a span records by index', async () => {
    const base = temporarySessions();
    cpSync(fixtures, base, { recursive: true });
    server = await startDashboard({ source: createFileSource(base, { refreshMs: 100 }), statusIntervalMs: 100 });
    const seen = await events(`/api/sessions/${parent}/spans`, (list) => list.some((item) => item.event === 'ready'));
    expect(seen[0]!.event).toBe('session');
    const spans = seen
      .filter((item) => item.event === 'spans')
      .flatMap((item) => (item.data as { spans: TraceSpan[] }).spans);
    const ready = seen.find((item) => item.event === 'ready')!.data as { records: number };
    expect(ready.records).toBe(records(parent).length);
    const whole = new SpanTreeBuilder();
    for (const record of records(parent)) whole.add(record);
    expect(new Set(spans.map((span) => span.id))).toEqual(new Set(whole.spans.map((span) => span.id)));

    const sql = whole.spans.find((span) => span.name === 'sqlite')!;
    const answer = await get(`/api/sessions/${parent}/records?at=${sql.records.join(',')},99999`);
    expect(answer.status).toBe(200);
    const body = JSON.parse(answer.body) as { records: { index: number; record: { type: string } }[] };
    expect(body.records.map((entry) => entry.index)).toEqual([...sql.records].sort((a, b) => a - b));
    expect(body.records.map((entry) => entry.record)).toEqual(sql.records.map((index) => records(parent)[index]));

    const snapshot = JSON.parse((await get(`/api/sessions/${child}/spans?snapshot=1`)).body) as { spans: TraceSpan[] };
    expect(snapshot.spans.map((span) => span.name)).toContain('read');
    for (const bad of ['', 'a', '-1', '1.5', Array.from({ length: 501 }, (_, index) => index).join(',')])
      expect((await get(`/api/sessions/${parent}/records?at=${bad}`)).status).toBe(400);
    expect((await get('/api/sessions/nope/records?at=1')).status).toBe(404);
    expect((await get('/api/sessions/nope/spans?snapshot=1')).status).toBe(404);
  });

  it('grows the tree of a running session as its records arrive', async () => {
    const base = temporarySessions();
    server = await startDashboard({ source: createFileSource(base, { refreshMs: 100 }), statusIntervalMs: 100 });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const run = await startScriptedRun(base, 'look twice', async (turn) => {
      if (turn === 1) await gate;
      return turn < 2
        ? { type: 'response', toolCalls: [{ id: `c${turn}`, name: 'look', arguments: '{"what":"logs"}' }] }
        : { type: 'response', text: 'Seen.' };
    });
    runs.push(run);
    const seen = await events(`/api/sessions/${run.id}/spans`, (list) => {
      const spans = list
        .filter((item) => item.event === 'spans')
        .flatMap((item) => (item.data as { spans: TraceSpan[] }).spans);
      if (list.some((item) => item.event === 'ready') && spans.some((span) => span.name === 'look')) release();
      return spans.some((span) => span.kind === 'run' && span.status === 'completed');
    });
    const spans = seen
      .filter((item) => item.event === 'spans')
      .flatMap((item) => (item.data as { spans: TraceSpan[] }).spans);
    expect(spans.filter((span) => span.name === 'look' && span.status === 'ok').length).toBeGreaterThanOrEqual(2);
    // ready came before the second tool call: the stream went on live after it.
    const readyAt = seen.findIndex((item) => item.event === 'ready');
    const later = seen.slice(readyAt).filter((item) => item.event === 'spans');
    expect(later.length).toBeGreaterThan(0);
    expect((await run.done).status).toBe('completed');
  });
});

describe('GET /api/search', () => {
  it("finds words of tool results across sessions' traces, newest first, and says what it searched", async () => {
    const base = temporarySessions();
    cpSync(fixtures, base, { recursive: true });
    server = await startDashboard({ source: createFileSource(base, { refreshMs: 100 }), statusIntervalMs: 100 });
    await waitFor('the listing', async () => JSON.parse((await get('/api/sessions')).body).all === 3);
    const found = JSON.parse((await get('/api/search?q=INVOICE%20report')).body) as {
      hits: { sessionId: string; record: number; type: string; field: string; snippet: string }[];
      sessionsSearched: number;
      complete: boolean;
    };
    expect(found.sessionsSearched).toBe(3);
    expect(found.complete).toBe(true);
    const read = found.hits.find((hit) => hit.sessionId === child && hit.type === 'message')!;
    expect(read.field).toBe('content');
    expect(read.snippet).toContain('invoice report');
    expect(records(child)[read.record]).toMatchObject({ type: 'message', role: 'tool' });
    // Keys and record types are not content.
    expect(JSON.parse((await get('/api/search?q=tool_call_id')).body).hits).toEqual([]);
    const limited = JSON.parse((await get('/api/search?q=the&limit=2')).body) as { hits: unknown[]; complete: boolean };
    expect(limited.hits).toHaveLength(2);
    expect((await get('/api/search?q=x')).status).toBe(400);
    // A trace that grows is searched as it is now.
    appendFileSync(
      join(base, child, 'trace.jsonl'),
      `${JSON.stringify({ type: 'error', ts: new Date().toISOString(), content: 'zebra crossing failed' })}\n`,
    );
    const zebra = JSON.parse((await get('/api/search?q=zebra')).body) as { hits: { record: number; type: string }[] };
    expect(zebra.hits).toEqual([expect.objectContaining({ type: 'error', record: records(child).length })]);
  });
});
