import { describe, expect, it } from 'vitest';
import { statsCell } from './fleet-actions.js';

describe('rho stats numbers', () => {
  it('go through one format: thousands separated, milliseconds whole', () => {
    expect(statsCell('p50_ms', 1234.567)).toBe('1,235');
    expect(statsCell('p95_ms', 98765.4)).toBe('98,765');
    expect(statsCell('input_tokens', 1234567)).toBe('1,234,567');
    expect(statsCell('cost_usd', 12345.6789)).toBe('$12,345.6789');
    expect(statsCell('failure_rate', 0.1234)).toBe('12.3%');
    expect(statsCell('avg_calls', 1234.56)).toBe('1,234.6');
    expect(statsCell('model', 'gpt-5-mini')).toBe('gpt-5-mini');
    expect(statsCell('cost_usd', null)).toBe('-');
  });
});
