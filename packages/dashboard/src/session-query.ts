import type { ListedSession } from '@rho/monitor';
import { ACTIVE_STATUSES } from '@rho/monitor';
import type { SessionPage, SessionQuery, SessionSortKey } from './dashboard-source.js';

const MAX_LIMIT = 1000;

/**
 * Answers a {@link SessionQuery} over sessions held in memory: filter, search, sort, group child
 * agents under their parents, and cut out one page. A source that keeps its listing in memory
 * (the file source) uses it; a database source would do the same in SQL.
 */
export function querySessions(sessions: readonly ListedSession[], query: SessionQuery): SessionPage {
  const search = query.search?.trim().toLowerCase() ?? '';
  const matching = sessions.filter(
    (session) =>
      (query.status === undefined ||
        query.status === '' ||
        (query.status === 'active' ? ACTIVE_STATUSES.has(session.status) : session.status === query.status)) &&
      (query.model === undefined || query.model === '' || session.model === query.model) &&
      (query.profile === undefined || query.profile === '' || session.profile === query.profile) &&
      (search === '' || searchText(session).includes(search)),
  );
  const compare = comparator(query.sort ?? 'startedAt', query.order ?? 'desc');
  const ordered =
    query.tree === false
      ? matching.sort(compare).map((session) => ({ ...session, depth: 0 }))
      : treeOrder(matching, compare);
  const offset = Math.max(0, Math.floor(query.offset ?? 0));
  const limit = Math.min(MAX_LIMIT, Math.max(1, Math.floor(query.limit ?? 100)));
  return {
    rows: ordered.slice(offset, offset + limit),
    total: ordered.length,
    all: sessions.length,
    facets: facetsOf(sessions),
  };
}

function searchText(session: ListedSession): string {
  return [session.id, session.firstPrompt, session.model, session.profile, session.hostname]
    .filter((part) => part !== undefined)
    .join('\u0000')
    .toLowerCase();
}

function sortValue(session: ListedSession, key: SessionSortKey): string | number {
  switch (key) {
    case 'tokens':
      return (session.inputTokens ?? 0) + (session.outputTokens ?? 0);
    case 'costUsd':
      return session.costUsd ?? -1;
    case 'startedAt':
      return session.startedAt;
    case 'status':
    case 'model':
    case 'profile':
    case 'hostname':
    case 'id':
      return session[key] ?? '';
    default: {
      const never: never = key;
      return String(never);
    }
  }
}

function comparator(key: SessionSortKey, order: 'asc' | 'desc'): (left: ListedSession, right: ListedSession) => number {
  const sign = order === 'asc' ? 1 : -1;
  return (left, right) => {
    const a = sortValue(left, key);
    const b = sortValue(right, key);
    const primary = a < b ? -1 : a > b ? 1 : 0;
    if (primary !== 0) return sign * primary;
    return left.id < right.id ? -sign : left.id > right.id ? sign : 0;
  };
}

/** Roots in sort order, each followed by its descendants (siblings sorted the same way). */
function treeOrder(
  sessions: ListedSession[],
  compare: (left: ListedSession, right: ListedSession) => number,
): (ListedSession & { depth: number })[] {
  const byId = new Map(sessions.map((session) => [session.id, session]));
  const children = new Map<string, ListedSession[]>();
  const roots: ListedSession[] = [];
  for (const session of sessions) {
    const parent = session.parentId;
    if (parent === undefined || parent === session.id || !byId.has(parent) || cycles(byId, session)) {
      roots.push(session);
      continue;
    }
    const siblings = children.get(parent);
    if (siblings === undefined) children.set(parent, [session]);
    else siblings.push(session);
  }
  roots.sort(compare);
  const rows: (ListedSession & { depth: number })[] = [];
  const visit = (session: ListedSession, depth: number) => {
    rows.push({ ...session, depth });
    const own = children.get(session.id);
    if (own === undefined) return;
    own.sort(compare);
    for (const child of own) visit(child, depth + 1);
  };
  for (const root of roots) visit(root, 0);
  return rows;
}

/** Two sessions naming each other as parent (a hand-edited meta.json) would hide both. */
function cycles(byId: Map<string, ListedSession>, session: ListedSession): boolean {
  const seen = new Set([session.id]);
  let parent = session.parentId;
  while (parent !== undefined) {
    if (seen.has(parent)) return true;
    seen.add(parent);
    parent = byId.get(parent)?.parentId;
  }
  return false;
}

const facetCache = new WeakMap<readonly ListedSession[], SessionPage['facets']>();

function facetsOf(sessions: readonly ListedSession[]): SessionPage['facets'] {
  const cached = facetCache.get(sessions);
  if (cached !== undefined) return cached;
  const models = new Set<string>();
  const profiles = new Set<string>();
  const statuses = new Set<string>();
  for (const session of sessions) {
    if (session.model !== undefined) models.add(session.model);
    if (session.profile !== undefined) profiles.add(session.profile);
    statuses.add(session.status);
  }
  const facets = { models: [...models].sort(), profiles: [...profiles].sort(), statuses: [...statuses].sort() };
  facetCache.set(sessions, facets);
  return facets;
}
