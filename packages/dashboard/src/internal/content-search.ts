import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { TraceReader } from '@rho/core';
import type { RawTraceRecord } from '@rho/core';
import { CONTENT_HITS_PER_SESSION, contentMatcher } from '@rho/monitor';
import type { ContentHit, ContentMatch, ContentSearch, ContentSearchOptions } from '@rho/monitor';

/** Trace bytes one search reads at most, over every session. */
export const SEARCH_BUDGET_BYTES = 512 * 1024 * 1024;
const CHUNK_BYTES = 1024 * 1024;
/** A line longer than this is passed over, as the follower does (64 MiB). */
const MAX_LINE_BYTES = 64 * 1024 * 1024;

/**
 * Searches the content of sessions' traces (messages, tool arguments and results, errors,
 * directives, summaries: every string value of every record, case-insensitive, with `@rho/monitor`'s
 * `contentMatcher`, as a fleet's search does), newest session
 * first, until `limit` hits or {@link SEARCH_BUDGET_BYTES} of traces were read. Record numbers
 * count records as the trace reader hands them on, as the trace viewer's do.
 */
export async function searchTraces(
  sessions: readonly { id: string; directory: string }[],
  options: ContentSearchOptions,
): Promise<ContentSearch> {
  const match = contentMatcher(options.query);
  const hits: ContentHit[] = [];
  let read = 0;
  let searched = 0;
  for (const session of sessions) {
    if (hits.length >= options.limit || options.signal?.aborted === true) break;
    if (read >= SEARCH_BUDGET_BYTES)
      return { hits, sessionsSearched: searched, complete: false, note: budgetNote(searched, sessions.length) };
    searched += 1;
    read += await searchOne(session, match, hits, options, SEARCH_BUDGET_BYTES - read);
  }
  const complete = searched === sessions.length || hits.length < options.limit;
  return {
    hits,
    sessionsSearched: searched,
    complete,
    ...(read >= SEARCH_BUDGET_BYTES && searched < sessions.length
      ? { note: budgetNote(searched, sessions.length) }
      : {}),
  };
}

function budgetNote(searched: number, total: number): string {
  return `Searched the newest ${searched} of ${total} sessions (${SEARCH_BUDGET_BYTES / 1024 / 1024} MiB of traces, the most one search reads); narrow the search to find older ones.`;
}

async function searchOne(
  session: { id: string; directory: string },
  match: (record: RawTraceRecord) => ContentMatch | undefined,
  hits: ContentHit[],
  options: ContentSearchOptions,
  budget: number,
): Promise<number> {
  let file;
  try {
    file = await open(join(session.directory, 'trace.jsonl'), 'r');
  } catch {
    return 0;
  }
  let read = 0;
  let index = 0;
  let found = 0;
  const reader = new TraceReader({ maxLineBytes: MAX_LINE_BYTES });
  const visitor = {
    record: (record: RawTraceRecord) => {
      const position = index;
      index += 1;
      if (found >= CONTENT_HITS_PER_SESSION || hits.length >= options.limit) return;
      const hit = match(record);
      if (hit === undefined) return;
      found += 1;
      hits.push({
        sessionId: session.id,
        record: position,
        type: record.type,
        ...(typeof record.ts === 'string' ? { ts: record.ts } : {}),
        field: hit.field,
        snippet: hit.snippet,
      });
    },
  };
  try {
    const buffer = Buffer.alloc(CHUNK_BYTES);
    while (read < budget && found < CONTENT_HITS_PER_SESSION && hits.length < options.limit) {
      const { bytesRead } = await file.read(buffer, 0, CHUNK_BYTES, read);
      if (bytesRead === 0) break;
      read += bytesRead;
      // The reader may keep the chunk until its last line is whole: give it its own copy.
      reader.push(Buffer.from(buffer.subarray(0, bytesRead)), visitor);
      if (options.signal?.aborted === true) break;
    }
  } finally {
    await file.close();
  }
  return read;
}
