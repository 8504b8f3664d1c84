import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExecutionBackend, Session, ToolHooks } from '@rho/core';
import { ConfigError } from '@rho/core';
import { updateSessionMeta } from '@rho/core/internal';
import type { CheckpointStore, WorkspaceRecord } from '@rho/workspace';
import type { WorkspaceSettings } from './workspace-settings.js';

/**
 * Where a run's agent works and what is kept of its changes (issue 37): an isolated workspace
 * (its record), or the working directory itself with checkpoints (or neither). Made by
 * {@link openRunWorkspace}; @rho/workspace is loaded only for a run that uses one of them.
 */
export interface RunWorkspace {
  /** The agent's working directory: the workspace's, or the one the run was given. */
  readonly workingDir: string;
  /** The session's directory. */
  readonly sessionDir: string;
  /** The isolated workspace of the session. */
  readonly record?: WorkspaceRecord;
  /** The checkpoints of an in-place run. */
  readonly checkpoints?: CheckpointStore;
  /** The session's tool hooks with the checkpoint of the last turn taken before a new turn's first tool call. */
  toolHooks(hooks: ToolHooks | undefined): ToolHooks | undefined;
  /** Counts the session's turns (its model answers). */
  attach(session: Session): void;
  /**
   * After a run: the checkpoint of its last turn; for an isolated run, the workspace's diff stats
   * in meta.json (`changes`). Returns the line to show after the answer, if any.
   */
  afterRun(sessionId: string): Promise<string | undefined>;
  /**
   * The backend whose sandbox the agent works in, for a remote workspace: each `afterRun` first
   * brings the sandbox's changes back into the workspace (`syncWorkingDir`).
   */
  bindRemote(backend: ExecutionBackend): void;
  /** Checkpoints in flight are done (before an undo). */
  settled(): Promise<void>;
  /** Removes a new session's workspace (its set-up failed, or it is not kept). */
  drop(): Promise<void>;
}

/** What {@link openRunWorkspace} needs. */
export interface RunWorkspaceInput {
  settings: WorkspaceSettings;
  /** The working directory the settings resolved (the user's). */
  workingDir: string;
  home: string;
  sessionId: string;
  sessionDir: string;
  /** A resumed session (its workspace exists), or a new one (its workspace is made). */
  resumed: boolean;
  /** The agent works on another machine (the daytona backend): see `CreateWorkspaceOptions.remote`. */
  remote?: { backend: string; empty: boolean };
  signal?: AbortSignal;
  /** Told what the user should know (the library's notes, the workspace's line, a checkpoint that failed). */
  onWarning?: (message: string) => void;
  /** Told the line that says where the agent works (on stderr). */
  onNotice?: (message: string) => void;
}

