import { ConfigError } from '@rho/core';

/** An MCP server started as a child process, spoken to over its standard input and output. */
export interface McpStdioServerConfig {
  /** The server's name: the prefix of its tools (`name__tool`) and what profile rules match. */
  name: string;
  transport: 'stdio';
  /** The program to run. */
  command: string;
  /** Its arguments. */
  args: string[];
  /** Variables added to the SDK's safe default environment (not the whole of rho's). */
  env: Record<string, string>;
  /** Working directory of the process; the session's when absent. */
  cwd?: string;
  /** How long one call may take, in milliseconds (progress notifications restart the clock). */
  timeoutMs: number;
  /**
   * How long starting the server may take (the process or connection, `initialize` and
   * `tools/list`), in milliseconds. Default {@link DEFAULT_MCP_STARTUP_TIMEOUT_SECONDS} seconds.
   */
  startupTimeoutMs?: number;
  /** Deferred loading: the tools are not listed to the model, which finds them with `search_tools`. */
  defer?: boolean;
}

/** An MCP server reached over streamable HTTP. */
export interface McpHttpServerConfig {
  name: string;
  transport: 'http';
  /** The server's MCP endpoint. */
  url: string;
  /** Headers sent with every request (for example `Authorization`). */
  headers: Record<string, string>;
  /** How long one call may take, in milliseconds (progress notifications restart the clock). */
  timeoutMs: number;
  /**
   * How long starting the server may take (the process or connection, `initialize` and
   * `tools/list`), in milliseconds. Default {@link DEFAULT_MCP_STARTUP_TIMEOUT_SECONDS} seconds.
   */
  startupTimeoutMs?: number;
  /** Deferred loading: the tools are not listed to the model, which finds them with `search_tools`. */
  defer?: boolean;
}

/** One configured MCP server. */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** Options of {@link parseMcpServers}. */
export interface ParseMcpServersOptions {
  /** Environment for `${VAR}` and `${VAR:-default}` references; default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Where the mapping came from, for messages (a file path or `agent config`). */
  origin?: string;
}

/** Default time one MCP call may take: ten minutes, since servers run builds and queries. */
export const DEFAULT_MCP_TIMEOUT_SECONDS = 600;

/**
 * Default time starting an MCP server may take (process, `initialize`, `tools/list`): 30 seconds.
 * Separate from the call timeout, so a server that never answers `initialize` does not hold a run
 * for ten minutes before its first model call.
 */
export const DEFAULT_MCP_STARTUP_TIMEOUT_SECONDS = 30;

const SERVER_NAME = /^[a-zA-Z0-9_-]{1,32}$/;
const STDIO_KEYS = ['command', 'args', 'env', 'cwd', 'timeout', 'startup_timeout', 'defer'];
const HTTP_KEYS = ['url', 'headers', 'timeout', 'startup_timeout', 'defer'];

/**
 * Replaces `${VAR}` and `${VAR:-default}` in a string. An unset variable without a default is a
 * `ConfigError`: a server started with an empty token fails later with a far less clear message.
 */
export function interpolateEnv(text: string, env: Readonly<Record<string, string | undefined>>, where: string): string {
  return text.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
    (_match, name: string, fallback: string | undefined) => {
      const value = env[name];
      if (value !== undefined && value !== '') return value;
      if (fallback !== undefined) return fallback;
      throw new ConfigError({
        message: `${where} refers to \${${name}}, which is not set: set ${name} in the environment or write \${${name}:-default}.`,
        field: where,
      });
    },
  );
}

/**
 * Validates the `mcp_servers:` mapping (server name → settings) of an agent config or
 * `$RHO_HOME/config.yaml` and resolves `${ENV}` references. A server has either `command`
 * (with optional `args`, `env`, `cwd`) or `url` (with optional `headers`), and optionally
 * `timeout` and `startup_timeout` in seconds and `defer` (deferred loading: found through `search_tools`).
 *
 * @throws ConfigError naming the server and the field.
 */
