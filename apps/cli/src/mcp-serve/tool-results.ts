import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** A refusal or failure the client reads: a tool error result (isError), saying what to change. */
export function refused(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

/** A result with structured content (what the output schema describes) and its JSON as text. */
export function structured(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value };
}
