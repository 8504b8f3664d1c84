/**
 * What changed in a working directory since its checkpoint store's index (the last checkpoint's
 * files): one `git status` that reads the index's stat cache and the untracked cache, instead of
 * walking the tree once to check the limits, once to add and once more to compare.
 */
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import type { TreeAccess } from './diff.js';
import { WorkspaceError } from './errors.js';
import { git, splitNul } from './git.js';

/** The limits of a checkpoint, and the count of files the index holds (asked only when something changed). */
export interface ChangeLimits {
  maxFiles: number;
  maxFileBytes: number;
  indexCount: () => Promise<number>;
}

/**
 * What changed in the working directory since the index (the last checkpoint's files), from one
 * `git status` that reads the index's stat cache and the untracked cache (persisted: this store
 * is this session's alone), and refuses, before git reads a file, what is over the limits: the
 * paths to add (changed, deleted, new; a new folder whole), or none when nothing changed.
 */
/** What {@link changedPaths} found. */
export interface FoundChanges {
  /** The paths to add (changed, deleted, new; a new folder whole); none when nothing changed. */
  paths: string[];
  /** The files the index will hold once they are added. */
  count: number;
  /** Paths were added or removed (the folders may have changed), not only changed in place. */
  structural: boolean;
}

export async function changedPaths(access: TreeAccess, limits: ChangeLimits): Promise<FoundChanges> {
  const advice = 'add it to a .gitignore, or turn checkpoints off for this run';
  const status = splitNul(
    (
      await git([...access.prefix, 'status', '--porcelain=v2', '-z', '--no-renames', '--untracked-files=normal'], {
        cwd: access.cwd,
        isolated: true,
        env: { GIT_OPTIONAL_LOCKS: '1' },
        maxBytes: 64 * 1024 * 1024,
        tooLarge: `${access.cwd} has too many changed files for checkpoints: ${advice}.`,
      })
    ).stdout,
  );
  const paths: string[] = [];
  const sized: string[] = [];
  const folders: string[] = [];
  let removed = 0;
  let added = 0;
  for (const entry of status) {
    if (entry.startsWith('? ')) {
      const path = entry.slice(2);
      paths.push(path);
      added += 1;
      if (path.endsWith('/')) folders.push(path);
      else sized.push(path);
    } else if (entry.startsWith('1 ')) {
      // `1 XY sub mH mI mW hH hI path`: Y is the working tree's change (D: deleted).
      const path = entry.split(' ').slice(8).join(' ');
      paths.push(path);
      if (entry[3] === 'D') removed += 1;
      else sized.push(path);
    }
  }
  if (paths.length === 0) return { paths, count: 0, structural: false };
  // The files of new folders, which status names as one entry each.
  const inFolders =
    folders.length === 0
      ? []
      : splitNul(
          (
            await git(
              [
                ...access.prefix,
                '--literal-pathspecs',
                'ls-files',
                '-z',
                '--others',
                '--exclude-standard',
                '--',
                ...folders,
              ],
              {
                cwd: access.cwd,
                isolated: true,
                maxBytes: 64 * 1024 * 1024,
                tooLarge: `${access.cwd} has too many files for checkpoints: ${advice}.`,
              },
            )
          ).stdout,
        );
  sized.push(...inFolders);
  // New files: the untracked ones status named, and those of the new folders it named whole.
  const count = (await limits.indexCount()) + (added - folders.length) + inFolders.length - removed;
  if (count > limits.maxFiles)
    throw new WorkspaceError('workspace_too_large', {
      message: `${access.cwd} has ${count} files git does not ignore, over the ${limits.maxFiles} checkpoints take: add generated folders to a .gitignore, or turn checkpoints off for this run.`,
    });
  for (const path of sized) {
    const size = lstatSync(join(access.cwd, path), { throwIfNoEntry: false })?.size ?? 0;
    if (size > limits.maxFileBytes)
      throw new WorkspaceError('workspace_too_large', {
        message: `${path} is ${(size / 1024 / 1024).toFixed(1)} MiB, over the ${limits.maxFileBytes / 1024 / 1024} MiB a checkpoint takes: ${advice}.`,
      });
  }
  return { paths, count, structural: added > 0 || removed > 0 };
}
