import type { AnyTool, ExecutionBackend } from '@rho/core';
import { rhoHome } from '@rho/core';
import {
  checkWritePath,
  openWriteTarget,
  readView,
  type PermissionProfile,
  type ReadView,
  type SandboxMode,
} from '@rho/permissions';
import { sandboxModeOf, sandboxOffWarning } from '@rho/permissions/internal';
import { createBashTool } from './bash-tool.js';
import { developerSandbox } from './developer-sandbox.js';
import { createEditTool } from './edit-tool.js';
import { createGlobTool } from './glob-tool.js';
import { createGrepTool } from './grep-tool.js';
import { createListTool } from './list-tool.js';
import { createReadExcelTool } from './read-excel-tool.js';
import { createReadTool } from './read-tool.js';
import { restrictedShellGate } from './restricted-shell-gate.js';
import type { WritePathCheck } from './write-path-check.js';
import { backendFiles } from './internal/backend-files.js';
import { createWriteTool } from './write-tool.js';

/** Options of {@link fsTools}. */
export interface FsToolsOptions {
  /** The permission profile that decides which tools exist and what they may do. */
  profile: PermissionProfile;
  /**
   * The session's working directory: where writes are allowed (with the profile's `writeRoots`)
   * and where commands run unless the profile sets `shellWorkingDir`. Defaults to the working
   * directory of each call's context.
   */
  workingDir?: string;
  /** Backend to run on; defaults to the session's (`context.backend`). */
  backend?: ExecutionBackend;
  /**
   * Overrides the profile's `sandbox`: `required` (restricted commands run inside the bubblewrap
   * sandbox, and are refused where there is none) or `off` (they run without one).
   */
  sandbox?: SandboxMode;
  /**
   * Told once, when the tools are made, about a restricted shell running without the sandbox
   * (`sandbox: off`): the CLI prints it on every run. Library code never prints.
   */
  onWarning?: (message: string) => void;
  /** rho's home, hidden from every tool (default core's `rhoHome()`). */
  rhoHome?: string;
  /** The sessions directory, hidden from every tool (default `$RHO_HOME/sessions`). */
  sessionDir?: string;
}

function confineOption<T>(confine: T | undefined): { confine?: T } {
  return confine === undefined ? {} : { confine };
}

/**
 * The write path check of `write` and `edit`: the one write decision of `@rho/permissions` (the
 * one `rho policy check --write` shows), and the write made relative to the parent directory it
 * decided, opened without following links (`openWriteTarget`).
 */
export function policyWritePathCheck(
  profile: PermissionProfile,
  workingDir?: string,
  hidden?: readonly string[],
): WritePathCheck {
  return async (path, contextWorkingDir, writer = 'write', backend) => {
    // A backend that is not local is decided on its own file system, and written there.
    const files = backendFiles(backend);
    const decision = await checkWritePath(path, {
      profile,
      workingDir: workingDir ?? contextWorkingDir,
      writer,
      ...(hidden === undefined ? {} : { hidden }),
      ...(files === undefined ? {} : { files, home: await backend!.homeDir() }),
    });
    if (!decision.allowed) return { allowed: false, reason: decision.reason, rule: decision.rule };
    const { realPath } = decision;
    if (files !== undefined) return { allowed: true, realPath };
    return { allowed: true, realPath, open: ({ createParents }) => openWriteTarget(realPath, { createParents }) };
  };
}

/**
 * The file and shell tools a profile allows, wired to its policies (reference §3.7):
 * `read`, `grep`, `glob`, `list`, `read_excel` unless the profile is bash-only; `bash` always
 * (restricted or unrestricted as the profile says, with its timeout and working directory);
 * `write` when file writes are `create-only` or `full`, and `edit` only for `full`.
 * The tools only declare their effects (annotations); which calls need approval is the agent's
 * decision (`approvalPolicy(profile)` of `@rho/permissions`, wired by `@rho/agent`).
 */
export function fsTools(options: FsToolsOptions): AnyTool[] {
  const { profile, backend } = options;
  const backendOption = backend === undefined ? {} : { backend };
  // One view for the file tools and the shell: the session's working directory (else the call's),
  // the system directories and the profile's read paths; rho's home and the sessions hidden. The
  // shell's working directory of the profile (`shell_working_dir`) is the shell's own working
  // directory, and readable by the file tools.
  const makeView = (cwd: string, shell = false): ReadView =>
    readView({
      profile:
        profile.shellWorkingDir === undefined || shell
          ? profile
          : { ...profile, readPaths: [...(profile.readPaths ?? []), profile.shellWorkingDir] },
      workingDir: (shell ? profile.shellWorkingDir : undefined) ?? options.workingDir ?? cwd,
      ...(options.rhoHome === undefined ? {} : { rhoHome: options.rhoHome }),
      ...(options.sessionDir === undefined ? {} : { sessionDir: options.sessionDir }),
    });
  const shellView = (cwd: string): ReadView => makeView(cwd, true);
  const views = new Map<string, ReadView>();
  const fileView = (cwd: string): ReadView => {
    let view = views.get(cwd);
    if (view === undefined) views.set(cwd, (view = makeView(cwd)));
    return view;
  };
  const tools: AnyTool[] = [];
  if (!profile.bashOnly) {
    const readers = { ...backendOption, view: fileView };
    tools.push(
      createReadTool(readers),
      createGrepTool(readers),
      createGlobTool(readers),
      createListTool(readers),
      createReadExcelTool(readers),
    );
  }
  const restricted = profile.shell === 'restricted';
  if (restricted && backend?.isolation === undefined && (options.sandbox ?? sandboxModeOf(profile)) === 'off') {
    options.onWarning?.(sandboxOffWarning(profile.name));
  }
  const workingDir = profile.shellWorkingDir ?? options.workingDir;
  tools.push(
    createBashTool({
      ...backendOption,
      mode: profile.shell,
      timeoutSeconds: profile.shellTimeoutSeconds,
      ...(workingDir === undefined ? {} : { workingDir }),
      ...(restricted
        ? {
            gate: restrictedShellGate(profile, {
              ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox }),
              // A backend that is a container already contains every command.
              ...(backend?.isolation === undefined ? {} : { contained: backend.isolation }),
              view: shellView,
            }),
          }
        : confineOption(
            developerSandbox(profile, {
              view: shellView,
              ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox }),
            }),
          )),
    }),
  );
  if (!profile.bashOnly && profile.fileWrite !== 'off') {
    // rho's home and the sessions directory, hidden from the file tools, are not written either.
    const hidden = [options.rhoHome ?? rhoHome(), ...(options.sessionDir === undefined ? [] : [options.sessionDir])];
    const checkPath = policyWritePathCheck(profile, options.workingDir, hidden);
    tools.push(createWriteTool({ ...backendOption, mode: profile.fileWrite, checkPath }));
    if (profile.fileWrite === 'full') {
      tools.push(createEditTool({ ...backendOption, checkPath }));
    }
  }
  return tools;
}
