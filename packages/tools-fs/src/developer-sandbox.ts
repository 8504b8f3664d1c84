import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  resolveSandboxLimits,
  SandboxLimitRun,
  sandboxWrapper,
  type PermissionProfile,
  type ReadView,
  type SandboxMode,
} from '@rho/permissions';
import { sandboxModeOf, scrubEnvironment, type SandboxLookupOptions } from '@rho/permissions/internal';
import type { ShellConfinement } from './bash-tool.js';

/** Options of {@link developerSandbox}. */
export interface DeveloperSandboxOptions {
  /** The read view of a command run in `cwd` (made afresh for each command). */
  view: (cwd: string) => ReadView;
  /** Overrides the profile's `sandbox`. */
  sandbox?: SandboxMode;
  /** Where to look for bubblewrap (tests use a `PATH` without it). */
  sandboxLookup?: SandboxLookupOptions;
}

function expandHome(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return join(homedir(), path.slice(2));
  return path;
}

/**
 * The confinement of an unrestricted shell (`developer`, `developer-bash-only`) on this machine:
 * `bash -c` runs inside the bubblewrap sandbox, seeing the read view only (rho's home and the
 * user's home hidden, secret files masked), writing only the working directory and the profile's
 * write roots (`file_write.roots`), with the network only under `network: on`, and with the
 * restricted shell's allowlisted environment (no API keys). Where bubblewrap cannot run, every
 * command is refused with the reason, unless the profile (or the override) says `sandbox: off`:
 * then `undefined`, and commands run as rho does (the built-in `unrestricted` profile).
 */
export function developerSandbox(
  profile: PermissionProfile,
  options: DeveloperSandboxOptions,
): ShellConfinement | undefined {
  if ((options.sandbox ?? sandboxModeOf(profile)) === 'off') return undefined;
  return async (cwd) => {
    const wrapper = await sandboxWrapper(options.sandboxLookup);
    if (!wrapper.available)
      return {
        allowed: false,
        reason: `no sandbox: profile ${profile.name} runs its shell inside the sandbox, and ${wrapper.unavailableReason ?? 'none is available'}`,
      };
    const view = options.view(cwd);
    const where = view.decide(cwd);
    if (!where.allowed)
      return { allowed: false, reason: `the working directory ${cwd} is not visible: ${where.reason}` };
    const writable = profile.writeRoots.map((root) => resolve(view.workingDir, expandHome(root)));
    // The same limits as the restricted shell's lines (processes, memory, CPU time, /tmp).
    const limits = new SandboxLimitRun(resolveSandboxLimits(profile.limits), {
      ...(wrapper.program === undefined ? {} : { bwrap: wrapper.program }),
      ...(options.sandboxLookup?.searchPath === undefined ? {} : { searchPath: options.sandboxLookup.searchPath }),
    });
    return {
      allowed: true,
      env: scrubEnvironment(process.env),
      wrap: (argv) =>
        wrapper.wrap(argv, {
          cwd,
          view,
          writableCwd: true,
          writable,
          allowNetwork: profile.network === 'on',
          limits: limits.arguments,
        }),
      limits,
    };
  };
}
