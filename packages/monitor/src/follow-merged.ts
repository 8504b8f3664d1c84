import { setMaxListeners } from 'node:events';

/** Records a follower may queue before it waits for the consumer to catch up. */
export const FOLLOW_QUEUE_HIGH_WATER = 1024;

/** A session's records, followed until they end or `signal` is aborted. */
export type RecordFollower<R> = (signal: AbortSignal) => AsyncIterable<R>;

/** What {@link followMerged} follows. */
export interface FollowMergedOptions<R> {
  /** The watched session's records; the merge ends when they end and every child's have. */
  parent: RecordFollower<R>;
  /** Looks for new child sessions and calls `add` once for each (never twice for one id). */
  discover(add: (childId: string, records: RecordFollower<R>) => void): void | Promise<void>;
  /** How often `discover` runs while the parent is followed. */
  discoverIntervalMs: number;
  /** Look once more after everything ended, for children that appeared after the last look. */
  lastLook?: boolean;
  signal?: AbortSignal;
}

/**
 * A session's records and, as they appear, its children's, merged in arrival order (a child's
 * record carries its `childId`). Throws the first error of any follower (errors after the merge
 * was stopped are the stop's own). Linear in the number of records: one abort controller for
 * every follower, a queue drained by index, and followers that pause while the consumer is more
 * than {@link FOLLOW_QUEUE_HIGH_WATER} records behind, so a long trace is never held whole.
 * The one merge of `watchWithChildren` (a directory) and the fleet's follow of a session.
 */
export async function* followMerged<R>(
  options: FollowMergedOptions<R>,
): AsyncGenerator<{ record: R; childId?: string }, void, undefined> {
  let queue: { record: R; childId?: string }[] = [];
  let head = 0;
  let wake: (() => void) | undefined;
  const notify = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  // Paused followers, resumed when the consumer has drained the queue.
  let drained: (() => void)[] = [];
  const resumeFollowers = () => {
    const waiting = drained;
    drained = [];
    for (const resume of waiting) resume();
  };
  // Ends the followers when the merge is aborted, and when the consumer stops early.
  const stop = new AbortController();
  // Each follower holds one listener on it while it runs.
  setMaxListeners(0, stop.signal);
  const onAbort = () => {
    stop.abort();
    notify();
  };
  if (options.signal?.aborted === true) stop.abort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  const seen = new Set<string>();
  const running = new Set<Promise<void>>();
  let parentDone = false;
  let failure: { error: unknown } | undefined;

  // The first look for children waits for the parent's first record (or its end): what the
  // session had written comes before its children's records, whichever source answers first.
  let firstLook: (() => void) | undefined = () => {
    firstLook = undefined;
    void discover();
  };
  const follow = (records: RecordFollower<R>, childId: string | undefined) => {
    const task = (async () => {
      for await (const record of records(stop.signal)) {
        queue.push(childId === undefined ? { record } : { record, childId });
        if (childId === undefined) firstLook?.();
        notify();
        if (queue.length - head >= FOLLOW_QUEUE_HIGH_WATER && !stop.signal.aborted)
          await new Promise<void>((resolve) => drained.push(resolve));
      }
    })()
      .catch((error: unknown) => {
        if (stop.signal.aborted) return;
        failure ??= { error };
        stop.abort();
      })
      .finally(() => {
        running.delete(task);
        if (childId === undefined) {
          parentDone = true;
          firstLook?.();
        }
        notify();
      });
    running.add(task);
  };
  const add = (childId: string, records: RecordFollower<R>) => {
    if (seen.has(childId) || stop.signal.aborted) return;
    seen.add(childId);
    follow(records, childId);
  };
  let discovering: Promise<void> | undefined;
  const discover = () => {
    discovering ??= Promise.resolve()
      .then(() => options.discover(add))
      .catch((error: unknown) => {
        failure ??= { error };
        stop.abort();
      })
      .finally(() => {
        discovering = undefined;
        notify();
      });
    return discovering;
  };

  follow(options.parent, undefined);
  const timer = setInterval(() => void discover(), options.discoverIntervalMs);
  timer.unref();
  let lookedLast = options.lastLook !== true;
  try {
    for (;;) {
      while (head < queue.length) {
        const next = queue[head]!;
        head += 1;
        yield next;
      }
      queue = [];
      head = 0;
      resumeFollowers();
      if (failure !== undefined) throw failure.error;
      if (stop.signal.aborted) break;
      if (parentDone && running.size === 0) {
        // A look under way may still add children.
        if (discovering !== undefined) {
          await discovering;
          continue;
        }
        if (lookedLast) break;
        lookedLast = true;
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
    resumeFollowers();
  }
}
