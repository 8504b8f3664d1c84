import {
  checkShellCommand,
  sandboxStatus,
  sandboxWrapper,
  type PermissionProfile,
  type SandboxMode,
} from '@rho/permissions';
import { commandNeedsNetwork, hardenPlan, type SandboxLookupOptions } from '@rho/permissions/internal';
import type { ShellGate } from './bash-tool.js';
import type { Plan } from './internal/plan-runner.js';
import { backendFiles } from './internal/backend-files.js';

/** Options of {@link restrictedShellGate}. */
export interface RestrictedShellGateOptions {
  /** Overrides the profile's `sandbox` (`required` unless the profile says `off`). */
  sandbox?: SandboxMode;
  /** Where to look for bubblewrap (tests use a `PATH` without it). */
  sandboxLookup?: SandboxLookupOptions;
  /**
   * The commands run on a backend that is itself a container (`backend.isolation`, the sandbox
   * backend): they run in it as they are, without a bubblewrap sandbox of their own per command
   * (which cannot be nested there). The policy check and the hardened plan are the same; the
   * allowlisted variables come from the container's environment (`isolation.environment`), not rho's.
   */
  contained?: { environment: Readonly<Record<string, string>> };
}

/**
 * The restricted shell: the shell policy parses and checks the command; an allowed command runs
 * as its hardened plan (allowlisted environment, safe options), each process inside a sandbox of
 * its own, where only a network program (curl, wget) gets the network. When the profile requires
 * the sandbox (the default) and none is available, every command is refused with what to install;
 * `sandbox: off` runs them without one.
 */
export function restrictedShellGate(profile: PermissionProfile, options: RestrictedShellGateOptions = {}): ShellGate {
  const effective: PermissionProfile =
    options.sandbox === undefined ? profile : { ...profile, sandbox: options.sandbox };
  return async (command, cwd, backend) => {
    // The working directory lets the policy expand file name patterns (src/*.ts) and read `< FILE`
    // inside it, on the file system of the backend the command runs on.
    const files = backendFiles(backend);
    const decision = await checkShellCommand(command, { profile, cwd, ...(files === undefined ? {} : { files }) });
    if (!decision.allowed) return { allowed: false, reason: decision.reason };
    if (options.contained !== undefined) {
      const hardened = hardenPlan(decision.plan);
      return { allowed: true, plan: hardened.plan, env: hardened.env({ ...options.contained.environment }) };
    }
    const wrapper = await sandboxWrapper(options.sandboxLookup);
    const status = sandboxStatus(effective, wrapper);
    if (status.refusal !== undefined) return { allowed: false, reason: `no sandbox: ${status.refusal}` };
    const hardened = hardenPlan(decision.plan);
    const plan: Plan = hardened.plan;
    const env = hardened.env(process.env);
    if (!status.active) return { allowed: true, plan, env };
    return {
      allowed: true,
      plan,
      env,
      wrap: (planned, cwd) => wrapper.wrap(planned.argv, { cwd, allowNetwork: commandNeedsNetwork(planned) }),
    };
  };
}
