import { hostname as osHostname } from 'node:os';
import type { SessionMeta, SessionStatus } from '@rho/core';
import { ACTIVE_SESSION_STATUSES, SESSION_STATUSES } from '@rho/core';

/**
 * The statuses only a listing shows, never recorded: judged from whether a process still runs a
 * session that says it is at work (`parked`: it waits for approval; `dead`: anything else).
 */
export const LISTING_ONLY_STATUSES = ['parked', 'dead'] as const;

/** A status only a listing shows (see {@link LISTING_ONLY_STATUSES}). */
export type ListingOnlyStatus = (typeof LISTING_ONLY_STATUSES)[number];

/**
 * Every status a listing can show a readable session with (`rho ps --status` takes these): what
 * the session recorded (core's `SESSION_STATUSES`), then {@link LISTING_ONLY_STATUSES}.
 */
export const LISTED_STATUSES: readonly (SessionStatus | ListingOnlyStatus)[] = [
  ...SESSION_STATUSES,
  ...LISTING_ONLY_STATUSES,
];

/**
 * A session's status as the monitor shows it: what meta.json says, `parked` or `dead` when its
 * process is gone, `unknown` when its meta.json cannot be read.
 */
export type LiveStatus = SessionStatus | ListingOnlyStatus | 'unknown';

/** Statuses that mean "an agent process should be working on this session right now" (core's `ACTIVE_SESSION_STATUSES`). */
export const ACTIVE_STATUSES: ReadonlySet<string> = new Set(ACTIVE_SESSION_STATUSES);

/**
 * What a session waiting for approval with no process behind it shows (its run was stopped, or
 * its process killed, while a call waited): not dead, since an answer and a resume go on at that
 * call; not live, since no process reads a cancel or a pause.
 */
export const PARKED_REASON =
  'a tool call waits for approval and no process runs the session: answer it (rho approve / rho deny), then continue it with rho --resume';

/**
 * `parked`, with {@link PARKED_REASON}, for a session that waits for approval with no process (a
 * `dead` verdict) and for a verdict that says `parked` already (a fleet's); the verdict otherwise.
 */
export function parkedOrDead(recorded: string, verdict: Liveness): Liveness {
  return (recorded === 'waiting_approval' && verdict.status === 'dead') || verdict.status === 'parked'
    ? { status: 'parked', reason: PARKED_REASON }
    : verdict;
}

/** Thresholds and probes of the liveness rules (see the package README). */
export interface LivenessOptions {
  /** The current time in ms since the epoch (default `Date.now()`). */
  now?: number;
  /** A heartbeat older than this means a session on another host (or without a pid) is dead (default 30 s; rho refreshes it every 5 s). */
  heartbeatStaleMs?: number;
  /**
   * On this host, a live pid whose heartbeat is older than this is taken for a reused pid (the
   * agent died and another process got its number), so the session is dead (default 10 min).
   */
  pidReuseStaleMs?: number;
  /** For sessions of the Python original (no pid, no heartbeat): a trace untouched this long means dead (default 5 min). */
  traceStaleMs?: number;
  /** This machine's host name (default `os.hostname()`). */
  hostname?: string;
  /** Whether a process exists on this host (default `process.kill(pid, 0)`). */
  isProcessAlive?: (pid: number) => boolean;
}

/** The verdict of {@link judgeLiveness}. */
export interface Liveness {
  /** The status to show. */
  status: LiveStatus;
  /** Why a session is `dead`, for people. */
  reason?: string;
}

/** Defaults of {@link LivenessOptions}. */
export const LIVENESS_DEFAULTS = { heartbeatStaleMs: 30_000, pidReuseStaleMs: 600_000, traceStaleMs: 300_000 } as const;

/**
 * Decides whether a session whose meta.json says it is active still has a process behind it.
 * `traceMtimeMs` is consulted only for sessions without pid and heartbeat (the Python original's);
 * pass a function so the trace is only stat'ed when needed.
 */
export function judgeLiveness(
  meta: Partial<SessionMeta>,
  traceMtimeMs: () => number | undefined,
  options: LivenessOptions = {},
): Liveness {
  const recorded = typeof meta.status === 'string' ? meta.status : 'completed';
  return parkedOrDead(recorded, judgeProcess(meta, traceMtimeMs, options));
}

function judgeProcess(
  meta: Partial<SessionMeta>,
  traceMtimeMs: () => number | undefined,
  options: LivenessOptions,
): Liveness {
  const recorded = typeof meta.status === 'string' ? meta.status : 'completed';
  if (!ACTIVE_STATUSES.has(recorded)) return { status: recorded as LiveStatus };
  const now = options.now ?? Date.now();
  const heartbeat = parseTime(meta.heartbeat_at);
  const heartbeatAge = heartbeat === undefined ? undefined : now - heartbeat;
  const host = options.hostname ?? osHostname();
  const sameHost = meta.hostname === undefined || meta.hostname === host;
  if (typeof meta.pid === 'number' && sameHost && meta.hostname !== undefined) {
    const alive = (options.isProcessAlive ?? processExists)(meta.pid);
    if (!alive) return { status: 'dead', reason: `process ${meta.pid} is gone` };
    if (heartbeatAge !== undefined && heartbeatAge > (options.pidReuseStaleMs ?? LIVENESS_DEFAULTS.pidReuseStaleMs)) {
      return {
        status: 'dead',
        reason: `no heartbeat for ${Math.round(heartbeatAge / 1000)} s (pid ${meta.pid} belongs to another process now)`,
      };
    }
    return { status: recorded as LiveStatus };
  }
  if (heartbeatAge !== undefined) {
    const limit = options.heartbeatStaleMs ?? LIVENESS_DEFAULTS.heartbeatStaleMs;
    if (heartbeatAge > limit)
      return {
        status: 'dead',
        reason: `no heartbeat for ${Math.round(heartbeatAge / 1000)} s${meta.hostname !== undefined && !sameHost ? ` (host ${meta.hostname})` : ''}`,
      };
    return { status: recorded as LiveStatus };
  }
  const touched = traceMtimeMs() ?? parseTime(meta.updated_at) ?? parseTime(meta.started_at);
  if (touched !== undefined && now - touched > (options.traceStaleMs ?? LIVENESS_DEFAULTS.traceStaleMs)) {
    return { status: 'dead', reason: `trace untouched for ${Math.round((now - touched) / 1000)} s and no heartbeat` };
  }
  return { status: recorded as LiveStatus };
}

/** Whether a process with this pid exists on this host (EPERM means it exists but is not ours). */
export function processExists(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parseTime(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : time;
}
