/** Records per batch at most. */
const MAX_BATCH = 2000;

/**
 * Turns a record-by-record follower into batches: the records read since the last batch are handed
 * on each time the follower has caught up with the file (its `onIdle`), so a page replaying a long
 * trace gets few messages instead of thousands (at most 2,000 records each), and a live record is
 * handed on as soon as it is read. The batch handed on when the follower caught up is followed by
 * an empty one (once per catching up): the consumer then knows it has what the file held.
 */
export function batches<T>(
  start: (onIdle: () => boolean, onChunk: () => void) => AsyncIterable<T>,
): AsyncIterable<T[]> {
  return {
    async *[Symbol.asyncIterator]() {
      const ready: T[][] = [];
      let pending: T[] = [];
      let done = false;
      let failure: unknown;
      let wake: (() => void) | undefined;
      let stopped = false;
      const notify = () => {
        const resolve = wake;
        wake = undefined;
        resolve?.();
      };
      // Set once the consumer was told (by an empty batch) that the follower caught up; cleared by
      // the next record.
      let toldIdle = false;
      const flush = (idle = false) => {
        if (pending.length > 0) {
          ready.push(pending);
          pending = [];
          toldIdle = false;
        }
        if (idle && !toldIdle) {
          ready.push([]);
          toldIdle = true;
        }
        notify();
      };
      // Back-pressure: the follower is not read further while a batch waits for the consumer, so a
      // consumer that stalls (a dashboard client that does not read) holds at most one batch
      // ready, one being filled and the one it has, each at most one chunk of the file.
      let taken: (() => void) | undefined;
      const consumed = () => {
        const resolve = taken;
        taken = undefined;
        resolve?.();
      };
      const pump = (async () => {
        for await (const item of start(
          () => (flush(true), false),
          () => flush(),
        )) {
          pending.push(item);
          // A long trace replayed from the start goes out in pieces, not as one message.
          if (pending.length >= MAX_BATCH) flush();
          if (ready.length > 0 && !stopped) {
            await new Promise<void>((resolve) => {
              taken = resolve;
            });
          }
        }
      })().then(
        () => {
          flush();
          done = true;
          notify();
        },
        (error: unknown) => {
          failure = error;
          done = true;
          notify();
        },
      );
      try {
        for (;;) {
          const next = ready.shift();
          if (next !== undefined) {
            consumed();
            yield next;
            continue;
          }
          if (done) break;
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        }
        await pump;
        if (failure !== undefined) throw failure;
      } finally {
        stopped = true;
        consumed();
        notify();
      }
    },
  };
}
