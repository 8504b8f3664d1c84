import type { SecretRedactor, SessionOptions } from '@rho/core';
import type { FleetLink } from '@rho/fleet';
import { UsageError } from '../exit-codes.js';
import type { FleetSources } from './fleet-source.js';

/**
 * A plain file cursor ends below this (`COMPOSITE_CURSOR_FILE_SPAN` of `@rho/fleet`); checked here,
 * before anything is loaded, so a resume of a session that never ran in a fleet loads nothing.
 */
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
  const { FleetLink, resolveFleetConfig } = await import('@rho/fleet');
  const config = resolveFleetConfig({
    ...(sources.flag === undefined ? {} : { flag: sources.flag }),
    env: sources.env,
    ...(settings.agentConfig === undefined ? {} : { agentConfig: settings.agentConfig }),
    ...(settings.userConfig === undefined ? {} : { userConfig: settings.userConfig }),
  });
  if (config === undefined) return undefined;
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
  const { resumedFileControl } = await import('@rho/fleet');
  return resumedFileControl(directory, cursor);
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
