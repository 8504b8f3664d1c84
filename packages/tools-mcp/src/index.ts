export {
  DEFAULT_MCP_TIMEOUT_SECONDS,
  interpolateEnv,
  parseMcpServers,
  parseMcpServerSources,
} from './server-config.js';
export type {
  McpHttpServerConfig,
  McpServerConfig,
  McpServerSource,
  McpStdioServerConfig,
  ParseMcpServersOptions,
} from './server-config.js';
export { McpConnection, McpServerError } from './mcp-connection.js';
export type { McpConnectionOptions } from './mcp-connection.js';
export { mapCallToolResult } from './mcp-result.js';
export { McpServers, mcpAnnotations, mcpToolName, READ_RESOURCE } from './mcp-tools.js';
export type { McpRhoTool, McpServersOptions } from './mcp-tools.js';
export {
  CALL_MCP_TOOL_NAME,
  deferredMcpTools,
  estimateTokens,
  SEARCH_TOOLS_NAME,
  toolSpecTokens,
} from './deferred-tools.js';
