import { readFileSync } from 'node:fs';
import { loadYaml } from './internal/yaml.js';
import { ConfigError } from './errors.js';
import type { Budgets } from './session-options.js';

/**
 * An agent configuration as stored in YAML (`--config agent.yaml`, a session's `config.yaml`).
 * Keys are snake_case in YAML, as in the Python original, whose session configs load unchanged.
 */
export interface AgentConfig {
  /** The system prompt: literal text, or a path to a Markdown prompt file (ending in `.md`). */
  systemPrompt?: string;
  /** Template variables of the prompt file. */
  vars: Record<string, string>;
  model?: string;
  /** Permission profile: a built-in name or a YAML path. */
  profile?: string;
  /**
   * Execution backend: `local`, `sandbox`, `daytona` (YAML `backend: NAME`, or
   * `backend: {name: NAME, ...options}` with the backend's options).
   */
  backend?: string;
  /** The backend's options (the other keys of a `backend:` mapping), as written. */
  backendOptions?: Record<string, unknown>;
  workingDir?: string;
  baseUrl?: string;
  serviceTier?: string;
  reasoningEffort?: string;
  responseFormat?: Record<string, unknown>;
  /** Database aliases, in the format of `databases.yaml`. */
  databases?: Record<string, unknown>;
  /** Tool packages to load (`tool_packages`): package names or paths, as written. */
  toolPackages?: string[];
  /**
   * MCP servers (`mcp_servers`): server name → `command`/`args`/`env` (stdio) or `url`/`headers`
   * (streamable HTTP), as written (`${ENV}` references unresolved); `@rho/tools-mcp` validates them.
   */
  mcpServers?: Record<string, unknown>;
  /** The fleet database (`fleet: {url, schema, ...}`), as written; `@rho/fleet` validates it. */
  fleet?: Record<string, unknown>;
  budgets: Budgets;
  autoApprove?: boolean;
  /** Seconds to wait for a model answer to start (`first_byte_timeout`). */
  firstByteTimeout?: number;
  /** Seconds to wait between two chunks of a streamed answer (`idle_timeout`). */
  idleTimeout?: number;
  /** Retries of a failed model request (`max_retries`, 0 for none). */
  maxRetries?: number;
  /** The model's context window in tokens (`context_window`), whatever the model. */
  contextWindow?: number;
  /** Context windows per model name (`context_windows: {qwen3-coder: 131072}`), used when `context_window` is not set. */
  contextWindows?: Record<string, number>;
  /** Keys this version does not know, kept so saving loses nothing. */
  extras: Record<string, unknown>;
}

const STRING_FIELDS = {
  system_prompt: 'systemPrompt',
  model: 'model',
  profile: 'profile',
  backend: 'backend',
  working_dir: 'workingDir',
  base_url: 'baseUrl',
  service_tier: 'serviceTier',
  reasoning_effort: 'reasoningEffort',
} as const;

const BUDGET_FIELDS = {
  max_turns: 'maxTurns',
  max_tokens: 'maxTokens',
  max_cost_usd: 'maxCostUsd',
  max_duration_ms: 'maxDurationMs',
} as const;

