/**
 * The agent's changes: the files of a work tree now against a base commit, read through a
 * temporary index so that the work tree's own index is never disturbed, whether or not the agent
 * committed. One patch (`git apply` takes it: binary-safe, full index, renames), and the files.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { git, gitText, splitNul } from './git.js';
import type { ChangedFile, WorkspaceDiff } from './types.js';

/** The largest patch read into memory. */
export const MAX_PATCH_BYTES = 64 * 1024 * 1024;

/** A work tree and how git reaches it. */
export interface TreeAccess {
  /** Global options selecting the repository (`--git-dir=...`, `--work-tree=...`), or none (cwd is a worktree). */
  prefix: string[];
  /** Where git runs: the work tree's top. */
  cwd: string;
  /** Add ignored files too: a copy leaves nothing out but `.git`. */
  force: boolean;
  /** A shadow store: the user's global git configuration does not apply. */
  isolated: boolean;
}

/** The index file git uses for `access` (its stat cache spares hashing unchanged files again). */
async function indexOf(access: TreeAccess): Promise<string> {
  const path = await gitText([...access.prefix, 'rev-parse', '--git-path', 'index'], {
    cwd: access.cwd,
    isolated: access.isolated,
  });
  return isAbsolute(path) ? path : join(access.cwd, path);
}

/**
 * Runs `use` with a temporary index holding the work tree's files now (`git add -A`), starting
 * from `base` (and the stat information of the tree's own index where it matches).
 */
export async function withCurrentFiles<T>(
  access: TreeAccess,
  base: string,
  use: (env: Record<string, string>) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const directory = mkdtempSync(join(tmpdir(), 'rho-index-'));
  try {
    const index = join(directory, 'index');
    const own = await indexOf(access);
    if (existsSync(own)) {
      copyFileSync(own, index);
      // The copy keeps the index's own time: git tells a file written in the same instant as the
      // index ("racily clean") by comparing the two, and a copy stamped now would hide a change of
      // the same size made just after checkout (the diff, and so apply, would miss it).
      const { atime, mtime } = statSync(own);
      utimesSync(index, atime, mtime);
    }
    const env = { GIT_INDEX_FILE: index };
    const options = { cwd: access.cwd, env, isolated: access.isolated, signal };
    const merged = await git([...access.prefix, 'read-tree', '-m', base], { ...options, allowFailure: true });
    if (merged.code !== 0) await git([...access.prefix, 'read-tree', base], options);
    await git([...access.prefix, 'add', '-A', ...(access.force ? ['--force'] : []), '--', '.'], options);
    return await use(env);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

const STATUS: Record<string, ChangedFile['status']> = {
  A: 'added',
  C: 'added',
  D: 'deleted',
  M: 'modified',
  R: 'renamed',
  T: 'type',
};

/** The options every diff of a patch meant for `git apply` needs, whatever the user's configuration says. */
export const PATCH_OPTIONS = [
  '--no-color',
  '--no-ext-diff',
  '--no-textconv',
  '--src-prefix=a/',
  '--dst-prefix=b/',
  '--full-index',
  '--binary',
];

/** The diff of the index in `env` against `base` (and the patch's bytes); `relative`: a subfolder the paths are relative to. */
export async function diffCached(
  access: TreeAccess,
  env: Record<string, string>,
  base: string,
  relative: string,
  signal?: AbortSignal,
): Promise<{ diff: WorkspaceDiff; bytes: Buffer }> {
  const { diff, bytes } = await diffRange(access, ['--cached', base], {
    env,
    relative,
    ...(signal === undefined ? {} : { signal }),
  });
  return { diff, bytes };
}

/** How {@link diffRange} reads. */
export interface DiffRangeOptions {
  /** The environment (a temporary index). */
  env?: Record<string, string>;
  /** A subfolder the paths are relative to ('' for none). */
  relative?: string;
  /** Read the first this many bytes of the patch and count the rest, instead of refusing one over {@link MAX_PATCH_BYTES}. */
  patchLimit?: number;
  signal?: AbortSignal;
}

/**
 * The files, totals and patch of `git diff RANGE` (`--cached BASE`: the index against a commit;
 * `FROM TO`: two commits, no work tree read). `patchBytes` is the whole patch's size.
 */
export async function diffRange(
  access: TreeAccess,
  range: readonly string[],
  options: DiffRangeOptions = {},
): Promise<{ diff: WorkspaceDiff; bytes: Buffer; patchBytes: number }> {
  const relative = options.relative ?? '';
  const run = {
    cwd: access.cwd,
    isolated: access.isolated,
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
  const scope = relative === '' ? ['--no-relative'] : [`--relative=${relative}/`];
  const common = [...access.prefix, 'diff', '-M', ...scope];
  const raw = splitNul((await git([...common, '--raw', '-z', '--no-abbrev', ...range], run)).stdout);
  const numstat = splitNul((await git([...common, '--numstat', '-z', ...range], run)).stdout);
  const files = new Map<string, ChangedFile>();
  for (let at = 0; at < raw.length;) {
    const [oldMode, newMode, oldId, newId, code] = raw[at]!.slice(1).split(' ') as [
      string,
      string,
      string,
      string,
      string,
    ];
    const letter = code.charAt(0);
    const renamed = letter === 'R' || letter === 'C';
    const path = raw[at + (renamed ? 2 : 1)]!;
    let status = STATUS[letter] ?? 'modified';
    if (status === 'modified' && oldId === newId && oldMode !== newMode) status = 'mode';
    const file: ChangedFile = { path, status, additions: 0, deletions: 0, binary: false };
    if (letter === 'R') file.oldPath = raw[at + 1]!;
    files.set(path, file);
    at += renamed ? 3 : 2;
  }
  for (let at = 0; at < numstat.length;) {
    const [additions, deletions, inline] = numstat[at]!.split('\t') as [string, string, string];
    const path = inline === '' ? numstat[at + 2]! : inline;
    at += inline === '' ? 3 : 1;
    const file = files.get(path);
    if (file === undefined) continue;
    if (additions === '-') file.binary = true;
    else {
      file.additions = Number(additions);
      file.deletions = Number(deletions);
    }
  }
  const patch =
    files.size === 0
      ? { stdout: Buffer.alloc(0), bytes: 0 }
      : await git([...common, ...PATCH_OPTIONS, ...range], {
          ...run,
          ...(options.patchLimit === undefined
            ? {
                maxBytes: MAX_PATCH_BYTES,
                tooLarge: 'the patch is too large to review or apply here: look at the workspace with git itself.',
              }
            : { maxBytes: options.patchLimit, cut: true }),
        });
  const list = [...files.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const diff = {
    files: list,
    stats: {
      files: list.length,
      additions: list.reduce((sum, file) => sum + file.additions, 0),
      deletions: list.reduce((sum, file) => sum + file.deletions, 0),
    },
    // The text; a file whose bytes are not UTF-8 is applied from `bytes`, never from this string.
    patch: patch.stdout.toString('utf8'),
  };
  return { diff, bytes: patch.stdout, patchBytes: patch.bytes };
}
