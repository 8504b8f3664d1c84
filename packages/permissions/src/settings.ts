/**
 * `@rho/permissions/settings`: the permission profile's settings section (light: it reads a
 * profile file when it is built, and loads no parser).
 */
import { defineSettingsSection, text } from '@rho/core/settings';
import { loadProfile } from './load-profile.js';
import type { PermissionProfile } from './permission-profile.js';

/** The permission profile of a run. */
export interface ProfileSettings {
  /**
   * The profile's name as saved with the session: the profile's own name, except `eval` (an
   * alias of `unrestricted`), kept as written for scripts that check the name.
   */
  readonly name: string;
  readonly profile: PermissionProfile;
}

/** The permission profile: a built-in name or a YAML path. */
export const profileSettingsSection = defineSettingsSection({
  name: 'profile',
  owner: '@rho/permissions',
  description: 'The permission profile: what the tools may do, and which calls need approval.',
  settings: [
    {
      key: 'profile',
      description: 'Permission profile: readonly, developer, unrestricted, developer-bash-only, eval, or a YAML path',
      ...text('a profile name or a YAML path'),
      env: ['RHO_PROFILE', 'RHO_AGENT_PROFILE'],
      flag: 'profile',
      emptyFlag: 'unset',
      default: 'readonly',
      configBeatsEnv: true,
      pinned: true,
      why: 'the agent config beats the environment (contributing/decisions.md: "for --config, the file still beats the environment"); a resumed session keeps its profile: widening it through the environment of a resumed session would be a security regression',
      save: 'resolved',
    },
  ],
  async build(context): Promise<ProfileSettings> {
    const name = context.value<string>('profile')!;
    const profile = await loadProfile(name, { rhoHome: context.home });
    // `eval` works as `unrestricted` but is saved as the user wrote it, for scripts that check the name.
    return { name: name === 'eval' ? 'eval' : profile.name, profile };
  },
  // As the agent config or a flag wrote it (a YAML path stays a path), else the profile's name.
  save(context, value) {
    const explicit = context
      .layers('profile')
      .filter((layer) => layer.kind === 'agent' || layer.kind === 'saved' || layer.kind === 'flag')
      .at(-1);
    return { profile: explicit === undefined ? value.name : explicit.value };
  },
});
