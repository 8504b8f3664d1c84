import type { IncomingMessage, ServerResponse } from 'node:http';

/** Sends a whole answer. */
export function send(response: ServerResponse, status: number, type: string, body: string | Buffer): void {
  response.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  response.end(body);
}

/** Sends a JSON answer. */
export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  send(response, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

/** The largest request body the API reads. */
export const BODY_LIMIT = 65_536;

/** A request's JSON body, or why there is none: it is larger than {@link BODY_LIMIT}, or not JSON. */
export type JsonBody = { ok: true; value: unknown } | { ok: false; problem: 'too_large' | 'not_json' };

/** Reads a request's JSON body (at most {@link BODY_LIMIT} bytes; reading stops there). */
export async function readJsonBody(request: IncomingMessage): Promise<JsonBody> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) return { ok: false, problem: 'too_large' };
    chunks.push(chunk);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown };
  } catch {
    return { ok: false, problem: 'not_json' };
  }
}

/** The JSON body of a request (at most 64 KiB), or undefined when it is not JSON. */
export async function readJson(request: IncomingMessage): Promise<unknown> {
  const body = await readJsonBody(request);
  return body.ok ? body.value : undefined;
}
