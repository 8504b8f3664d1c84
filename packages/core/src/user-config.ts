import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadYaml } from './internal/yaml.js';
import { suggestKey } from './agent-config.js';
import { ConfigError } from './errors.js';

/**
 * The user's global configuration, `$RHO_HOME/config.yaml`. It holds settings that belong to the
 * person rather than to one agent: `mcp_servers`, `otel` and `fleet`. Keys this version does not know are
 * warnings, not errors, so a file written for a later version still loads.
 */
export interface UserConfig {
  /** The file read (or looked for). */
  path: string;
  /** Whether the file exists; a missing file is an empty configuration. */
  found: boolean;
  /**
   * MCP servers (`mcp_servers`), as written (`${ENV}` references unresolved), in the schema of an
   * agent config's `mcp_servers`; `@rho/tools-mcp` validates them. An agent config's server of the
   * same name wins over the one here.
   */
  mcpServers?: Record<string, unknown>;
  /** OpenTelemetry export (`otel`); see {@link UserOtelConfig}. */
  otel?: UserOtelConfig;
  /**
   * The fleet database (`fleet: {url, schema, ...}`), as written (`${ENV}` references
   * unresolved); `@rho/fleet`'s `resolveFleetConfig` validates it. An agent config's `fleet`, the
   * `RHO_FLEET_URL` variable and the `--fleet` flag win over it.
   */
  fleet?: Record<string, unknown>;
  /**
   * What `rho worker` lets a queued task choose (`worker: {allow_profiles, allow_dirs,
   * allow_endpoints}`), as written; `rho worker` validates it. Its flags win over it.
   */
  worker?: Record<string, unknown>;
  /** One sentence per problem that does not stop a run (an unknown key, with "did you mean"). */
  warnings: string[];
}

/** `otel:` of `$RHO_HOME/config.yaml`: where and how `rho` exports OpenTelemetry spans. */
export interface UserOtelConfig {
  /** The collector's OTLP/HTTP endpoint; setting it turns export on. */
  endpoint?: string;
  /** Headers of every export request (API keys), as written. */
  headers?: Record<string, string>;
  /** Export message content (prompts, answers, tool arguments and results). Default false. */
  content?: boolean;
}

/** Every key `$RHO_HOME/config.yaml` knows, as written in YAML. */
export const USER_CONFIG_KEYS: readonly string[] = ['mcp_servers', 'otel', 'fleet', 'worker'];

/** Names people reach for that mean a known key. */
const KEY_ALIASES: Readonly<Record<string, string>> = {
  mcp: 'mcp_servers',
  mcpservers: 'mcp_servers',
  mcp_server: 'mcp_servers',
  servers: 'mcp_servers',
  fleets: 'fleet',
};

/** The path of the global configuration file in `rhoHome` (see `rhoHome(env)`). */
export function userConfigPath(rhoHome: string): string {
  return join(rhoHome, 'config.yaml');
}

/**
 * Validates a parsed YAML document as `$RHO_HOME/config.yaml`.
 *
 * @throws ConfigError naming the file and the field, for a document that is not a mapping or a
 * known key whose value has the wrong shape.
 */
