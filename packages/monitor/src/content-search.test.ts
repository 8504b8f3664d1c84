import { describe, expect, it } from 'vitest';
import { contentMatcher } from './content-search.js';

describe('contentMatcher', () => {
  it("finds the first string value holding the text, case-insensitive, with its path, never a key or the record's type and ts", () => {
    const match = contentMatcher('Build');
    expect(match({ type: 'tool_start', ts: 'build', tool_args: { command: 'make build', cwd: 'build' } })).toEqual({
      field: 'tool_args.command',
      snippet: 'make build',
    });
    expect(match({ type: 'message', items: [{ text: 'no' }, { kind: 'x', text: 'REBUILD it' }] })).toEqual({
      field: 'items[1].text',
      snippet: 'REBUILD it',
    });
    // A nested `type` is content; keys, and the record's own type and ts, are not.
    expect(match({ type: 'message', part: { type: 'build' } })).toEqual({ field: 'part.type', snippet: 'build' });
    expect(match({ type: 'build', ts: 'build', build: 1, args: { build: true } })).toBeUndefined();
    expect(contentMatcher('a%b_')({ type: 'x', content: 'aXbY' })).toBeUndefined();
  });

  it('cuts the snippet 60 characters either side, folding white space', () => {
    const value = `${'a'.repeat(100)} the\n\tneedle here ${'b'.repeat(100)}`;
    const { snippet } = contentMatcher('NEEDLE')({ type: 'message', content: value })!;
    expect(snippet).toBe(
      `…${'a'.repeat(100).slice(-(60 - ' the\n\t'.length))} the needle here ${'b'.repeat(60 - ' here '.length)}…`,
    );
  });
});
