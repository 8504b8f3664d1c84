import { defineTool } from '@rho/core';
import type { AnyTool, ToolResult } from '@rho/core';
import type { McpToolIdentity } from '@rho/permissions';
import type { McpRhoTool } from './mcp-tools.js';

/** The name of the tool that finds deferred MCP tools. */
export const SEARCH_TOOLS_NAME = 'search_tools';
/** The name of the tool that calls a deferred MCP tool. */
export const CALL_MCP_TOOL_NAME = 'call_mcp_tool';

const DEFAULT_LIMIT = 8;

/** A rough token count of text for a tool list (about four characters a token); a measure for people, not the model's tokenizer. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The approximate tokens one tool costs in every request that lists it: name, description and schema. */
export function toolSpecTokens(tool: Pick<AnyTool, 'name' | 'description' | 'parameters'>): number {
  return estimateTokens(
    JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters }),
  );
}

/**
 * Deferred loading: instead of every tool of large servers, the model sees two tools.
 * `search_tools` finds tools by words of their name and description (or lists the servers), and
 * shows each match's name, description and parameters; `call_mcp_tool` calls one by its name. Each
 * call of `call_mcp_tool` is decided by the profile as a call of the tool it names: its `mcp`
 * property is a function of the arguments, which the approval policy of `@rho/permissions` reads.
 * Give only the tools the profile does not deny.
 */
export function deferredMcpTools(tools: readonly McpRhoTool[]): AnyTool[] {
  if (tools.length === 0) return [];
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const servers = [...new Set(tools.map((tool) => tool.mcp.server))];
  const search: AnyTool = defineTool({
    name: SEARCH_TOOLS_NAME,
    description: `Finds tools of MCP servers that are not listed here (servers: ${servers.join(', ')}), by words of their name and description; shows each match's parameters. Call them with ${CALL_MCP_TOOL_NAME}. An empty query lists the servers and their tool counts.`,
    parameters: {
      type: 'object',
      properties: {
        query: {
          type: 'string',
          description: 'Words to look for, for example "read file" or "create issue"; empty to list the servers',
        },
        server: { type: 'string', description: 'Only this server' },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: 50,
          description: `Most tools to show (default ${DEFAULT_LIMIT})`,
        },
      },
      required: ['query'],
    },
    annotations: { readOnly: true, destructive: false, openWorld: false },
    async handle(invocation): Promise<ToolResult> {
      const { query, server, limit } = invocation.arguments;
      const pool = tools.filter((tool) => server === undefined || tool.mcp.server === server);
      if (server !== undefined && pool.length === 0)
        return { content: `No server named ${server}; servers: ${servers.join(', ')}.`, success: false };
      const words = query
        .toLowerCase()
        .split(/[^a-z0-9]+/)
        .filter((word) => word.length > 0);
      if (words.length === 0) {
        const counts = servers.map(
          (name) => `${name}: ${tools.filter((tool) => tool.mcp.server === name).length} tools`,
        );
        return {
          content: `MCP servers with tools found through ${SEARCH_TOOLS_NAME}:\n${counts.join('\n')}`,
          success: true,
        };
      }
      const scored = pool
        .map((tool) => {
          const name = tool.name.toLowerCase();
          const text = `${name} ${tool.description.toLowerCase()}`;
          // A word in the name counts more than one in the description.
          const score = words.reduce((sum, word) => sum + (name.includes(word) ? 3 : text.includes(word) ? 1 : 0), 0);
          return { tool, score };
        })
        .filter((entry) => entry.score > 0)
        .sort((a, b) => b.score - a.score || a.tool.name.localeCompare(b.tool.name))
        .slice(0, limit ?? DEFAULT_LIMIT);
      if (scored.length === 0)
        return {
          content: `No MCP tool matches "${query}". Try other words, or an empty query to list the servers.`,
          success: true,
        };
      const blocks = scored.map(
        ({ tool }) => `## ${tool.name}\n${tool.description}\nparameters: ${JSON.stringify(tool.parameters)}`,
      );
      return {
        content: `${blocks.join('\n\n')}\n\nCall one with ${CALL_MCP_TOOL_NAME} {"tool": NAME, "arguments": {...}}.`,
        success: true,
        metadata: { matches: scored.map(({ tool }) => tool.name) },
      };
    },
  });
  const identityOf = (args: Record<string, unknown>): McpToolIdentity | undefined => byName.get(String(args.tool))?.mcp;
  const call = defineTool({
    name: CALL_MCP_TOOL_NAME,
    description: `Calls a tool of an MCP server found with ${SEARCH_TOOLS_NAME}, by its name (server__tool), with its arguments.`,
    parameters: {
      type: 'object',
      properties: {
        tool: { type: 'string', description: `The tool's name as ${SEARCH_TOOLS_NAME} shows it (server__tool)` },
        arguments: {
          type: 'object',
          properties: {},
          additionalProperties: true,
          description: 'The arguments, as its parameters say',
        },
      },
      required: ['tool'],
    },
    annotations: { readOnly: false, destructive: true, openWorld: true },
    async handle(invocation, context): Promise<ToolResult> {
      const { tool: name } = invocation.arguments;
      const args = invocation.arguments.arguments as Record<string, unknown> | undefined;
      const target = byName.get(name);
      if (target === undefined)
        return { content: `No MCP tool named ${name}. Find tools with ${SEARCH_TOOLS_NAME}.`, success: false };
      return target.handle({ ...invocation, toolName: target.name, arguments: args ?? {} }, context);
    },
  });
  // Read by the approval policy: every call is decided as a call of the tool it names.
  return [search, Object.freeze({ ...call, mcp: identityOf }) as AnyTool];
}
