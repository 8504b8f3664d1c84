import { createHash } from 'node:crypto';
import { truncateOutput } from '@rho/core/internal';
import type { AnyTool, JsonObjectSchema, ToolAnnotations, ToolResult } from '@rho/core';
import type { McpToolIdentity } from '@rho/permissions';
import type { Resource, Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { McpConnection, type McpConnectionOptions } from './mcp-connection.js';
import { mapCallToolResult } from './mcp-result.js';
import { DEFAULT_MCP_STARTUP_TIMEOUT_SECONDS } from './server-config.js';
import type { McpServerConfig } from './server-config.js';

/** The name (on the server side) of the tool that reads a server's resources: `server__read_resource`. */
export const READ_RESOURCE = 'read_resource';
const RESOURCES_IN_DESCRIPTION = 20;

/** A rho tool that calls a tool of an MCP server; `mcp` says which (the profile's rules read it). */
export interface McpRhoTool extends AnyTool {
  readonly mcp: McpToolIdentity;
}

/** Options of {@link McpServers}. */
export interface McpServersOptions extends McpConnectionOptions {
  /** Told about a server that could not be started or listed (its tools are then missing). Library code never prints. */
  onWarning?: (message: string) => void;
  /**
   * Told, once per server, when starting it takes longer than a second (`starting MCP server X...`),
   * so a slow or hung server is never a silent wait. Default: `onWarning`.
   */
  onNotice?: (message: string) => void;
}

/** How long a server may take to start before {@link McpServersOptions.onNotice} hears of it. */
const SLOW_START_NOTICE_MS = 1_000;

/**
 * The rho name of an MCP tool: `server__tool`, characters outside `[a-zA-Z0-9_-]` replaced by
 * `_`, and cut to 64 with a short hash of the full name when longer (so two long names differ).
 */
export function mcpToolName(server: string, tool: string): string {
  const full = `${server}__${tool}`;
  const clean = full.replace(/[^a-zA-Z0-9_-]/g, '_');
  if (clean.length <= 64) return clean;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 6);
  return `${clean.slice(0, 57)}_${hash}`;
}

/** MCP's hints as rho's annotations; MCP's defaults (destructive, open-world) apply when a hint is absent. */
export function mcpAnnotations(tool: McpTool): ToolAnnotations {
  const hints = tool.annotations ?? {};
  const readOnly = hints.readOnlyHint === true;
  return {
    readOnly,
    destructive: readOnly ? false : hints.destructiveHint !== false,
    openWorld: hints.openWorldHint !== false,
  };
}

/**
 * The configured MCP servers of one session and their tools. Servers start when their tools are
 * first listed or called, restart after a crash with backoff, and stop with `close()`.
 */
export class McpServers {
  private readonly connections = new Map<string, McpConnection>();
  private readonly options: McpServersOptions;

  constructor(configs: readonly McpServerConfig[], options: McpServersOptions = {}) {
    this.options = options;
    for (const config of configs) this.connections.set(config.name, new McpConnection(config, options));
  }

  /** The configured server names. */
  get names(): string[] {
    return [...this.connections.keys()];
  }

  /** The servers' configurations, in order. */
  get configs(): McpServerConfig[] {
    return [...this.connections.values()].map((connection) => connection.config);
  }

  /** The connection of a server (to list or call by hand, as `rho mcp` does). */
  connection(server: string): McpConnection | undefined {
    return this.connections.get(server);
  }

  /**
   * Every server's tools as rho tools, servers started in parallel. A server that cannot be
   * started is reported through `onWarning` and left out, so one broken server does not stop a session.
   */
  async tools(signal?: AbortSignal): Promise<McpRhoTool[]> {
    const lists = await Promise.all(
      [...this.connections.values()].map(async (connection) => {
        const notice = this.options.onNotice ?? this.options.onWarning;
        const { name, startupTimeoutMs } = connection.config;
        const slow =
          notice === undefined
            ? undefined
            : setTimeout(
                () =>
                  notice(
                    `starting MCP server ${name}... (waiting up to ${(startupTimeoutMs ?? DEFAULT_MCP_STARTUP_TIMEOUT_SECONDS * 1000) / 1000} s: startup_timeout in mcp_servers.${name})`,
                  ),
                SLOW_START_NOTICE_MS,
              );
        try {
          const listed = await connection.listTools(signal);
          const tools = listed.map((tool) => this.toRhoTool(connection, tool));
          // Resources as one read tool, unless the server has a tool of that name itself.
          if (!listed.some((tool) => tool.name === READ_RESOURCE)) {
            const resources = await connection.listResources(signal);
            if (resources.length > 0) tools.push(this.resourceTool(connection, resources));
          }
          return tools;
        } catch (error) {
          this.options.onWarning?.(
            `the tools of MCP server ${connection.config.name} are not offered: ${error instanceof Error ? error.message : String(error)}`,
          );
          return [];
        } finally {
          clearTimeout(slow);
        }
      }),
    );
    const tools = lists.flat();
    const seen = new Set<string>();
    for (const tool of tools) {
      if (seen.has(tool.name))
        this.options.onWarning?.(
          `two MCP tools are both named ${tool.name} after sanitising; the second is not offered.`,
        );
      seen.add(tool.name);
    }
    return tools.filter((tool, index) => tools.findIndex((other) => other.name === tool.name) === index);
  }

