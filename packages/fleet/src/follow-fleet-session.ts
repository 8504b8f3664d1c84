import { setMaxListeners } from 'node:events';
import type { TraceRecord } from '@rho/core';
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
 * first record until it ends. Ends when the session's follow ends (it is no longer live, unless
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
  let queue: FleetWatchedRecord[] = [];
  let head = 0;
  let wake: (() => void) | undefined;
  const notify = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  const onAbort = () => {
    stop.abort();
    notify();
  };
  if (options.signal?.aborted === true) stop.abort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  const followed = new Set<string>([target.id]);
  const running = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  let parentDone = false;

  const follow = (id: string, childId: string | undefined, afterSeq: number, untilFinished: boolean) => {
    const task = (async () => {
      for await (const { record } of fleet.followRecords(id, {
        afterSeq,
        untilFinished,
        signal: stop.signal,
        // The watched session's follow speaks for the connection; a child's would say it again.
        ...(childId === undefined && options.onConnectionLost !== undefined
          ? { onConnectionLost: options.onConnectionLost }
          : {}),
      })) {
        queue.push(childId === undefined ? { record } : { record, childId });
        notify();
      }
    })()
      .catch((error: unknown) => {
        if (stop.signal.aborted) return;
        failure ??= { error };
        stop.abort();
      })
      .finally(() => {
        running.delete(task);
        if (childId === undefined) parentDone = true;
        notify();
      });
    running.add(task);
  };

  let discovering: Promise<void> | undefined;
  const discover = () => {
    discovering ??= fleet
      .listSessions({ limit: 500 })
      .then((sessions) => {
        // Oldest first, so a grandchild's parent is known before it.
        for (const session of [...sessions].reverse()) {
          if (session.parentId === undefined || followed.has(session.id) || !followed.has(session.parentId)) continue;
          followed.add(session.id);
          follow(session.id, session.id, 0, true);
        }
      })
      .catch(() => {
        // A failed listing is retried at the next interval; the watched session's own follow reports errors.
      })
      .finally(() => {
        discovering = undefined;
      });
    return discovering;
  };

  follow(target.id, undefined, options.afterSeq, !options.follow);
  void discover();
  const timer = setInterval(() => void discover(), options.discoverIntervalMs ?? 1_000);
  timer.unref();
  let lastLook = false;
  try {
    for (;;) {
      while (head < queue.length) {
        const next = queue[head]!;
        head += 1;
        yield next;
      }
      queue = [];
      head = 0;
      if (failure !== undefined) throw failure.error;
      if (stop.signal.aborted) break;
      if (parentDone && running.size === 0) {
        // Children that registered after the last listing are still shown, once.
        if (lastLook) break;
        lastLook = true;
        await discover();
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    clearInterval(timer);
    options.signal?.removeEventListener('abort', onAbort);
    stop.abort();
  }
}
