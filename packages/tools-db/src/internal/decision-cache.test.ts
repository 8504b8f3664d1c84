import { checkSql } from '@rho/permissions';
import { describe, expect, it } from 'vitest';
import { DecisionCache } from './decision-cache.js';

describe('DecisionCache', () => {
  it('returns the decision remembered for the same text and context, and none for another context', async () => {
    const cache = new DecisionCache();
    const first = {};
    const second = {};
    const allowed = await checkSql('SELECT 1', 'sqlite');
    const refused = await checkSql('DELETE FROM t', 'sqlite');
    cache.set(first, 'SELECT 1', allowed);
    cache.set(first, 'DELETE FROM t', refused);
    expect(cache.get(first, 'SELECT 1')).toBe(allowed);
    expect(cache.get(first, 'DELETE FROM t')).toBe(refused);
    expect(cache.get(first, 'SELECT 1 ')).toBeUndefined();
    expect(cache.get(second, 'SELECT 1')).toBeUndefined();
  });

  it('keeps the 256 most recently used decisions of a context', async () => {
    const cache = new DecisionCache();
    const context = {};
    const decision = await checkSql('SELECT 1', 'sqlite');
    for (let index = 0; index < 256; index += 1) cache.set(context, `SELECT ${index}`, decision);
    // Using the oldest makes it the most recent; the next insertion drops the second oldest.
    expect(cache.get(context, 'SELECT 0')).toBe(decision);
    cache.set(context, 'SELECT 256', decision);
    expect(cache.get(context, 'SELECT 1')).toBeUndefined();
    expect(cache.get(context, 'SELECT 0')).toBe(decision);
    expect(cache.get(context, 'SELECT 2')).toBe(decision);
    expect(cache.get(context, 'SELECT 256')).toBe(decision);
  });

  it('does not keep statements longer than 4096 characters', async () => {
    const cache = new DecisionCache();
    const context = {};
    const long = `SELECT '${'x'.repeat(5000)}'`;
    cache.set(context, long, await checkSql(long, 'sqlite'));
    expect(cache.get(context, long)).toBeUndefined();
  });
});
