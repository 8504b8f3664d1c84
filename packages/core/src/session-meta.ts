import { hostname } from 'node:os';
import {
  closeSync,
  ftruncateSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { SessionStatus } from './events.js';

/** The contents of a session's `meta.json`. Fields written by the Python original are a subset. */
export interface SessionMeta {
  id: string;
  status: SessionStatus;
  model?: string;
  profile?: string;
  started_at: string;
  updated_at?: string;
  /** Last sign of life of the agent process (refreshed while it runs). */
  heartbeat_at?: string;
  pid?: number;
  hostname?: string;
  first_prompt?: string;
  parent_id?: string | null;
  working_dir?: string;
  /** Cumulative cost in USD, refreshed at the end of every run; null when unknown (no call had a price). */
  cost_usd?: number | null;
  /** The limit that ended the last run, for status `limit`. */
  limit?: string;
  /**
   * What the run changed (`@rho/workspace`'s diff stats), refreshed at the end of every run: an
   * isolated run's in its workspace, an in-place run's since its first checkpoint. `rho ps` shows
   * "N files changed, +a/-d".
   */
  changes?: { files: number; additions: number; deletions: number };
  /** The queued task this session runs, and which attempt (a `rho worker` session), from its creation. */
  task_id?: string;
  task_attempt?: number;
  /** The session's labels (`rho worker`'s task labels, `rho mcp serve`'s client), each a key with a value (often empty), from its creation. */
  labels?: Record<string, string>;
}

/** What {@link inspectSessionMeta} found: the contents, or that there is no `meta.json`, or why it cannot be used. */
export type SessionMetaReading =
  { state: 'read'; meta: Partial<SessionMeta> } | { state: 'missing' } | { state: 'unusable'; problem: string };

/**
 * Reads `meta.json` of a session directory and says why it cannot be used when it cannot: not
 * readable (`meta.json cannot be read (EISDIR)`), empty, not JSON, not an object, or a `status`
 * that is not a string. A torn or foreign file is never taken for a session's real status.
 */
export function inspectSessionMeta(directory: string): SessionMetaReading {
  let text: string;
  try {
    text = readFileSync(join(directory, 'meta.json'), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { state: 'missing' };
    return {
      state: 'unusable',
      problem: `meta.json cannot be read (${code ?? (error instanceof Error ? error.message : String(error))})`,
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { state: 'unusable', problem: text.trim() === '' ? 'meta.json is empty' : 'meta.json is not valid JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { state: 'unusable', problem: 'meta.json is not a JSON object' };
  const status = (value as { status?: unknown }).status;
  if (status !== undefined && typeof status !== 'string')
    return { state: 'unusable', problem: 'meta.json has a status that is not a string' };
  return { state: 'read', meta: value as Partial<SessionMeta> };
}

/** Reads `meta.json` of a session directory, or undefined when absent or unusable (see {@link inspectSessionMeta}). */
export function readSessionMeta(directory: string): Partial<SessionMeta> | undefined {
  const reading = inspectSessionMeta(directory);
  return reading.state === 'read' ? reading.meta : undefined;
}

/**
 * Merges `patch` into `meta.json` atomically (write a temporary file, then rename), so a reader
 * never sees half a file and a crash never leaves one.
 */
export function updateSessionMeta(directory: string, patch: Partial<SessionMeta>): SessionMeta {
  const current = readSessionMeta(directory) ?? {};
  const next = { ...current, ...patch, updated_at: new Date().toISOString() } as SessionMeta;
  const path = join(directory, 'meta.json');
  const temporary = `${path}.${process.pid}.tmp`;
  const content = `${JSON.stringify(next, null, 2)}\n`;
  try {
    writeFileSync(temporary, content);
    renameSync(temporary, path);
  } catch (error) {
    // Never leave the temporary file behind (a full disk fails the write after creating it).
    rmSync(temporary, { force: true });
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOSPC' && code !== 'EDQUOT') throw error;
    // A full disk: rewrite the file in place, in the blocks it already has, so that its status
    // (say, no longer `running`) is still recorded. Not atomic, but better than a stale status.
    overwriteInPlace(path, content);
  }
  return next;
}

/** Fields identifying the current process, for liveness checks by the monitor. */
export function processIdentity(): Pick<SessionMeta, 'pid' | 'hostname'> {
  return { pid: process.pid, hostname: hostname() };
}

function overwriteInPlace(path: string, content: string): void {
  const fd = openSync(path, 'r+');
  try {
    const bytes = Buffer.from(content);
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written, written);
    ftruncateSync(fd, bytes.length);
  } finally {
    closeSync(fd);
  }
}
