/**
 * The workspaces of queued tasks (issue 37) on a worker: which mode a task runs in (isolated by
 * default for a profile that may write files), what its result says of the workspace, and the
 * sweep that removes the workspaces nobody will review (those of attempts that did not finish:
 * the task's retry works in its own). Nothing here prints.
 */
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { readSessionMeta, sessionLockOwner } from '@rho/core/internal';
import { loadProfile } from '@rho/permissions';
import type { TaskAllowlist } from './task-allowlist.js';
import type { TaskSpec } from './task-spec.js';
import type { TaskWorkspace } from './task-types.js';

/**
 * Whether a task under this profile may change files: its file tools write (`file_write` is not
 * off) or its shell is unrestricted, the rule that gives a session's backend a read-write working
 * directory. A custom profile (a name in the worker's `$RHO_HOME/profiles/`, or a YAML path there)
 * is loaded on the worker, where the task runs; one that cannot be loaded counts as writing (the
 * session fails on it anyway, and isolated is the side that changes nothing of the user's).
 */
export async function profileMayWrite(profile: string, home: string, cwd: string): Promise<boolean> {
  const looksLikePath = profile.includes('/') || /\.ya?ml$/i.test(profile);
  const named = looksLikePath && !profile.startsWith('~') && !isAbsolute(profile) ? resolve(cwd, profile) : profile;
  try {
    const loaded = await loadProfile(named, { rhoHome: home });
    return loaded.shell === 'unrestricted' || loaded.fileWrite !== 'off';
  } catch {
    return true;
  }
}

/** The mode a task runs in: its own `workspace`, else isolated when its profile may write, in place when not. */
export function taskWorkspaceMode(spec: TaskSpec, writes: boolean): 'isolated' | 'in-place' {
  return spec.workspace ?? (writes ? 'isolated' : 'in-place');
}

/**
 * Why this worker refuses the task's workspace, or undefined: `in-place` under a profile that may
 * write changes the worker's checkout unreviewed, which it allows only with `--allow-in-place`.
 */
export function workspaceRefusal(spec: TaskSpec, writes: boolean, allow: TaskAllowlist): string | undefined {
  if (spec.workspace !== 'in-place' || !writes || allow.inPlace) return undefined;
  return `workspace in-place is not allowed on this worker for profile '${spec.profile ?? allow.profiles[0]!}', which may write files (its changes would land in ${spec.working_dir ?? allow.cwd} unreviewed; start the worker with --allow-in-place to allow it, or leave workspace out: the task then runs isolated and is reviewed with rho diff)`;
}

/**
 * What a task's result says of its session's workspace: an isolated one's record
 * (`<home>/sessions/<id>/workspace.json`) and its changes (meta.json's `changes`, written at the
 * end of the run; else the diff now). Undefined when the session made none (it failed first).
 */
export async function taskWorkspaceOf(
  home: string,
  sessionId: string,
  mode: 'isolated' | 'in-place',
): Promise<TaskWorkspace | undefined> {
  if (mode === 'in-place') return { mode };
  const { diffWorkspace, readWorkspace } = await import('@rho/workspace');
  const sessionDir = join(home, 'sessions', sessionId);
  const record = readWorkspace(sessionDir);
  if (record === undefined) return undefined;
  const changes = readSessionMeta(sessionDir)?.changes ?? (await diffWorkspace(record)).stats;
  return {
    mode,
    kind: record.kind,
    ...(record.branch === undefined ? {} : { branch: record.branch }),
    path: record.path,
    changes: { files: changes.files, additions: changes.additions, deletions: changes.deletions },
  };
}

/** The task attempt a session ran (its trace's `run_start`), as the sweep asks about it. */
export interface AttemptSession {
  session_id: string;
  task_id: string;
  attempt: number;
  /** Whether the session's last run ended (meta.json's status is no longer `created`/`running`). */
  ended: boolean;
}

/** What {@link sweepTaskWorkspaces} did. */
export interface TaskWorkspaceSweep {
  /** Sessions whose workspace `@rho/workspace`'s sweep removed (the session is gone, or its workspace was decided). */
  removed: string[];
  /** Workspaces of task attempts that did not finish, discarded (their retry works in its own). */
  discarded: AttemptSession[];
  /** Workspaces that stay: live sessions, and finished ones waiting for a person's rho apply or rho discard. */
  kept: number;
}

/**
 * Sweeps `<home>/workspaces`: `@rho/workspace`'s sweep first (a live session keeps its workspace,
 * a live one being a session whose lock a running process holds), then, of the workspaces it
 * kept, those of task attempts `abandoned` names (the worker decides with the queue) are
 * discarded. A person's own sessions (no task in their trace) are never judged here.
 */
export async function sweepTaskWorkspaces(
  home: string,
  abandoned: (sessions: AttemptSession[]) => Promise<Set<string>>,
): Promise<TaskWorkspaceSweep> {
  const sweep: TaskWorkspaceSweep = { removed: [], discarded: [], kept: 0 };
  if (!existsSync(join(home, 'workspaces'))) return sweep;
  const { discardWorkspace, readWorkspace, sweepWorkspaces } = await import('@rho/workspace');
  const sessions = join(home, 'sessions');
  const isLive = (id: string) => sessionLockOwner(join(sessions, id)) !== undefined;
  const swept = await sweepWorkspaces({
    home,
    sessionDirOf: (id) => (existsSync(join(sessions, id)) ? join(sessions, id) : undefined),
    isLive,
  });
  sweep.removed = swept.removed;
  const candidates: AttemptSession[] = [];
  for (const id of swept.kept) {
    if (isLive(id)) continue;
    const task = traceTask(join(sessions, id));
    if (task === undefined) continue;
    const status = readSessionMeta(join(sessions, id))?.status;
    candidates.push({
      session_id: id,
      ...task,
      ended: status !== undefined && status !== 'created' && status !== 'running',
    });
  }
  const chosen = candidates.length === 0 ? new Set<string>() : await abandoned(candidates);
  for (const candidate of candidates) {
    if (!chosen.has(candidate.session_id) || isLive(candidate.session_id)) continue;
    const sessionDir = join(sessions, candidate.session_id);
    const record = readWorkspace(sessionDir);
    if (record === undefined || record.state !== 'active') continue;
    await discardWorkspace(record, sessionDir);
    sweep.discarded.push(candidate);
  }
  sweep.kept = swept.kept.length - sweep.discarded.length;
  return sweep;
}

/**
 * The task id and attempt of a session: from meta.json (written when the session was made, so
 * also for an attempt killed before its first record), else its first `run_start` (read from the
 * trace's first 256 KiB: sessions made before meta.json carried it).
 */
function traceTask(sessionDir: string): { task_id: string; attempt: number } | undefined {
  const meta = readSessionMeta(sessionDir);
  if (typeof meta?.task_id === 'string')
    return { task_id: meta.task_id, attempt: typeof meta.task_attempt === 'number' ? meta.task_attempt : 1 };
  let text: string;
  try {
    const fd = openSync(join(sessionDir, 'trace.jsonl'), 'r');
    try {
      const buffer = Buffer.alloc(256 * 1024);
      text = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    if (!line.includes('"run_start"')) continue;
    try {
      const record = JSON.parse(line) as { type?: unknown; task_id?: unknown; task_attempt?: unknown };
      if (record.type !== 'run_start') continue;
      if (typeof record.task_id !== 'string') return undefined;
      return { task_id: record.task_id, attempt: typeof record.task_attempt === 'number' ? record.task_attempt : 1 };
    } catch {
      // A torn line.
    }
  }
  return undefined;
}
