import { describe, expect, it } from 'vitest';
import { costOf, DEFAULT_PRICE_TABLE, priceFor } from './pricing.js';

describe('priceFor', () => {
  it('knows the common OpenAI families', () => {
    for (const model of [
      'gpt-4o',
      'gpt-4o-mini',
      'gpt-4.1',
      'gpt-4.1-mini',
      'gpt-4.1-nano',
      'o3',
      'o4-mini',
      'gpt-5',
      'gpt-5-mini',
      'gpt-5-nano',
    ]) {
      expect(priceFor(model), model).toBeDefined();
    }
    expect(priceFor('gpt-4o')).toEqual({ inputPerMillion: 2.5, cachedInputPerMillion: 1.25, outputPerMillion: 10 });
  });

  it('prices dated snapshots and gateway prefixes as their family', () => {
    expect(priceFor('gpt-4o-2024-08-06')).toBe(DEFAULT_PRICE_TABLE['gpt-4o']);
    expect(priceFor('gpt-4o-mini-2024-07-18')).toBe(DEFAULT_PRICE_TABLE['gpt-4o-mini']);
    expect(priceFor('claude-sonnet-4-20250514')).toBe(DEFAULT_PRICE_TABLE['claude-sonnet-4']);
    expect(priceFor('gpt-3.5-turbo-0125')).toBe(DEFAULT_PRICE_TABLE['gpt-3.5-turbo']);
    expect(priceFor('openai/gpt-5-mini')).toBe(DEFAULT_PRICE_TABLE['gpt-5-mini']);
    expect(priceFor('GPT-4.1')).toBe(DEFAULT_PRICE_TABLE['gpt-4.1']);
  });

  it('does not guess unknown models from a prefix', () => {
    expect(priceFor('gpt-4o-audio-preview')).toBeUndefined();
    expect(priceFor('llama-3.3-70b')).toBeUndefined();
    expect(priceFor('toString')).toBeUndefined();
  });
});

describe('costOf', () => {
  it('bills cached input at the cached rate and the rest at the input rate', () => {
    // gpt-4o: 600 uncached x 2.50 + 400 cached x 1.25 + 200 output x 10, per million.
    expect(costOf('gpt-4o', { inputTokens: 1000, cachedTokens: 400, outputTokens: 200 })).toBeCloseTo(0.004, 12);
  });

  it('uses the input rate for cached tokens when the model has no cache discount', () => {
    expect(costOf('gpt-4-turbo', { inputTokens: 1_000_000, cachedTokens: 500_000, outputTokens: 0 })).toBeCloseTo(
      10,
      9,
    );
  });

  it('is null, never 0, for an unknown model', () => {
    expect(costOf('my-local-model', { inputTokens: 10, cachedTokens: 0, outputTokens: 10 })).toBeNull();
  });

  it('accepts a custom table', () => {
    const table = { 'my-local-model': { inputPerMillion: 1, outputPerMillion: 2 } };
    expect(costOf('my-local-model', { inputTokens: 1_000_000, cachedTokens: 0, outputTokens: 1_000_000 }, table)).toBe(
      3,
    );
  });
});