export function parseMcpServers(source: unknown, options: ParseMcpServersOptions = {}): McpServerConfig[] {
  const env = options.env ?? process.env;
  const prefix = options.origin === undefined ? 'mcp_servers' : `${options.origin}: mcp_servers`;
  if (source === undefined || source === null) return [];
  if (typeof source !== 'object' || Array.isArray(source)) {
    throw new ConfigError({
      message: `${prefix} must be a mapping of server name to settings (command and args, or url).`,
      field: 'mcp_servers',
    });
  }
  const servers: McpServerConfig[] = [];
  // The origin (the file) also prefixes an unset ${VAR}: which file's server needs it matters.
  const interpolate = (text: string, where: string): string => {
    try {
      return interpolateEnv(text, env, where);
    } catch (error) {
      if (options.origin === undefined || !ConfigError.isInstance(error)) throw error;
      throw new ConfigError({ message: `${options.origin}: ${error.message}`, field: where, cause: error });
    }
  };
  for (const [name, raw] of Object.entries(source as Record<string, unknown>)) {
    const field = `mcp_servers.${name}`;
    const fail = (message: string, at = field): never => {
      throw new ConfigError({
        message: `${options.origin === undefined ? '' : `${options.origin}: `}${at} ${message}`,
        field: at,
      });
    };
    if (!SERVER_NAME.test(name))
      fail('is not a valid server name: use 1-32 letters, digits, "_" or "-" (it prefixes the tool names).');
    if (name.includes('__')) fail('must not contain "__", which separates the server from the tool in tool names.');
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      fail('must be a mapping with command (and args, env) or url (and headers).');
    const settings = raw as Record<string, unknown>;
    const hasCommand = settings.command !== undefined;
    const hasUrl = settings.url !== undefined;
    if (hasCommand === hasUrl)
      fail(
        hasCommand
          ? 'has both command and url: give one (command for stdio, url for streamable HTTP).'
          : 'needs command (a stdio server) or url (a streamable HTTP server).',
      );
    const allowed = hasCommand ? STDIO_KEYS : HTTP_KEYS;
    for (const key of Object.keys(settings))
      if (!allowed.includes(key))
        fail(`has unknown key ${key}; allowed keys: ${allowed.join(', ')}.`, `${field}.${key}`);
    const text = (key: string): string => {
      const value = settings[key];
      if (typeof value !== 'string' || value.trim() === '') fail('must be a non-empty string.', `${field}.${key}`);
      return interpolate(value as string, `${field}.${key}`);
    };
    const map = (key: string): Record<string, string> => {
      const value = settings[key];
      if (value === undefined || value === null) return {};
      if (typeof value !== 'object' || Array.isArray(value))
        fail('must be a mapping of names to strings.', `${field}.${key}`);
      const out: Record<string, string> = {};
      for (const [k, item] of Object.entries(value as Record<string, unknown>)) {
        if (typeof item !== 'string' && typeof item !== 'number' && typeof item !== 'boolean')
          fail('must be a string.', `${field}.${key}.${k}`);
        out[k] = interpolate(String(item), `${field}.${key}.${k}`);
      }
      return out;
    };
    let timeoutSeconds = DEFAULT_MCP_TIMEOUT_SECONDS;
    if (settings.timeout !== undefined) {
      const value = settings.timeout;
      if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 86_400)
        fail('must be a number of seconds between 1 and 86400.', `${field}.timeout`);
      timeoutSeconds = value as number;
    }
    const timeoutMs = Math.round(timeoutSeconds * 1000);
    let startupSeconds = DEFAULT_MCP_STARTUP_TIMEOUT_SECONDS;
    if (settings.startup_timeout !== undefined) {
      const value = settings.startup_timeout;
      if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 3_600)
        fail('must be a number of seconds between 1 and 3600.', `${field}.startup_timeout`);
      startupSeconds = value as number;
    }
    const startupTimeoutMs = Math.round(startupSeconds * 1000);
    if (settings.defer !== undefined && typeof settings.defer !== 'boolean')
      fail('must be true or false.', `${field}.defer`);
    const defer = settings.defer === true ? { defer: true } : {};
    if (hasCommand) {
      const args = settings.args ?? [];
      if (!Array.isArray(args) || args.some((arg) => typeof arg !== 'string' && typeof arg !== 'number'))
        fail('must be a list of strings.', `${field}.args`);
      const server: McpStdioServerConfig = {
        name,
        transport: 'stdio',
        command: text('command'),
        args: (args as unknown[]).map((arg, index) => interpolate(String(arg), `${field}.args.${index}`)),
        env: map('env'),
        timeoutMs,
        startupTimeoutMs,
        ...defer,
      };
      if (settings.cwd !== undefined) server.cwd = text('cwd');
      servers.push(server);
    } else {
      const url = text('url');
      let parsed: URL | undefined;
      try {
        parsed = new URL(url);
      } catch {
        fail(`is not a URL (${JSON.stringify(url)}).`, `${field}.url`);
      }
      if (parsed !== undefined && parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
        fail('must be an http:// or https:// URL.', `${field}.url`);
      servers.push({ name, transport: 'http', url, headers: map('headers'), timeoutMs, startupTimeoutMs, ...defer });
    }
  }
  return servers;
}

/** One `mcp_servers` mapping and the file (or `agent config`) it came from, for messages. */
export interface McpServerSource {
  origin: string;
  servers: unknown;
}

/**
 * The servers of several `mcp_servers` mappings (`$RHO_HOME/config.yaml`, then an agent config),
 * a later source winning by name: its server replaces the earlier one whole, settings are not
 * merged. Each mapping is validated under its own origin; a replaced server is not (its `${ENV}`
 * references need not be set).
 *
 * @throws ConfigError naming the origin, the server and the field.
 */
export function parseMcpServerSources(
  sources: readonly McpServerSource[],
  options: Pick<ParseMcpServersOptions, 'env'> = {},
): McpServerConfig[] {
  const names = (source: unknown): string[] =>
    typeof source === 'object' && source !== null && !Array.isArray(source) ? Object.keys(source) : [];
  return sources.flatMap((source, index) => {
    const replaced = new Set(sources.slice(index + 1).flatMap((later) => names(later.servers)));
    const kept =
      replaced.size === 0 || names(source.servers).length === 0
        ? source.servers
        : Object.fromEntries(
            Object.entries(source.servers as Record<string, unknown>).filter(([name]) => !replaced.has(name)),
          );
    return parseMcpServers(kept, { ...options, origin: source.origin });
  });
}
