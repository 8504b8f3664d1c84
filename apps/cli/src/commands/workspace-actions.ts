import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { CheckpointStore, UndoPlan, WorkspaceDiff, WorkspaceRecord } from '@rho/workspace';
import { EXIT } from '../exit-code-map.js';
import type { RunWorkspace } from '../run-workspace.js';
import type { Terminal } from '../terminal.js';
import { styles } from '../terminal.js';

/** Where a workspace command writes, and how it asks. */
export interface WorkspaceIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Colour on stdout (a terminal, and neither NO_COLOR nor --no-color). */
  color: boolean;
  /** Asks a yes/no question on the terminal; undefined when there is none to ask on. */
  confirm?: (question: string) => Promise<boolean>;
}

/** A session found for a workspace command: its id, directory and isolated workspace, if any. */
export interface WorkspaceSession {
  id: string;
  directory: string;
  record: WorkspaceRecord | undefined;
  /** The working directory it ran in (meta.json), for in-place sessions. */
  workingDir: string | undefined;
  /** A process runs it now (it holds its lock). */
  live: boolean;
}

/** The I/O of a workspace command on a terminal: questions on stderr, answered on stdin. */
export function workspaceIo(terminal: Terminal): WorkspaceIo {
  const interactive = process.stdin.isTTY === true && terminal.stderr.isTTY === true;
  return {
    out: (text) => terminal.stdout.write(text),
    err: (text) => terminal.stderr.write(text),
    color: terminal.color && terminal.stdout.isTTY === true,
    ...(interactive
      ? {
          confirm: async (question: string) => {
            const { createInterface } = await import('node:readline');
            const readline = createInterface({ input: process.stdin, output: terminal.stderr });
            try {
              const answer = await new Promise<string>((resolve) => readline.question(`${question} [y/N] `, resolve));
              return /^(y|yes)$/i.test(answer.trim());
            } finally {
              readline.close();
            }
          },
        }
      : {}),
  };
}

/** The session a reference names (id, prefix, `latest`, a directory), with its workspace record. */
export async function findWorkspaceSession(reference: string, env: NodeJS.ProcessEnv): Promise<WorkspaceSession> {
  const { SessionStore, rhoHome } = await import('@rho/core');
  const found = new SessionStore(join(rhoHome(env), 'sessions')).lookup(reference);
  return workspaceSessionAt(found.directory, found.id);
}

/** The session in `directory` (its id: the folder's name unless given), with its workspace record. */
export async function workspaceSessionAt(directory: string, id = basename(directory)): Promise<WorkspaceSession> {
  const { readSessionMeta, sessionLockOwner } = await import('@rho/core/internal');
  const { readWorkspace } = await import('@rho/workspace');
  const meta = readSessionMeta(directory);
  return {
    id,
    directory,
    record: readWorkspace(directory),
    workingDir: typeof meta?.working_dir === 'string' ? meta.working_dir : undefined,
    live: sessionLockOwner(directory) !== undefined,
  };
}

/** Refuses to change the files of a session a process runs now. */
async function notLive(session: WorkspaceSession, doing: string): Promise<void> {
  if (!session.live) return;
  const { WorkspaceUsageError } = await import('@rho/workspace');
  throw new WorkspaceUsageError({
    message: `Cannot ${doing} session ${session.id} while it runs: wait for it to end, or stop it (rho cancel ${session.id}).${doing === 'undo' ? ' In its REPL, /undo does it.' : ''}`,
  });
}

/** The record of an isolated session, or the one-line usage error of a session that has none. */
async function isolated(session: WorkspaceSession, doing: string): Promise<WorkspaceRecord> {
  if (session.record !== undefined) return session.record;
  const { WorkspaceUsageError } = await import('@rho/workspace');
  const checkpoints = existsSync(join(session.directory, 'checkpoints.git'));
  throw new WorkspaceUsageError({
    message: `Cannot ${doing} session ${session.id}: it ran in place (in ${session.workingDir ?? 'its working directory'}), without an isolated workspace${checkpoints ? `; rho undo ${session.id} goes back to a checkpoint` : ''}. Run with --workspace isolated to review changes before they land.`,
  });
}

