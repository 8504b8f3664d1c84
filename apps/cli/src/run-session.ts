import { basename } from 'node:path';
import type { Agent } from '@rho/agent';
import type { Session, SessionApprovals, SessionOptions, SessionStore, ToolHooks } from '@rho/core';
import type { SessionLock } from '@rho/core/internal';
import { FileControlChannel, readSessionMeta } from '@rho/core/internal';
import type { startFleetLink } from './fleet/run-fleet.js';
import { fileChannelFor } from './fleet/run-fleet.js';
import { LeaseGuardChannel } from './lease-guard.js';

/** What {@link openRunSession} opens a run's session with. */
export interface RunSessionInput {
  agent: Agent;
  store: SessionStore;
  /** The session's lock, taken before its tools started. */
  lock: SessionLock;
  /** The fleet link, when the run is registered in a fleet. */
  fleet: Awaited<ReturnType<typeof startFleetLink>> | undefined;
  /** The worker's lease of a queued task's attempt. */
  lease: { readonly file: string; readonly seconds: number } | undefined;
  /** How the session is listed (in the fleet). */
  listed: { model: string; profile: string; cwd: string };
  /** A resumed session's directory, or the new session made before its tools started. */
  resumedDirectory?: string;
  created?: { id: string; directory: string };
  /** The task (a new session's first prompt). */
  prompt?: string;
  /** The `pre_tool` and `post_tool` hooks of the `hooks` setting. */
  toolHooks?: ToolHooks;
  onWarning?: (message: string) => void;
  /** What happens to a call that needs approval when nobody at this terminal answers it. */
  approvals?: SessionApprovals;
}

/**
 * The run's session, new or resumed, with its control channel: the fleet's (a composite of the
 * fleet and the session's files), else the session's files; a queued task's session also answers
 * to the worker's lease, stopping itself when the lease lapses.
 */
export async function openRunSession(input: RunSessionInput): Promise<Session> {
  const { agent, store, lock, fleet, lease, listed } = input;
  const hooked = input.toolHooks === undefined ? {} : { toolHooks: input.toolHooks };
  // A queued task's session also answers to the worker's lease: it stops itself when the lease
  // lapses (the worker is frozen or lost it), before another attempt can start elsewhere.
  const guarded = (options: SessionOptions, directory: string): SessionOptions =>
    lease === undefined
      ? options
      : {
          ...options,
          control: new LeaseGuardChannel(options.control ?? new FileControlChannel(directory), lease, (message) =>
            input.onWarning?.(message),
          ),
        };
  if (input.resumedDirectory !== undefined) {
    const resumedDirectory = input.resumedDirectory;
    const meta = readSessionMeta(resumedDirectory);
    const id = meta?.id ?? basename(resumedDirectory);
    const state = store.loadState(resumedDirectory);
    return agent.createSession({
      id,
      directory: resumedDirectory,
      state,
      lock,
      ...(input.approvals === undefined ? {} : { approvals: input.approvals }),
      ...hooked,
      ...guarded(
        fleet?.sessionOptions(
          {
            id,
            ...listed,
            ...(typeof meta?.parent_id === 'string' ? { parentId: meta.parent_id } : {}),
            ...(meta?.started_at === undefined ? {} : { startedAt: meta.started_at }),
            ...(meta?.first_prompt === undefined ? {} : { firstPrompt: meta.first_prompt }),
          },
          resumedDirectory,
        ) ?? (await fileChannelFor(resumedDirectory, state.directiveCursor)),
        resumedDirectory,
      ),
    });
  }
  const { id, directory } = input.created!;
  const { prompt } = input;
  return agent.createSession({
    id,
    directory,
    lock,
    ...(input.approvals === undefined ? {} : { approvals: input.approvals }),
    ...hooked,
    ...guarded(
      fleet?.sessionOptions({ id, ...listed, ...(prompt === undefined ? {} : { firstPrompt: prompt }) }, directory) ??
        {},
      directory,
    ),
  });
}
