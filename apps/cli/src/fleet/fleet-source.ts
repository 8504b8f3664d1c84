import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/**
 * Where a fleet may be configured, gathered without loading `@rho/fleet` (and so without loading
 * the PostgreSQL driver): the `--fleet` flag, `RHO_FLEET_URL`, the agent config's `fleet:` and
 * `$RHO_HOME/config.yaml`'s `fleet:`. `@rho/fleet`'s `resolveFleetConfig` applies the precedence
 * and validates; this only answers "is any of them set?", so a run without a fleet loads nothing.
 */
export interface FleetSources {
  /** `--fleet URL`. */
  flag?: string;
  /** The environment (`RHO_FLEET_URL`, and the variables `${ENV}` references in a URL name). */
  env: NodeJS.ProcessEnv;
  /** `fleet:` of `$RHO_HOME/config.yaml`, as written. */
  userConfig?: unknown;
  /** `fleet:` of the agent config, as written. */
  agentConfig?: unknown;
  /** `$RHO_HOME/config.yaml`, for messages. */
  userConfigPath: string;
}

/**
 * The fleet sources, or undefined when none is set (then nothing about the fleet is loaded).
 * `--fleet ''` or `--no-fleet`-style empty values switch the fleet off for one command.
 */
export function fleetSources(options: {
  flag?: string | undefined;
  env: NodeJS.ProcessEnv;
  home: string;
  agentConfig?: unknown;
}): FleetSources | undefined {
  const userConfigPath = join(options.home, 'config.yaml');
  // An explicit empty --fleet means "no fleet for this command", whatever else says.
  if (options.flag !== undefined && options.flag.trim() === '') return undefined;
  const userConfig = userFleetSetting(userConfigPath);
  const set = (value: unknown) => value !== undefined && value !== null && value !== '';
  if (!set(options.flag) && !set(options.env.RHO_FLEET_URL?.trim()) && !set(options.agentConfig) && !set(userConfig))
    return undefined;
  return {
    ...(options.flag === undefined ? {} : { flag: options.flag }),
    env: options.env,
    ...(set(userConfig) ? { userConfig } : {}),
    ...(set(options.agentConfig) ? { agentConfig: options.agentConfig } : {}),
    userConfigPath,
  };
}

/**
 * `fleet:` of `$RHO_HOME/config.yaml`, or undefined. The file is only scanned for a top-level
 * `fleet` key before YAML is parsed, so runs without a fleet pay for one read at most; a file that
 * cannot be read or parsed is core's to report (loadUserConfig), not this check's.
 */
function userFleetSetting(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  if (!/^fleet\s*:/m.test(text)) return undefined;
  try {
    // The YAML parser loads only for a file that names a fleet (rho ps without one does not load it).
    const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
    const document = parse(text) as Record<string, unknown> | null;
    return document !== null && typeof document === 'object' ? document.fleet : undefined;
  } catch {
    return undefined;
  }
}
