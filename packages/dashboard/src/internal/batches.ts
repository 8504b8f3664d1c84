/** Records per batch at most. */
const MAX_BATCH = 2000;

/**
 * Turns a record-by-record follower into batches: the records read since the last batch are handed
 * on each time the follower has caught up with the file (its `onIdle`), so a page replaying a long
 * trace gets few messages instead of thousands (at most 2,000 records each), and a live record is
 * handed on as soon as it is read.
 */
export function batches<T>(start: (onIdle: () => boolean) => AsyncIterable<T>): AsyncIterable<T[]> {
  return {
    async *[Symbol.asyncIterator]() {
      const ready: T[][] = [];
      let pending: T[] = [];
      let done = false;
      let failure: unknown;
      let wake: (() => void) | undefined;
      const notify = () => {
        const resolve = wake;
        wake = undefined;
        resolve?.();
      };
      const flush = () => {
        if (pending.length > 0) {
          ready.push(pending);
          pending = [];
          notify();
        }
      };
      const pump = (async () => {
        for await (const item of start(() => (flush(), false))) {
          pending.push(item);
          // A long trace replayed from the start goes out in pieces, not as one message.
          if (pending.length >= MAX_BATCH) flush();
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
        notify();
      }
    },
  };
}