/**
 * What a session changed, however it kept its files: an isolated workspace's diff from its base to
 * now; once applied, the diff it applied (kept in the session directory); an in-place run's, from
 * its first checkpoint to the files now. A one-line usage error (exit 2) when nothing tells.
 */
export async function sessionDiff(session: WorkspaceSession): Promise<WorkspaceDiff> {
  const library = await import('@rho/workspace');
  const { record } = session;
  if (record?.state === 'applied') {
    const applied = library.readAppliedDiff(session.directory);
    if (applied !== undefined) return applied;
  }
  if (record !== undefined) return library.diffWorkspace(record);
  if (existsSync(join(session.directory, 'checkpoints.git')) && session.workingDir !== undefined)
    return library.CheckpointStore.open({ sessionDir: session.directory, workingDir: session.workingDir }).diff();
  throw new library.WorkspaceUsageError({
    message: `Session ${session.id} ran in place (in ${session.workingDir ?? 'its working directory'}) without checkpoints: rho kept no record of the files it changed. Run with --workspace isolated to review changes before they land.`,
  });
}

/**
 * `rho diff ID [--stat] [--json]`: what a session changed (an isolated one from its base to now,
 * or what it applied; an in-place one from its first checkpoint to the files now).
 */
export async function diffAction(
  session: WorkspaceSession,
  options: { stat: boolean; json: boolean },
  io: WorkspaceIo,
): Promise<number> {
  const diff = await sessionDiff(session);
  const { formatChangeStats } = await import('@rho/workspace');
  const where =
    session.record === undefined
      ? `${session.workingDir ?? 'its working directory'} since its first checkpoint`
      : session.record.state === 'applied'
        ? `what it applied to ${session.record.original}`
        : `its workspace ${session.record.path}`;
  if (options.json) {
    io.out(`${JSON.stringify({ files: diff.files, stats: diff.stats, patch: diff.patch })}\n`);
    return EXIT.completed;
  }
  if (diff.files.length === 0) {
    io.err(`Session ${session.id} changed no file (${where}).\n`);
    return EXIT.completed;
  }
  const style = styles(io.color);
  if (options.stat) {
    io.out(statLines(diff, style).join('\n') + '\n');
  } else {
    io.out(colourPatch(diff.patch, style));
    if (!diff.patch.endsWith('\n')) io.out('\n');
  }
  io.out(`${style.bold(formatChangeStats(diff.stats))}\n`);
  return EXIT.completed;
}

/** One line per changed file (`M src/a.ts  +3/-1`), as `git diff --stat` lists them, without the graph. */
function statLines(diff: WorkspaceDiff, style: ReturnType<typeof styles>): string[] {
  const letters = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R', mode: 'T', type: 'T' } as const;
  const names = diff.files.map((file) => (file.oldPath === undefined ? file.path : `${file.oldPath} → ${file.path}`));
  const width = Math.min(60, Math.max(...names.map((name) => name.length)));
  return diff.files.map((file, index) => {
    const counts = file.binary ? 'binary' : `${style.green(`+${file.additions}`)}/${style.red(`-${file.deletions}`)}`;
    return ` ${letters[file.status]} ${names[index]!.padEnd(width)}  ${counts}`;
  });
}

/** A unified diff with its headers bold, hunks cyan, additions green and deletions red. */
function colourPatch(patch: string, style: ReturnType<typeof styles>): string {
  return patch
    .split('\n')
    .map((line) => {
      if (/^(diff --git|index |--- |\+\+\+ |new file|deleted file|similarity|rename |old mode|new mode)/.test(line))
        return style.bold(line);
      if (line.startsWith('@@')) return style.cyan(line);
      if (line.startsWith('+')) return style.green(line);
      if (line.startsWith('-')) return style.red(line);
      return line;
    })
    .join('\n');
}

/** `rho apply ID`: the session's changes, applied whole to the directory it was started in. */
export async function applyAction(session: WorkspaceSession, io: WorkspaceIo): Promise<number> {
  const record = await isolated(session, 'apply');
  await notLive(session, 'apply');
  const { applyWorkspace, formatChangeStats } = await import('@rho/workspace');
  // A conflict (WorkspaceConflictError, exit 1) says which files and how to resolve; nothing changed.
  const diff = await applyWorkspace(record, session.directory);
  io.err(
    `Applied ${formatChangeStats(diff.stats)} to ${record.original}; the workspace${record.branch === undefined ? '' : ` and branch ${record.branch}`} are removed (rho diff ${session.id} still shows what was applied).\n`,
  );
  return EXIT.completed;
}

