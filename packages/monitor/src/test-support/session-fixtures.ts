import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionStore } from '@rho/core';
import { updateSessionMeta } from '@rho/core/internal';
import type { SessionMeta } from '@rho/core';

/** A fresh temporary `sessions` directory. */
export function temporarySessions(): string {
  return join(mkdtempSync(join(tmpdir(), 'rho-monitor-')), 'sessions');
}

/** Creates a session directory with SessionStore, then merges `meta` into its meta.json. */
export function makeSession(base: string, meta: Partial<SessionMeta> & { id: string }, trace: object[] = []): string {
  const { directory } = new SessionStore(base).create({
    id: meta.id,
    model: meta.model ?? 'gpt-4o-mini',
    ...(meta.parent_id ? { parentId: meta.parent_id } : {}),
  });
  updateSessionMeta(directory, meta);
  for (const record of trace) appendFileSync(join(directory, 'trace.jsonl'), `${JSON.stringify(record)}\n`);
  return directory;
}

/** Meta fields of a session run by this very process (alive, this host). */
export function liveHere(): Pick<SessionMeta, 'pid' | 'hostname' | 'heartbeat_at'> {
  return { pid: process.pid, hostname: hostname(), heartbeat_at: new Date().toISOString() };
}

/** The pid of a process that has exited (and been reaped), for dead-session tests. */
export function exitedPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}
