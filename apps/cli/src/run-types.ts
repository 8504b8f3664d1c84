import type { Agent, ApprovalAvailability } from '@rho/agent';
import type { ExecutionBackend, Session, SessionStore } from '@rho/core';
import type { PermissionProfile } from '@rho/permissions';
import type { RunWorkspace } from './run-workspace.js';
import type { RunSettings } from './settings.js';

/**
 * Command-line options of a run: the task, the agent config or session to start from, and the
 * flags of the settings sections (`model`, `maxTurns`, ...: see `settingsOverrides`), as typed.
 */
export interface SetupArguments {
  prompt?: string | string[];
  p?: string;
  config?: string;
  resume?: string;
  autoApprove: boolean;
  /** Every other flag of a settings section, by yargs' name (`maxTurns`), as typed. */
  [flag: string]: unknown;
}

/** Everything a run needs, resolved from flags, files and the environment. */
export interface RunSetup {
  agent: Agent;
  session: Session;
  store: SessionStore;
  profile: PermissionProfile;
  /** The run's settings, resolved once (flags, environment, the agent config or resumed session, `$RHO_HOME/config.yaml`). */
  settings: RunSettings;
  model: string;
  /** The working directory of the tools. */
  workingDir: string;
  /** The task to run: `--prompt`, the positional prompt, or the prompt file's `initial_prompt`. */
  prompt: string | undefined;
  resumed: boolean;
  home: string;
  /** AGENTS.md and .rho/instructions.md files added to the system prompt, outermost first. */
  instructionFiles: string[];
  /** Tools not offered because nobody can approve their calls in this run (the caller says so). */
  withheld: readonly { name: string; reason: string }[];
  /** Where the file and shell tools run. */
  backend: ExecutionBackend;
  /** The run's isolated workspace or checkpoints (issue 37), when it has either. */
  workspace?: RunWorkspace;
  /** Releases what the tools hold (database connections) and what the backend holds (its container). */
  close(): Promise<void>;
}

/** How `prepareRun` reports and what it is told about the run. */
export interface SetupHooks {
  /** Told what the user should know before the run (printed by the caller). */
  onWarning?: (message: string) => void;
  /** Told what the run is about to do that is not a warning (where an isolated run works), printed by the caller. */
  onNotice?: (message: string) => void;
  /**
   * Whether approvals can be obtained in this run. Default: `auto` with `--auto-approve` (or
   * `auto_approve: true`), `ask` on an interactive terminal, otherwise `none`, where tools whose
   * every call needs approval are not offered.
   */
  approvals?: ApprovalAvailability;
}
