/**
 * The diff between two checkpoints of an in-place run, read from their shadow store
 * (`<session dir>/checkpoints.git`, `@rho/workspace`'s) with git: both are commits there, so no
 * work tree is read and nothing is written. `@rho/workspace` has no such diff (yet): its own
 * diffs are of a workspace against its base.
 */
import { spawn } from 'node:child_process';
import { RhoError } from '@rho/core';
import type { ChangedFile, ChangeStats } from '@rho/workspace';

/** Git could not read a session's checkpoints (not installed, a damaged store, a listing too large). */
export class ChangesError extends RhoError {
  constructor(options: { message: string; cause?: unknown }) {
    super('dashboard_changes', options);
    this.name = 'ChangesError';
  }

  static override isInstance(error: unknown): error is ChangesError {
    return RhoError.isInstance(error) && error.code === 'dashboard_changes';
  }
}

const TIMEOUT_MS = 60_000;
/** The most output of the listing commands read (a listing over it is refused). */
const LIST_BYTES = 16 * 1024 * 1024;

/** What {@link checkpointDiff} gives: the files, the totals, and the patch's first bytes. */
export interface CheckpointDiff {
  files: ChangedFile[];
  stats: ChangeStats;
  patch: string;
  /** The whole patch's size in bytes (more than `patch` holds when it was cut). */
  patchBytes: number;
}

const STATUS: Record<string, ChangedFile['status']> = {
  A: 'added',
  C: 'added',
  D: 'deleted',
  M: 'modified',
  R: 'renamed',
  T: 'type',
};

/** `from` to `to` in the store `gitDir`; the patch is read up to `patchLimit` bytes, the rest counted. */
export async function checkpointDiff(
  gitDir: string,
  from: string,
  to: string,
  patchLimit: number,
): Promise<CheckpointDiff> {
  const diff = ['diff', '-M', '--no-color', '--no-ext-diff', '--no-textconv'];
  const status = splitNul((await run(gitDir, [...diff, '--name-status', '-z', from, to], LIST_BYTES, true)).text);
  const files = new Map<string, ChangedFile>();
  for (let at = 0; at < status.length;) {
    const code = status[at]!;
    const letter = code.charAt(0);
    const renamed = letter === 'R' || letter === 'C';
    const path = status[at + (renamed ? 2 : 1)]!;
    const file: ChangedFile = { path, status: STATUS[letter] ?? 'modified', additions: 0, deletions: 0, binary: false };
    if (letter === 'R') file.oldPath = status[at + 1]!;
    files.set(path, file);
    at += renamed ? 3 : 2;
  }
  const numstat = splitNul((await run(gitDir, [...diff, '--numstat', '-z', from, to], LIST_BYTES, true)).text);
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
  const list = [...files.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const patch =
    list.length === 0
      ? { text: '', bytes: 0 }
      : await run(gitDir, [...diff, '--src-prefix=a/', '--dst-prefix=b/', from, to], patchLimit, false);
  return {
    files: list,
    stats: {
      files: list.length,
      additions: list.reduce((sum, file) => sum + file.additions, 0),
      deletions: list.reduce((sum, file) => sum + file.deletions, 0),
    },
    patch: patch.text,
    patchBytes: patch.bytes,
  };
}

function splitNul(text: string): string[] {
  const parts = text.split('\0');
  if (parts.at(-1) === '') parts.pop();
  return parts;
}

/**
 * Runs `git --git-dir=<gitDir> <args>` (no shell, the user's configuration ignored, a timeout).
 * Keeps the first `limit` bytes of its output and counts the rest; `strict`: more is an error.
 */
function run(gitDir: string, args: string[], limit: number, strict: boolean): Promise<{ text: string; bytes: number }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('GIT_')) env[key] = value;
  Object.assign(env, {
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
  });
  const command = `git ${args.slice(0, 2).join(' ')}`;
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-c', 'core.quotepath=false', `--git-dir=${gitDir}`, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: TIMEOUT_MS,
    });
    const kept: Buffer[] = [];
    let size = 0;
    let bytes = 0;
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (size < limit) {
        const piece = chunk.subarray(0, limit - size);
        kept.push(piece);
        size += piece.length;
      }
      if (strict && bytes > limit) child.kill();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    child.on('error', (error) =>
      reject(
        new ChangesError({
          message: `The dashboard cannot run git (${command}) on ${gitDir}: ${error.message}. Install git, or see the session's changes with rho diff.`,
          cause: error,
        }),
      ),
    );
    child.on('close', (code, signal) => {
      if (strict && bytes > limit)
        reject(
          new ChangesError({
            message: `${command} in ${gitDir} listed more than ${limit} bytes: look at the session with rho diff.`,
          }),
        );
      else if (code !== 0)
        reject(
          new ChangesError({
            message: `${command} failed in ${gitDir} (${signal === null ? `exit ${code}` : signal}): ${stderr.trim().slice(0, 1000)}. The session's checkpoint store may be damaged; rho diff reads it too.`,
          }),
        );
      else resolve({ text: Buffer.concat(kept).toString('utf8'), bytes });
    });
  });
}
