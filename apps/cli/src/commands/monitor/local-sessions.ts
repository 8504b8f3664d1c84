import { readdirSync } from 'node:fs';
import type { ListedSession, SessionSource } from '@rho/monitor';

/** At most this many of this machine's session directories are checked against the fleet by one `rho ps`. */
export const LOCAL_SESSIONS_CHECKED = 1_000;

/**
 * This machine's sessions that never registered with `fleet` (they ran without one, or before it
 * was configured), newest first, at most `limit`, with how many there are. Cheap and bounded: one
 * listing of the sessions directory (at most {@link LOCAL_SESSIONS_CHECKED} entries), one query of
 * the fleet for those ids, and a read of the meta.json of each session the fleet does not know.
 */
export async function localSessionsNotInFleet(
  fleet: SessionSource,
  local: SessionSource,
  limit: number | undefined,
): Promise<{ sessions: ListedSession[]; total: number }> {
  let ids: string[];
  try {
    ids = readdirSync(local.description, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
      .map((entry) => entry.name)
      .slice(0, LOCAL_SESSIONS_CHECKED);
  } catch {
    return { sessions: [], total: 0 };
  }
  if (ids.length === 0) return { sessions: [], total: 0 };
  const known = new Set((await fleet.list({ ids, limit: ids.length })).sessions.map((session) => session.id));
  const sessions = (await Promise.all(ids.filter((id) => !known.has(id)).map((id) => local.get(id))))
    .filter((session): session is ListedSession => session !== undefined)
    .sort((a, b) => (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : 0));
  return { sessions: limit === undefined ? sessions : sessions.slice(0, limit), total: sessions.length };
}
