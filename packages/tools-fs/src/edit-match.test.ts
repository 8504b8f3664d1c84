import { describe, expect, it } from 'vitest';
import { applyEdit } from './internal/edit-match.js';

describe('applyEdit', () => {
  it('replaces a unique exact match, and refuses a repeated one', () => {
    expect(applyEdit('a b c', 'b', 'X')).toEqual({ ok: true, text: 'a X c', strategy: 'exact match' });
    expect(applyEdit('b b', 'b', 'X')).toEqual({
      ok: false,
      message: 'old_string appears 2 times (must be unique). Add more context.',
    });
  });

  it('falls back to trailing-whitespace-normalised windows', () => {
    const text = 'one  \ntwo\t\nthree\n';
    expect(applyEdit(text, 'one\ntwo', 'ONE\nTWO')).toEqual({
      ok: true,
      text: 'ONE\nTWO\nthree\n',
      strategy: 'whitespace-normalized match',
    });
    expect(applyEdit('x \ny\nx\t\ny\n', 'x\ny', 'z')).toEqual({
      ok: false,
      message: 'Found 2 whitespace-normalized matches (must be unique)',
    });
  });

  it('falls back to indentation-flexible windows and re-indents the replacement', () => {
    const text = 'def f():\n        if a:\n            return 1\n    pass\n';
    const outcome = applyEdit(text, 'if a:\n    return 1', 'if b:\n    x = 2\n\n    return 3');
    expect(outcome).toEqual({
      ok: true,
      text: 'def f():\n        if b:\n            x = 2\n\n            return 3\n    pass\n',
      strategy: 'indentation-flexible match',
    });
    expect(applyEdit('  a\n    a\n', ' a', 'b')).toEqual({
      ok: false,
      message: 'old_string appears 2 times (must be unique). Add more context.',
    });
    expect(applyEdit('  a\n  b\n    a\n    b\n', 'a\nb', 'c')).toEqual({
      ok: false,
      message: 'Found 2 indentation-flexible matches (must be unique)',
    });
  });

  it('keeps CRLF line endings when the model writes LF', () => {
    expect(applyEdit('a\r\nb\r\nc\r\n', 'a\nb', 'x\ny')).toEqual({
      ok: true,
      text: 'x\r\ny\r\nc\r\n',
      strategy: 'whitespace-normalized match',
    });
  });

  it('says when nothing matches', () => {
    expect(applyEdit('abc', 'zzz', 'y')).toEqual({
      ok: false,
      message: 'old_string not found in file. Check for typos or add more context.',
    });
  });
});
