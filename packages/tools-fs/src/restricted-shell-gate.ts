import {
  checkShellCommand,
  readView,
  resolveSandboxLimits,
  SandboxLimitRun,
  sandboxStatus,
  sandboxWrapper,
  type PermissionProfile,
  type ReadView,
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
  /**
   * The read view of a command line run in `cwd` (made afresh for each line, so a secret file
   * created since is masked too); default: the view of `cwd` under the profile.
   */
  view?: (cwd: string) => ReadView;
}

/**
 * Why a restricted line may not run here although the policy allowed it: its working directory,
 * or a file it reads on standard input (`< FILE`, opened by rho itself), is not in the view.
 */
export function viewRefusal(view: ReadView, cwd: string, plan: Plan): string | undefined {
  const where = view.decide(cwd);
  if (!where.allowed) return `the working directory ${cwd} is not visible: ${where.reason}`;
  for (const step of plan.steps) {
    for (const command of step.pipeline) {
      if (command.stdin === undefined || !('file' in command.stdin)) continue;
      const decision = view.decide(command.stdin.file);
      if (!decision.allowed) return `< ${command.stdin.file}: ${decision.reason}`;
      if (decision.sanitized !== undefined)
        return `< ${command.stdin.file}: a git config file may hold credentials; use \`git config --list\`, which shows it without them`;
    }
  }
  return undefined;
}

/**
 * The restricted shell: the shell policy parses and checks the command; an allowed command runs
 * as its hardened plan (allowlisted environment, safe options), each process inside a sandbox of
 * its own that mounts the read view only (rho's home hidden, secret files masked), where only a
 * network program (curl, wget) gets the network. When the profile requires
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
    const view = options.view?.(cwd) ?? readView({ profile, workingDir: cwd });
    const outside = viewRefusal(view, cwd, decision.plan);
    if (outside !== undefined) return { allowed: false, reason: outside };
    const wrapper = await sandboxWrapper(options.sandboxLookup);
    const status = sandboxStatus(effective, wrapper);
    if (status.refusal !== undefined) return { allowed: false, reason: `no sandbox: ${status.refusal}` };
    const hardened = hardenPlan(decision.plan);
    const plan: Plan = hardened.plan;
    const env = hardened.env(process.env);
    if (!status.active) return { allowed: true, plan, env };
    // One set of limits for the whole line: its processes share the process and memory limits.
    const limits = new SandboxLimitRun(resolveSandboxLimits(profile.limits), {
      ...(wrapper.program === undefined ? {} : { bwrap: wrapper.program }),
      ...(options.sandboxLookup?.searchPath === undefined ? {} : { searchPath: options.sandboxLookup.searchPath }),
    });
    return {
      allowed: true,
      plan,
      env,
      // The process sees the view only; a network program gets the network unless the profile says `network: off`.
      wrap: (planned, cwd) =>
        wrapper.wrap(planned.argv, {
          cwd,
          view,
          allowNetwork: profile.network !== 'off' && commandNeedsNetwork(planned),
          limits: limits.arguments,
        }),
      limits,
    };
  };
}
