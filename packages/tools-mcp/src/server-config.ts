import { ConfigError } from '@rho/core';
import { configProblem, validateConfig, type ConfigPath, type ConfigSource } from '@rho/core/internal';
import * as v from 'valibot';

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
  /**
   * The document the mapping was read from (`readConfigFile`/`parseConfigText` of
   * `@rho/core/internal`): messages then give the line of each key. Its `file` is the origin
   * when `origin` is not given.
   */
  source?: Pick<ConfigSource, 'file' | 'lineOf'>;
  /** Where the mapping is in `source`; default `['mcp_servers']`. */
  at?: ConfigPath;
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

const nonEmpty = v.pipe(
  v.string('must be a non-empty string'),
  v.check((text) => text.trim() !== '', 'must be a non-empty string'),
);

const NAMES_TO_STRINGS = 'must be a mapping of names to strings';
const stringMap = v.optional(
  v.nullable(
    v.pipe(
      v.unknown(),
      // A YAML list is an object too, to valibot.
      v.check((value) => !Array.isArray(value), NAMES_TO_STRINGS),
      v.record(v.string(), v.union([v.string(), v.number(), v.boolean()], 'must be a string'), NAMES_TO_STRINGS),
    ),
  ),
);

const seconds = (max: number) => {
  const message = `must be a number of seconds between 1 and ${max}`;
  return v.optional(v.pipe(v.number(message), v.finite(message), v.gtValue(0, message), v.maxValue(max, message)));
};

const common = {
  timeout: seconds(86_400),
  startup_timeout: seconds(3_600),
  defer: v.optional(v.boolean('must be true or false')),
};

const unknownKey = (keys: readonly string[]) => `is an unknown key; allowed keys: ${keys.join(', ')}`;

const stdioSchema = v.strictObject(
  {
    command: nonEmpty,
    args: v.optional(
      v.nullable(v.array(v.union([v.string(), v.number()], 'must be a string'), 'must be a list of strings')),
    ),
    env: stringMap,
    cwd: v.optional(nonEmpty),
    ...common,
  },
  unknownKey(STDIO_KEYS),
);

const httpSchema = v.strictObject({ url: nonEmpty, headers: stringMap, ...common }, unknownKey(HTTP_KEYS));

const unsetMessage = (name: string) =>
  `refers to \${${name}}, which is not set: set ${name} in the environment or write \${${name}:-default}`;

function substitute(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  unset: (name: string) => never,
): string {
  return text.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
    (_match, name: string, fallback: string | undefined) => {
      const value = env[name];
      if (value !== undefined && value !== '') return value;
      if (fallback !== undefined) return fallback;
      return unset(name);
    },
  );
}

/**
 * Replaces `${VAR}` and `${VAR:-default}` in a string. An unset variable without a default is a
 * `ConfigError`: a server started with an empty token fails later with a far less clear message.
 */
export function interpolateEnv(text: string, env: Readonly<Record<string, string | undefined>>, where: string): string {
  return substitute(text, env, (name) => {
    throw new ConfigError({ message: `${where} ${unsetMessage(name)}.`, field: where });
  });
}

/**
 * Validates the `mcp_servers:` mapping (server name → settings) of an agent config or
 * `$RHO_HOME/config.yaml` and resolves `${ENV}` references. A server has either `command`
 * (with optional `args`, `env`, `cwd`) or `url` (with optional `headers`), and optionally
 * `timeout` and `startup_timeout` in seconds and `defer` (deferred loading: found through `search_tools`).
 *
 * @throws ConfigError `ORIGIN:LINE: 'mcp_servers.NAME.KEY' must be ... (got ...).`, naming the
 * origin (`MCP servers` when none is given), the key and, with `source`, its line.
 */
