/**
 * Checkpoints of an in-place run: after each turn that wrote files, a commit of the working
 * directory's files in a shadow git store `<session dir>/checkpoints.git` (its work tree is the
 * working directory; the user's own `.git` is never written). `undo` writes a checkpoint's files
 * back, refusing whole when someone else changed one of them after the agent's last turn.
 */
import { appendFileSync, existsSync, mkdirSync, realpathSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { diffCached, diffRange, withCurrentFiles, type TreeAccess } from './diff.js';
import { WorkspaceConflictError, WorkspaceUsageError } from './errors.js';
import { git, gitText, splitNul } from './git.js';
import { changedPaths } from './checkpoint-changes.js';
import { readTree, removeFiles, restoreFiles } from './restore.js';
import type { ChangeStats, Checkpoint, UndoPlan, WorkspaceDiff } from './types.js';

/** The most files (not ignored) a working directory may have for checkpoints. */
export const MAX_CHECKPOINT_FILES = 200_000;
/** The largest file (not ignored) a checkpoint takes. */
export const MAX_CHECKPOINT_FILE_BYTES = 50 * 1024 * 1024;

export interface CheckpointStoreOptions {
  sessionDir: string;
  workingDir: string;
  /** Default {@link MAX_CHECKPOINT_FILES}. */
  maxFiles?: number;
  /** Default {@link MAX_CHECKPOINT_FILE_BYTES}. */
  maxFileBytes?: number;
}

interface Stored extends Checkpoint {
  tree: string;
}

const REFS = 'refs/rho/turns/';
/** git's empty tree (SHA-1, the stores' format). */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
/** Per checkpoint, a blob listing the folders git holds no file of (empty, or only ignored files): git keeps no folders. */
const FOLDERS = 'refs/rho/folders/';

function trailer(message: string, key: string): number | undefined {
  const match = new RegExp(`^${key}: (\\d+)$`, 'm').exec(message);
  return match === null ? undefined : Number(match[1]);
}

export class CheckpointStore {
  /** The shadow store: `<session dir>/checkpoints.git`. */
  readonly gitDir: string;
  readonly workingDir: string;
  private readonly access: TreeAccess;
  private readonly sessionDir: string;
  private readonly maxFiles: number;
  private readonly maxFileBytes: number;
  /** The files the index holds, once counted (until the next add). */
  private fileCount: number | undefined;
  /** The commit HEAD was set to by this process. */
  private headSet: string | undefined;

  private constructor(options: CheckpointStoreOptions) {
    this.sessionDir = options.sessionDir;
    this.gitDir = join(options.sessionDir, 'checkpoints.git');
    // A working directory that is gone still has its checkpoints to read (diffBetween, list).
    this.workingDir = existsSync(options.workingDir) ? realpathSync(options.workingDir) : resolve(options.workingDir);
    this.maxFiles = options.maxFiles ?? MAX_CHECKPOINT_FILES;
    this.maxFileBytes = options.maxFileBytes ?? MAX_CHECKPOINT_FILE_BYTES;
    this.access = {
      prefix: [`--git-dir=${this.gitDir}`, `--work-tree=${this.workingDir}`],
      cwd: this.workingDir,
      force: false,
      isolated: true,
    };
  }

  /** The store of a session's checkpoints (made on the first `take`). */
  static open(options: CheckpointStoreOptions): CheckpointStore {
    return new CheckpointStore(options);
  }

  private run(args: string[], extra: { maxBytes?: number; tooLarge?: string; allowFailure?: boolean } = {}) {
    return git([...this.access.prefix, ...args], { cwd: this.workingDir, isolated: true, ...extra });
  }

  private async ready(): Promise<void> {
    if (existsSync(join(this.gitDir, 'HEAD'))) return;
    await git(['init', '--quiet', '--bare', this.gitDir], { isolated: true });
    // Status reads only the folders that changed since the last checkpoint.
    await git(['--git-dir', this.gitDir, 'config', 'core.untrackedCache', 'true'], { isolated: true });
    // The session's own files, when they lie in the working directory, are never checkpointed.
    const own = relative(this.workingDir, realpathSync(this.sessionDir));
    if (own !== '' && !own.startsWith('..') && !isAbsolute(own))
      appendFileSync(join(this.gitDir, 'info', 'exclude'), `/${own.split(sep).join('/')}/\n`);
  }

  private async stored(): Promise<Stored[]> {
    if (!existsSync(join(this.gitDir, 'HEAD'))) return [];
    const format = '%(objectname)%00%(tree)%00%(creatordate:iso-strict)%00%(contents)%00';
    // The store alone (the working directory may be gone).
    const fields = splitNul(
      (
        await git([`--git-dir=${this.gitDir}`, 'for-each-ref', `--format=${format}`, REFS], {
          cwd: this.sessionDir,
          isolated: true,
        })
      ).stdout,
    );
    const list: Stored[] = [];
    for (let at = 0; at + 3 < fields.length; at += 4) {
      const message = fields[at + 3]!;
      const undoTo = trailer(message, 'Rho-Undo-To');
      list.push({
        turn: trailer(message, 'Rho-Turn') ?? -1,
        commit: fields[at]!.trim(),
        tree: fields[at + 1]!,
        createdAt: fields[at + 2]!,
        stats: {
          files: trailer(message, 'Rho-Files') ?? 0,
          additions: trailer(message, 'Rho-Additions') ?? 0,
          deletions: trailer(message, 'Rho-Deletions') ?? 0,
        },
        ...(undoTo === undefined ? {} : { undoTo }),
      });
    }
    return list.sort((a, b) => a.turn - b.turn);
  }

  /** The checkpoints, oldest first: one per turn that changed files (an undo's replaces its turn's). */
  async list(): Promise<Checkpoint[]> {
    return (await this.stored()).map(({ tree: _tree, ...checkpoint }) => checkpoint);
  }

  /**
   * A checkpoint of the files after `turn`, or `undefined` when none changed since the last one
   * (the first, turn 0's, is always taken). Throws `workspace_too_large` over the limits.
   */
  take(turn: number): Promise<Checkpoint | undefined> {
    return this.commitTurn(turn, undefined);
  }

  /** `take`, for an undo's checkpoint too (`undoTo`: the turn whose files it wrote back). */
  private async commitTurn(turn: number, undoTo: number | undefined): Promise<Checkpoint | undefined> {
    await this.ready();
    const last = (await this.stored()).at(-1);
    if (last !== undefined && turn < last.turn)
      throw new WorkspaceUsageError({
        message: `Cannot take a checkpoint of turn ${turn}: the last one is of turn ${last.turn}.`,
      });
    // Status compares with HEAD: the last checkpoint (a store an older rho made may not have it).
    if (last !== undefined && this.headSet !== last.commit) {
      await this.run(['update-ref', '--no-deref', 'HEAD', last.commit]);
      this.headSet = last.commit;
    }
    const { paths, count, structural } = await changedPaths(this.access, {
      maxFiles: this.maxFiles,
      maxFileBytes: this.maxFileBytes,
      indexCount: async () =>
        (this.fileCount ??= splitNul(
          (await this.run(['ls-files', '-z', '--cached'], { maxBytes: 256 * 1024 * 1024 })).stdout,
        ).length),
    });

    if (last !== undefined && paths.length === 0) return undefined;
    if (paths.length > 0)
      await git(
        [...this.access.prefix, '--literal-pathspecs', 'add', '-A', '--pathspec-from-file=-', '--pathspec-file-nul'],
        {
          cwd: this.workingDir,
          isolated: true,
          input: paths.join('\0'),
        },
      );
    this.fileCount = paths.length > 0 ? count : this.fileCount;
    const tree = await gitText([...this.access.prefix, 'write-tree'], { cwd: this.workingDir, isolated: true });
    if (last !== undefined && tree === last.tree) return undefined;
    const from = last?.tree ?? EMPTY_TREE;
    const stats = await this.statsBetween(from, tree);
    const message = [
      `rho checkpoint: turn ${turn}`,
      '',
      `Rho-Turn: ${turn}`,
      `Rho-Files: ${stats.files}`,
      `Rho-Additions: ${stats.additions}`,
      `Rho-Deletions: ${stats.deletions}`,
      ...(undoTo === undefined ? [] : [`Rho-Undo-To: ${undoTo}`]),
    ].join('\n');
    const parent = last === undefined ? [] : ['-p', last.commit];
    const commit = await gitText([...this.access.prefix, 'commit-tree', tree, ...parent, '-m', message], {
      cwd: this.workingDir,
      isolated: true,
    });
    // The folders git keeps no file of are listed again (a walk) only when paths came or went.
    const folders = structural || last === undefined ? await this.folderBlob() : await this.folderRef(last.turn);
    // One transaction: the turn, its folders, and HEAD (what the next status compares with).
    await git([...this.access.prefix, 'update-ref', '--stdin'], {
      cwd: this.workingDir,
      isolated: true,
      input: [
        `update ${REFS}${turn} ${commit}`,
        folders === undefined ? `delete ${FOLDERS}${turn}` : `update ${FOLDERS}${turn} ${folders}`,
        'option no-deref',
        `update HEAD ${commit}`,
        '',
      ].join('\n'),
    });
    this.headSet = commit;
    return { turn, commit, createdAt: new Date().toISOString(), stats, ...(undoTo === undefined ? {} : { undoTo }) };
  }

  /** The blob listing the folders without a file in the index (after `add`: empty, or holding only ignored files), if any. */
  private async folderBlob(): Promise<string | undefined> {
    const listed = splitNul(
      (await this.run(['ls-files', '-z', '--others', '--directory', '--exclude-standard'])).stdout,
    );
    const folders = listed.filter((path) => path.endsWith('/')).map((path) => path.slice(0, -1));
    if (folders.length === 0) return undefined;
    return gitText([...this.access.prefix, 'hash-object', '-w', '--stdin'], {
      cwd: this.workingDir,
      isolated: true,
      input: folders.join('\0'),
    });
  }

  /** The folder blob a checkpoint recorded, if any. */
  private async folderRef(turn: number): Promise<string | undefined> {
    const found = await this.run(['rev-parse', '-q', '--verify', `${FOLDERS}${turn}`], { allowFailure: true });
    return found.code === 0 ? found.stdout.toString('utf8').trim() : undefined;
  }

  /** The folders a checkpoint recorded besides those of its files. */
  private async foldersOf(turn: number): Promise<string[]> {
    const found = await git([...this.access.prefix, 'cat-file', 'blob', `${FOLDERS}${turn}`], {
      cwd: this.workingDir,
      isolated: true,
      allowFailure: true,
    });
    return found.code === 0 ? splitNul(found.stdout) : [];
  }

  private async statsBetween(from: string, to: string): Promise<ChangeStats> {
    const fields = splitNul((await this.run(['diff', '--numstat', '-z', '-M', from, to])).stdout);
    const stats = { files: 0, additions: 0, deletions: 0 };
    for (let at = 0; at < fields.length;) {
      const [additions, deletions, inline] = fields[at]!.split('\t') as [string, string, string];
      at += inline === '' ? 3 : 1;
      stats.files += 1;
      if (additions !== '-') {
        stats.additions += Number(additions);
        stats.deletions += Number(deletions);
      }
    }
    return stats;
  }

  /**
   * What changed in the working directory since the checkpoint of `fromTurn` (the latest at or
   * before it; by default the first, the run's start) up to the files as they are now: the same
   * files, totals and patch as an isolated workspace's diff, paths relative to the working
   * directory. An in-place run's `rho diff`, export and the dashboard's Changes read it.
   */
  async diff(fromTurn?: number): Promise<WorkspaceDiff> {
    const list = await this.stored();
    if (list.length === 0)
      throw new WorkspaceUsageError({ message: 'No changes to show: this session took no checkpoint.' });
    const from = fromTurn === undefined ? list[0] : list.filter((checkpoint) => checkpoint.turn <= fromTurn).at(-1);
    if (from === undefined)
      throw new WorkspaceUsageError({
        message: `No checkpoint at or before turn ${fromTurn}: the first is of turn ${list[0]!.turn}.`,
      });
    return withCurrentFiles(
      this.access,
      from.commit,
      async (env) => (await diffCached(this.access, env, from.commit, '')).diff,
    );
  }

  /**
   * What changed between two checkpoints (by default the first and the last), read from the store
   * alone: no work tree is read, nothing is written. The patch is cut at `patchLimit` bytes when
   * given (`patchBytes` is its whole size), else refused over {@link MAX_PATCH_BYTES}.
   */
  async diffBetween(
    options: { fromTurn?: number; toTurn?: number; patchLimit?: number } = {},
  ): Promise<{ diff: WorkspaceDiff; patchBytes: number; from: Checkpoint; to: Checkpoint }> {
    const list = await this.stored();
    if (list.length === 0)
      throw new WorkspaceUsageError({ message: 'No changes to show: this session took no checkpoint.' });
    const atOrBefore = (turn: number | undefined, fallback: Stored) =>
      turn === undefined ? fallback : list.filter((checkpoint) => checkpoint.turn <= turn).at(-1);
    const from = atOrBefore(options.fromTurn, list[0]!);
    const to = atOrBefore(options.toTurn, list.at(-1)!);
    if (from === undefined || to === undefined)
      throw new WorkspaceUsageError({
        message: `No checkpoint at or before turn ${String(from === undefined ? options.fromTurn : options.toTurn)}: the first is of turn ${list[0]!.turn}.`,
      });
    // The store alone: the working directory may be gone.
    const storeOnly: TreeAccess = {
      prefix: [`--git-dir=${this.gitDir}`],
      cwd: this.sessionDir,
      force: false,
      isolated: true,
    };
    const { diff, patchBytes } = await diffRange(storeOnly, [from.commit, to.commit], {
      ...(options.patchLimit === undefined ? {} : { patchLimit: options.patchLimit }),
    });
    const { tree: _from, ...fromCheckpoint } = from;
    const { tree: _to, ...toCheckpoint } = to;
    return { diff, patchBytes, from: fromCheckpoint, to: toCheckpoint };
  }

  /**
   * What `undo(toTurn)` would do: the files back as they were after turn `toTurn` (the latest
   * checkpoint at or before it). By default the checkpoint before the last one that changed files
   * (after an undo, the one before the checkpoint it went back to: undo again goes further back).
   */
  async plan(toTurn?: number): Promise<UndoPlan> {
    const list = await this.stored();
    const last = list.at(-1);
    if (last === undefined)
      throw new WorkspaceUsageError({ message: 'Nothing to undo: this session took no checkpoint.' });
    const atOrBefore = (turn: number) => list.filter((checkpoint) => checkpoint.turn <= turn).at(-1);
    let target: Stored | undefined;
    if (toTurn !== undefined) {
      target = atOrBefore(toTurn);
      if (target === undefined)
        throw new WorkspaceUsageError({
          message: `Cannot undo to turn ${toTurn}: the first checkpoint is of turn ${list[0]!.turn}.`,
        });
    } else {
      let effective: Stored = last;
      while (effective.undoTo !== undefined) {
        const back = atOrBefore(effective.undoTo);
        if (back === undefined || back.turn >= effective.turn) break;
        effective = back;
      }
      target = list.filter((checkpoint) => checkpoint.turn < effective.turn).at(-1);
      if (target === undefined)
        throw new WorkspaceUsageError({
          message: `Nothing to undo: the files are as they were at turn ${effective.turn}, the first checkpoint.`,
        });
    }
    const changes = splitNul(
      (await this.run(['diff', '--name-status', '--no-renames', '-z', target.commit, last.commit])).stdout,
    );
    const restore: string[] = [];
    const remove: string[] = [];
    for (let at = 0; at + 1 < changes.length; at += 2) (changes[at] === 'A' ? remove : restore).push(changes[at + 1]!);
    const touched = new Set([...restore, ...remove]);
    const changedSince =
      touched.size === 0
        ? []
        : await withCurrentFiles(this.access, last.commit, async (env) =>
            splitNul(
              (
                await git(
                  [...this.access.prefix, 'diff', '--cached', '--name-only', '--no-renames', '-z', last.commit],
                  {
                    cwd: this.workingDir,
                    env,
                    isolated: true,
                  },
                )
              ).stdout,
            ),
          );
    const { tree: _tree, ...to } = target;
    return { to, restore, remove, conflicts: changedSince.filter((path) => touched.has(path)).sort() };
  }

  /**
   * Writes the files back as `plan(toTurn)` says, byte for byte (contents, modes, symbolic links;
   * files added since removed, with the folders they leave empty), then takes a checkpoint of the
   * result. Refuses whole, changing nothing, when the plan has conflicts.
   */
  async undo(toTurn?: number): Promise<UndoPlan> {
    const plan = await this.plan(toTurn);
    if (plan.restore.length + plan.remove.length === 0)
      throw new WorkspaceUsageError({
        message: `Nothing to undo: the files are as they were after turn ${plan.to.turn}.`,
      });
    if (plan.conflicts.length > 0)
      throw new WorkspaceConflictError({
        files: plan.conflicts,
        message: `Undo refused: ${plan.conflicts.join(', ')} changed after the agent's last turn (by someone else). Nothing was changed. Save or revert that change first, or restore by hand.`,
      });
    const { entries, folders } = await readTree(this.access.prefix, this.workingDir, plan.to.commit);
    removeFiles(this.workingDir, plan.remove, folders);
    await restoreFiles(this.access.prefix, this.workingDir, plan.restore, entries);
    // The folders git held no file of then (emptied or removed since) are made again.
    for (const folder of await this.foldersOf(plan.to.turn))
      mkdirSync(join(this.workingDir, folder), { recursive: true });
    const last = (await this.stored()).at(-1)!;
    await this.commitTurn(last.turn, plan.to.turn);
    return plan;
  }
}
