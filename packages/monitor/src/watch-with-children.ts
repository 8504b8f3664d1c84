import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import { SessionStore } from '@rho/core';
import { readSessionMeta } from '@rho/core/internal';
import type { FollowedRecord } from './session-source.js';
import { watchSession } from './watch-session.js';

/** Records a follower may queue before it waits for the consumer to catch up. */
const QUEUE_HIGH_WATER = 1024;

/**
 * Follows a session's trace and, as they appear, the traces of its child sessions (meta.json
 * `parent_id`), merged in arrival order. Ends when the session's watch ends and every child's
 * watch has ended, and throws the first error of any of them (a trace that cannot be read).
 *
 * Linear in the number of records: one abort listener for the whole watch (removed at the end),
 * a queue drained by index rather than `shift()`, and followers that pause while the consumer is
 * more than {@link QUEUE_HIGH_WATER} records behind, so a long trace is never held whole.
 */
export async function* watchWithChildren(
  sessionsDirectory: string,
  session: { id: string; directory: string },
  options: { fromStart: boolean; follow: boolean; signal?: AbortSignal; pollIntervalMs?: number },
): AsyncGenerator<FollowedRecord, void, undefined> {
  let queue: FollowedRecord[] = [];
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
  // Ends the followers when the watch is aborted, and when the consumer stops early.
  const stop = new AbortController();
  // Each follower (the session and every child) holds one listener on it while it runs.
  setMaxListeners(0, stop.signal);
  const onAbort = () => {
    stop.abort();
    notify();
  };
  if (options.signal?.aborted === true) stop.abort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  const seen = new Set<string>([session.id]);
  const running = new Set<Promise<void>>();
  let parentDone = false;
  let failure: { error: unknown } | undefined;

  const follow = (directory: string, childId: string | undefined) => {
    const task = (async () => {
      const base = { ...options, signal: stop.signal };
      const watchOptions = childId === undefined ? base : { ...base, fromStart: true, follow: false };
      for await (const record of watchSession(directory, watchOptions)) {
        queue.push(childId === undefined ? { record } : { record, childId });
        notify();
        if (queue.length - head >= QUEUE_HIGH_WATER && !stop.signal.aborted)
          await new Promise<void>((resolve) => drained.push(resolve));
      }
    })()
      .catch((error: unknown) => {
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

  const discover = () => {
    for (const id of new SessionStore(sessionsDirectory).ids()) {
      if (seen.has(id)) continue;
      const directory = join(sessionsDirectory, id);
      const meta = readSessionMeta(directory);
      // A directory without meta.json yet may still become a child: look again next time.
      if (meta === undefined) continue;
      seen.add(id);
      if (meta.parent_id === session.id) follow(directory, id);
    }
  };

  follow(session.directory, undefined);
  discover();
  const timer = setInterval(discover, options.pollIntervalMs ?? 250);
  timer.unref();
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
      if (parentDone && running.size === 0) break;
      if (options.signal?.aborted === true) break;
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
