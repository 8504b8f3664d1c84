import { truncateOutput } from '@rho/core/internal';
import type { SecretRedactor, ToolResult } from '@rho/core';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/**
 * An MCP tool result as a rho tool result: text as it is, images and audio as a note (the model
 * gets text), resources by their text or URI, structured content as JSON text (unless a text
 * block already carries it: the same JSON, or every value of it), `isError` as an unsuccessful result; truncated like every tool's output,
 * after the session's known secrets were redacted (`redactor`), so a secret is never cut in two.
 */
export function mapCallToolResult(
  result: CallToolResult,
  context: { server: string; tool: string; redactor?: SecretRedactor | undefined },
): ToolResult {
  const parts: string[] = [];
  let images = 0;
  for (const item of result.content ?? []) {
    switch (item.type) {
      case 'text':
        parts.push(item.text);
        break;
      case 'image':
        images += 1;
        parts.push(
          `[image (${item.mimeType}, ${approximateBytes(item.data)} bytes) returned by the tool; images are not shown to the model]`,
        );
        break;
      case 'audio':
        parts.push(
          `[audio (${item.mimeType}, ${approximateBytes(item.data)} bytes) returned by the tool; audio is not passed to the model]`,
        );
        break;
      case 'resource_link':
        parts.push(
          `[resource link: ${item.uri}${item.name ? ` (${item.name})` : ''}${item.description ? ` - ${item.description}` : ''}]`,
        );
        break;
      case 'resource': {
        const resource = item.resource;
        if ('text' in resource && typeof resource.text === 'string')
          parts.push(`[resource ${resource.uri}]\n${resource.text}`);
        else
          parts.push(
            `[resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ''}: binary content, not shown]`,
          );
        break;
      }
      default:
        parts.push(`[content of type ${(item as { type?: string }).type ?? 'unknown'} not shown]`);
    }
  }
  const structured = result.structuredContent;
  if (structured !== undefined && !carriedByText(parts, structured)) parts.push(JSON.stringify(structured, null, 2));
  const success = result.isError !== true;
  let content = parts.join('\n');
  if (content === '') content = success ? '(the tool returned no content)' : '(the tool failed without saying why)';
  return {
    content: truncateOutput(context.redactor === undefined ? content : context.redactor.text(content)),
    success,
    metadata: {
      mcp: { server: context.server, tool: context.tool },
      ...(images > 0 ? { images } : {}),
      ...(structured === undefined ? {} : { structuredContent: structured }),
    },
  };
}

function approximateBytes(base64: string): number {
  return Math.floor((base64.length * 3) / 4);
}

/** Whether the text already says what the structured content says, so the model does not read it twice. */
function carriedByText(parts: readonly string[], structured: Record<string, unknown>): boolean {
  if (parts.some((part) => sameJson(part, structured))) return true;
  const leaves: string[] = [];
  collectLeaves(structured, leaves, 0);
  const text = parts.join('\n');
  return leaves.length > 0 && leaves.every((leaf) => text.includes(leaf));
}

function collectLeaves(value: unknown, into: string[], depth: number): void {
  if (depth > 6 || value === null || value === undefined) return;
  if (typeof value === 'object') for (const item of Object.values(value)) collectLeaves(item, into, depth + 1);
  else into.push(String(value));
}

function sameJson(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}
