import { describe, expect, it } from 'vitest';
import { compareResultSets } from './compare-result-sets.js';

describe('compareResultSets (BIRD execution accuracy)', () => {
  it('ignores row order but not column order', () => {
    expect(
      compareResultSets(
        [
          [1n, 'a'],
          [2n, 'b'],
        ],
        [
          [2n, 'b'],
          [1n, 'a'],
        ],
      ).equal,
    ).toBe(true);
    const swapped = compareResultSets([['a', 1n]], [[1n, 'a']]);
    expect(swapped.equal).toBe(false);
    expect(swapped.reason).toContain('1 gold row(s) missing, e.g. (1, "a")');
  });

  it('treats duplicates as one row, as BIRD does with set(), unless asked to count them', () => {
    expect(compareResultSets([[1n], [1n], [2n]], [[1n], [2n]]).equal).toBe(true);
    expect(compareResultSets([[1n], [2n]], [[1n], [1n], [2n]]).equal).toBe(true);
    expect(compareResultSets([[1n], [1n], [2n]], [[1n], [2n]], { duplicates: 'multiset' }).equal).toBe(false);
    expect(compareResultSets([[1n], [2n], [1n]], [[1n], [1n], [2n]], { duplicates: 'multiset' }).equal).toBe(true);
  });

  it('matches NULL with NULL only', () => {
    expect(compareResultSets([[null, 'x']], [[null, 'x']]).equal).toBe(true);
    expect(compareResultSets([[null]], [[0n]]).equal).toBe(false);
    expect(compareResultSets([[null]], [['']]).equal).toBe(false);
    expect(compareResultSets([[null]], [['NULL']]).equal).toBe(false);
  });

  it('matches the integer 1 with the real 1.0, but not with the text 1 (type affinity as Python sees it)', () => {
    expect(compareResultSets([[1n]], [[1.0]]).equal).toBe(true);
    expect(compareResultSets([[1]], [[1n]]).equal).toBe(true);
    expect(compareResultSets([['1']], [[1n]]).equal).toBe(false);
    expect(compareResultSets([['1.0']], [[1.0]]).equal).toBe(false);
    expect(compareResultSets([[-0]], [[0n]]).equal).toBe(true);
    // a bigint beyond 2^53 and the real with the same whole value
    expect(compareResultSets([[2n ** 60n]], [[2 ** 60]]).equal).toBe(true);
    expect(compareResultSets([[2n ** 60n + 1n]], [[2n ** 60n]]).equal).toBe(false);
  });

  it('rounds reals to 6 decimals by default, so a sum taken in another order still matches', () => {
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(compareResultSets([[0.1 + 0.2]], [[0.3]]).equal).toBe(true);
    expect(compareResultSets([[2328.600000000004]], [[2328.6]]).equal).toBe(true);
    // AVG(UnitPrice) of Chinook's tracks, scanned forwards and backwards
    expect(compareResultSets([[1.0508050242648312]], [[1.0508050242648173]]).equal).toBe(true);
    expect(compareResultSets([[1.0508050242648312]], [[1.0508050242648173]], { floatDecimals: null }).equal).toBe(
      false,
    );
    expect(compareResultSets([[5.588571428571428]], [[5.5885714285714]]).equal).toBe(true);
    // a real difference survives rounding
    expect(compareResultSets([[5.58857]], [[5.58858]]).equal).toBe(false);
    expect(compareResultSets([[1.0000004]], [[1n]]).equal).toBe(true);
    expect(compareResultSets([[1.000001]], [[1n]]).equal).toBe(false);
  });

  it('compares reals exactly when asked (BIRD script behaviour)', () => {
    expect(compareResultSets([[0.1 + 0.2]], [[0.3]], { floatDecimals: null }).equal).toBe(false);
    expect(compareResultSets([[2.5]], [[2.5]], { floatDecimals: null }).equal).toBe(true);
    expect(compareResultSets([[2.54]], [[2.5]], { floatDecimals: 1 }).equal).toBe(true);
  });

  it('compares blobs by their bytes', () => {
    expect(compareResultSets([[new Uint8Array([1, 2])]], [[Buffer.from([1, 2])]]).equal).toBe(true);
    expect(compareResultSets([[new Uint8Array([1, 2])]], [['\u0001\u0002']]).equal).toBe(false);
  });

  it('says why sets differ: columns, missing and extra rows', () => {
    expect(compareResultSets([[1n, 2n]], [[1n]]).reason).toBe('different columns: 2 predicted vs 1 gold');
    const result = compareResultSets([[1n], [3n]], [[1n], [2n]]);
    expect(result).toEqual({
      equal: false,
      reason: '2 predicted row(s) vs 2 gold row(s); 1 gold row(s) missing, e.g. (2); 1 row(s) not in gold, e.g. (3)',
    });
  });

  it('counts two empty results as equal and an empty one against rows as different', () => {
    expect(compareResultSets([], []).equal).toBe(true);
    expect(compareResultSets([], [[1n]]).reason).toBe(
      '0 predicted row(s) vs 1 gold row(s); 1 gold row(s) missing, e.g. (1)',
    );
  });
});