export function parseMcpServers(servers: unknown, options: ParseMcpServersOptions = {}): McpServerConfig[] {
  const env = options.env ?? process.env;
  const at = options.at ?? ['mcp_servers'];
  const lineOf = options.source?.lineOf.bind(options.source) ?? (() => undefined);
  const source = { file: options.origin ?? options.source?.file ?? 'MCP servers', lineOf };
  if (servers === undefined || servers === null) return [];
  if (!isMapping(servers))
    throw configProblem(source, at, 'must be a mapping of server name to settings (command and args, or url)', {
      value: servers,
    });
  const configs: McpServerConfig[] = [];
  for (const [name, raw] of Object.entries(servers)) {
    const place = [...at, name];
    // Said without the entry's values: its env and headers hold tokens.
    const fail = (message: string, path: ConfigPath = place): never => {
      throw configProblem(source, path, message);
    };
    if (!SERVER_NAME.test(name))
      fail('is not a valid server name: use 1-32 letters, digits, "_" or "-" (it prefixes the tool names)');
    if (name.includes('__')) fail('must not contain "__", which separates the server from the tool in tool names');
    if (!isMapping(raw)) fail('must be a mapping with command (and args, env) or url (and headers)');
    const settings = raw as Record<string, unknown>;
    const hasCommand = settings.command !== undefined;
    const hasUrl = settings.url !== undefined;
    if (hasCommand === hasUrl)
      fail(
        hasCommand
          ? 'has both command and url: give one (command for stdio, url for streamable HTTP)'
          : 'needs command (a stdio server) or url (a streamable HTTP server)',
      );
    const interpolate = (text: string | number | boolean, path: ConfigPath): string =>
      substitute(String(text), env, (variable) => fail(unsetMessage(variable), path));
    const map = (values: Record<string, string | number | boolean> | null | undefined, key: string) =>
      Object.fromEntries(
        Object.entries(values ?? {}).map(([item, value]) => [item, interpolate(value, [...place, key, item])]),
      );
    const timing = (value: {
      timeout?: number | undefined;
      startup_timeout?: number | undefined;
      defer?: boolean | undefined;
    }) => ({
      timeoutMs: Math.round((value.timeout ?? DEFAULT_MCP_TIMEOUT_SECONDS) * 1000),
      startupTimeoutMs: Math.round((value.startup_timeout ?? DEFAULT_MCP_STARTUP_TIMEOUT_SECONDS) * 1000),
      ...(value.defer === true ? { defer: true } : {}),
    });
    if (hasCommand) {
      const value = validateConfig(stdioSchema, settings, source, place);
      const server: McpStdioServerConfig = {
        name,
        transport: 'stdio',
        command: interpolate(value.command, [...place, 'command']),
        args: (value.args ?? []).map((arg, index) => interpolate(arg, [...place, 'args', index])),
        env: map(value.env, 'env'),
        ...timing(value),
      };
      if (value.cwd !== undefined) server.cwd = interpolate(value.cwd, [...place, 'cwd']);
      configs.push(server);
    } else {
      const value = validateConfig(httpSchema, settings, source, place);
      const url = interpolate(value.url, [...place, 'url']);
      // The URL as written, not as resolved: a ${TOKEN} in it stays out of the message.
      let parsed: URL | undefined;
      try {
        parsed = new URL(url);
      } catch {
        throw configProblem(source, [...place, 'url'], 'must be a URL', { value: value.url });
      }
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
        throw configProblem(source, [...place, 'url'], 'must be an http:// or https:// URL', { value: value.url });
      configs.push({ name, transport: 'http', url, headers: map(value.headers, 'headers'), ...timing(value) });
    }
  }
  return configs;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One `mcp_servers` mapping and the file (or `agent config`) it came from, for messages. */
export interface McpServerSource {
  origin: string;
  servers: unknown;
  /** The document `servers` was read from, for the line of each key in messages (see {@link ParseMcpServersOptions.source}). */
  source?: Pick<ConfigSource, 'file' | 'lineOf'>;
  /** Where `servers` is in `source`; default `['mcp_servers']`. */
  at?: ConfigPath;
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
    return parseMcpServers(kept, {
      ...options,
      origin: source.origin,
      ...(source.source === undefined ? {} : { source: source.source }),
      ...(source.at === undefined ? {} : { at: source.at }),
    });
  });
}
