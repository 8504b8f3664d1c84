/** Reviewing and deciding an isolated workspace: its diff, applying it whole, or discarding it. */
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix, relative, sep } from 'node:path';
import { diffCached, withCurrentFiles, type TreeAccess } from './diff.js';
import { WorkspaceConflictError, WorkspaceError, WorkspaceUsageError } from './errors.js';
import { git } from './git.js';
import { decide, writeAppliedDiff } from './record.js';
import { removeWorkspace } from './remove.js';
import type { WorkspaceDiff, WorkspaceRecord } from './types.js';

function accessOf(record: WorkspaceRecord): { access: TreeAccess; relative: string } {
  if (record.kind === 'copy')
    return {
      access: {
        prefix: [`--git-dir=${record.gitDir}`, `--work-tree=${record.root}`],
        cwd: record.root,
        force: true,
        isolated: true,
      },
      relative: '',
    };
  return {
    access: { prefix: [], cwd: record.root, force: false, isolated: false },
    relative: relative(record.root, record.path).split(sep).join(posix.sep),
  };
}

function usable(record: WorkspaceRecord, verb: string): void {
  if (record.state === 'applied')
    throw new WorkspaceUsageError({
      message: `Cannot ${verb} the workspace of session ${record.sessionId}: it was applied to ${record.original}${record.decidedAt === undefined ? '' : ` at ${record.decidedAt}`}.`,
    });
  if (record.state === 'discarded')
    throw new WorkspaceUsageError({
      message: `Cannot ${verb} the workspace of session ${record.sessionId}: it was discarded${record.decidedAt === undefined ? '' : ` at ${record.decidedAt}`}.`,
    });
  if (!existsSync(record.root))
    throw new WorkspaceUsageError({
      message: `Cannot ${verb} the workspace of session ${record.sessionId}: its files (${record.root}) are gone.`,
    });
}

async function diffOf(record: WorkspaceRecord): Promise<{ diff: WorkspaceDiff; bytes: Buffer }> {
  const { access, relative: scope } = accessOf(record);
  return withCurrentFiles(access, record.base, (env) => diffCached(access, env, record.base, scope));
}

/** What the agent changed in the workspace since `base`: files, totals and a patch for `original`. */
export async function diffWorkspace(record: WorkspaceRecord): Promise<WorkspaceDiff> {
  usable(record, 'diff');
  return (await diffOf(record)).diff;
}

/** The files git names when a patch does not apply. */
export function conflictingFiles(stderr: string): string[] {
  const files = new Set<string>();
  for (const line of stderr.split('\n')) {
    const match =
      /^error: patch failed: (.+):\d+$/.exec(line) ??
      /^error: (.+): (?:does not exist in working directory|already exists in working directory|patch does not apply|wrong type|does not match index|No such file or directory)$/.exec(
        line,
      ) ??
      /^error: the patch applies to '(.+)' \([0-9a-f]+\), which does not match the current contents\.$/.exec(line);
    if (match !== null) files.add(match[1]!);
  }
  return [...files].sort();
}

/**
 * Applies the agent's changes to `original`, all or nothing: checked first (`git apply --check`,
 * to the working tree, never the index); nothing changes when any file conflicts. Then the record
 * is marked applied and the workspace removed. Returns the applied diff.
 */
export async function applyWorkspace(record: WorkspaceRecord, sessionDir: string): Promise<WorkspaceDiff> {
  usable(record, 'apply');
  if (!existsSync(record.original))
    throw new WorkspaceUsageError({
      message: `Cannot apply the workspace of session ${record.sessionId}: ${record.original} is gone.`,
    });
  const { diff, bytes } = await diffOf(record);
  if (diff.files.length === 0)
    throw new WorkspaceUsageError({
      message: `Nothing to apply: the session changed no file (discard the workspace of session ${record.sessionId}).`,
    });
  const directory = mkdtempSync(join(tmpdir(), 'rho-apply-'));
  try {
    const patch = join(directory, 'changes.patch');
    writeFileSync(patch, bytes);
    // Inside a repository git apply takes paths from its top (and skips, silently, those outside
    // the current folder): it runs there, the patch's paths put below the original's subfolder.
    const top = await git(['rev-parse', '--show-toplevel'], { cwd: record.original, allowFailure: true });
    const cwd = top.code === 0 ? realpathSync(top.stdout.toString('utf8').trim()) : record.original;
    const subdir = relative(cwd, record.original).split(sep).join(posix.sep);
    const apply = [
      'apply',
      '--binary',
      '--whitespace=nowarn',
      '-p1',
      ...(subdir === '' ? [] : [`--directory=${subdir}`]),
    ];
    const check = await git([...apply, '--check', patch], { cwd, allowFailure: true });
    if (check.code !== 0) {
      const files = conflictingFiles(check.stderr).map((file) => (subdir === '' ? file : posix.relative(subdir, file)));
      const named =
        files.length === 0 ? `git apply refused it: ${check.stderr.trim().slice(0, 1000)}` : files.join(', ');
      throw new WorkspaceConflictError({
        files,
        message:
          `The session's changes do not apply to ${record.original}: changed there since the session started: ${named}. ` +
          `Nothing was changed. Commit or stash your change to ${files.length === 1 ? 'that file' : 'those files'} and apply again; ` +
          `or save the patch (rho diff ${record.sessionId} > ${record.sessionId}.patch) and apply it by hand; or discard the workspace.`,
      });
    }
    const applied = await git(apply.concat(patch), { cwd, allowFailure: true });
    if (applied.code !== 0)
      throw new WorkspaceError('workspace_git', {
        message: `git apply failed in ${record.original} after its check passed (did a file change meanwhile?): ${applied.stderr.trim().slice(0, 2000)}`,
      });
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  // What was applied stays in the session directory (the workspace goes): rho diff, export.
  writeAppliedDiff(sessionDir, diff);
  decide(record, sessionDir, 'applied');
  // A failure here leaves a decided record with its files: sweepWorkspaces removes them.
  await removeWorkspace(record).catch(() => undefined);
  return diff;
}

/** Removes the workspace (worktree, branch and entry; or copy and store) and marks the record discarded. */
export async function discardWorkspace(record: WorkspaceRecord, sessionDir: string): Promise<void> {
  if (record.state !== 'active') usable(record, 'discard');
  // Decided first: a crash halfway leaves a discarded record whose files the sweep removes.
  decide(record, sessionDir, 'discarded');
  await removeWorkspace(record);
}
