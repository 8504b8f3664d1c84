// A fleet's content search (Fleet.searchContent, the SessionSource's searchContent the dashboard
// calls), in SQL over the mirrored traces, against the shared PostgreSQL in a random schema: string
// values only (never keys or a record's type), literally and case-insensitively, newest session
// first, at most 20 hits a session, the limit, and each hit's record index as the follow counts.
import type { TraceRecord } from '@rho/core';
import type { ContentHit, SessionSource } from '@rho/monitor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fleet } from '../src/index.js';
import { connectFleet, createFleetSessionSource } from '../src/index.js';
import { admin, dropSchema, freshConfig, sharedServer } from './support/postgres.js';

const skipped = sharedServer.available ? '' : ` (skipped: ${sharedServer.reason})`;

function record(type: string, fields: Record<string, unknown> = {}): TraceRecord {
  return { type, ts: new Date().toISOString(), ...fields } as unknown as TraceRecord;
}

describe.skipIf(!sharedServer.available)(`a fleet's content search${skipped}`, () => {
  const config = freshConfig();
  let fleet: Fleet;
  let source: SessionSource;

  /** Mirrors a finished session with these records. */
  async function mirror(id: string, startedAt: string, records: TraceRecord[]): Promise<void> {
    const attachment = await fleet.attachSession({ id, host: 'node-a', startedAt, firstPrompt: 'task' });
    for (const item of records) attachment.mirror.observe(item);
    expect(await attachment.mirror.flush(10_000)).toBe(true);
    await attachment.close({ status: 'completed' });
  }

  /** The session's records as the dashboard's follow sees them (its own, in order, counted from 0). */
  async function followed(id: string): Promise<unknown[]> {
    const records: unknown[] = [];
    for await (const { record: item } of source.follow(id, { children: false })) records.push(item);
    return records;
  }

  /** Each hit's record, looked up in what the follow yields. */
  async function pointedAt(hits: ContentHit[]): Promise<unknown[]> {
    const traces = new Map<string, unknown[]>();
    for (const hit of hits) if (!traces.has(hit.sessionId)) traces.set(hit.sessionId, await followed(hit.sessionId));
    return hits.map((hit) => traces.get(hit.sessionId)![hit.record]);
  }

  beforeAll(async () => {
    fleet = await connectFleet(config);
    await fleet.migrate();
    source = createFleetSessionSource(fleet);
    await mirror('aa00-old', '2026-11-01T00:00:00.000Z', [
      record('run_start', { prompt: 'sum the invoices' }),
      record('message', { role: 'tool', tool_call_id: 'c1', content: 'Paid: 100% of invoice_total, 1000 items' }),
      record('message', { role: 'tool', tool_call_id: 'c2', content: 'invoiceXtotal is 100 percent, 1000 items' }),
      record('message', { role: 'assistant', content: 'Saved to C:\\temp\\"out".txt' }),
      record('run_end', { status: 'completed' }),
    ]);
    await mirror('bb00-new', '2026-11-02T00:00:00.000Z', [
      record('run_start', { prompt: 'find the INVOICE code' }),
      record('tool_start', { tool_call_id: 'c1', tool_name: 'bash', tool_args: { command: 'grep -rn Invoice src' } }),
      record('tool_end', { tool_call_id: 'c1', tool_name: 'bash', success: true, duration_ms: 4 }),
      record('message', { role: 'tool', tool_call_id: 'c1', content: 'src/a.ts:3: class Invoice {}' }),
      ...Array.from({ length: 25 }, (_, index) => record('message', { role: 'assistant', content: `needle ${index}` })),
      record('message', { role: 'assistant', content: 'the table of contents' }),
      record('run_end', { status: 'completed' }),
    ]);
  });
  afterAll(async () => {
    await fleet?.close();
    await dropSchema(config.schema);
  });

  it('finds a word in tool arguments and results, newest session first, case-insensitive, pointing at each record', async () => {
    const found = await source.searchContent!({ query: 'INVOICE', limit: 50 });
    expect(found).toMatchObject({ sessionsSearched: 2, complete: true });
    expect(found.hits.map((hit) => [hit.sessionId, hit.record, hit.type, hit.field])).toEqual([
      ['bb00-new', 0, 'run_start', 'prompt'],
      ['bb00-new', 1, 'tool_start', 'tool_args.command'],
      ['bb00-new', 3, 'message', 'content'],
      ['aa00-old', 0, 'run_start', 'prompt'],
      ['aa00-old', 1, 'message', 'content'],
      ['aa00-old', 2, 'message', 'content'],
    ]);
    expect(found.hits[1]).toMatchObject({ snippet: 'grep -rn Invoice src' });
    expect(typeof found.hits[1]!.ts).toBe('string');
    const records = await pointedAt(found.hits);
    expect(records[1]).toMatchObject({ type: 'tool_start', tool_args: { command: 'grep -rn Invoice src' } });
    expect(records[2]).toMatchObject({ type: 'message', content: 'src/a.ts:3: class Invoice {}' });
    expect(records[4]).toMatchObject({ content: 'Paid: 100% of invoice_total, 1000 items' });
    // The fleet's own search answers the same.
    expect(await fleet.searchContent({ query: 'invoice', limit: 50 })).toEqual(found);
  });

  it('does not match keys or record types, and takes %, _, quotes and backslashes literally', async () => {
    expect((await source.searchContent!({ query: 'tool_call_id', limit: 50 })).hits).toEqual([]);
    expect((await source.searchContent!({ query: 'tool_start', limit: 50 })).hits).toEqual([]);
    // Records that hold the word only as a key take none of a session's 20 hits in the database.
    const contents = await source.searchContent!({ query: 'CONTENT', limit: 50 });
    expect(contents.hits.map((hit) => [hit.sessionId, hit.record, hit.field])).toEqual([['bb00-new', 29, 'content']]);
    // A role is a value: 20 of the new session's 26, and the old one's.
    expect((await source.searchContent!({ query: 'assistant', limit: 50 })).hits).toHaveLength(21);
    const percent = await source.searchContent!({ query: '100%', limit: 50 });
    expect(percent.hits.map((hit) => [hit.sessionId, hit.record, hit.snippet])).toEqual([
      ['aa00-old', 1, 'Paid: 100% of invoice_total, 1000 items'],
    ]);
    const underscore = await source.searchContent!({ query: 'E_T', limit: 50 });
    expect(underscore.hits.map((hit) => hit.record)).toEqual([1]);
    const path = await source.searchContent!({ query: 'c:\\TEMP\\"out"', limit: 50 });
    expect(path.hits.map((hit) => [hit.sessionId, hit.record, hit.field])).toEqual([['aa00-old', 3, 'content']]);
    expect((await source.searchContent!({ query: '%', limit: 50 })).hits).toHaveLength(1);
  });

  it('takes at most 20 hits a session, stops at the limit, and stops on its signal', async () => {
    const capped = await source.searchContent!({ query: 'needle', limit: 50 });
    expect(capped.hits).toHaveLength(20);
    expect(capped.hits.map((hit) => hit.record)).toEqual(Array.from({ length: 20 }, (_, index) => index + 4));
    expect((await pointedAt(capped.hits)).map((item) => (item as { content: string }).content)).toEqual(
      Array.from({ length: 20 }, (_, index) => `needle ${index}`),
    );
    const limited = await source.searchContent!({ query: 'items', limit: 1 });
    // As a directory's search says: the limit was met in the last session, so every session was read.
    expect(limited).toMatchObject({
      sessionsSearched: 2,
      complete: true,
      hits: [{ sessionId: 'aa00-old', record: 1 }],
    });
    const first = await source.searchContent!({ query: 'e', limit: 3 });
    expect(first).toMatchObject({ sessionsSearched: 1, complete: false });
    expect(first.hits.map((hit) => [hit.sessionId, hit.record])).toEqual([
      ['bb00-new', 0],
      ['bb00-new', 1],
      ['bb00-new', 3],
    ]);
    const stopped = await source.searchContent!({ query: 'invoice', limit: 50, signal: AbortSignal.abort() });
    expect(stopped).toMatchObject({ hits: [], sessionsSearched: 0, complete: false });
  });

  it('counts records as the follow yields them where the mirror has a gap', async () => {
    await mirror('cc00-gap', '2026-11-03T00:00:00.000Z', [
      record('run_start', { prompt: 'gap' }),
      record('message', { role: 'assistant', content: 'lost' }),
      record('message', { role: 'assistant', content: 'after the gap: walrus' }),
      record('message', { role: 'assistant', content: 'walrus again' }),
    ]);
    const sql = admin();
    try {
      await sql.unsafe(`delete from "${config.schema}".trace_records where session_id = 'cc00-gap' and seq = 2`);
    } finally {
      await sql.end({ timeout: 1 });
    }
    const found = await source.searchContent!({ query: 'walrus', limit: 50 });
    expect(found.hits.map((hit) => hit.record)).toEqual([1, 2]);
    expect(await pointedAt(found.hits)).toEqual([
      expect.objectContaining({ content: 'after the gap: walrus' }),
      expect.objectContaining({ content: 'walrus again' }),
    ]);
  });
});