/** Asks before something that cannot be taken back: on a terminal unless --yes; without one, --yes is required. */
async function confirmed(io: WorkspaceIo, question: string, yes: boolean, flagHint: string): Promise<boolean> {
  if (yes) return true;
  if (io.confirm === undefined) {
    const { UsageError } = await import('../exit-codes.js');
    throw new UsageError({ message: `No terminal to confirm on: pass --yes to ${flagHint}.` });
  }
  return io.confirm(question);
}

/** `rho discard ID [--yes]`: removes the workspace (and its branch); the original is untouched. */
export async function discardAction(
  session: WorkspaceSession,
  options: { yes: boolean },
  io: WorkspaceIo,
): Promise<number> {
  const record = await isolated(session, 'discard');
  await notLive(session, 'discard');
  const { discardWorkspace, diffWorkspace, formatChangeStats, WorkspaceUsageError } = await import('@rho/workspace');
  if (record.state === 'discarded')
    throw new WorkspaceUsageError({ message: `The workspace of session ${session.id} was already discarded.` });
  const stats = record.state === 'active' ? (await diffWorkspace(record).catch(() => undefined))?.stats : undefined;
  const what = `${record.root}${record.branch === undefined ? '' : ` and branch ${record.branch}`}`;
  const question = `Discard ${what}${stats === undefined || stats.files === 0 ? '' : ` (${formatChangeStats(stats)}, not applied)`}?`;
  if (!(await confirmed(io, question, options.yes, `discard ${what}`))) {
    io.err('Nothing was discarded.\n');
    return EXIT.completed;
  }
  await discardWorkspace(record, session.directory);
  io.err(`Discarded ${what}.\n`);
  return EXIT.completed;
}

/** The checkpoints of an in-place session, or the one-line usage error of a session without them. */
export async function checkpointsOf(session: WorkspaceSession): Promise<CheckpointStore> {
  const { CheckpointStore, WorkspaceUsageError } = await import('@rho/workspace');
  if (session.record !== undefined)
    throw new WorkspaceUsageError({
      message: `Session ${session.id} works in an isolated workspace: nothing of yours changed; rho discard ${session.id} drops its changes.`,
    });
  await notLive(session, 'undo');
  if (!existsSync(join(session.directory, 'checkpoints.git')) || session.workingDir === undefined)
    throw new WorkspaceUsageError({
      message: `Session ${session.id} took no checkpoint (it ran without --checkpoints, or under a profile that does not write): nothing to undo.`,
    });
  return CheckpointStore.open({ sessionDir: session.directory, workingDir: session.workingDir });
}

/** What an undo will do, one line per file. */
export function planLines(plan: UndoPlan, color: boolean): string[] {
  const style = styles(color);
  return [
    `Back to the files as they were after turn ${plan.to.turn} (${plan.to.createdAt.replace('T', ' ').slice(0, 19)} UTC):`,
    ...plan.restore.map((path) => `  ${style.yellow('restore')} ${path}`),
    ...plan.remove.map((path) => `  ${style.red('remove ')} ${path}`),
    ...(plan.restore.length + plan.remove.length === 0 ? ['  (nothing changed since)'] : []),
  ];
}

/**
 * `rho undo ID [--to TURN] [--yes]` and the REPL's `/undo`: shows the plan, asks, restores. A file
 * changed by someone else since the agent's last turn refuses it whole (exit 1, naming it).
 */
