import { isAbsolute, resolve } from 'node:path';
import { defineTool } from '@rho/core';

/** Largest file the tool reads, in bytes. */
export const WORD_COUNT_MAX_BYTES = 10 * 1024 * 1024;

/**
 * `word_count`: lines, words and bytes of a text file, like `wc`. It reads through the session's
 * execution backend, so it works the same on a remote sandbox.
 */
export const wordCountTool = defineTool({
  name: 'word_count',
  description: `Count the lines, words and bytes of a text file (like wc). Relative paths resolve against the working directory. Files over ${WORD_COUNT_MAX_BYTES} bytes are refused.`,
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'The file to count.' },
    },
    required: ['path'],
  },
  annotations: { readOnly: true },
  async handle({ arguments: { path } }, context) {
    const absolute = isAbsolute(path) ? path : resolve(context.workingDir, path);
    const info = await context.backend.stat(absolute);
    if (info.type !== 'file') return { success: false, content: `Not a file: ${absolute}` };
    if (info.size > WORD_COUNT_MAX_BYTES)
      return {
        success: false,
        content: `File too large to count: ${absolute} (${info.size} bytes, limit ${WORD_COUNT_MAX_BYTES})`,
      };
    const bytes = await context.backend.readFile(absolute, { maxBytes: WORD_COUNT_MAX_BYTES });
    const text = Buffer.from(bytes).toString('utf8');
    const lines = text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    const words = text.split(/\s+/).filter((word) => word !== '').length;
    return {
      success: true,
      content: `${lines} lines, ${words} words, ${bytes.length} bytes: ${absolute}`,
      metadata: { lines, words, bytes: bytes.length },
    };
  },
});
