/**
 * `@rho/agent/settings`: the execution backend's settings section, and the sections of an agent
 * run in order (core's, the profile's, the backend's, the databases' and the MCP servers'). Light:
 * no backend, driver or SDK loads until a run starts one.
 */
import { resolve } from 'node:path';
import { ConfigError } from '@rho/core';
import type { SectionContext } from '@rho/core/settings';
import {
  approvalSettingsSection,
  budgetsSettingsSection,
  compactionSettingsSection,
  defineSettingsSection,
  flagOrSwitch,
  modelSettingsSection,
  nameOrMapping,
  promptSettingsSection,
  text,
  toolPackagesSettingsSection,
  workingDirSettingsSection,
} from '@rho/core/settings';
import type { ProfileSettings } from '@rho/permissions/settings';
import { profileSettingsSection } from '@rho/permissions/settings';
import { databaseSettingsSection } from '@rho/tools-db/settings';
import { mcpSettingsSection } from '@rho/tools-mcp/settings';
import { defaultBackendName } from './backends.js';

// What a profile lets the tools do (light: no backend loads), for sections that depend on it.
export { backendAccess } from './backends.js';

/** Where the file and shell tools run. */
export interface BackendSettings {
  /** `local`, `sandbox`, `daytona`, or another registered backend. */
  readonly name: string;
  /** The backend's options (the other keys of a `backend:` mapping, and the daytona flags). */
  readonly options: Readonly<Record<string, unknown>>;
  /** Where the choice came from, for messages (`--backend`, `RHO_BACKEND`, `agent.yaml:3`, `the default of profile unrestricted`). */
  readonly origin: string;
}

type Chosen = { name: string; options: Record<string, unknown> };

/** The execution backend (the backend registry lives in `@rho/agent`). */
export const backendSettingsSection = defineSettingsSection({
  name: 'backend',
  owner: '@rho/agent',
  description:
    'Where the file and shell tools run: local, sandbox (a bubblewrap container), daytona (a Daytona cloud sandbox); without one, sandbox for the unrestricted and eval profiles where bubblewrap works, else local.',
  settings: [
    {
      key: 'backend',
      description: 'Execution backend: a name, or {name: NAME, ...its options}',
      ...nameOrMapping('backend', 'local, sandbox, daytona'),
      env: ['RHO_BACKEND', 'RHO_AGENT_BACKEND'],
      flag: 'backend',
      emptyFlag: 'error',
      hint: 'local, sandbox or daytona',
      configBeatsEnv: true,
      pinned: true,
      why: 'the agent config beats the environment; the backend a session ran on is saved (the profile’s default included), so a resume runs its tools where they ran, never on this machine instead',
      save: 'resolved',
    },
    {
      key: 'dockerfile',
      description: 'Daytona: build the sandbox from this Dockerfile (implies the daytona backend)',
      files: [],
      ...text('a path'),
      flag: 'dockerfile',
      emptyFlag: 'unset',
      text: (value) => resolve(value),
    },
    {
      key: 'snapshot',
      description: 'Daytona: create the sandbox from this snapshot (implies the daytona backend)',
      files: [],
      ...text('a snapshot name'),
      flag: 'snapshot',
      emptyFlag: 'unset',
    },
    {
      key: 'keep_sandbox',
      description: 'Daytona: keep the sandbox when rho exits',
      files: [],
      ...flagOrSwitch(),
      flag: 'keep-sandbox',
    },
  ],
  async build(context): Promise<BackendSettings> {
    const chosen = context.winner('backend');
    let name = (chosen?.value as Chosen | undefined)?.name;
    let options: Record<string, unknown> = (chosen?.value as Chosen | undefined)?.options ?? {};
    let origin = chosen === undefined ? undefined : chosen.kind === 'env' ? chosen.name : chosen.origin;
    const file = context
      .layers('backend')
      .filter((layer) => layer.kind === 'agent' || layer.kind === 'saved')
      .at(-1);
    // The config's options belong to the backend it names: another backend starts without them.
    if (chosen?.kind === 'flag')
      options = file !== undefined && (file.value as Chosen).name === name ? (file.value as Chosen).options : {};
    const daytona = daytonaFlags(context);
    if (daytona !== undefined) {
      // The daytona flags choose daytona; a backend named by a flag or the agent config must be it.
      const named = chosen?.kind === 'flag' || chosen?.kind === 'agent' || chosen?.kind === 'saved' ? name : undefined;
      if (named !== undefined && named !== 'daytona')
        throw new ConfigError({
          message: `${daytona.flags} belong${daytona.flags.includes(',') ? '' : 's'} to the daytona backend, but the backend is '${named}': drop the flag or use --backend daytona.`,
        });
      if (named !== 'daytona') options = {};
      options = { ...options };
      // A flag's image source replaces the config's.
      if (daytona.options.dockerfile !== undefined || daytona.options.snapshot !== undefined) {
        delete options['dockerfile'];
        delete options['snapshot'];
        delete options['image'];
      }
      options = { ...options, ...daytona.options };
      if (chosen?.kind !== 'flag') origin = 'the daytona flags';
      name = 'daytona';
    }
    if (name === undefined) {
      const profile = context.section<ProfileSettings>('profile');
      const chosenName = await defaultBackendName({ name: profile.name });
      context.derived('backend', chosenName, `default (of profile ${profile.name})`);
      return { name: chosenName, options: {}, origin: `the default of profile ${profile.name}` };
    }
    return { name, options, origin: origin ?? 'the daytona flags' };
  },
  // Saved with the session, so a resume runs its tools in the same place.
  save: (_context, value) => ({
    backend: Object.keys(value.options).length === 0 ? value.name : { name: value.name, ...value.options },
  }),
});

function daytonaFlags(context: SectionContext): { flags: string; options: Record<string, unknown> } | undefined {
  const dockerfile = context.value<string>('dockerfile');
  const snapshot = context.value<string>('snapshot');
  const keep = context.value<boolean>('keep_sandbox') === true;
  if (dockerfile === undefined && snapshot === undefined && !keep) return undefined;
  if (dockerfile !== undefined && snapshot !== undefined)
    throw new ConfigError({ message: 'Cannot use both --dockerfile and --snapshot: choose one.' });
  const flags = [dockerfile && '--dockerfile', snapshot && '--snapshot', keep && '--keep-sandbox']
    .filter(Boolean)
    .join(', ');
  return {
    flags,
    options: {
      ...(dockerfile === undefined ? {} : { dockerfile }),
      ...(snapshot === undefined ? {} : { snapshot }),
      ...(keep ? { keep_sandbox: true } : {}),
    },
  };
}

/**
 * The sections of an agent run, in the order they are built (a section may read those before
 * it: the tool packages and databases the working directory, the backend the profile).
 */
export const runSettingsSections = [
  modelSettingsSection,
  promptSettingsSection,
  workingDirSettingsSection,
  profileSettingsSection,
  backendSettingsSection,
  budgetsSettingsSection,
  compactionSettingsSection,
  approvalSettingsSection,
  toolPackagesSettingsSection,
  databaseSettingsSection,
  mcpSettingsSection,
] as const;