  /** Stops every server; the tools must not be called afterwards. */
  async close(): Promise<void> {
    await Promise.all([...this.connections.values()].map((connection) => connection.close()));
  }

  private resourceTool(connection: McpConnection, resources: readonly Resource[]): McpRhoTool {
    const server = connection.config.name;
    const shown = resources
      .slice(0, RESOURCES_IN_DESCRIPTION)
      .map(
        (resource) =>
          `- ${resource.uri}${resource.name && resource.name !== resource.uri ? ` (${resource.name})` : ''}`,
      );
    const more = resources.length > shown.length ? `\n(and ${resources.length - shown.length} more)` : '';
    const identity: McpToolIdentity = Object.freeze({ server, tool: READ_RESOURCE, readOnlyHint: true });
    return Object.freeze({
      name: mcpToolName(server, READ_RESOURCE),
      description: `Reads a resource of MCP server ${server} by its URI. Resources:\n${shown.join('\n')}${more}`,
      parameters: {
        type: 'object',
        properties: { uri: { type: 'string', description: 'The resource URI' } },
        required: ['uri'],
      } as JsonObjectSchema,
      annotations: { readOnly: true, destructive: false, openWorld: false },
      mcp: identity,
      async handle(invocation, context): Promise<ToolResult> {
        const uri = String((invocation.arguments as { uri?: unknown }).uri ?? '');
        try {
          const result = await connection.readResource(uri, context.signal);
          const content = result.contents.map((item) =>
            'text' in item && typeof item.text === 'string'
              ? item.text
              : `[binary resource ${item.uri}${item.mimeType ? ` (${item.mimeType})` : ''}, not shown]`,
          );
          return {
            content: truncateOutput(
              context.redactor?.text(content.join('\n') || '(the resource is empty)') ??
                (content.join('\n') || '(the resource is empty)'),
            ),
            success: true,
            metadata: { mcp: { server, tool: READ_RESOURCE }, uri },
          };
        } catch (error) {
          if (context.signal.aborted)
            return {
              content: `Reading ${uri} from MCP server ${server} was cancelled.`,
              success: false,
              metadata: { mcp: { server, tool: READ_RESOURCE }, cancelled: true },
            };
          return {
            content: `Reading ${uri} from MCP server ${server} failed: ${error instanceof Error ? error.message : String(error)}`,
            success: false,
            metadata: { mcp: { server, tool: READ_RESOURCE } },
          };
        }
      },
    } satisfies McpRhoTool);
  }

  private toRhoTool(connection: McpConnection, tool: McpTool): McpRhoTool {
    const server = connection.config.name;
    const identity: McpToolIdentity = { server, tool: tool.name };
    if (tool.annotations?.readOnlyHint !== undefined) identity.readOnlyHint = tool.annotations.readOnlyHint;
    if (tool.annotations?.destructiveHint !== undefined) identity.destructiveHint = tool.annotations.destructiveHint;
    const title = tool.title ?? tool.annotations?.title;
    const description = `${tool.description ?? title ?? tool.name} (MCP server ${server}, tool ${tool.name})`;
    return Object.freeze({
      name: mcpToolName(server, tool.name),
      description,
      parameters: { ...tool.inputSchema, type: 'object' } as JsonObjectSchema,
      annotations: mcpAnnotations(tool),
      mcp: Object.freeze(identity),
      async handle(invocation, context): Promise<ToolResult> {
        const started = Date.now();
        try {
          const result = await connection.callTool(
            tool.name,
            invocation.arguments as Record<string, unknown>,
            context.signal,
          );
          const mapped = mapCallToolResult(result, { server, tool: tool.name, redactor: context.redactor });
          return { ...mapped, metadata: { ...mapped.metadata, durationMs: Date.now() - started } };
        } catch (error) {
          if (context.signal.aborted)
            return {
              content: `The call of ${tool.name} on MCP server ${server} was cancelled.`,
              success: false,
              metadata: { mcp: { server, tool: tool.name }, cancelled: true },
            };
          const message = error instanceof Error ? error.message : String(error);
          return {
            content: `MCP tool ${tool.name} of server ${server} failed: ${message}`,
            success: false,
            metadata: { mcp: { server, tool: tool.name }, durationMs: Date.now() - started },
          };
        }
      },
    } satisfies McpRhoTool);
  }
}
