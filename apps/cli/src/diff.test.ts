import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { contentBefore, toolCallDiff, unifiedDiff } from './diff.js';

describe('unifiedDiff', () => {
  it('shows changed lines with context and hunk headers', () => {
    const before = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].join('\n');
    const after = ['a', 'b', 'C', 'd', 'e', 'f', 'g', 'h', 'i'].join('\n');
    expect(unifiedDiff(before, after, 1)).toEqual([
      '@@ -2,3 +2,3 @@',
      ' b',
      '-c',
      '+C',
      ' d',
      '@@ -8,1 +8,2 @@',
      ' h',
      '+i',
    ]);
  });
  it('is empty for equal texts, all additions for a new file', () => {
    expect(unifiedDiff('same\n', 'same\n')).toEqual([]);
    expect(unifiedDiff('', 'one\ntwo\n')).toEqual(['@@ -0,0 +1,2 @@', '+one', '+two']);
  });
});

describe('toolCallDiff', () => {
  it('diffs an edit against the file, and a write against what is there', () => {
    const directory = mkdtempSync(join(tmpdir(), 'rho-diff-'));
    writeFileSync(join(directory, 'f.txt'), 'one\ntwo\nthree\n');
    expect(toolCallDiff('edit', { path: 'f.txt', old_string: 'two', new_string: 'TWO' }, directory)).toEqual({
      path: 'f.txt',
      lines: ['@@ -1,3 +1,3 @@', ' one', '-two', '+TWO', ' three'],
    });
    expect(toolCallDiff('write', { path: 'new.txt', content: 'x\n' }, directory)).toEqual({
      path: 'new.txt',
      lines: ['@@ -0,0 +1,1 @@', '+x'],
    });
    const saved = contentBefore('write', { path: 'f.txt' }, directory);
    writeFileSync(join(directory, 'f.txt'), 'one\n');
    expect(toolCallDiff('write', { path: 'f.txt', content: 'one\n' }, directory, saved)!.lines).toEqual([
      '@@ -1,3 +1,1 @@',
      ' one',
      '-two',
      '-three',
    ]);
  });
  it('falls back to the two strings when the file does not hold them verbatim; nothing for other tools', () => {
    const directory = mkdtempSync(join(tmpdir(), 'rho-diff-'));
    expect(toolCallDiff('edit', { path: 'missing.txt', old_string: 'a', new_string: 'b' }, directory)!.lines).toEqual([
      '@@ -1,1 +1,1 @@',
      '-a',
      '+b',
    ]);
    expect(toolCallDiff('bash', { command: 'ls' }, directory)).toBeUndefined();
    expect(toolCallDiff('edit', { path: 3 }, directory)).toBeUndefined();
  });
});
