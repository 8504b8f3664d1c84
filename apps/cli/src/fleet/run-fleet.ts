import type { SecretRedactor, SessionOptions } from '@rho/core';
import { UsageError } from '../exit-codes.js';
import type { FleetLink } from './fleet-link.js';
import type { FleetSources } from './fleet-source.js';

/** A plain file cursor ends below this; above it, the trace's cursor holds a fleet part (see composite-control.ts). */
const FILE_SPAN = 2 ** 32;

/**
 * Resolves the fleet configuration and starts linking this process's sessions to it (in the
 * background: this returns at once, whether or not the database answers). Loads `@rho/fleet`;
 * call it only when {@link FleetSources} found a source.
 *
 * @throws ConfigError (exit 2) for a malformed fleet configuration.
 */
export async function startFleetLink(
  sources: FleetSources,
  settings: { userConfig?: Record<string, unknown> | undefined; agentConfig?: Record<string, unknown> | undefined },
  labels: Record<string, string> | undefined,
  hooks: { onWarning?: (message: string) => void },
  redactor?: SecretRedactor,
): Promise<FleetLink | undefined> {
  const { resolveFleetConfig } = await import('@rho/fleet');
  const config = resolveFleetConfig({
    ...(sources.flag === undefined ? {} : { flag: sources.flag }),
    env: sources.env,
    ...(settings.agentConfig === undefined ? {} : { agentConfig: settings.agentConfig }),
    ...(settings.userConfig === undefined ? {} : { userConfig: settings.userConfig }),
  });
  if (config === undefined) return undefined;
  const { FleetLink } = await import('./fleet-link.js');
  const host = sources.env.RHO_FLEET_HOST?.trim();
  return FleetLink.start(config, {
    ...(host === undefined || host === '' ? {} : { host }),
    ...(hooks.onWarning === undefined ? {} : { onWarning: hooks.onWarning }),
    ...(labels === undefined ? {} : { labels }),
    ...(redactor === undefined ? {} : { redactor }),
  });
}

/**
 * A resumed session that once ran in a fleet holds a composite directive cursor in its trace; run
 * without a fleet now, its file channel must read only the cursor's file part (or it would start
 * its directives over). Other sessions keep core's default channel.
 */
export async function fileChannelFor(directory: string, cursor: number): Promise<SessionOptions> {
  if (cursor < FILE_SPAN) return {};
  const [{ CompositeControlChannel }, { FileControlChannel }] = await Promise.all([
    import('./composite-control.js'),
    import('@rho/core/internal'),
  ]);
  return { control: new CompositeControlChannel(new FileControlChannel(directory), () => undefined) };
}

/** `--label key=value` flags as a mapping (undefined without any). */
export function parseLabels(values: readonly string[] | string | undefined): Record<string, string> | undefined {
  if (values === undefined) return undefined;
  const list = ([] as string[]).concat(values).filter((value) => value.trim() !== '');
  if (list.length === 0) return undefined;
  const labels: Record<string, string> = {};
  for (const value of list) {
    const match = /^([A-Za-z0-9_.\-/]+)=(.*)$/.exec(value.trim());
    if (match === null)
      throw new UsageError({
        message: `--label takes key=value, for example --label team=data (got ${JSON.stringify(value)}).`,
      });
    labels[match[1]!] = match[2]!;
  }
  return labels;
}
