import { join } from 'node:path';
import { SessionStore } from '@rho/core';
import { readSessionMeta } from '@rho/core/internal';
import type { RawTraceRecord } from '@rho/core';
import type { RecordFollower } from './follow-merged.js';
import { followMerged } from './follow-merged.js';
import type { FollowedRecord } from './session-source.js';
import { watchSession } from './watch-session.js';

/**
 * Follows a session's trace and, as they appear, the traces of its child sessions (meta.json
 * `parent_id`), merged in arrival order. Ends when the session's watch ends and every child's
 * watch has ended, and throws the first error of any of them (a trace that cannot be read).
 *
 * Linear in the number of records: one abort listener for the whole watch (removed at the end),
 * a queue drained by index rather than `shift()`, and followers that pause while the consumer is
 * more than `FOLLOW_QUEUE_HIGH_WATER` records behind (see {@link followMerged}), so a long trace is never held whole.
 */
export async function* watchWithChildren(
  sessionsDirectory: string,
  session: { id: string; directory: string },
  options: { fromStart: boolean; follow: boolean; signal?: AbortSignal; pollIntervalMs?: number },
): AsyncGenerator<FollowedRecord, void, undefined> {
  const watch =
    (directory: string, child: boolean): RecordFollower<RawTraceRecord> =>
    (signal) =>
      watchSession(directory, child ? { ...options, signal, fromStart: true, follow: false } : { ...options, signal });
  // Ids already looked at (children or not): a directory is read once it has its meta.json.
  const looked = new Set<string>([session.id]);
  yield* followMerged<RawTraceRecord>({
    parent: watch(session.directory, false),
    discover: (add) => {
      for (const id of new SessionStore(sessionsDirectory).ids()) {
        if (looked.has(id)) continue;
        const directory = join(sessionsDirectory, id);
        const meta = readSessionMeta(directory);
        // A directory without meta.json yet may still become a child: look again next time.
        if (meta === undefined) continue;
        looked.add(id);
        if (meta.parent_id === session.id) add(id, watch(directory, true));
      }
    },
    discoverIntervalMs: options.pollIntervalMs ?? 250,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
}
