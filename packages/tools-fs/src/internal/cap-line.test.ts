import { describe, expect, it } from 'vitest';
import { capLine } from './cap-line.js';

describe('capLine', () => {
  it('leaves a line within the cap alone', () => {
    expect(capLine('short', { maxChars: 10 })).toBe('short');
    expect(capLine('0123456789', { maxChars: 10, focus: { start: 2, end: 3 } })).toBe('0123456789');
  });

  it('keeps the start without a focus, counting what was left out', () => {
    expect(capLine('abcdefghij', { maxChars: 4 })).toBe('abcd [6 chars omitted ...]');
    expect(capLine('abcdefghij', { maxChars: 4, truncatedSource: true })).toBe('abcd [6+ chars omitted ...]');
  });

  it('centres the window on the focus, with the count on each side', () => {
    const text = `${'a'.repeat(100)}XY${'b'.repeat(100)}`;
    expect(capLine(text, { maxChars: 12, focus: { start: 100, end: 102 } })).toBe(
      `[... 95 chars omitted] aaaaaXYbbbbb [95 chars omitted ...]`,
    );
  });

  it('slides the window at the edges instead of shrinking it', () => {
    const text = `XY${'b'.repeat(100)}`;
    expect(capLine(text, { maxChars: 6, focus: { start: 0, end: 2 } })).toBe('XYbbbb [96 chars omitted ...]');
    expect(capLine(`${'a'.repeat(100)}XY`, { maxChars: 6, focus: { start: 100, end: 102 } })).toBe(
      '[... 96 chars omitted] aaaaXY',
    );
  });

  it('shows the start of a match longer than the window', () => {
    expect(capLine(`aa${'M'.repeat(20)}bb`, { maxChars: 5, focus: { start: 2, end: 22 } })).toBe(
      '[... 2 chars omitted] MMMMM [17 chars omitted ...]',
    );
  });

  it('never splits a surrogate pair', () => {
    const text = `${'😀'.repeat(10)}`;
    const capped = capLine(text, { maxChars: 5, focus: { start: 10, end: 10 } });
    expect(capped).toBe('[... 8 chars omitted] 😀😀 [8 chars omitted ...]');
    expect(capLine(text, { maxChars: 5, focus: { start: 11, end: 11 } })).toBe(
      '[... 10 chars omitted] 😀😀 [6 chars omitted ...]',
    );
  });
});
