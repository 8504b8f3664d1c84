import type { IncomingMessage, ServerResponse } from 'node:http';
import { RhoError, SessionNotFoundError } from '@rho/core';
import { ACTIVE_STATUSES } from '@rho/monitor';
import type { DashboardSource, SessionQuery, SessionSortKey } from '../dashboard-source.js';
import { answerApproval, listApprovals, listSessionApprovals } from './approvals-api.js';
import { changeAllowed } from './change-guard.js';
import { sessionChanges } from './changes-api.js';
import { streamSession } from './event-stream.js';
import { readJson, sendJson } from './http.js';
import { recordsById, streamSpans } from './spans-api.js';
import { searchContent } from './search-api.js';
import type { TraceIndexes } from './trace-index.js';
export { boundedPieces, SSE_EVENT_BYTES } from './event-stream.js';

/** What the API handlers share. */
export interface ApiContext {
  source: DashboardSource;
  token: string;
  /** Aborted when the server closes: ends every live stream. */
  closing: AbortSignal;
  statusIntervalMs: number;
  /** The span trees of the sessions being looked at (the trace viewer). */
  indexes: TraceIndexes;
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
 * - `GET /api/sessions/:id/spans` the trace viewer's span tree, live (server-sent events, or one
 *   JSON answer with `?snapshot=1`), `GET /api/sessions/:id/records?at=3,4` records by index for
 *   its detail pane (see spans-api.ts);
 * - `GET /api/search?q&limit` records of sessions whose content holds `q` (see search-api.ts);
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
    if (request.method === 'GET' && path === '/api/search') {
      await searchContent(response, url, context);
      return;
    }
    if (path === '/api/approvals') {
      if (request.method === 'GET') await listApprovals(response, context.source);
      else
        sendJson(response, 405, { error: 'Method not allowed: answer a call with POST /api/sessions/:id/approvals.' });
      return;
    }
    const match = /^\/api\/sessions\/([^/]+)(\/events|\/spans|\/records|\/control|\/approvals|\/changes)?$/.exec(path);
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
    if (request.method === 'GET' && match[2] === '/spans') {
      await streamSpans(request, response, id, url, context);
      return;
    }
    if (request.method === 'GET' && match[2] === '/records') {
      await recordsById(response, id, url, context);
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
