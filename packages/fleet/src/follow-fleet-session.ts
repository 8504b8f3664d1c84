import type { TraceRecord } from '@rho/core';
import type { RecordFollower } from '@rho/monitor';
import { followMerged } from '@rho/monitor';
import type { Fleet, FleetSession } from './types.js';

/** A mirrored record of the watched session, or of one of its child sessions (delegate). */
export interface FleetWatchedRecord {
  record: TraceRecord;
  /** The child session's id, for records of a child (or grandchild). */
  childId?: string;
}

/**
 * Follows a fleet session's mirrored records and, as they register, those of its child sessions
 * (and theirs), merged in arrival order: the fleet's counterpart of `watchWithChildren`. Children
 * are found by listing the fleet every `discoverIntervalMs` (1 s); each child is followed from its
 * first record until it ends; the merge (and its back-pressure) is `@rho/monitor`'s `followMerged`. Ends when the session's follow ends (it is no longer live, unless
 * `follow`) and every child's has; throws the first error of any of them.
 */
export async function* followFleetSession(
  fleet: Fleet,
  target: FleetSession,
  options: {
    afterSeq: number;
    follow: boolean;
    signal?: AbortSignal;
    discoverIntervalMs?: number;
    /** Told when the database goes away (the error) and when it is back (`undefined`). */
    onConnectionLost?: (error: unknown | undefined) => void;
  },
): AsyncGenerator<FleetWatchedRecord, void, undefined> {
  const records =
    (id: string, child: boolean): RecordFollower<TraceRecord> =>
    (signal) =>
      (async function* () {
        for await (const { record } of fleet.followRecords(id, {
          afterSeq: child ? 0 : options.afterSeq,
          untilFinished: child || !options.follow,
          signal,
          // The watched session's follow speaks for the connection; a child's would say it again.
          ...(!child && options.onConnectionLost !== undefined ? { onConnectionLost: options.onConnectionLost } : {}),
        }))
          yield record;
      })();
  // The watched session and the children found so far (a grandchild's parent is one of them).
  const followed = new Set<string>([target.id]);
  yield* followMerged<TraceRecord>({
    parent: records(target.id, false),
    discover: async (add) => {
      let sessions: FleetSession[];
      try {
        sessions = await fleet.listSessions({ limit: 500 });
      } catch {
        // A failed listing is retried at the next interval; the watched session's own follow reports errors.
        return;
      }
      // Oldest first, so a grandchild's parent is known before it.
      for (const session of [...sessions].reverse()) {
        if (session.parentId === undefined || followed.has(session.id) || !followed.has(session.parentId)) continue;
        followed.add(session.id);
        add(session.id, records(session.id, true));
      }
    },
    discoverIntervalMs: options.discoverIntervalMs ?? 1_000,
    // Children that registered after the last listing are still shown, once.
    lastLook: true,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
}
