// Mistral (Magistral reasoning models, and relays in front of them) sends `delta.content` as an
// array of parts instead of a string: `{type: "thinking", thinking: [{type: "text", text}]}` for
// reasoning and `{type: "text", text}` for the answer. Recorded in vercel/ai's
// `packages/mistral/src/__fixtures__/mistral-reasoning.chunks.txt`.

/** Text and reasoning of a content array; parts of other types (images, references) are skipped. */
export function contentParts(parts: readonly unknown[]): { text: string; reasoning: string } {
  let text = '';
  let reasoning = '';
  for (const part of parts) {
    if (typeof part === 'string') {
      text += part;
      continue;
    }
    if (part === null || typeof part !== 'object') continue;
    const record = part as Record<string, unknown>;
    if (record['type'] === 'thinking') {
      reasoning += thinkingText(record['thinking']);
    } else if (record['type'] === 'text' && typeof record['text'] === 'string') {
      text += record['text'];
    }
  }
  return { text, reasoning };
}

function thinkingText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return '';
  let text = '';
  for (const item of value) {
    if (typeof item === 'string') text += item;
    else if (
      item !== null &&
      typeof item === 'object' &&
      typeof (item as Record<string, unknown>)['text'] === 'string'
    ) {
      text += (item as Record<string, unknown>)['text'] as string;
    }
  }
  return text;
}