/** Opens the workspace of a run, or undefined for a run that keeps nothing (in place, no checkpoints). */
export async function openRunWorkspace(input: RunWorkspaceInput): Promise<RunWorkspace | undefined> {
  const { settings } = input;
  if (settings.mode === 'in-place' && !settings.checkpoints) return undefined;
  const library = await import('@rho/workspace');
  let record: WorkspaceRecord | undefined;
  let made = false;
  if (settings.mode === 'isolated') {
    if (input.resumed) {
      record = library.readWorkspace(input.sessionDir);
      if (record === undefined)
        throw new ConfigError({
          message: `Session ${input.sessionId} was made with an isolated workspace, but its record (workspace.json) is gone: it cannot run again. Start a new session.`,
        });
      if (record.state !== 'active')
        throw new ConfigError({
          message: `Session ${input.sessionId}'s workspace was ${record.state}${record.decidedAt === undefined ? '' : ` at ${record.decidedAt.replace('T', ' ').slice(0, 19)} UTC`}: it cannot run again. Start a new session${record.state === 'applied' ? ' (the changes are in ' + record.original + ')' : ''}.`,
        });
    } else {
      // Workspaces left by sessions that are gone go first (cheap: one listing; live ones stay).
      await (await import('./commands/workspace-actions.js')).sweepQuietly(input.home);
      const created = await library.createWorkspace({
        sessionId: input.sessionId,
        sessionDir: input.sessionDir,
        workingDir: input.workingDir,
        home: input.home,
        ...(input.remote === undefined ? {} : { remote: input.remote }),
        ...(input.signal === undefined ? {} : { signal: input.signal }),
      });
      record = created.record;
      made = true;
      for (const note of created.notes) (input.onNotice ?? input.onWarning)?.(note);
    }
    const decide = `rho diff ${input.sessionId} / rho apply ${input.sessionId} / rho discard ${input.sessionId} when it ends`;
    input.onNotice?.(
      record.remote === undefined
        ? `Working in an isolated workspace ${record.path}${record.branch === undefined ? ' (a copy)' : ` (branch ${record.branch})`}; ${decide}.`
        : `Working in a ${record.remote.backend} sandbox; its changes come back to ${record.path} after each run; ${decide}.`,
    );
  }
  const checkpoints =
    settings.mode === 'in-place'
      ? await library.CheckpointStore.open({ sessionDir: input.sessionDir, workingDir: input.workingDir })
      : undefined;
  // Turns are the session's model answers, counted from its trace when it is resumed.
  let turns = input.resumed ? modelTurns(input.sessionDir) : 0;
  let checkpointed = turns;
  let pending: Promise<void> = Promise.resolve();
  let failed = false;
  const take = (turn: number): Promise<void> => {
    if (checkpoints === undefined || failed || turn <= checkpointed) return pending;
    checkpointed = turn;
    pending = pending.then(async () => {
      try {
        await checkpoints.take(turn);
      } catch (error) {
        // The run goes on without them: say so once, with why.
        failed = true;
        input.onWarning?.(
          `no more checkpoints are taken for this session (rho undo goes back no further than the last one): ${(error as Error).message}`,
        );
      }
    });
    return pending;
  };
  // Before the first turn: checkpoint 0 of a new session (a resumed one has its own, else one now).
  if (checkpoints !== undefined) {
    const existing = await checkpoints.list();
    if (existing.length === 0) {
      checkpointed = -1;
      await take(turns);
    }
  }
  let sync: ((root: string) => Promise<SyncedBack>) | undefined;
  const workspace: RunWorkspace = {
    workingDir: record?.path ?? input.workingDir,
    sessionDir: input.sessionDir,
    ...(record === undefined ? {} : { record }),
    ...(checkpoints === undefined ? {} : { checkpoints }),
    toolHooks(hooks) {
      if (checkpoints === undefined) return hooks;
      return {
        // The files as the last turn left them are checkpointed before this turn's first tool runs.
        async beforeToolCall(call, signal) {
          await take(turns - 1);
          return hooks?.beforeToolCall?.call(hooks, call, signal);
        },
        ...(hooks?.afterToolCall === undefined
          ? {}
          : { afterToolCall: (call, result, signal) => hooks.afterToolCall!.call(hooks, call, result, signal) }),
      };
    },
    attach(session) {
      session.state.addObserver((record_) => {
        if (record_.type === 'llm_end' && record_.purpose === undefined) turns += 1;
      });
    },
    async afterRun(sessionId) {
      await take(turns);
      if (record === undefined) {
        // An in-place run's totals since its first checkpoint, for rho ps and the dashboard's list
        // (as an isolated run's): what `rho diff` of it shows.
        if (checkpoints !== undefined && !failed) {
          const stats = await checkpoints
            .diff()
            .then((diff) => diff.stats)
            .catch(() => undefined);
          if (stats !== undefined) updateSessionMeta(input.sessionDir, { changes: stats });
        }
        return undefined;
      }
      let back = '';
      if (sync !== undefined) {
        try {
          const summary = await sync(record.root);
          if (summary.written + summary.removed > 0)
            back = ` (brought back from the sandbox: ${summary.written} written, ${summary.removed} removed${summary.skipped.length === 0 ? '' : `; ${summary.skipped.length} special files left there`})`;
        } catch (error) {
          // The workspace keeps what came back before; the sandbox still has the rest.
          input.onWarning?.(`the sandbox's changes of this run were not brought back: ${(error as Error).message}`);
        }
      }
      const diff = await library.diffWorkspace(record);
      updateSessionMeta(input.sessionDir, { changes: diff.stats });
      return diff.stats.files === 0
        ? `No files changed in the workspace ${record.path}${back}; rho discard ${sessionId} removes it.`
        : `${library.formatChangeStats(diff.stats)}${back}: rho diff ${sessionId}`;
    },
    bindRemote(backend) {
      const syncing = backend as ExecutionBackend & { syncWorkingDir?: (root: string) => Promise<SyncedBack> };
      if (record?.remote !== undefined && typeof syncing.syncWorkingDir === 'function')
        sync = (root) => syncing.syncWorkingDir!(root);
    },
    settled: () => pending,
    async drop() {
      if (record === undefined || !made) return;
      await library.discardWorkspace(record, input.sessionDir);
    },
  };
  return workspace;
}

/** What a remote backend's sync said (the shape of @rho/backend-daytona's `SyncSummary`, which is loaded only with it). */
interface SyncedBack {
  written: number;
  removed: number;
  skipped: string[];
}

/** The model answers of a session's trace (`llm_end` records of its conversation). */
function modelTurns(sessionDir: string): number {
  let text: string;
  try {
    text = readFileSync(join(sessionDir, 'trace.jsonl'), 'utf8');
  } catch {
    return 0;
  }
  let count = 0;
  for (const line of text.split('\n')) {
    if (!line.includes('"llm_end"')) continue;
    try {
      const record = JSON.parse(line) as { type?: unknown; purpose?: unknown };
      if (record.type === 'llm_end' && record.purpose === undefined) count += 1;
    } catch {
      // A torn line is no turn.
    }
  }
  return count;
}
