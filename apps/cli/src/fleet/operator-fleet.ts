import type { FleetConfig } from '@rho/fleet';
import type { SessionSource } from '@rho/monitor';
import { rhoHome } from '@rho/core';
import { fleetSources } from './fleet-source.js';

/**
 * The fleet configuration an operator command (ps, watch, cancel, stats, fleet status...) works
 * with: `--fleet`, `RHO_FLEET_URL`, `$RHO_HOME/config.yaml`'s `fleet:`. Undefined when none is
 * set, without loading `@rho/fleet`.
 *
 * @throws ConfigError (exit 2) for a malformed fleet configuration.
 */
export async function operatorFleetConfig(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<FleetConfig | undefined> {
  const sources = fleetSources({ flag, env, home: rhoHome(env) });
  if (sources === undefined) return undefined;
  const { resolveFleetConfig } = await import('@rho/fleet');
  return resolveFleetConfig({
    ...(sources.flag === undefined ? {} : { flag: sources.flag }),
    env: sources.env,
    ...(isMapping(sources.userConfig) ? { userConfig: sources.userConfig } : {}),
  });
}

/**
 * Runs `action` on the configured fleet's sessions (a `SessionSource` of `@rho/fleet`, whose
 * connection is closed after); without a fleet configured, runs `local` instead. When the fleet's
 * database does not answer, `fallback` (when given) decides: it is told why and may run the local
 * action (a `ps` still shows this machine).
 */
export async function withOperatorFleet<T>(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  action: (source: SessionSource) => Promise<T>,
  local: () => Promise<T>,
  fallback?: (reason: string) => Promise<T>,
): Promise<T> {
  const config = await operatorFleetConfig(flag, env);
  if (config === undefined) return local();
  const { openFleetSessionSource, FleetUnavailableError } = await import('@rho/fleet');
  let source: SessionSource;
  try {
    source = await openFleetSessionSource(config, { maxConnections: 2, connectTimeoutSeconds: 5 });
  } catch (error) {
    if (fallback !== undefined && FleetUnavailableError.isInstance(error) && error.code === 'fleet_unavailable')
      return fallback(error.message);
    throw error;
  }
  try {
    return await action(source);
  } finally {
    await source.close().catch(() => {});
  }
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
