import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SessionStore } from '@rho/core';
import type { SessionInfo } from '@rho/core';
import type { LiveStatus, LivenessOptions } from './live-status.js';
import { judgeLiveness } from './live-status.js';

/** One session as the monitor lists it: what core's {@link SessionStore} reads, plus liveness. */
export interface MonitoredSession {
  /** The directory name, which is the session id. */
  id: string;
  /** Absolute path of the session directory. */
  directory: string;
  /** Live status: meta.json's status, or `dead` when the agent process is gone. */
  status: LiveStatus;
  /** The status meta.json records (differs from `status` only for dead sessions). */
  recordedStatus: string;
  /** Why the session is considered dead. */
  deadReason?: string;
  /** The model the session runs. */
  model?: string;
  /** The permission profile it runs under. */
  profile?: string;
  /** UTC ISO-8601 start time (the directory's mtime when meta.json lacks it). */
  startedAt: string;
  /** When meta.json was last written. */
  updatedAt?: string;
  /** Last heartbeat of the agent process, if it wrote one. */
  heartbeatAt?: string;
  /** Process id of the agent (rho sessions only). */
  pid?: number;
  /** Host the agent runs on; the pid is only meaningful there. */
  hostname?: string;
  /** The task the session was started with. */
  firstPrompt?: string;
  /** Cumulative cost in USD as of the end of the last run. */
  costUsd?: number;
  /** Id of the parent session, for child agents. */
  parentId?: string;
  /** Why the session's meta.json could not be read (its status is then `unknown`). */
  problem?: string;
}

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
  return {
    id: info.id,
    directory: info.directory,
    status: liveness.status,
    recordedStatus: info.status,
    ...(info.problem === undefined ? {} : { problem: info.problem }),
    ...(liveness.reason === undefined ? {} : { deadReason: liveness.reason }),
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
  };
}

function traceModifiedMs(directory: string): number | undefined {
  try {
    return statSync(join(directory, 'trace.jsonl')).mtimeMs;
  } catch {
    return undefined;
  }
}
