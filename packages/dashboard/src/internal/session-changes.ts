/**
 * What a session changed, for `GET /api/sessions/:id/changes`: the diff of its isolated workspace
 * (`@rho/workspace`'s `diffWorkspace`), or, for an in-place run with checkpoints, the diff from its
 * first checkpoint to its last (the files as its last run left them). `@rho/workspace` is loaded
 * here, when a session's changes are asked for, never when the dashboard starts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChangedFile, ChangeStats, WorkspaceKind, WorkspaceRecord } from '@rho/workspace';

/** The largest patch the dashboard sends (UTF-8 bytes); a larger one is cut, with a note. */
export const CHANGES_PATCH_BYTES = 2 * 1024 * 1024;

/** The answer of `GET /api/sessions/:id/changes`. */
export interface SessionChanges {
  /** The session's isolated workspace, or null for a run in place. */
  workspace: {
    mode: 'isolated';
    kind: WorkspaceKind;
    branch?: string;
    state: WorkspaceRecord['state'];
    /** The user's working directory: what `rho apply` changes. */
    original: string;
    decidedAt?: string;
  } | null;
  /** For an in-place run: the checkpoints the diff is between. */
  checkpoints?: {
    workingDir: string;
    count: number;
    from: { turn: number; createdAt: string };
    to: { turn: number; createdAt: string };
  };
  /** The totals; null when nothing tells what the session changed (no workspace, no checkpoint). */
  stats: ChangeStats | null;
  files: ChangedFile[];
  /** The unified diff, binary contents left out, cut at {@link CHANGES_PATCH_BYTES}. */
  patch: string;
  /** The whole patch's size in bytes (before the cut). */
  patchBytes: number;
  /** The patch was cut. */
  truncated: boolean;
  /** What a person should know (why there is no diff, that the patch was cut, how to see it whole). */
  note?: string;
}

/** Reads what the session in `directory` changed. Throws `@rho/workspace`'s errors (a corrupt record, a failed git). */
export async function readSessionChanges(
  id: string,
  directory: string,
  recorded: ChangeStats | undefined,
): Promise<SessionChanges> {
  const library = await import('@rho/workspace');
  const record = library.readWorkspace(directory);
  if (record !== undefined) {
    const workspace: SessionChanges['workspace'] = {
      mode: 'isolated',
      kind: record.kind,
      ...(record.branch === undefined ? {} : { branch: record.branch }),
      state: record.state,
      original: record.original,
      ...(record.decidedAt === undefined ? {} : { decidedAt: record.decidedAt }),
    };
    try {
      const diff = await library.diffWorkspace(record);
      return { workspace, ...bounded(id, diff.patch), stats: diff.stats, files: diff.files };
    } catch (error) {
      // Applied, discarded, or its files gone: what meta.json last recorded, and why there is no diff.
      if (!library.WorkspaceUsageError.isInstance(error)) throw error;
      return {
        workspace,
        stats: recorded ?? null,
        files: [],
        patch: '',
        patchBytes: 0,
        truncated: false,
        note: error.message,
      };
    }
  }
  const workingDir = workingDirOf(directory);
  if (!existsSync(join(directory, 'checkpoints.git')) || workingDir === undefined)
    return {
      workspace: null,
      stats: null,
      files: [],
      patch: '',
      patchBytes: 0,
      truncated: false,
      note: `Session ${id} ran in place without checkpoints: rho kept no record of the files it changed. Run with --workspace isolated to review changes before they land.`,
    };
  const store = library.CheckpointStore.open({ sessionDir: directory, workingDir });
  const list = await store.list();
  const first = list[0];
  const last = list.at(-1);
  if (first === undefined || last === undefined)
    return {
      workspace: null,
      stats: null,
      files: [],
      patch: '',
      patchBytes: 0,
      truncated: false,
      note: `Session ${id} took no checkpoint yet.`,
    };
  const { diff, patchBytes } = await store.diffBetween({ patchLimit: CHANGES_PATCH_BYTES });
  const checkpoints = {
    workingDir: store.workingDir,
    count: list.length,
    from: { turn: first.turn, createdAt: first.createdAt },
    to: { turn: last.turn, createdAt: last.createdAt },
  };
  // The whole patch: git's, between the two commits (`rho diff ID` shows the first checkpoint
  // against the files as they are now, which a person's later edits also change).
  const whole = `git --git-dir=${store.gitDir} diff ${first.commit} ${last.commit}`;
  const shown = bounded(id, diff.patch, patchBytes, whole);
  return { workspace: null, checkpoints, stats: diff.stats, files: diff.files, ...shown };
}

/** meta.json's `working_dir`, when it has one. */
function workingDirOf(directory: string): string | undefined {
  try {
    const meta = JSON.parse(readFileSync(join(directory, 'meta.json'), 'utf8')) as { working_dir?: unknown };
    return typeof meta.working_dir === 'string' && meta.working_dir !== '' ? meta.working_dir : undefined;
  } catch {
    return undefined;
  }
}

const BINARY = /^GIT binary patch\n[\s\S]*?(?=^diff --git |(?![\s\S]))/gm;

/**
 * The patch as the page shows it: binary contents (`GIT binary patch` blocks) left out, cut at
 * {@link CHANGES_PATCH_BYTES} on a line's end, with a note saying how to see it whole (`whole`).
 */
export function bounded(
  id: string,
  patch: string,
  wholeBytes?: number,
  whole = `rho diff ${id}`,
): Pick<SessionChanges, 'patch' | 'patchBytes' | 'truncated' | 'note'> {
  const patchBytes = wholeBytes ?? Buffer.byteLength(patch);
  const readable = patch.replace(BINARY, 'Binary file: its contents are not shown here.\n');
  const bytes = Buffer.from(readable);
  if (bytes.length <= CHANGES_PATCH_BYTES && patchBytes <= CHANGES_PATCH_BYTES)
    return { patch: readable, patchBytes, truncated: false };
  let shown = bytes.subarray(0, CHANGES_PATCH_BYTES).toString('utf8');
  const end = shown.lastIndexOf('\n');
  if (end >= 0) shown = shown.slice(0, end + 1);
  const mib = (count: number) => `${(count / 1024 / 1024).toFixed(1)} MiB`;
  return {
    patch: shown,
    patchBytes,
    truncated: true,
    note: `The patch is ${mib(Math.max(patchBytes, bytes.length))}: the dashboard shows its first ${mib(CHANGES_PATCH_BYTES)}. ${whole} shows it whole.`,
  };
}