/** Validates a parsed YAML document as an agent configuration. */
export function parseAgentConfig(document: unknown, origin = 'agent config'): AgentConfig {
  if (document === null || document === undefined) document = {};
  if (typeof document !== 'object' || Array.isArray(document)) {
    throw new ConfigError({ message: `Config file must contain a YAML mapping: ${origin}`, file: origin });
  }
  const source = document as Record<string, unknown>;
  const config: AgentConfig = { vars: {}, budgets: {}, extras: {} };
  const fail = (field: string, expected: string, value: unknown): never => {
    throw new ConfigError({
      message: `${origin}: '${field}' must be ${expected} (got ${JSON.stringify(value)}).`,
      file: origin,
      field,
    });
  };
  for (const [key, value] of Object.entries(source)) {
    if (value === null || value === undefined) continue;
    if (key === 'backend' && typeof value === 'object' && !Array.isArray(value)) {
      const { name, ...options } = value as Record<string, unknown>;
      if (typeof name !== 'string' || name.trim() === '')
        fail(key, 'a backend name, or a mapping with `name` (local, sandbox, daytona) and its options', value);
      config.backend = name as string;
      if (Object.keys(options).length > 0) config.backendOptions = options;
    } else if (key in STRING_FIELDS) {
      if (typeof value !== 'string')
        fail(key, key === 'backend' ? 'a backend name or a mapping with `name`' : 'a string', value);
      config[STRING_FIELDS[key as keyof typeof STRING_FIELDS]] = value as string;
    } else if (key === 'vars') {
      if (typeof value !== 'object' || Array.isArray(value)) fail(key, 'a mapping of names to values', value);
      config.vars = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([name, item]) => [
          name,
          item === null ? '' : String(item),
        ]),
      );
    } else if (key === 'fleet') {
      if (typeof value !== 'object' || Array.isArray(value))
        fail(key, "a mapping such as {url: 'postgres://rho@db/rho', schema: rho_fleet}", value);
      config.fleet = value as Record<string, unknown>;
    } else if (key === 'response_format' || key === 'databases' || key === 'mcp_servers') {
      if (typeof value !== 'object' || Array.isArray(value))
        fail(
          key,
          key === 'mcp_servers' ? 'a mapping of server names to settings (command and args, or url)' : 'a mapping',
          value,
        );
      if (key === 'response_format') config.responseFormat = value as Record<string, unknown>;
      else if (key === 'databases') config.databases = value as Record<string, unknown>;
      else config.mcpServers = value as Record<string, unknown>;
    } else if (key === 'first_byte_timeout' || key === 'idle_timeout') {
      if (typeof value !== 'number' || !Number.isFinite(value) || !(value > 0))
        fail(key, 'a positive number of seconds', value);
      config[key === 'first_byte_timeout' ? 'firstByteTimeout' : 'idleTimeout'] = value as number;
    } else if (key === 'max_retries') {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
        fail(key, 'a whole number, 0 or more', value);
      config.maxRetries = value as number;
    } else if (key === 'context_window') {
      if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0)
        fail(key, 'a whole number of tokens, for example 32768', value);
      config.contextWindow = value as number;
    } else if (key === 'context_windows') {
      if (typeof value !== 'object' || Array.isArray(value))
        fail(key, 'a mapping of model names to a number of tokens', value);
      for (const [name, tokens] of Object.entries(value as Record<string, unknown>)) {
        if (typeof tokens !== 'number' || !Number.isInteger(tokens) || tokens <= 0)
          fail(`context_windows.${name}`, 'a whole number of tokens, for example 32768', tokens);
      }
      config.contextWindows = { ...(value as Record<string, number>) };
    } else if (key === 'tool_packages') {
      if (!Array.isArray(value) || value.some((item) => typeof item !== 'string' || item.trim() === ''))
        fail(key, 'a list of package names or paths', value);
      config.toolPackages = (value as string[]).map((item) => item.trim());
    } else if (key === 'auto_approve') {
      if (typeof value !== 'boolean') fail(key, 'true or false', value);
      config.autoApprove = value as boolean;
    } else if (key === 'budgets') {
      if (typeof value !== 'object' || Array.isArray(value))
        fail(key, `a mapping with ${Object.keys(BUDGET_FIELDS).join(', ')}`, value);
      for (const [name, limit] of Object.entries(value as Record<string, unknown>)) {
        if (!(name in BUDGET_FIELDS)) fail(`budgets.${name}`, `one of ${Object.keys(BUDGET_FIELDS).join(', ')}`, name);
        if (typeof limit !== 'number' || !(limit > 0)) fail(`budgets.${name}`, 'a positive number', limit);
        config.budgets[BUDGET_FIELDS[name as keyof typeof BUDGET_FIELDS]] = limit as number;
      }
    } else {
      config.extras[key] = value;
    }
  }
  return config;
}

/** Every key an agent configuration knows, as written in YAML. */
const KNOWN_KEYS: readonly string[] = [
  ...Object.keys(STRING_FIELDS),
  'vars',
  'response_format',
  'databases',
  'tool_packages',
  'mcp_servers',
  'fleet',
  'budgets',
  'auto_approve',
  'first_byte_timeout',
  'idle_timeout',
  'max_retries',
  'context_window',
  'context_windows',
];

/** Names people reach for that mean a known key. */
const KEY_ALIASES: Readonly<Record<string, string>> = {
  tools: 'tool_packages',
  plugins: 'tool_packages',
  packages: 'tool_packages',
  extensions: 'tool_packages',
  prompt: 'system_prompt',
  database: 'databases',
  mcp: 'mcp_servers',
  mcpservers: 'mcp_servers',
  mcp_server: 'mcp_servers',
  approve: 'auto_approve',
  vars_file: 'vars',
  // Budgets are nested: `budgets: {max_turns: 20}`.
  max_turns: 'budgets',
  max_tokens: 'budgets',
  max_cost_usd: 'budgets',
  max_duration_ms: 'budgets',
};

