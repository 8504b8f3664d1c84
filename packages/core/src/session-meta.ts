import { hostname } from 'node:os';
import { closeSync, ftruncateSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
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
}

/** Reads `meta.json` of a session directory, or undefined when absent or unreadable. */
export function readSessionMeta(directory: string): Partial<SessionMeta> | undefined {
  try {
    const value: unknown = JSON.parse(readFileSync(join(directory, 'meta.json'), 'utf8'));
    return typeof value === 'object' && value !== null ? (value as Partial<SessionMeta>) : undefined;
  } catch {
    return undefined;
  }
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
