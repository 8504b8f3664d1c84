import type { BackendSettings } from '@rho/agent/settings';
import type { PermissionProfile } from '@rho/permissions';
import type { DoctorContext } from './doctor-settings.js';
import { result, type CheckResult } from './report.js';

/**
 * Whether bubblewrap is on PATH and can make a sandbox here (user namespaces), found and probed
 * by `sandboxWrapper` of @rho/permissions, the lookup every sandboxed tool uses (it runs `true`
 * in a sandbox built as a command's would be). Whether the configuration needs it is the run's
 * own decision: the `sandbox` backend needs it; on the local backend the profile's shell does
 * unless the profile says `sandbox: off` (`sandboxStatus`, which refuses every bash command
 * without it); another backend (daytona) runs the tools elsewhere. Missing where needed is a
 * failure; missing where the unrestricted profile's default would have used it, a warning;
 * missing and not needed, skipped.
 */
export async function bubblewrapCheck(context: DoctorContext): Promise<CheckResult> {
  const permissions = await import('@rho/permissions');
  const { profile, backend } = await runPlace(context);
  // The lookup a run makes (cached per PATH): the backend's default above probed it already.
  const wrapper = await permissions.sandboxWrapper();
  const defaulted = backend.origin.startsWith('the default of profile');
  let need: string | undefined;
  let notNeeded: string | undefined;
  if (backend.name === 'sandbox') {
    if (defaulted) notNeeded = `profile ${profile.name} runs its tools in a sandbox container where bubblewrap works`;
    else need = `the sandbox backend (${backend.origin}) runs the tools in a bubblewrap container`;
  } else if (backend.name !== 'local') {
    notNeeded = `the ${backend.name} backend (${backend.origin}) runs the tools elsewhere`;
  } else if (permissions.sandboxStatus(profile, wrapper).warning !== undefined) {
    notNeeded = `profile ${profile.name} sets sandbox: off`;
  } else {
    need =
      profile.shell === 'restricted'
        ? `profile ${profile.name} runs every shell command in it (the restricted shell)`
        : `profile ${profile.name} runs its shell in it`;
  }
  if (wrapper.available)
    return result(
      'bubblewrap',
      'ok',
      `${wrapper.description} makes sandboxes here (user namespaces work): ${need ?? notNeeded}`,
    );
  const cause = wrapper.unavailableCause ?? {
    problem: wrapper.unavailableReason ?? 'no sandbox is available',
    fix: 'install bubblewrap',
  };
  if (need !== undefined)
    return result(
      'bubblewrap',
      'fail',
      `${cause.problem}, and ${need}: ${backend.name === 'sandbox' ? 'the run stops before it starts' : 'every bash command is refused'}`,
      `${cause.fix}; or run with --backend local, or a profile with sandbox: off (the validators are then the only protection)`,
    );
  if (defaulted && (profile.name === 'unrestricted' || profile.name === 'eval'))
    return result(
      'bubblewrap',
      'warn',
      `${cause.problem}: profile ${profile.name}'s tools run on this machine, not in a sandbox container`,
      cause.fix,
    );
  return result('bubblewrap', 'skip', `not needed: ${notNeeded ?? 'nothing runs in it'} (${cause.problem})`);
}

/** The profile and the backend of the run, as a run resolves them (the backend's default probes bubblewrap). */
export async function runPlace(
  context: DoctorContext,
): Promise<{ profile: PermissionProfile; backend: BackendSettings }> {
  const [{ workingDirSettingsSection }, { profileSettingsSection }, { backendSettingsSection }] = await Promise.all([
    import('@rho/core/settings'),
    import('@rho/permissions/settings'),
    import('@rho/agent/settings'),
  ]);
  const { settings } = await context.settings([
    workingDirSettingsSection,
    profileSettingsSection,
    backendSettingsSection,
  ]);
  return { profile: settings.profile.profile, backend: settings.backend };
}
