import { describe, expect, it } from 'vitest';
import { truncateOutput } from './truncate.js';

describe('truncateOutput', () => {
  it('leaves short output alone', () => {
    expect(truncateOutput('hello')).toBe('hello');
    const exactly = 'a'.repeat(20_000);
    expect(truncateOutput(exactly)).toBe(exactly);
  });

  it('matches the original on its verified example', () => {
    const content = `AAAA${'x'.repeat(100_000)}ZZZZ`;
    const result = truncateOutput(content, 400);
    expect(result).toBe(
      `Total output lines: 1\n\nAAAA${'x'.repeat(196)}\n...24902 tokens truncated...\n${'x'.repeat(196)}ZZZZ`,
    );
  });

  it('never splits a multi-byte character and counts lines', () => {
    const content = `${'é'.repeat(15_000)}\n${'€'.repeat(10_000)}`;
    const result = truncateOutput(content);
    expect(result.startsWith('Total output lines: 2\n\n')).toBe(true);
    expect(result).not.toContain('\uFFFD');
    const [, body] = result.split('Total output lines: 2\n\n');
    const head = body!.split('\n...')[0]!;
    expect(Buffer.byteLength(head)).toBeLessThanOrEqual(10_000);
    expect(head).toMatch(/^é+$/);
    expect(result.endsWith('€')).toBe(true);
  });
});
