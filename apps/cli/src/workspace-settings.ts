import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { backendAccess } from '@rho/agent/settings';
import type { BackendSettings } from '@rho/agent/settings';
import { ConfigError } from '@rho/core';
import { choice, defineSettingsSection, flagOrSwitch } from '@rho/core/settings';
import type { ProfileSettings } from '@rho/permissions/settings';

/** Where a run's files are kept, and whether an in-place run keeps checkpoints to undo. */
export interface WorkspaceSettings {
  /**
   * `isolated`: the agent works in a workspace of its own (`$RHO_HOME/workspaces/<session id>`, a
   * git worktree or a copy) and `rho apply` brings its changes back; `in-place`: in the working
   * directory itself. A resumed session keeps the mode it was made with.
   */
  readonly mode: 'isolated' | 'in-place';
  /** An in-place run takes a checkpoint of the working directory before its first turn and after every turn that wrote files (`rho undo`). */
  readonly checkpoints: boolean;
}

/** The file a session's isolated workspace is recorded in (`@rho/workspace` writes it). */
export const WORKSPACE_RECORD_FILE = 'workspace.json';

const MODES = ['isolated', 'in-place'] as const;

/** The backend whose agent works on another machine: its isolated workspace is a local copy its changes come back to. */
export const REMOTE_BACKEND = 'daytona';

/** The workspace of a run (issue 37): isolated or in place, and checkpoints. */
export const workspaceSettingsSection = defineSettingsSection({
  name: 'workspace',
  owner: '@rho/cli',
  description:
    'Where the agent changes files: in the working directory (in-place, with checkpoints rho undo goes back to), or in an isolated workspace of its own ($RHO_HOME/workspaces/<session id>: a git worktree on a branch rho/<session id>, or a copy) that rho diff shows and rho apply or rho discard end.',
  mappings: [{ key: 'workspace', unknownKeys: 'error' }],
  aliases: { isolated: 'workspace', checkpoints: 'workspace' },
  settings: [
    {
      key: 'workspace.mode',
      description:
        'isolated (a workspace of its own, reviewed with rho diff, kept with rho apply) or in-place (the working directory itself)',
      ...choice(MODES),
      env: ['RHO_WORKSPACE'],
      flag: 'workspace',
      emptyFlag: 'error',
      default: 'in-place',
      defaultText:
        'in-place; isolated with the daytona backend under a profile that may write (its changes come back for review); a read-only profile makes no workspace',
      pinned: true,
      why: 'a resumed session works where it was made to (its workspace, or the working directory); --workspace on a resume must name the same mode',
    },
    {
      key: 'workspace.checkpoints',
      description:
        'In-place runs: take a checkpoint before the first turn and after every turn that wrote files, for rho undo (default: on under a profile that may write: developer, unrestricted)',
      ...flagOrSwitch(),
      flag: 'checkpoints',
      defaultText: 'on for in-place runs under a profile that may write',
    },
  ],
  build(context): WorkspaceSettings {
    const winner = context.winner('workspace.mode');
    const writes = backendAccess(context.section<ProfileSettings>('profile').profile).workingDir === 'read-write';
    // A Daytona sandbox's changes come back for review unless in-place is asked for (then they stay there).
    const remote = context.section<BackendSettings>('backend').name === REMOTE_BACKEND;
    const chosenMode = winner === undefined || winner.kind === 'default' ? undefined : winner.value;
    let mode: WorkspaceSettings['mode'] =
      chosenMode === undefined
        ? remote && writes
          ? 'isolated'
          : (context.value<WorkspaceSettings['mode']>('workspace.mode') ?? 'in-place')
        : (chosenMode as WorkspaceSettings['mode']);
    if (chosenMode === undefined && mode === 'isolated')
      context.derived('workspace.mode', mode, 'default (the daytona backend, and a profile that may write)');
    if (!context.resumed && mode === 'isolated' && !writes) {
      // Nothing to review: no workspace is made for a profile that changes no files.
      const profileName = context.section<ProfileSettings>('profile').profile.name;
      if (chosenMode === 'isolated')
        context.warn(
          `--workspace isolated: profile ${profileName} changes no files, so no workspace is made; the run reads the working directory itself.`,
        );
      mode = 'in-place';
      context.derived(
        'workspace.mode',
        mode,
        `${chosenMode === 'isolated' ? `${String(winner?.origin)} asked for isolated, but ` : ''}profile ${profileName} changes no files`,
        { override: true },
      );
    }
    if (context.resumed && context.agentDirectory !== undefined) {
      // What the session was made with is what its directory holds: a workspace record or none.
      const made = existsSync(join(context.agentDirectory, WORKSPACE_RECORD_FILE)) ? 'isolated' : 'in-place';
      if (winner?.kind === 'flag' && winner.value !== made)
        throw new ConfigError({
          message: `--workspace ${String(winner.value)} cannot change a resumed session: it was made ${made === 'isolated' ? 'with an isolated workspace' : 'in place'} and resumes so. Drop --workspace, or start a new session with it.`,
          field: 'workspace.mode',
        });
      mode = made;
    }
    const chosen = context.winner('workspace.checkpoints');
    if (mode === 'isolated' && chosen?.kind === 'flag' && chosen.value === true)
      context.warn(
        '--checkpoints applies to in-place runs: an isolated run is reviewed with rho diff and dropped with rho discard; no checkpoints are taken.',
      );
    const checkpoints = mode === 'in-place' && ((chosen?.value as boolean | undefined) ?? writes);
    context.derived(
      'workspace.checkpoints',
      checkpoints,
      mode === 'isolated' ? 'off for an isolated run' : `default (profile ${writes ? 'may write' : 'does not write'})`,
    );
    return { mode, checkpoints };
  },
  // A new session keeps what was chosen: its mode when isolated, its checkpoints when set.
  save(context, value) {
    const chosen = context.winner('workspace.checkpoints');
    const workspace: Record<string, unknown> = {
      ...(value.mode === 'isolated' ? { mode: 'isolated' } : {}),
      ...(chosen === undefined || chosen.kind === 'default' ? {} : { checkpoints: value.checkpoints }),
    };
    return Object.keys(workspace).length === 0 ? {} : { workspace };
  },
});
