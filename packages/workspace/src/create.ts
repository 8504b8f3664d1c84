/** Making an isolated workspace: a git worktree on `rho/<session-id>`, or a copy of a plain directory. */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync, rmSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { isAbsolute, join, posix, relative, sep } from 'node:path';
import { withCurrentFiles, type TreeAccess } from './diff.js';
import { WorkspaceError, WorkspaceUsageError } from './errors.js';
import { git, gitText, splitNul } from './git.js';
import { writeWorkspace } from './record.js';
import { removeWorkspace } from './remove.js';
import type { WorkspaceRecord } from './types.js';

export interface CreateWorkspaceOptions {
  sessionId: string;
  /** The session's directory: `workspace.json` (and a copy's git store) go there. */
  sessionDir: string;
  /** The user's working directory: what the workspace isolates, and what `apply` changes. */
  workingDir: string;
  /** rho's home (`$RHO_HOME`): workspaces are `<home>/workspaces/<session-id>`. */
  home: string;
  /**
   * Where the agent works when that is not this machine (the daytona backend): the workspace is a
   * copy (never a worktree: it travels whole, `.git` included), `empty` when nothing of the
   * working directory goes there, and the backend brings its changes back into it.
   */
  remote?: { backend: string; empty?: boolean };
  signal?: AbortSignal;
}

export interface CreatedWorkspace {
  record: WorkspaceRecord;
  /** What a person should know, one sentence each: where it is, what was carried over. */
  notes: string[];
}

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

