import type { TraceRecord } from '@rho/core';
import { CONTENT_HITS_PER_SESSION, contentMatcher } from '@rho/monitor';
import type { ContentHit, ContentSearch, ContentSearchOptions } from '@rho/monitor';
import type { PendingQuery, Row, Sql } from 'postgres';

/** Mirrored records one search reads at most, over every session (counted by the registry's `records`). */
export const FLEET_SEARCH_BUDGET_RECORDS = 2_000_000;
/** Sessions one search considers at most, newest first. */
const MAX_SESSIONS = 50_000;
/** One query searches sessions holding about this many records together, or this many sessions. */
const BATCH_RECORDS = 50_000;
const BATCH_SESSIONS = 100;
/** PostgreSQL's `query_canceled`: a statement timeout, or a cancel (the search's signal). */
const QUERY_CANCELED = '57014';

interface Found {
  sessionId: string;
  seq: string;
  hit: Omit<ContentHit, 'sessionId' | 'record'>;
}

/**
 * A fleet's content search over its mirrored traces (`trace_records`): sessions newest first (by
 * the registry's start time, as `listSessions` orders them), in batches, each one query that takes
 * at most {@link CONTENT_HITS_PER_SESSION} records a session, in sequence order, whose text holds
 * the query (an ILIKE prefilter on the record's JSON text) in a string value (a JSON path over the
 * record without its own `type` and `ts`: keys are not content); then `@rho/monitor`'s
 * `contentMatcher` finds the field and the snippet, as a directory's search does. Stops at `limit`
 * hits, after {@link FLEET_SEARCH_BUDGET_RECORDS} records, on the signal (cancelling the query)
 * or at the database's statement timeout. Row-level security applies: an agent's login role
 * searches its own sessions only.
 *
 * A hit's `record` is its index among the session's mirrored records in sequence order, from 0
 * (what the fleet's follow yields): `seq - 1`, or fewer records before it where the mirror has gaps.
 */
export async function searchMirroredContent(sql: Sql, options: ContentSearchOptions): Promise<ContentSearch> {
  const match = contentMatcher(options.query);
  const pattern = `%${escapeLike(jsonText(options.query))}%`;
  const path = `strict $.** ? (@.type() == "string" && @ like_regex ${JSON.stringify(options.query)} flag "iq")`;
  const sessions = await cancellable(
    sql<{ session_id: string; records: string; total: string }[]>`
      select session_id, records, count(*) over () as total from agent_registry
      order by started_at desc, session_id limit ${MAX_SESSIONS}`,
    options.signal,
  );
  const total = sessions.length === 0 ? 0 : Number(sessions[0]!.total);
  const found: Found[] = [];
  let searched = 0;
  let read = 0;
  let note: string | undefined;
  let stopped = false;
  const aborted = (): boolean => options.signal?.aborted === true;
  while (searched < sessions.length && found.length < options.limit) {
    if (aborted()) {
      stopped = true;
      break;
    }
    if (read >= FLEET_SEARCH_BUDGET_RECORDS) {
      note = `Searched the newest ${searched} of ${total} sessions (${FLEET_SEARCH_BUDGET_RECORDS.toLocaleString('en-US')} mirrored records, the most one search reads); narrow the search to find older ones.`;
      break;
    }
    const batch: string[] = [];
    let records = 0;
    while (
      searched + batch.length < sessions.length &&
      (batch.length === 0 ||
        (batch.length < BATCH_SESSIONS && records < BATCH_RECORDS && read + records < FLEET_SEARCH_BUDGET_RECORDS))
    ) {
      const session = sessions[searched + batch.length]!;
      batch.push(session.session_id);
      records += Number(session.records);
    }
    const wanted = options.limit - found.length;
    let rows: { session_id: string; seq: string; record: TraceRecord }[];
    try {
      rows = await cancellable(
        sql<{ session_id: string; seq: string; record: TraceRecord }[]>`
          select s.session_id, h.seq, h.record
          from unnest(${batch}::text[]) with ordinality as s(session_id, n)
          cross join lateral (
            select t.seq, t.record from trace_records t
            where t.session_id = s.session_id
              and t.record::text ilike ${pattern}
              and jsonb_path_exists(t.record - 'type' - 'ts', ${path}::jsonpath)
            order by t.seq
            limit ${CONTENT_HITS_PER_SESSION}
          ) h
          order by s.n, h.seq
          limit ${wanted}`,
        options.signal,
      );
    } catch (error) {
      if ((error as { code?: string }).code !== QUERY_CANCELED) throw error;
      stopped = true;
      if (!aborted())
        note = `The fleet's database stopped the search at its statement timeout, after the newest ${searched} of ${total} sessions; narrow the search.`;
      break;
    }
    for (const row of rows) {
      const hit = match(row.record);
      if (hit === undefined) continue;
      const record = row.record as unknown as { type: string; ts?: unknown };
      found.push({
        sessionId: row.session_id,
        seq: String(row.seq),
        hit: {
          type: record.type,
          ...(typeof record.ts === 'string' ? { ts: record.ts } : {}),
          field: hit.field,
          snippet: hit.snippet,
        },
      });
    }
    // Cut at the limit: the sessions after the last row's were not searched.
    const cut = rows.length >= wanted ? batch.indexOf(rows[rows.length - 1]!.session_id) + 1 : batch.length;
    searched += cut;
    read += records;
  }
  const positions = await positionsOf(sql, found, options.signal);
  const hits = found.map(({ sessionId, seq, hit }) => ({
    sessionId,
    record: positions.get(`${sessionId} ${seq}`) ?? Number(seq) - 1,
    ...hit,
  }));
  if (note === undefined && !stopped && found.length < options.limit && searched < total)
    note = `Searched the newest ${searched} of ${total} sessions (${MAX_SESSIONS.toLocaleString('en-US')}, the most one search considers).`;
  return {
    hits,
    sessionsSearched: searched,
    complete: note === undefined && !stopped && (searched === total || found.length < options.limit),
    ...(note === undefined ? {} : { note }),
  };
}

