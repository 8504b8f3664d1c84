import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance } from './did-you-mean.js';

describe('didYouMean', () => {
  it('suggests near misses and nothing for far ones', () => {
    expect(didYouMean('modle', ['model', 'profile'])).toBe('model');
    expect(didYouMean('wacth', ['watch', 'ps'])).toBe('watch');
    expect(didYouMean('pss', ['ps', 'pause'])).toBe('ps');
    expect(didYouMean('banana', ['model', 'profile'])).toBeUndefined();
    expect(didYouMean('p', ['ps'])).toBe('ps');
  });
  it('counts an adjacent swap as one edit', () => {
    expect(editDistance('ab', 'ba')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});
