/**
 * `@rho/fleet/settings`: the fleet's settings section, and which fleet sources are set. Light:
 * it validates the fleet's settings and never loads the PostgreSQL driver (`connectFleet` does).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfigText } from '@rho/core/internal';
import type { SectionContext } from '@rho/core/settings';
import { defineSettingsSection, isMapping, listOfText, mapping } from '@rho/core/settings';
import type { FleetConfig } from './fleet-config.js';
import { resolveFleetConfig } from './fleet-config.js';

/**
 * Where a fleet is configured: the `--fleet` flag, `RHO_FLEET_URL`, the agent config's `fleet:`
 * and `$RHO_HOME/config.yaml`'s `fleet:`. `resolveFleetConfig` applies the precedence and
 * validates; a run with none of them set loads nothing of the fleet.
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

/** The fleet of a run. */
export interface FleetRunSettings {
  /** Where the fleet is configured; undefined when no fleet is (or `--fleet ''` turned it off). */
  readonly sources?: FleetSources;
  /** The fleet, validated (its url with `${ENV}` resolved), when one is configured. */
  readonly config?: FleetConfig;
  /** `fleet:` of the agent config and of `$RHO_HOME/config.yaml`, as written. */
  readonly agentConfig?: Record<string, unknown>;
  readonly userConfig?: Record<string, unknown>;
  /** `--label key=value`: the session's labels in the fleet (not saved with the session). */
  readonly labels?: Readonly<Record<string, string>>;
}

const LABEL = /^([A-Za-z0-9_.\-/]+)=(.*)$/;

/** The fleet: a PostgreSQL database where runs register and operator commands see every node. */
export const fleetSettingsSection = defineSettingsSection({
  name: 'fleet',
  owner: '@rho/fleet',
  description:
    'The fleet: a PostgreSQL database every run registers in, so that ps, watch, cancel... see every node. The url comes from the first of --fleet, RHO_FLEET_URL, the agent config, $RHO_HOME/config.yaml; the other settings from the agent config, else $RHO_HOME/config.yaml.',
  aliases: { fleets: 'fleet' },
  settings: [
    {
      key: 'fleet',
      description:
        "The fleet database: {url, schema, ssl, heartbeat_interval_ms, dead_after_ms} (a variable or flag gives the url; --fleet '' turns a configured fleet off)",
      files: ['home', 'agent'],
      ...mapping("a mapping such as {url: 'postgres://rho@db/rho', schema: rho_fleet}"),
      text: (url) => ({ url }),
      env: ['RHO_FLEET_URL'],
      flag: 'fleet',
      merge: true,
      why: 'the url is the highest source’s; the other settings are the agent config’s, else $RHO_HOME/config.yaml’s',
      save: 'never',
    },
    {
      key: 'label',
      description: 'A label key=value of the session in the fleet (repeatable; per run, not saved)',
      files: [],
      ...listOfText('takes key=value, for example --label team=data'),
      flag: 'label',
    },
  ],
  build(context): FleetRunSettings {
    const layers = context.layers('fleet');
    const flag = layers.find((layer) => layer.kind === 'flag');
    const user = layers.find((layer) => layer.kind === 'home')?.value as Record<string, unknown> | undefined;
    const agent = layers.find((layer) => layer.kind === 'agent' || layer.kind === 'saved')?.value as
      Record<string, unknown> | undefined;
    const labels = parseLabels(context, context.value<string[]>('label'));
    const common = {
      ...(agent === undefined ? {} : { agentConfig: agent }),
      ...(user === undefined ? {} : { userConfig: user }),
      ...(labels === undefined ? {} : { labels }),
    };
    // An explicit empty --fleet means "no fleet for this command", whatever else says.
    const flagUrl = flag === undefined ? undefined : String((flag.value as { url: unknown }).url);
    if (flagUrl !== undefined && flagUrl.trim() === '') return common;
    if (layers.length === 0) return common;
    const sources: FleetSources = {
      ...(flagUrl === undefined ? {} : { flag: flagUrl }),
      env: context.env as NodeJS.ProcessEnv,
      ...(user === undefined ? {} : { userConfig: user }),
      ...(agent === undefined ? {} : { agentConfig: agent }),
      userConfigPath: context.homeFile,
    };
    const config = resolveFleetConfig({
      ...(flagUrl === undefined ? {} : { flag: flagUrl }),
      env: context.env,
      ...(agent === undefined ? {} : { agentConfig: agent }),
      ...(user === undefined ? {} : { userConfig: user }),
    });
    return { ...common, sources, ...(config === undefined ? {} : { config }) };
  },
});

function parseLabels(
  context: SectionContext,
  values: readonly string[] | undefined,
): Record<string, string> | undefined {
  if (values === undefined || values.length === 0) return undefined;
  const labels: Record<string, string> = {};
  for (const value of values) {
    const match = LABEL.exec(value.trim());
    if (match === null)
      throw context.problem('label', `takes key=value, for example --label team=data (got ${JSON.stringify(value)})`);
    labels[match[1]!] = match[2]!;
  }
  return labels;
}

/**
 * The fleet sources for a command that runs no agent (ps, watch, a worker's eval question), or
 * undefined when none is set (then nothing about the fleet is loaded). `$RHO_HOME/config.yaml` is
 * only scanned for a top-level `fleet` key before YAML is parsed, so such a command without a
 * fleet loads no YAML parser; a file that cannot be read or parsed is a run's to report.
 * `--fleet ''` switches the fleet off for one command.
 */
export function fleetSources(options: {
  flag?: string | undefined;
  env: NodeJS.ProcessEnv;
  home: string;
  agentConfig?: unknown;
}): FleetSources | undefined {
  const userConfigPath = join(options.home, 'config.yaml');
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

function userFleetSetting(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  if (!/^fleet\s*:/m.test(text)) return undefined;
  try {
    const document = parseConfigText(text, path).value;
    return isMapping(document) ? document.fleet : undefined;
  } catch {
    return undefined;
  }
}