export function parseUserConfig(document: unknown, path: string): UserConfig {
  const config: UserConfig = { path, found: true, warnings: [] };
  if (document === null || document === undefined) return config;
  if (typeof document !== 'object' || Array.isArray(document)) {
    throw new ConfigError({
      message: `${path} must contain a YAML mapping (for example mcp_servers: ...).`,
      file: path,
    });
  }
  for (const [key, value] of Object.entries(document as Record<string, unknown>)) {
    if (key === 'mcp_servers') {
      if (value === null || value === undefined) continue;
      if (typeof value !== 'object' || Array.isArray(value)) {
        throw new ConfigError({
          message: `${path}: 'mcp_servers' must be a mapping of server names to settings (command and args, or url) (got ${JSON.stringify(value)}).`,
          file: path,
          field: 'mcp_servers',
        });
      }
      config.mcpServers = value as Record<string, unknown>;
    } else if (key === 'otel') {
      if (value === null || value === undefined) continue;
      config.otel = parseOtelConfig(value, path, config.warnings);
    } else if (key === 'fleet') {
      if (value === null || value === undefined) continue;
      if (typeof value !== 'object' || Array.isArray(value)) {
        throw new ConfigError({
          message: `${path}: 'fleet' must be a mapping such as {url: 'postgres://rho@db/rho', schema: rho_fleet} (got ${JSON.stringify(value)}).`,
          file: path,
          field: 'fleet',
        });
      }
      config.fleet = value as Record<string, unknown>;
    } else if (key === 'worker') {
      if (value === null || value === undefined) continue;
      if (typeof value !== 'object' || Array.isArray(value)) {
        throw new ConfigError({
          message: `${path}: 'worker' must be a mapping such as {allow_profiles: [readonly], allow_dirs: [/srv/work]} (got ${JSON.stringify(value)}).`,
          file: path,
          field: 'worker',
        });
      }
      config.worker = value as Record<string, unknown>;
    } else {
      const { suggestion } = suggestKey(key, USER_CONFIG_KEYS, KEY_ALIASES);
      config.warnings.push(
        `${path}: unknown key '${key}' is ignored (${suggestion === undefined ? `this version knows ${USER_CONFIG_KEYS.join(', ')}` : `did you mean '${suggestion}'?`}).`,
      );
    }
  }
  return config;
}

const OTEL_KEYS = ['endpoint', 'headers', 'content'];

function parseOtelConfig(value: unknown, path: string, warnings: string[]): UserOtelConfig {
  const wrong = (field: string, expected: string, got: unknown) =>
    new ConfigError({
      message: `${path}: '${field}' must be ${expected} (got ${JSON.stringify(got)}).`,
      file: path,
      field,
    });
  if (typeof value !== 'object' || Array.isArray(value))
    throw wrong('otel', 'a mapping (endpoint, headers, content)', value);
  const otel: UserOtelConfig = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (item === null || item === undefined) continue;
    if (key === 'endpoint') {
      if (typeof item !== 'string') throw wrong('otel.endpoint', 'a URL such as http://localhost:4318', item);
      otel.endpoint = item;
    } else if (key === 'headers') {
      if (typeof item !== 'object' || Array.isArray(item) || Object.values(item).some((v) => typeof v !== 'string'))
        throw wrong('otel.headers', 'a mapping of header names to strings', item);
      otel.headers = item as Record<string, string>;
    } else if (key === 'content') {
      if (typeof item !== 'boolean') throw wrong('otel.content', 'true or false', item);
      otel.content = item;
    } else {
      const { suggestion } = suggestKey(key, OTEL_KEYS, {});
      warnings.push(
        `${path}: unknown key 'otel.${key}' is ignored (${suggestion === undefined ? `otel knows ${OTEL_KEYS.join(', ')}` : `did you mean '${suggestion}'?`}).`,
      );
    }
  }
  return otel;
}

/**
 * Reads `$RHO_HOME/config.yaml`. A missing file is an empty configuration (`found: false`); the
 * caller shows `warnings` (this function never prints).
 *
 * @throws ConfigError naming the file for one that cannot be read or is not valid YAML, and the
 * field for a known key with a wrong value.
 */
export function loadUserConfig(rhoHome: string): UserConfig {
  const path = userConfigPath(rhoHome);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    // ENOTDIR: $RHO_HOME is not a directory, so it holds no file; the session store says what to fix.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { path, found: false, warnings: [] };
    throw new ConfigError({
      message: `Cannot read ${path}: ${(error as Error).message}. Fix its permissions or remove it.`,
      file: path,
      cause: error,
    });
  }
  let document: unknown;
  try {
    document = loadYaml().parse(text);
  } catch (error) {
    throw new ConfigError({
      message: `Invalid YAML in ${path}: ${(error as Error).message}`,
      file: path,
      cause: error,
    });
  }
  return parseUserConfig(document, path);
}
