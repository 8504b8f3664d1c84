import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { SessionMeta } from '@rho/core';
import type { LiveStatus, LivenessOptions } from './live-status.js';
import { judgeLiveness } from './live-status.js';

/** One session as the monitor lists it. */
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
   * Read the first 8 KB of trace.jsonl for sessions whose meta.json has no `first_prompt` (the
   * Python original's). Default true; the rest of a trace is never read.
   */
  promptFromTrace?: boolean;
}

/**
 * The sessions under `directory` (a `sessions` directory), newest first, with live status.
 * Reads one meta.json per session (and stats the trace only for sessions that need it), so it
 * lists ten thousand sessions in a fraction of a second. Missing directory: an empty list.
 */
export function listSessions(directory: string, options: ListSessionsOptions = {}): MonitoredSession[] {
  let names: string[];
  try {
    names = readdirSync(directory, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  } catch {
    return [];
  }
  const now = options.now ?? Date.now();
  const liveness: LivenessOptions = { ...options, now };
  const sessions: MonitoredSession[] = [];
  for (const name of names) {
    const session = readMonitoredSession(join(directory, name), liveness, options.promptFromTrace ?? true);
    if (session !== undefined) sessions.push(session);
  }
  sessions.sort((a, b) => (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : a.id < b.id ? -1 : 1));
  return options.limit === undefined ? sessions : sessions.slice(0, options.limit);
}

/**
 * One session directory as {@link listSessions} sees it, or undefined when it is neither a rho
 * nor a Python rho-agent session (no meta.json and no trace.jsonl).
 */
export function readMonitoredSession(directory: string, options: LivenessOptions = {}, promptFromTrace = true): MonitoredSession | undefined {
  const read = readMeta(directory);
  const meta = typeof read === 'object' ? read : undefined;
  const problem = typeof read === 'string' && read !== MISSING ? read : undefined;
  let traceStat: { mtimeMs: number } | undefined | null = null;
  const trace = () => {
    if (traceStat === null) traceStat = statOrUndefined(join(directory, 'trace.jsonl'));
    return traceStat;
  };
  if (meta === undefined && problem === undefined && trace() === undefined) return undefined;
  const known = meta ?? {};
  // A session whose meta.json cannot be read is listed as `unknown` with the reason, not hidden
  // and not taken for completed.
  const liveness = problem !== undefined ? { status: 'unknown' as const, reason: undefined } : judgeLiveness(known, () => trace()?.mtimeMs, options);
  const id = directory.split(/[\\/]/).pop() ?? directory;
  const startedAt = typeof known.started_at === 'string' ? normaliseTime(known.started_at) : new Date(statOrUndefined(directory)?.mtimeMs ?? 0).toISOString();
  const firstPrompt = typeof known.first_prompt === 'string' ? known.first_prompt : promptFromTrace ? firstPromptFromTrace(directory) : undefined;
  return {
    id,
    directory,
    status: liveness.status,
    recordedStatus: problem !== undefined ? 'unknown' : typeof known.status === 'string' ? known.status : 'completed',
    ...(problem === undefined ? {} : { problem }),
    ...(liveness.reason === undefined ? {} : { deadReason: liveness.reason }),
    ...(typeof known.model === 'string' ? { model: known.model } : {}),
    ...(typeof known.profile === 'string' ? { profile: known.profile } : {}),
    startedAt,
    ...(typeof known.updated_at === 'string' ? { updatedAt: known.updated_at } : {}),
    ...(typeof known.heartbeat_at === 'string' ? { heartbeatAt: known.heartbeat_at } : {}),
    ...(typeof known.pid === 'number' ? { pid: known.pid } : {}),
    ...(typeof known.hostname === 'string' ? { hostname: known.hostname } : {}),
    ...(firstPrompt === undefined ? {} : { firstPrompt }),
    ...(typeof known.cost_usd === 'number' ? { costUsd: known.cost_usd } : {}),
    ...(typeof known.parent_id === 'string' ? { parentId: known.parent_id } : {}),
  };
}

const MISSING = 'missing';

/** meta.json, `missing`, or why it cannot be used. */
function readMeta(directory: string): Partial<SessionMeta> | string {
  let text: string;
  try {
    text = readFileSync(join(directory, 'meta.json'), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return MISSING;
    return `meta.json cannot be read (${code ?? (error instanceof Error ? error.message : String(error))})`;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text.trim() === '' ? 'meta.json is empty' : 'meta.json is not valid JSON';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'meta.json is not a JSON object';
  const status = (value as { status?: unknown }).status;
  if (status !== undefined && typeof status !== 'string') return 'meta.json has a status that is not a string';
  return value as Partial<SessionMeta>;
}

function statOrUndefined(path: string): { mtimeMs: number } | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** Python writes `+00:00` offsets and microseconds; sorting compares strings, so use one form. */
function normaliseTime(value: string): string {
  if (value.endsWith('Z') && value.length === 24) return value;
  const time = Date.parse(value);
  return Number.isNaN(time) ? value : new Date(time).toISOString();
}

function firstPromptFromTrace(directory: string): string | undefined {
  let head: string;
  try {
    const fd = openSync(join(directory, 'trace.jsonl'), 'r');
    try {
      const buffer = Buffer.alloc(8192);
      const length = readSync(fd, buffer, 0, buffer.length, 0);
      head = buffer.subarray(0, length).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  for (const line of head.split('\n')) {
    if (!line.includes('run_start') && !line.includes('"user"')) continue;
    try {
      const record = JSON.parse(line) as { type?: unknown; prompt?: unknown; role?: unknown; content?: unknown };
      if (record.type === 'run_start' && typeof record.prompt === 'string' && record.prompt !== '') return record.prompt;
      if (record.type === 'message' && record.role === 'user' && typeof record.content === 'string') return record.content;
    } catch {
      // A line cut at the 8 KB boundary.
    }
  }
  return undefined;
}
