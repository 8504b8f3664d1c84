import { describe, expect, it } from 'vitest';
import { batches } from './batches.js';

describe('batches', () => {
  it('hands on what was read at each idle point (then an empty batch), and at most 2,000 items at once', async () => {
    const sizes: number[] = [];
    const source = batches<number>(async function* (onIdle) {
      for (let index = 0; index < 4500; index += 1) yield index;
      onIdle();
      yield 4500;
      yield 4501;
      onIdle();
      onIdle();
    });
    const seen: number[] = [];
    for await (const batch of source) {
      sizes.push(batch.length);
      seen.push(...batch);
    }
    // Idle twice in a row: one empty batch.
    expect(sizes).toEqual([2000, 2000, 500, 0, 2, 0]);
    expect(seen).toEqual([...Array(4502).keys()]);
  });
});
