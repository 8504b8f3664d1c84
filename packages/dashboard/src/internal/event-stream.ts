import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiContext } from './api.js';
import { sendJson } from './http.js';

/** The largest event the dashboard sends (records above it go alone, cut to fit). */
export const SSE_EVENT_BYTES = 256 * 1024;
/** A string field longer than this, in a record too large for one event, is cut. */
const FIELD_KEEP = 16 * 1024;

/** A server-sent event stream of one session, opened by {@link openSessionStream}. */
export interface SessionStream {
  /** Aborted when the client leaves or the server closes. */
  signal: AbortSignal;
  /** Writes one event; false when the socket's buffer is full (then wait for {@link drained}). */
  write(event: string, data: unknown): boolean;
  /** Writes an event whose data is JSON text already made. */
  writeRaw(event: string, json: string): boolean;
  /** Resolves when the client has read what was written (or left). */
  drained(): Promise<void>;
  /** Ends the stream. */
  end(): void;
}

/**
 * Opens `GET /api/sessions/:id/...` as server-sent events: a `session` event (the listing's row)
 * first and again whenever it changes, a keep-alive comment every status interval. Back-pressure:
 * a client that does not read holds at most what the socket buffers plus one event, since the
 * ticker sends nothing while the client is behind and writers wait for {@link SessionStream.drained}.
 * Answers 404 (and returns undefined) for an unknown session.
 */
export async function openSessionStream(
  request: IncomingMessage,
  response: ServerResponse,
  id: string,
  context: ApiContext,
): Promise<SessionStream | undefined> {
  const { source } = context;
  const first = await source.getSession(id);
  if (first === undefined) {
    sendJson(response, 404, { error: `No session ${id}.` });
    return undefined;
  }
  const stop = new AbortController();
  const abort = () => stop.abort();
  request.on('close', abort);
  context.closing.addEventListener('abort', abort, { once: true });
  response.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  response.flushHeaders();
  const writeRaw = (event: string, json: string): boolean => {
    if (response.writableEnded || response.destroyed) return true;
    return response.write(`event: ${event}\ndata: ${json}\n\n`);
  };
  const write = (event: string, data: unknown) => writeRaw(event, JSON.stringify(data));
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
  return {
    signal: stop.signal,
    write,
    writeRaw,
    drained,
    end: () => {
      clearInterval(ticker);
      request.off('close', abort);
      context.closing.removeEventListener('abort', abort);
      stop.abort();
      response.end();
    },
  };
}

/**
 * `GET /api/sessions/:id/events`: the `session` row, then `records` (trace records in batches,
 * from the first), each event bounded (see {@link boundedPieces}).
 */
export async function streamSession(
  request: IncomingMessage,
  response: ServerResponse,
  id: string,
  context: ApiContext,
): Promise<void> {
  const stream = await openSessionStream(request, response, id, context);
  if (stream === undefined) return;
  try {
    let count = 0;
    for await (const batch of context.source.follow(id, { signal: stream.signal })) {
      // A batch goes out in events of bounded size, each record itself bounded (a record of
      // hundreds of MB, written before traces had a record limit, is sent cut, with a note).
      for (const piece of boundedPieces(batch)) {
        const from = count;
        count += piece.length;
        if (response.writableEnded || response.destroyed) break;
        // Each record's JSON was made once, to measure it: the event is put together from those.
        if (!stream.writeRaw('records', `{"from":${from},"records":[${piece.join(',')}]}`)) await stream.drained();
        if (stream.signal.aborted) break;
      }
    }
  } catch (error) {
    stream.write('failure', { error: error instanceof Error ? error.message : String(error) });
  } finally {
    stream.end();
  }
}

/**
 * Splits a batch into runs of records (as JSON texts) that add up to at most
 * {@link SSE_EVENT_BYTES} characters; a record larger than that goes alone, cut to fit.
 */
export function* boundedPieces(batch: readonly Record<string, unknown>[]): Generator<string[]> {
  let piece: string[] = [];
  let size = 0;
  for (const record of batch) {
    let json = JSON.stringify(record);
    if (json.length > SSE_EVENT_BYTES) json = JSON.stringify(cutRecord(record, json.length, FIELD_KEEP));
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

/**
 * A copy of a too-large record with every string longer than `keep` cut, saying how much was left
 * out, and `dashboard_cut` giving the original size.
 */
export function cutRecord(record: Record<string, unknown>, length: number, keep: number): Record<string, unknown> {
  const cut = (value: unknown): unknown => {
    if (typeof value === 'string')
      return value.length > keep
        ? `${value.slice(0, keep)}\n[... ${value.length - keep} more characters not sent to the dashboard: see the trace file]`
        : value;
    if (Array.isArray(value)) return value.map(cut);
    if (typeof value === 'object' && value !== null)
      return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, cut(inner)]));
    return value;
  };
  return { ...(cut(record) as Record<string, unknown>), dashboard_cut: { original_bytes: length } };
}
