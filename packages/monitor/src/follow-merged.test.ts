import { describe, expect, it } from 'vitest';
import { FOLLOW_QUEUE_HIGH_WATER, followMerged } from './follow-merged.js';

/** A follower of `count` records that counts how many it has produced. */
function counting(count: number, produced: { n: number }) {
  return async function* (signal: AbortSignal) {
    for (let i = 0; i < count && !signal.aborted; i += 1) {
      produced.n += 1;
      yield i;
      // Let the consumer (or nobody) run between records, as a real trace's follow does.
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
}

describe('followMerged', () => {
  it('merges the parent and the children it discovers, each child once, and ends when all ended', async () => {
    const seen: { record: number; childId?: string }[] = [];
    for await (const item of followMerged<number>({
      parent: counting(3, { n: 0 }),
      discover: (add) => {
        // Offered on every look: added once.
        add('c1', counting(2, { n: 0 }));
      },
      discoverIntervalMs: 5,
    }))
      seen.push(item);
    expect(seen.filter((item) => item.childId === undefined).map((item) => item.record)).toEqual([0, 1, 2]);
    expect(seen.filter((item) => item.childId === 'c1').map((item) => item.record)).toEqual([0, 1]);
  });

  it('pauses a follower while the consumer is a high-water mark behind, so a long trace is never held whole', async () => {
    const produced = { n: 0 };
    const merged = followMerged<number>({
      parent: counting(FOLLOW_QUEUE_HIGH_WATER * 20, produced),
      discover: () => {},
      discoverIntervalMs: 1_000,
    });
    await merged.next();
    // The consumer stops reading: the follower goes on only up to the mark.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(produced.n).toBeLessThanOrEqual(FOLLOW_QUEUE_HIGH_WATER + 2);
    expect(produced.n).toBeGreaterThanOrEqual(FOLLOW_QUEUE_HIGH_WATER);
    await merged.return();
  });

  it('throws the first error of a follower, and of a look for children', async () => {
    const failing = followMerged<number>({
      parent: async function* () {
        yield 1;
        throw new Error('trace unreadable');
      },
      discover: () => {},
      discoverIntervalMs: 1_000,
    });
    await expect(
      (async () => {
        for await (const item of failing) void item;
      })(),
    ).rejects.toThrow('trace unreadable');
    const looking = followMerged<number>({
      parent: counting(1_000, { n: 0 }),
      discover: () => {
        throw new Error('listing failed');
      },
      discoverIntervalMs: 1_000,
    });
    await expect(
      (async () => {
        for await (const item of looking) void item;
      })(),
    ).rejects.toThrow('listing failed');
  });

  it('stops every follower when aborted', async () => {
    const controller = new AbortController();
    const produced = { n: 0 };
    const items: number[] = [];
    for await (const { record } of followMerged<number>({
      parent: counting(1_000_000, produced),
      discover: () => {},
      discoverIntervalMs: 1_000,
      signal: controller.signal,
    })) {
      items.push(record);
      if (items.length === 10) controller.abort();
    }
    expect(items.length).toBeLessThan(FOLLOW_QUEUE_HIGH_WATER + 20);
  });
});
