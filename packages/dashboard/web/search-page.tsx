// Search across sessions' content (GET /api/search): messages, tool arguments and results,
// errors and directives, not only ids and prompts. Each hit opens its span in the trace viewer.
import { useEffect, useState } from 'preact/hooks';
import { getJson } from './api.js';

interface Hit {
  sessionId: string;
  record: number;
  type: string;
  ts?: string;
  field: string;
  snippet: string;
}

interface Found {
  hits: Hit[];
  sessionsSearched: number;
  complete: boolean;
  note?: string;
}

/** The snippet with the words looked for marked. */
function marked(snippet: string, query: string) {
  const lower = snippet.toLowerCase();
  const needle = query.toLowerCase();
  const parts = [];
  let at = 0;
  for (let found = lower.indexOf(needle); found !== -1 && needle !== ''; found = lower.indexOf(needle, at)) {
    parts.push(snippet.slice(at, found), <mark key={found}>{snippet.slice(found, found + needle.length)}</mark>);
    at = found + needle.length;
  }
  parts.push(snippet.slice(at));
  return parts;
}

export function SearchPage({ query }: { query: string }) {
  const [text, setText] = useState(query);
  const [found, setFound] = useState<Found | undefined>(undefined);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    setText(query);
    if (query.trim().length < 2) {
      setFound(undefined);
      return;
    }
    let current = true;
    setBusy(true);
    setError('');
    getJson<Found>(`/api/search?q=${encodeURIComponent(query)}&limit=100`).then(
      (body) => current && (setFound(body), setBusy(false)),
      (failure: unknown) =>
        current && (setError(failure instanceof Error ? failure.message : String(failure)), setBusy(false)),
    );
    return () => {
      current = false;
    };
  }, [query]);
  return (
    <section class="search">
      <h1>Search sessions</h1>
      <form
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          location.hash = `#/search?q=${encodeURIComponent(text.trim())}`;
        }}
      >
        <input
          type="search"
          aria-label="Search sessions' content"
          placeholder="A word from a prompt, a tool's output, an error…"
          value={text}
          onInput={(event) => setText((event.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={text.trim().length < 2}>
          Search
        </button>
      </form>
      {busy && <p class="empty">Searching…</p>}
      {error !== '' && <p class="error">{error}</p>}
      {found !== undefined && !busy && (
        <>
          <p class="count" data-testid="search-count">
            {found.hits.length} {found.hits.length === 1 ? 'hit' : 'hits'} in {found.sessionsSearched} sessions searched
            {found.complete ? '' : ' (stopped early)'}
          </p>
          {found.note !== undefined && <p class="notice">{found.note}</p>}
          <ol class="hits" data-testid="search-hits">
            {found.hits.map((hit) => (
              <li key={`${hit.sessionId}-${hit.record}`}>
                <a href={`#/session/${encodeURIComponent(hit.sessionId)}/record/${hit.record}`}>
                  <span class="mono">{hit.sessionId}</span> · {hit.type} · {hit.field}
                  {hit.ts === undefined ? '' : ` · ${hit.ts.replace('T', ' ').slice(0, 19)} UTC`}
                </a>
                <p class="snippet">{marked(hit.snippet, query)}</p>
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
