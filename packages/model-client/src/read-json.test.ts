import { describe, expect, it } from 'vitest';
import { readJsonResponse } from './read-json.js';

/** A response whose body never ends: one chunk after another, as fast as it is read. */
function endless(contentType: string): { response: Response; pulled: () => number } {
  let pulls = 0;
  const chunk = new TextEncoder().encode('{"id":"m"},'.repeat(1000));
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls += 1;
      controller.enqueue(chunk);
    },
  });
  return { response: new Response(body, { headers: { 'content-type': contentType } }), pulled: () => pulls };
}

describe('readJsonResponse', () => {
  it('reads JSON whole', async () => {
    const response = new Response('{"data":[{"id":"a"}]}', { headers: { 'content-type': 'application/json' } });
    expect(await readJsonResponse(response)).toEqual({ data: [{ id: 'a' }] });
  });

  it('stops an endless JSON body at its bound, and reads nothing of what is not JSON', async () => {
    const json = endless('application/json');
    expect(await readJsonResponse(json.response, { maxBytes: 100_000 })).toBeUndefined();
    // About 100 KB read in 11 KB chunks, never the rest.
    expect(json.pulled()).toBeLessThan(15);
    const stream = endless('text/event-stream');
    expect(await readJsonResponse(stream.response)).toBeUndefined();
    expect(stream.pulled()).toBeLessThanOrEqual(2);
    const broken = new Response('{"data": [', { headers: { 'content-type': 'application/json' } });
    expect(await readJsonResponse(broken)).toBeUndefined();
  });
});
