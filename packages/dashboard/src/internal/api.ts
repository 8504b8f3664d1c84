import type { IncomingMessage, ServerResponse } from 'node:http';
import { RhoError, SessionNotFoundError } from '@rho/core';
import { ACTIVE_STATUSES } from '@rho/monitor';
import type { DashboardSource, SessionQuery, SessionSortKey } from '../dashboard-source.js';
import { answerApproval, listApprovals, listSessionApprovals } from './approvals-api.js';
import { changeAllowed } from './change-guard.js';
import { sessionChanges } from './changes-api.js';
import { readJson, sendJson } from './http.js';

/** What the API handlers share. */
export interface ApiContext {
  source: DashboardSource;
  token: string;
  /** Aborted when the server closes: ends every live stream. */
  closing: AbortSignal;
  statusIntervalMs: number;
}

const SORT_KEYS: ReadonlySet<string> = new Set([
  'startedAt',
  'status',
  'model',
  'profile',
  'hostname',
  'tokens',
  'costUsd',
  'id',
]);
const ACTIONS = new Set(['cancel', 'pause', 'resume', 'directive']);
/** Session ids are directory names: no separators, no dot-dot. */
const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * The JSON API of the pages (the request is already authenticated):
 * - `GET /api/sessions?search&status&model&profile&sort&order&offset&limit&tree` one page of sessions;
 * - `GET /api/sessions/:id` one session;
 * - `GET /api/sessions/:id/events` server-sent events: `session` (the row, again whenever it
 *   changes) and `records` (trace records in batches, from the first);
 * - `GET /api/stats/costs`, `GET /api/stats/tools`;
 * - `POST /api/sessions/:id/control` `{action: cancel|pause|resume|directive, text?}`;
 * - `GET /api/approvals` every tool call that waits for approval, `GET /api/sessions/:id/approvals`
 *   one session's, `POST /api/sessions/:id/approvals` `{toolCallId, decision, scope?, reason?}`
 *   answers one (see approvals-api.ts);
 * - `GET /api/sessions/:id/changes` what the session changed: its workspace's diff, or its
 *   checkpoints' (see changes-api.ts).
 */
export async function handleApi(
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
  context: ApiContext,
): Promise<void> {
  const { source } = context;
  const path = url.pathname;
  try {
    if (request.method === 'GET' && path === '/api/sessions') {
      sendJson(response, 200, await source.listSessions(parseQuery(url.searchParams)));
      return;
    }
    if (request.method === 'GET' && path === '/api/stats/costs') {
      sendJson(response, 200, await source.costStats());
      return;
    }
    if (request.method === 'GET' && path === '/api/stats/tools') {
      sendJson(response, 200, await source.toolStats());
      return;
    }
    if (path === '/api/approvals') {
      if (request.method === 'GET') await listApprovals(response, context.source);
      else
        sendJson(response, 405, { error: 'Method not allowed: answer a call with POST /api/sessions/:id/approvals.' });
      return;
    }
    const match = /^\/api\/sessions\/([^/]+)(\/events|\/control|\/approvals|\/changes)?$/.exec(path);
    if (match === null) {
      sendJson(response, 404, { error: 'No such API path.' });
      return;
    }
    const id = decodeURIComponent(match[1]!);
    if (!ID.test(id)) {
      sendJson(response, 400, { error: 'Not a session id.' });
      return;
    }
    if (request.method === 'GET' && match[2] === undefined) {
      const session = await source.getSession(id);
      if (session === undefined) sendJson(response, 404, { error: `No session ${id}.` });
      else sendJson(response, 200, session);
      return;
    }
    if (request.method === 'GET' && match[2] === '/events') {
      await streamSession(request, response, id, context);
      return;
    }
    if (request.method === 'POST' && match[2] === '/control') {
      await control(request, response, id, context);
      return;
    }
    if (request.method === 'GET' && match[2] === '/approvals') {
      await listSessionApprovals(response, id, context.source);
      return;
    }
    if (request.method === 'GET' && match[2] === '/changes') {
      await sessionChanges(response, id, context.source);
      return;
    }
    if (request.method === 'POST' && match[2] === '/approvals') {
      await answerApproval(request, response, id, context.source, context.token);
      return;
    }
    sendJson(response, 405, { error: 'Method not allowed.' });
  } catch (error) {
    if (SessionNotFoundError.isInstance(error)) sendJson(response, 404, { error: error.message });
    else if (RhoError.isInstance(error)) sendJson(response, 400, { error: error.message, code: error.code });
    else throw error;
  }
}