export async function undoAction(
  store: CheckpointStore,
  options: { to?: number; yes: boolean; sessionDir?: string },
  io: WorkspaceIo,
): Promise<number> {
  const { WorkspaceConflictError } = await import('@rho/workspace');
  const plan = await store.plan(options.to);
  for (const line of planLines(plan, io.color)) io.err(`${line}\n`);
  if (plan.conflicts.length > 0)
    throw new WorkspaceConflictError({
      files: plan.conflicts,
      message: `Undo refused: ${plan.conflicts.join(', ')} changed after the agent's last turn (by someone else). Nothing was changed. Save or revert that change first, or restore by hand.`,
    });
  if (plan.restore.length + plan.remove.length === 0) return EXIT.completed;
  const count = plan.restore.length + plan.remove.length;
  if (!(await confirmed(io, `Restore ${count} file${count === 1 ? '' : 's'}?`, options.yes, 'undo'))) {
    io.err('Nothing was changed.\n');
    return EXIT.completed;
  }
  const done = await store.undo(options.to);
  io.err(
    `Restored the files of turn ${done.to.turn}: ${done.restore.length} written back, ${done.remove.length} removed.\n`,
  );
  if (options.sessionDir !== undefined) {
    // The conversation is told at its next step (now, or when the session runs again): what it
    // says of these files after that turn no longer holds.
    const { FileOperatorChannel } = await import('@rho/core');
    await new FileOperatorChannel(options.sessionDir).sendDirective(undoNote(done)).catch((error: unknown) => {
      io.err(`The session could not be told of the undo (tell it yourself): ${(error as Error).message}\n`);
    });
  }
  return EXIT.completed;
}

/** What the agent is told after an undo: the turn, the files, and that what it knew of them is stale. */
export function undoNote(plan: UndoPlan): string {
  const names = (paths: string[]) =>
    paths.length <= 20 ? paths.join(', ') : `${paths.slice(0, 20).join(', ')} and ${paths.length - 20} more`;
  return [
    `The user undid changes with rho undo: the files are back as they were after turn ${plan.to.turn}.`,
    ...(plan.restore.length === 0 ? [] : [`Written back: ${names(plan.restore)}.`]),
    ...(plan.remove.length === 0 ? [] : [`Removed: ${names(plan.remove)}.`]),
    'What this conversation says about these files after that turn no longer holds: read them again before relying on them.',
  ].join(' ');
}

/** The REPL's `/undo [TURN]`: as `rho undo` for the current session, asking y/N; errors are one line. */
export async function replUndo(workspace: RunWorkspace | undefined, argument: string, io: WorkspaceIo): Promise<void> {
  const style = styles(io.color);
  const store = workspace?.checkpoints;
  if (store === undefined) {
    io.err(
      workspace?.record !== undefined
        ? `This session works in an isolated workspace (${workspace.record.path}): nothing of yours changed; rho discard drops its changes.\n`
        : 'This session takes no checkpoints (--no-checkpoints, or a profile that does not write): nothing to undo.\n',
    );
    return;
  }
  const to = argument === '' ? undefined : Number(argument);
  if (to !== undefined && (!Number.isInteger(to) || to < 0)) {
    io.err(`Use /undo, or /undo TURN with a turn number (got ${argument}).\n`);
    return;
  }
  try {
    // The last turn's checkpoint is taken first (it may still be on its way).
    await workspace!.settled();
    await undoAction(store, { yes: false, sessionDir: workspace!.sessionDir, ...(to === undefined ? {} : { to }) }, io);
  } catch (error) {
    io.err(`${style.red('Error:')} ${(error as Error).message}\n`);
  }
}

/**
 * Removes the workspaces nobody can use any more (their session is gone, or decided while its
 * files stayed): cheap (one listing of `$RHO_HOME/workspaces`) and safe (a session whose lock is
 * held, a run being set up included, keeps its workspace), and quiet: a sweep that fails changes
 * nothing of what the command does.
 */
export async function sweepQuietly(home: string): Promise<string[]> {
  if (!existsSync(join(home, 'workspaces'))) return [];
  const { sweepWorkspaces } = await import('@rho/workspace');
  const { sessionLockOwner } = await import('@rho/core/internal');
  const sessions = join(home, 'sessions');
  const result = await sweepWorkspaces({
    home,
    sessionDirOf: (id) => (existsSync(join(sessions, id)) ? join(sessions, id) : undefined),
    isLive: (id) => sessionLockOwner(join(sessions, id)) !== undefined,
  }).catch(() => undefined);
  return result?.removed ?? [];
}
