// The last turns of a resumed conversation, shown in the REPL before its prompt: the person's
// prompts, the assistant's answers and its tool calls one line each, bounded. Pure: returns lines.
import type { ChatMessage } from '@rho/core';
import { clipWords, toolSignature } from './format.js';
import type { styles } from './terminal.js';

/** Exchanges shown (a user prompt and everything up to the next one). */
const EXCHANGES = 3;
/** Lines of one prompt or answer. */
const TEXT_LINES = 3;

function textLines(text: string, width: number): string[] {
  const lines = text
    .replace(/\s+$/, '')
    .split('\n')
    .filter((line) => line.trim() !== '');
  const shown = lines.slice(0, TEXT_LINES).map((line) => clipWords(line.replace(/\t/g, '  '), width));
  if (lines.length > TEXT_LINES) shown.push(`… ${lines.length - TEXT_LINES} more lines`);
  return shown;
}

function callArgs(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The preview of the last {@link EXCHANGES} exchanges of `messages`; empty when there is none. */
export function resumePreview(
  messages: readonly ChatMessage[],
  style: ReturnType<typeof styles>,
  width = 100,
): string[] {
  const starts = messages.flatMap((message, index) => (message.role === 'user' ? [index] : []));
  if (starts.length === 0) return [];
  const from = starts.at(-Math.min(EXCHANGES, starts.length))!;
  const inner = Math.max(30, width - 4);
  const lines: string[] = [];
  if (starts.length > EXCHANGES)
    lines.push(
      style.dim(`… ${starts.length - EXCHANGES} earlier exchange${starts.length - EXCHANGES === 1 ? '' : 's'}`),
    );
  for (const message of messages.slice(from)) {
    if (message.role === 'user') {
      const [first = '', ...rest] = textLines(message.content, inner);
      lines.push(`${style.bold('you ›')} ${first}`, ...rest.map((line) => `      ${line}`));
    } else if (message.role === 'assistant') {
      if (typeof message.content === 'string' && message.content.trim() !== '')
        lines.push(...textLines(message.content, inner).map((line) => `  ${line}`));
      for (const call of message.tool_calls ?? [])
        lines.push(
          style.dim(
            `  ${style.cyan('→')} ${toolSignature(call.function.name, callArgs(call.function.arguments), inner)}`,
          ),
        );
    }
  }
  return lines;
}