function parseQuery(parameters: URLSearchParams): SessionQuery {
  const text = (name: string) => parameters.get(name) ?? undefined;
  const number = (name: string) => {
    const value = Number(parameters.get(name));
    return parameters.has(name) && Number.isFinite(value) ? value : undefined;
  };
  const sort = text('sort');
  const order = text('order');
  const query: SessionQuery = {};
  for (const name of ['search', 'status', 'model', 'profile'] as const) {
    const value = text(name);
    if (value !== undefined) query[name] = value;
  }
  if (sort !== undefined && SORT_KEYS.has(sort)) query.sort = sort as SessionSortKey;
  if (order === 'asc' || order === 'desc') query.order = order;
  const offset = number('offset');
  const limit = number('limit');
  if (offset !== undefined) query.offset = offset;
  if (limit !== undefined) query.limit = limit;
  if (parameters.get('tree') === '0') query.tree = false;
  return query;
}

async function streamSession(
  request: IncomingMessage,
  response: ServerResponse,
  id: string,
  context: ApiContext,
): Promise<void> {
  const { source } = context;
  const first = await source.getSession(id);
  if (first === undefined) {
    sendJson(response, 404, { error: `No session ${id}.` });
    return;
  }
  const stop = new AbortController();
  const end = () => stop.abort();
  request.on('close', end);
  context.closing.addEventListener('abort', end, { once: true });
  response.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  response.flushHeaders();
  // Back-pressure: a client that does not read holds at most what the socket buffers plus one
  // event. The follow loop waits for 'drain' before it reads more of the trace, and the ticker
  // sends nothing (no status, no keep-alive) while the client is behind.
  const write = (event: string, data: unknown): boolean => {
    if (response.writableEnded || response.destroyed) return true;
    return response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const drained = (): Promise<void> =>
    new Promise((resolve) => {
      if (!response.writableNeedDrain || response.destroyed || stop.signal.aborted) {
        resolve();
        return;
      }
      const done = () => {
        response.off('drain', done);
        response.off('close', done);
        stop.signal.removeEventListener('abort', done);
        resolve();
      };
      response.on('drain', done);
      response.on('close', done);
      stop.signal.addEventListener('abort', done, { once: true });
    });
  let lastSession = JSON.stringify(first);
  write('session', first);
  // The status (and tokens, cost) come from the listing, not the trace: sent again when they change.
  const ticker = setInterval(() => {
    if (response.writableNeedDrain) return;
    source.getSession(id).then(
      (session) => {
        const text = JSON.stringify(session);
        if (session !== undefined && text !== lastSession && !response.writableNeedDrain) {
          lastSession = text;
          write('session', session);
        }
      },
      () => {},
    );
    if (!response.writableEnded && !response.destroyed) response.write(': keep-alive\n\n');
  }, context.statusIntervalMs);
  try {
    let count = 0;
    for await (const batch of source.follow(id, { signal: stop.signal })) {
      // A batch goes out in events of bounded size, each record itself bounded (a record of
      // hundreds of MB, written before traces had a record limit, is sent cut, with a note).
      for (const piece of boundedPieces(batch)) {
        const from = count;
        count += piece.length;
        if (response.writableEnded || response.destroyed) break;
        // Each record's JSON was made once, to measure it: the event is put together from those.
        const sent = response.write(`event: records\ndata: {"from":${from},"records":[${piece.join(',')}]}\n\n`);
        if (!sent) await drained();
        if (stop.signal.aborted) break;
      }
    }
  } catch (error) {
    write('failure', { error: error instanceof Error ? error.message : String(error) });
  } finally {
    clearInterval(ticker);
    request.off('close', end);
    context.closing.removeEventListener('abort', end);
    response.end();
  }
}

/** The largest `records` event the dashboard sends (records above it go alone, cut to fit). */
export const SSE_EVENT_BYTES = 256 * 1024;
/** A string field longer than this, in a record too large for one event, is cut. */
const FIELD_KEEP = 16 * 1024;

/**
 * Splits a batch into runs of records (as JSON texts) that add up to at most
 * {@link SSE_EVENT_BYTES} characters; a record larger than that goes alone, cut to fit.
 */
export function* boundedPieces(batch: readonly Record<string, unknown>[]): Generator<string[]> {
  let piece: string[] = [];
  let size = 0;
  for (const record of batch) {
    let json = JSON.stringify(record);
    if (json.length > SSE_EVENT_BYTES) json = JSON.stringify(cutRecord(record, json.length));
    if (piece.length > 0 && size + json.length > SSE_EVENT_BYTES) {
      yield piece;
      piece = [];
      size = 0;
    }
    piece.push(json);
    size += json.length;
  }
  if (piece.length > 0) yield piece;
}

/** A copy of a too-large record with every long string cut, saying how much was left out. */
function cutRecord(record: Record<string, unknown>, length: number): Record<string, unknown> {
  const cut = (value: unknown): unknown => {
    if (typeof value === 'string')
      return value.length > FIELD_KEEP
        ? `${value.slice(0, FIELD_KEEP)}\n[... ${value.length - FIELD_KEEP} more characters not sent to the dashboard: see the trace file]`
        : value;
    if (Array.isArray(value)) return value.map(cut);
    if (typeof value === 'object' && value !== null)
      return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, cut(inner)]));
    return value;
  };
  return { ...(cut(record) as Record<string, unknown>), dashboard_cut: { original_bytes: length } };
}