/** A key of an agent configuration this version does not know, and the known key it may mean. */
export interface UnknownAgentConfigKey {
  key: string;
  suggestion?: string;
}

/**
 * The keys of `config` this version does not know (kept in `extras`, so they are saved and do
 * nothing), each with the known key it most likely means, for a "did you mean" warning.
 */
export function unknownAgentConfigKeys(config: AgentConfig): UnknownAgentConfigKey[] {
  return Object.keys(config.extras).map((key) => suggestKey(key, KNOWN_KEYS, KEY_ALIASES));
}

/**
 * An unknown key with the one of `known` it most likely means: an alias, else the nearest name
 * within a quarter of its length in edits. Shared with `$RHO_HOME/config.yaml` (user-config.ts).
 */
export function suggestKey(
  key: string,
  known: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): UnknownAgentConfigKey {
  const normalized = key.trim().toLowerCase().replace(/-/g, '_');
  const alias = aliases[normalized];
  if (alias !== undefined && known.includes(alias)) return { key, suggestion: alias };
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(normalized, name);
    if (best === undefined || distance < best.distance) best = { name, distance };
  }
  return best !== undefined && best.distance <= Math.max(1, Math.floor(best.name.length / 4))
    ? { key, suggestion: best.name }
    : { key };
}

/** Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, index) => index)];
  for (let i = 1; i <= a.length; i += 1) {
    const row = [i];
    for (let j = 1; j <= b.length; j += 1) {
      let best = Math.min(
        rows[i - 1]![j]! + 1,
        row[j - 1]! + 1,
        rows[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      row[j] = best;
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}

/** Reads an agent configuration from a YAML file. */
export function loadAgentConfig(path: string): AgentConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new ConfigError({ message: `Config file not found: ${path}`, file: path });
    throw new ConfigError({
      message: `Cannot read config file ${path}: ${(error as Error).message}`,
      file: path,
      cause: error,
    });
  }
  let document: unknown;
  try {
    document = loadYaml().parse(text);
  } catch (error) {
    throw new ConfigError({
      message: `Invalid YAML in config file ${path}: ${(error as Error).message}`,
      file: path,
      cause: error,
    });
  }
  return parseAgentConfig(document, path);
}

/** The YAML document of a configuration, keys in a stable order, empty optional keys left out. */
export function agentConfigToDocument(config: AgentConfig): Record<string, unknown> {
  const document: Record<string, unknown> = {};
  if (config.systemPrompt !== undefined && config.systemPrompt !== '') document.system_prompt = config.systemPrompt;
  if (Object.keys(config.vars).length > 0) document.vars = config.vars;
  for (const [key, field] of Object.entries(STRING_FIELDS)) {
    if (key === 'system_prompt') continue;
    const value = config[field];
    if (value !== undefined && value !== '') document[key] = value;
  }
  if (config.backendOptions !== undefined && Object.keys(config.backendOptions).length > 0)
    document.backend = { name: config.backend ?? 'local', ...config.backendOptions };
  if (config.responseFormat !== undefined) document.response_format = config.responseFormat;
  if (config.databases !== undefined && Object.keys(config.databases).length > 0) document.databases = config.databases;
  if (config.toolPackages !== undefined && config.toolPackages.length > 0) document.tool_packages = config.toolPackages;
  if (config.mcpServers !== undefined && Object.keys(config.mcpServers).length > 0)
    document.mcp_servers = config.mcpServers;
  if (config.fleet !== undefined) document.fleet = config.fleet;
  const budgets = Object.entries(BUDGET_FIELDS).flatMap(([key, field]) =>
    config.budgets[field] === undefined ? [] : [[key, config.budgets[field]]],
  );
  if (budgets.length > 0) document.budgets = Object.fromEntries(budgets);
  if (config.autoApprove !== undefined) document.auto_approve = config.autoApprove;
  if (config.firstByteTimeout !== undefined) document.first_byte_timeout = config.firstByteTimeout;
  if (config.idleTimeout !== undefined) document.idle_timeout = config.idleTimeout;
  if (config.maxRetries !== undefined) document.max_retries = config.maxRetries;
  if (config.contextWindow !== undefined) document.context_window = config.contextWindow;
  if (config.contextWindows !== undefined && Object.keys(config.contextWindows).length > 0)
    document.context_windows = config.contextWindows;
  return { ...document, ...config.extras };
}
