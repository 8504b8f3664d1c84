import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiContext } from './api.js';
import { openSessionStream, SSE_EVENT_BYTES } from './event-stream.js';
import { sendJson } from './http.js';
import type { TraceSpan } from './span-tree.js';

/** Record indexes one `records` request may ask for. */
export const MAX_RECORDS_ASKED = 500;

/** Spans as JSON texts, in events of at most {@link SSE_EVENT_BYTES} characters. */
function* spanPieces(spans: readonly TraceSpan[]): Generator<string> {
  let piece: string[] = [];
  let size = 0;
  for (const span of spans) {
    const json = JSON.stringify(span);
    if (piece.length > 0 && size + json.length > SSE_EVENT_BYTES) {
      yield piece.join(',');
      piece = [];
      size = 0;
    }
    piece.push(json);
    size += json.length;
  }
  if (piece.length > 0) yield piece.join(',');
}

/**
 * `GET /api/sessions/:id/spans`: the trace viewer's tree as server-sent events: `session` (the
 * row, as on `/events`), `spans` (`{spans}`: spans made or changed, each whole; the first events
 * hold the tree so far), `ready` (`{records}`: the tree holds what the trace held when the page
 * opened; later `spans` events are the live session growing), `failure`. With `?snapshot=1`, one
 * JSON answer instead: `{spans, records}` once the trace as it is has been read (a child
 * session's tree, opened inside its parent's).
 */
export async function streamSpans(
  request: IncomingMessage,
  response: ServerResponse,
  id: string,
  url: URL,
  context: ApiContext,
): Promise<void> {
  if (url.searchParams.get('snapshot') === '1') {
    if ((await context.source.getSession(id)) === undefined) {
      sendJson(response, 404, { error: `No session ${id}.` });
      return;
    }
    const index = context.indexes.get(id);
    await index.ready();
    if (index.failure !== undefined) {
      sendJson(response, 500, { error: index.failure.message });
      return;
    }
    sendJson(response, 200, { spans: index.builder.spans, records: index.builder.records });
    return;
  }
  const stream = await openSessionStream(request, response, id, context);
  if (stream === undefined) return;
  const index = context.indexes.get(id);
  // Spans changed since the last event; a span changed twice before it went out goes once.
  const dirty = new Set<TraceSpan>();
  let wake: (() => void) | undefined;
  const unsubscribe = index.subscribe((changed) => {
    for (const span of changed) dirty.add(span);
    const resolve = wake;
    wake = undefined;
    resolve?.();
  });
  const onAbort = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  stream.signal.addEventListener('abort', onAbort, { once: true });
  try {
    for (const span of index.builder.spans) dirty.add(span);
    let told = false;
    while (!stream.signal.aborted) {
      if (dirty.size > 0) {
        const spans = [...dirty];
        dirty.clear();
        for (const piece of spanPieces(spans)) {
          if (!stream.writeRaw('spans', `{"spans":[${piece}]}`)) await stream.drained();
          if (stream.signal.aborted) break;
        }
        continue;
      }
      if (index.failure !== undefined) {
        stream.write('failure', { error: index.failure.message });
        break;
      }
      if (!told && index.caughtUp) {
        told = true;
        stream.write('ready', { records: index.builder.records });
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    unsubscribe();
    stream.signal.removeEventListener('abort', onAbort);
    stream.end();
  }
}

/**
 * `GET /api/sessions/:id/records?at=3,4,9`: those records (at most {@link MAX_RECORDS_ASKED}), for
 * the detail pane: `{records: [{index, record}]}`, long strings cut (see trace-index.ts). An index
 * the trace does not have is left out.
 */
export async function recordsById(response: ServerResponse, id: string, url: URL, context: ApiContext): Promise<void> {
  const asked = (url.searchParams.get('at') ?? '')
    .split(',')
    .filter((part) => part !== '')
    .map(Number);
  if (
    asked.length === 0 ||
    asked.length > MAX_RECORDS_ASKED ||
    !asked.every((value) => Number.isInteger(value) && value >= 0)
  ) {
    sendJson(response, 400, {
      error: `at must list 1 to ${MAX_RECORDS_ASKED} record indexes (whole numbers from 0), separated by commas.`,
    });
    return;
  }
  if ((await context.source.getSession(id)) === undefined) {
    sendJson(response, 404, { error: `No session ${id}.` });
    return;
  }
  const found = await context.indexes.get(id).records(asked);
  const parts = [...new Set(asked)]
    .filter((index) => found.has(index))
    .sort((left, right) => left - right)
    .map((index) => `{"index":${index},"record":${found.get(index)!}}`);
  const body = `{"records":[${parts.join(',')}]}`;
  response.writeHead(200, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  response.end(body);
}