function inside(path: string, directory: string): boolean {
  const rel = relative(directory, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

/**
 * Makes the session's isolated workspace under `<home>/workspaces/<session-id>` and records it in
 * `<sessionDir>/workspace.json`. Inside a git repository, a worktree on a new branch
 * `rho/<session-id>`, the user's uncommitted changes carried over as one commit on it; elsewhere
 * (or in a repository without a commit), a copy with a shadow git store holding the snapshot.
 */
export async function createWorkspace(options: CreateWorkspaceOptions): Promise<CreatedWorkspace> {
  const { sessionId, sessionDir, signal } = options;
  if (!SESSION_ID.test(sessionId))
    throw new WorkspaceUsageError({
      message: `'${sessionId}' cannot name a workspace (letters, digits, '.', '_', '-').`,
    });
  let original: string;
  try {
    original = realpathSync(options.workingDir);
  } catch (error) {
    throw new WorkspaceUsageError({
      message: `The working directory ${options.workingDir} does not exist.`,
      cause: error,
    });
  }
  const workspaces = join(options.home, 'workspaces');
  mkdirSync(workspaces, { recursive: true, mode: 0o700 });
  const root = join(realpathSync(workspaces), sessionId);
  if (existsSync(root))
    throw new WorkspaceUsageError({
      message: `A workspace of session ${sessionId} already exists at ${root}: discard it, or let rho sweep it, first.`,
    });
  const found = await git(['rev-parse', '--show-toplevel'], { cwd: original, allowFailure: true, signal });
  let top: string | undefined;
  if (found.code === 0) top = realpathSync(found.stdout.toString('utf8').replace(/\n$/, ''));
  else if (!/not a git repository/i.test(found.stderr))
    throw new WorkspaceError('workspace_git', {
      message: `git cannot tell whether ${original} is in a repository: ${found.stderr.trim().slice(0, 2000)}`,
    });
  if (inside(root, top ?? original))
    throw new WorkspaceUsageError({
      message: `rho's home (${options.home}) is inside ${top ?? original}, so a workspace cannot be made there: set RHO_HOME to a directory outside it.`,
    });
  const notes: string[] = [];
  if (top !== undefined && options.remote === undefined) {
    const head = await git(['rev-parse', '--verify', '-q', 'HEAD^{commit}'], { cwd: top, allowFailure: true, signal });
    if (head.code === 0) {
      const created = await worktree({ ...options, original, top, root, head: head.stdout.toString('utf8').trim() });
      writeWorkspace(sessionDir, created.record);
      return created;
    }
    notes.push(`${top} has no commit yet, so the workspace is a copy of ${original} instead of a git worktree.`);
  }
  const record = await copy({ ...options, original, root, notes });
  writeWorkspace(sessionDir, record);
  return { record, notes };
}

interface Place extends CreateWorkspaceOptions {
  original: string;
  root: string;
}

async function worktree(place: Place & { top: string; head: string }): Promise<CreatedWorkspace> {
  const { top, head, root, original, sessionId, signal } = place;
  const subdir = relative(top, original).split(sep).join('/');
  const access: TreeAccess = { prefix: [], cwd: top, force: false, isolated: false };
  // The user's files now (staged, unstaged, untracked and not ignored), read through a temporary index.
  const { tree, changed } = await withCurrentFiles(
    access,
    head,
    async (env) => ({
      tree: await gitText(['write-tree'], { cwd: top, env, signal }),
      changed: splitNul(
        (await git(['diff', '--cached', '--name-only', '--no-renames', '-z', head], { cwd: top, env, signal })).stdout,
      ),
    }),
    signal,
  );
  let base = head;
  if (changed.length > 0)
    base = await gitText(
      [
        'commit-tree',
        tree,
        '-p',
        head,
        '-m',
        `rho: uncommitted changes of ${original} at the start of session ${sessionId}`,
      ],
      { cwd: top, signal },
    );
  const branch = `rho/${sessionId}`;
  await git(['worktree', 'add', '--quiet', '-b', branch, root, base], { cwd: top, signal });
  const record: WorkspaceRecord = {
    version: 1,
    kind: 'git-worktree',
    sessionId,
    original,
    path: subdir === '' ? root : join(root, subdir),
    root,
    base,
    branch,
    repository: top,
    carried: changed.map((path) => posix.relative(subdir, path)),
    createdAt: new Date().toISOString(),
    state: 'active',
  };
  try {
    // A folder git does not track (empty, or all of it ignored) is made, empty.
    mkdirSync(record.path, { recursive: true });
    record.path = realpathSync(record.path);
  } catch (error) {
    await removeWorkspace(record);
    throw new WorkspaceError('workspace_io', {
      message: `Cannot make ${record.path}: ${(error as Error).message}`,
      cause: error,
    });
  }
  const notes = [`The workspace is a git worktree of ${top} on branch ${branch}, at ${root}.`];
  if (changed.length > 0)
    notes.push(
      `${plural(changed.length, 'uncommitted file')} of ${top} ${changed.length === 1 ? 'was' : 'were'} carried into it, committed on ${branch} as ${base.slice(0, 12)}; your working directory is unchanged.`,
    );
  return { record, notes };
}

function copyTree(from: string, to: string, signal?: AbortSignal): Promise<void> {
  if (process.platform !== 'linux')
    return cp(from, to, {
      recursive: true,
      verbatimSymlinks: true,
      preserveTimestamps: true,
      errorOnExist: true,
      force: false,
    });
  return new Promise((resolve, reject) => {
    // Copy-on-write where the file system can (btrfs, XFS, ...), modes, links and times kept.
    const child = spawn('cp', ['-a', '--reflink=auto', '--', from, to], {
      stdio: ['ignore', 'ignore', 'pipe'],
      signal,
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(
            new WorkspaceError('workspace_io', {
              message: `Copying ${from} to ${to} failed: ${stderr.trim() || `exit ${code}`}`,
            }),
          ),
    );
  });
}

async function copy(place: Place & { notes: string[] }): Promise<WorkspaceRecord> {
  const { original, root, sessionDir, sessionId, signal } = place;
  const gitDir = join(sessionDir, 'workspace.git');
  mkdirSync(sessionDir, { recursive: true, mode: 0o700 });
  rmSync(gitDir, { recursive: true, force: true });
  const record: WorkspaceRecord = {
    version: 1,
    kind: 'copy',
    sessionId,
    original,
    path: root,
    root,
    base: '',
    gitDir,
    carried: [],
    createdAt: new Date().toISOString(),
    state: 'active',
    ...(place.remote === undefined
      ? {}
      : { remote: { backend: place.remote.backend, empty: place.remote.empty === true } }),
  };
  try {
    if (place.remote?.empty === true) mkdirSync(root, { mode: 0o700 });
    else await copyTree(original, root, signal);
    await git(['init', '--quiet', '--bare', gitDir], { isolated: true, signal });
    const store = { cwd: root, isolated: true, signal };
    const prefix = [`--git-dir=${gitDir}`, `--work-tree=${root}`];
    // Nothing is left out but .git directories, which git never adds: ignore files do not apply here.
    await git([...prefix, 'add', '-A', '--force', '--', '.'], store);
    const tree = await gitText([...prefix, 'write-tree'], store);
    record.base = await gitText(
      [...prefix, 'commit-tree', tree, '-m', `rho: ${original} at the start of session ${sessionId}`],
      store,
    );
    await git([...prefix, 'update-ref', 'refs/rho/base', record.base], store);
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    rmSync(gitDir, { recursive: true, force: true });
    throw error;
  }
  if (place.remote === undefined)
    place.notes.push(
      `The workspace is a copy of ${original} at ${root}; everything was copied, and only .git directories are left out of its review (diff and apply).`,
    );
  else
    place.notes.push(
      place.remote.empty === true
        ? `The ${place.remote.backend} sandbox starts empty (nothing of ${original} is uploaded): what the agent leaves in its working directory comes back as new files.`
        : `${original} is copied to ${root} and uploaded from there.`,
    );
  return record;
}
