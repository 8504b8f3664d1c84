/** Options of a content search (`SessionSource.searchContent`, the dashboard's). */
export interface ContentSearchOptions {
  /** The text looked for (case-insensitive), as typed. */
  query: string;
  /** Hits at most. */
  limit: number;
  /** Ends the search early. */
  signal?: AbortSignal;
}

/** One record of a session whose content holds the text looked for. */
export interface ContentHit {
  sessionId: string;
  /**
   * The record's index in the session's trace: 0-based, in the order the source's `follow` yields
   * the session's own records (as the dashboard's trace viewer counts them).
   */
  record: number;
  /** The record's type (`message`, `tool_start`, ...). */
  type: string;
  ts?: string;
  /** Where in the record the text is (`content`, `tool_args.command`, ...). */
  field: string;
  /** The text around the hit. */
  snippet: string;
}

/** What a content search found. */
export interface ContentSearch {
  /** Newest session first, then in trace order. */
  hits: ContentHit[];
  /** Sessions whose traces were read. */
  sessionsSearched: number;
  /** False when the search stopped before reading every session (the limit, or its read budget). */
  complete: boolean;
  /** Why it stopped early, for people. */
  note?: string;
}

/** Where a record holds the text looked for ({@link contentMatcher}). */
export interface ContentMatch {
  /** The path of the string value (`content`, `tool_args.command`, `items[2].text`). */
  field: string;
  /** The value around the text: {@link CONTENT_SNIPPET_SIDE} characters either side, white space folded. */
  snippet: string;
}

/** Hits a content search takes from one session at most, so one chatty session does not fill the page. */
export const CONTENT_HITS_PER_SESSION = 20;

/** Characters of context either side of a hit in its snippet. */
export const CONTENT_SNIPPET_SIDE = 60;

/**
 * The content match of every content search: a function that finds `query` (case-insensitive) in
 * a trace record's string values (walked in order, the first that holds it), never in its keys,
 * nor in the record's own `type` and `ts`. Undefined for a record without it.
 */
export function contentMatcher(query: string): (record: object) => ContentMatch | undefined {
  const needle = query.toLowerCase();
  const walk = (value: unknown, path: string): ContentMatch | undefined => {
    if (typeof value === 'string') {
      const at = value.toLowerCase().indexOf(needle);
      if (at === -1) return undefined;
      const from = Math.max(0, at - CONTENT_SNIPPET_SIDE);
      const to = Math.min(value.length, at + needle.length + CONTENT_SNIPPET_SIDE);
      const snippet = `${from > 0 ? '…' : ''}${value.slice(from, to).replace(/\s+/g, ' ')}${to < value.length ? '…' : ''}`;
      return { field: path, snippet };
    }
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index += 1) {
        const found = walk(value[index], `${path}[${index}]`);
        if (found !== undefined) return found;
      }
      return undefined;
    }
    if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        if (path === '' && (key === 'type' || key === 'ts')) continue;
        const found = walk(inner, path === '' ? key : `${path}.${key}`);
        if (found !== undefined) return found;
      }
    }
    return undefined;
  };
  return (record) => walk(record, '');
}
