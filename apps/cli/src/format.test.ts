import { describe, expect, it } from 'vitest';
import { clipWords, formatCost, outputPreview } from './format.js';
import { MarkdownBlocks, stripAnsi } from './markdown.js';
import { callKey, parseApprovalAnswer } from './approval-prompt.js';

describe('clipWords', () => {
  it('never cuts inside a word', () => {
    expect(clipWords('short', 10)).toBe('short');
    expect(clipWords('the quick brown fox jumps', 14)).toBe('the quick…');
    expect(clipWords('the quick brown fox', 16)).toBe('the quick brown…');
    expect(clipWords('unbreakablewordthatislong', 10)).toBe('unbreakab…');
  });
});

describe('outputPreview', () => {
  it('keeps the first lines and counts the rest', () => {
    expect(outputPreview('\n\na\nb\nc\nd\ne\n', 3, 80)).toEqual({ lines: ['a', 'b', 'c'], more: 2 });
    expect(outputPreview('', 3, 80)).toEqual({ lines: [], more: 0 });
  });
});

describe('formatCost', () => {
  const usage = { input_tokens: 1, output_tokens: 1, cached_tokens: 0, reasoning_tokens: 0 };
  it('marks what is not known', () => {
    expect(formatCost({ ...usage, cost_usd: 0.5 })).toBe('$0.5000');
    expect(formatCost({ ...usage, cost_usd: 0, unpriced_calls: 2 })).toBe('cost unknown');
    expect(formatCost({ ...usage, cost_usd: 0.5, unpriced_calls: 1 })).toBe('$0.5000 + unpriced');
  });
});

describe('MarkdownBlocks', () => {
  it('releases blocks that are complete, never inside a code fence', () => {
    const blocks = new MarkdownBlocks();
    expect(blocks.push('# Title\n\nFirst para')).toBe('# Title\n\n');
    expect(blocks.push('graph.\n\n```js\nconst a = 1;\n\nconst b')).toBe('First paragraph.\n\n');
    expect(blocks.push(' = 2;\n```\n\nAfter')).toBe('```js\nconst a = 1;\n\nconst b = 2;\n```\n\n');
    expect(blocks.flush()).toBe('After');
  });
  it('strips ANSI styles', () => {
    expect(stripAnsi('\u001b[1mbold\u001b[22m')).toBe('bold');
  });
});

describe('approval answers', () => {
  it('approves only an explicit yes; Enter and anything else refuse', () => {
    expect(parseApprovalAnswer('')).toBe('no');
    expect(parseApprovalAnswer(null)).toBe('no');
    expect(parseApprovalAnswer('maybe')).toBe('no');
    expect(parseApprovalAnswer(' Y ')).toBe('yes');
    expect(parseApprovalAnswer('c')).toBe('always-call');
    expect(parseApprovalAnswer('a')).toBe('always-tool');
  });
  it('identifies a call by tool and arguments, key order ignored', () => {
    expect(callKey('bash', { command: 'ls', timeout: 5 })).toBe(callKey('bash', { timeout: 5, command: 'ls' }));
    expect(callKey('bash', { command: 'ls' })).not.toBe(callKey('bash', { command: 'ls -la' }));
  });
});
