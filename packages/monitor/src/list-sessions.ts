import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SessionStore } from '@rho/core';
import type { SessionInfo } from '@rho/core';
import type { LivenessOptions } from './live-status.js';
import { judgeLiveness } from './live-status.js';
import type { ListedSession } from './listed-session.js';

/**
 * One session of a sessions directory as the monitor lists it: the {@link ListedSession} every
 * view shows, read from what core's {@link SessionStore} reads plus liveness, with its directory.
 */
export type MonitoredSession = ListedSession & { directory: string };

/** Options of {@link listSessions}. */
export interface ListSessionsOptions extends LivenessOptions {
  /** At most this many sessions (the newest). */
  limit?: number;
  /**
   * Read the head of trace.jsonl for sessions whose meta.json has no `first_prompt` (the Python
   * original's). Default true; the rest of a trace is never read.
   */
  promptFromTrace?: boolean;
}

/**
 * The sessions under `directory` (a `sessions` directory), newest first, with live status. The
 * listing is core's ({@link SessionStore.list}: one meta.json per session), and the trace is
 * stat'ed only for sessions whose liveness needs it, so ten thousand sessions list in a fraction
 * of a second. Missing directory: an empty list.
 */
export function listSessions(directory: string, options: ListSessionsOptions = {}): MonitoredSession[] {
  const liveness: LivenessOptions = { ...options, now: options.now ?? Date.now() };
  const infos = new SessionStore(directory).list({
    ...(options.limit === undefined ? {} : { limit: options.limit }),
    promptFromTrace: options.promptFromTrace ?? true,
  });
  return infos.map((info) => monitored(info, liveness));
}

/**
 * One session directory as {@link listSessions} sees it, or undefined when it is neither a rho
 * nor a Python rho-agent session (no meta.json and no trace.jsonl).
 */
export function readMonitoredSession(
  directory: string,
  options: LivenessOptions = {},
  promptFromTrace = true,
): MonitoredSession | undefined {
  const info = new SessionStore(dirname(directory)).info(directory, { promptFromTrace });
  return info === undefined ? undefined : monitored(info, options);
}

function monitored(info: SessionInfo, options: LivenessOptions): MonitoredSession {
  const { meta } = info;
  // A session whose meta.json cannot be read is listed as `unknown` with the reason, not hidden
  // and not taken for completed.
  const liveness =
    info.problem !== undefined
      ? { status: 'unknown' as const, reason: undefined }
      : judgeLiveness(meta, () => traceModifiedMs(info.directory), options);
  const reason = liveness.reason ?? info.problem;
  return {
    id: info.id,
    directory: info.directory,
    status: liveness.status,
    recordedStatus: info.status,
    ...(info.problem === undefined ? {} : { problem: info.problem }),
    ...(reason === undefined ? {} : { statusReason: reason }),
    ...(info.model === undefined ? {} : { model: info.model }),
    ...(info.profile === undefined ? {} : { profile: info.profile }),
    startedAt: info.startedAt,
    ...(info.updatedAt === undefined ? {} : { updatedAt: info.updatedAt }),
    ...(typeof meta.heartbeat_at === 'string' ? { heartbeatAt: meta.heartbeat_at } : {}),
    ...(typeof meta.pid === 'number' ? { pid: meta.pid } : {}),
    ...(typeof meta.hostname === 'string' ? { hostname: meta.hostname } : {}),
    ...(info.firstPrompt === undefined ? {} : { firstPrompt: info.firstPrompt }),
    ...(info.costUsd === undefined ? {} : { costUsd: info.costUsd }),
    ...(info.parentId === undefined ? {} : { parentId: info.parentId }),
    ...(changesOf(meta.changes) ?? {}),
    ...(labelsOf(meta.labels) ?? {}),
  };
}

/** meta.json's `labels`, when it is an object of strings. */
function labelsOf(value: unknown): { labels: Record<string, string> } | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const labels = Object.entries(value as Record<string, unknown>).filter(
    (entry): entry is [string, string] => typeof entry[1] === 'string',
  );
  return labels.length === 0 ? undefined : { labels: Object.fromEntries(labels) };
}

/** meta.json's `changes`, when it holds three counts. */
function changesOf(value: unknown): { changes: NonNullable<ListedSession['changes']> } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { files, additions, deletions } = value as Record<string, unknown>;
  if (typeof files !== 'number' || typeof additions !== 'number' || typeof deletions !== 'number') return undefined;
  return { changes: { files, additions, deletions } };
}

function traceModifiedMs(directory: string): number | undefined {
  try {
    return statSync(join(directory, 'trace.jsonl')).mtimeMs;
  } catch {
    return undefined;
  }
}
