import type { ServerResponse } from 'node:http';
import type { ApiContext } from './api.js';
import { sendJson } from './http.js';

/** Hits one search returns at most. */
const MAX_HITS = 200;

/**
 * `GET /api/search?q=text&limit=50`: the records of sessions whose content holds `q`
 * (`DashboardSource.searchContent`), newest session first. A source that cannot search content
 * answers 501, saying so.
 */
export async function searchContent(response: ServerResponse, url: URL, context: ApiContext): Promise<void> {
  const query = (url.searchParams.get('q') ?? '').trim();
  if (query.length < 2 || query.length > 200) {
    sendJson(response, 400, { error: 'q must be 2 to 200 characters.' });
    return;
  }
  const asked = Number(url.searchParams.get('limit') ?? 50);
  const limit = Number.isInteger(asked) && asked > 0 ? Math.min(asked, MAX_HITS) : 50;
  if (context.source.searchContent === undefined) {
    sendJson(response, 501, {
      error: `${context.source.description} cannot search sessions' content: the sessions page's search looks at ids, prompts, models, profiles and hosts.`,
    });
    return;
  }
  const stop = new AbortController();
  const end = () => stop.abort();
  context.closing.addEventListener('abort', end, { once: true });
  response.on('close', end);
  try {
    sendJson(response, 200, await context.source.searchContent({ query, limit, signal: stop.signal }));
  } finally {
    context.closing.removeEventListener('abort', end);
    response.off('close', end);
  }
}