/**
 * Each hit's index among its session's records (`session seq` to index): the count of records
 * before it. Where a session has no gap up to its last hit (the count before that hit is its
 * `seq - 1`), every hit of it is at `seq - 1`, and only that one hit is counted.
 */
async function positionsOf(sql: Sql, found: readonly Found[], signal?: AbortSignal): Promise<Map<string, number>> {
  const positions = new Map<string, number>();
  if (found.length === 0) return positions;
  const last = new Map<string, string>();
  for (const { sessionId, seq } of found)
    if (BigInt(seq) > BigInt(last.get(sessionId) ?? '0')) last.set(sessionId, seq);
  const counted = await countBefore(sql, [...last], signal);
  const gapped = new Set(
    [...last].filter(([sessionId, seq]) => counted.get(`${sessionId} ${seq}`) !== Number(seq) - 1).map(([id]) => id),
  );
  if (gapped.size === 0) return positions;
  const again = found.filter(({ sessionId }) => gapped.has(sessionId)).map(({ sessionId, seq }) => [sessionId, seq]);
  return countBefore(sql, again as [string, string][], signal);
}

async function countBefore(
  sql: Sql,
  pairs: readonly [string, string][],
  signal?: AbortSignal,
): Promise<Map<string, number>> {
  const rows = await cancellable(
    sql<{ session_id: string; seq: string; before: string }[]>`
      select s.session_id, s.seq, (select count(*) from trace_records t
        where t.session_id = s.session_id and t.seq < s.seq) as before
      from unnest(${pairs.map(([id]) => id)}::text[], ${pairs.map(([, seq]) => seq)}::int8[]) as s(session_id, seq)`,
    signal,
  );
  return new Map(rows.map((row) => [`${row.session_id} ${row.seq}`, Number(row.before)]));
}

/** Runs a query, cancelling it on the server when the signal aborts. */
async function cancellable<T extends readonly Row[]>(query: PendingQuery<T>, signal?: AbortSignal): Promise<T> {
  if (signal === undefined) return query;
  const cancel = () => query.cancel();
  signal.addEventListener('abort', cancel, { once: true });
  try {
    return await query;
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}

/** The text as it is inside a JSON string in `jsonb::text` (quotes, backslashes, control characters escaped). */
function jsonText(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

/** A LIKE pattern's literal text: `%`, `_` and the escape character `\` escaped. */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}
