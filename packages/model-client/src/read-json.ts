/**
 * Reading a discovery answer (a model list, `/props`, `/api/show`): JSON only, and bounded. A
 * server that answers with an event stream or an endless body is not a model list; reading it
 * whole would hold all of it in memory until the timeout.
 */

/** The largest discovery answer read (a model list of thousands of entries is well under it). */
export const MAX_DISCOVERY_BYTES = 4 * 1024 * 1024;

/**
 * The JSON body of `response`, or undefined when it is not JSON (by its content type, or it does
 * not parse) or passes `maxBytes` (the rest is not read: the body is cancelled).
 */
export async function readJsonResponse(response: Response, options: { maxBytes?: number } = {}): Promise<unknown> {
  const limit = options.maxBytes ?? MAX_DISCOVERY_BYTES;
  if (!/json/i.test(response.headers.get('content-type') ?? '')) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  const reader = response.body?.getReader();
  if (reader === undefined) return undefined;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