async function control(
  request: IncomingMessage,
  response: ServerResponse,
  id: string,
  context: ApiContext,
): Promise<void> {
  if (!changeAllowed(request, response, context.token, 'control request')) return;
  const body = (await readJson(request)) as { action?: unknown; text?: unknown } | undefined;
  const action = typeof body?.action === 'string' ? body.action : '';
  if (!ACTIONS.has(action)) {
    sendJson(response, 400, { error: 'action must be cancel, pause, resume or directive.' });
    return;
  }
  const session = await context.source.getSession(id);
  if (session === undefined) {
    sendJson(response, 404, { error: `No session ${id}.` });
    return;
  }
  const channel = await context.source.operator(id);
  if (action === 'directive') {
    const text = typeof body?.text === 'string' ? body.text : '';
    await channel.sendDirective(text);
    const live = ACTIVE_STATUSES.has(session.status);
    sendJson(response, 200, {
      outcome: 'queued',
      message: live
        ? `Directive queued for ${id}: the agent reads it before its next model call.`
        : `Directive queued for ${id} (${session.status}): it is delivered when the session is resumed.`,
    });
    return;
  }
  // A cancel or pause left in a finished session would stop or hold its next resume (as in rho cancel).
  if (action !== 'resume' && !ACTIVE_STATUSES.has(session.status)) {
    sendJson(response, 409, { error: `Session ${id} is ${session.status}, not running: nothing to ${action}.` });
    return;
  }
  const outcome =
    action === 'cancel'
      ? await channel.requestCancel()
      : action === 'pause'
        ? await channel.requestPause()
        : await channel.requestResume();
  sendJson(response, 200, {
    outcome,
    message: outcome === 'requested' ? `${action} sent to ${id}.` : `${id}: ${action} was already requested.`,
  });
}
