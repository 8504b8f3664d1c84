import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve as resolvePath } from 'node:path';
import { FileOperatorChannel, SessionNotFoundError, SessionStore, State } from '@rho/core';
import type { ApprovalAnswer, OperatorChannel, PendingApproval } from '@rho/core';
import { sessionLockOwner } from '@rho/core/internal';
import { listSessions, readMonitoredSession } from './list-sessions.js';
import type { MonitoredSession } from './list-sessions.js';
import type { LivenessOptions } from './live-status.js';
import { ACTIVE_STATUSES } from './live-status.js';
import type { ApprovalAnswerResult } from './pending-approvals.js';
import { answerIfPending, pendingApprovalsInTrace } from './pending-approvals.js';
import type {
  ControlKind,
  ControlResult,
  DirectiveResult,
  FollowedRecord,
  FollowSessionOptions,
  SessionFilter,
  SessionList,
  SessionSource,
} from './session-source.js';
import { watchSession } from './watch-session.js';
import { watchWithChildren } from './watch-with-children.js';

/** Options of {@link createDirectorySource}. */
export interface DirectorySourceOptions {
  /** Liveness thresholds and probes (see {@link LivenessOptions}). */
  liveness?: LivenessOptions;
  /** Poll interval of followed traces and of the search for child sessions (default 200 ms and 250 ms). */
  pollIntervalMs?: number;
}

/**
 * The sessions of a sessions directory (`$RHO_HOME/sessions`, or the Python rho-agent's) as a
 * {@link SessionSource}: listed by {@link listSessions} (one meta.json per session, and liveness),
 * followed with {@link watchSession} (and their child agents' traces as they appear), steered with
 * core's `FileOperatorChannel`, so the agent receives each request as from `rho cancel`. Cancel
 * and pause reach live sessions only (`not_live` otherwise: a sentinel left in a finished session
 * would stop or hold its next resume); a directive to a session that is not live waits for its
 * resume. A missing directory lists no session.
 */
export function createDirectorySource(directory: string, options: DirectorySourceOptions = {}): SessionSource {
  const base = resolvePath(directory);
  const liveness = options.liveness ?? {};
  const store = new SessionStore(base);
  // Sessions named by a path outside `base` (`rho watch /elsewhere/ab12`) keep their directory here.
  const known = new Map<string, string>();

  const directoryOf = (id: string): string => {
    const remembered = known.get(id);
    if (remembered !== undefined) return remembered;
    if (isPlainName(id) && existsSync(join(base, id))) return join(base, id);
    return store.lookup(id).directory;
  };
  const read = (path: string): MonitoredSession | undefined => readMonitoredSession(path, liveness, true);
  /** Live, or being set up by a running process (its tools, MCP servers): a cancel stops it before its first model call. */
  const isLive = (session: MonitoredSession): boolean =>
    ACTIVE_STATUSES.has(session.status) ||
    (session.status === 'created' && sessionLockOwner(session.directory) !== undefined);

  return {
    kind: 'directory',
    description: base,
    async list(filter: SessionFilter = {}): Promise<SessionList> {
      const matching = listSessions(base, liveness).filter((session) => matches(session, filter, isLive));
      let sessions = matching;
      if (filter.limit !== undefined) {
        const limit = filter.limit;
        sessions =
          filter.keepLive === true
            ? matching.filter((session, index) => index < limit || ACTIVE_STATUSES.has(session.status))
            : matching.slice(0, limit);
      }
      if (filter.liveUsage === true) sessions = sessions.map(withLiveUsage);
      return { sessions, total: matching.length };
    },
    async get(id: string): Promise<MonitoredSession | undefined> {
      if (!isPlainName(id)) return undefined;
      const session = read(known.get(id) ?? join(base, id));
      return session?.id === id ? session : undefined;
    },
    async resolve(reference: string): Promise<MonitoredSession> {
      const found = store.lookup(reference);
      const session = read(found.directory);
      if (session === undefined)
        throw new SessionNotFoundError({ message: `${found.directory} is not a session directory.` });
      if (resolvePath(found.directory) !== join(base, basename(found.directory)))
        known.set(session.id, found.directory);
      return session;
    },
    follow(id: string, followOptions: FollowSessionOptions = {}): AsyncIterable<FollowedRecord> {
      const sessionDirectory = directoryOf(id);
      const watch = {
        fromStart: followOptions.fromStart ?? true,
        follow: followOptions.follow ?? false,
        ...(followOptions.signal === undefined ? {} : { signal: followOptions.signal }),
      };
      if (followOptions.children === false)
        return (async function* () {
          for await (const record of watchSession(sessionDirectory, {
            ...watch,
            liveness,
            ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
          }))
            yield { record };
        })();
      return watchWithChildren(
        base,
        { id, directory: sessionDirectory },
        { ...watch, ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }) },
      );
    },
    async readTrace(id: string): Promise<string> {
      try {
        return readFileSync(join(directoryOf(id), 'trace.jsonl'), 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
        throw error;
      }
    },
    async control(id: string, kind: ControlKind): Promise<ControlResult> {
      const sessionDirectory = directoryOf(id);
      const session = readMonitoredSession(sessionDirectory, liveness, false);
      const live = session !== undefined && isLive(session);
      const status = session?.status ?? 'unknown';
      if (kind !== 'resume' && !live) return { outcome: 'not_live', status, live };
      const operator = new FileOperatorChannel(sessionDirectory);
      const outcome =
        kind === 'cancel'
          ? await operator.requestCancel()
          : kind === 'pause'
            ? await operator.requestPause()
            : await operator.requestResume();
      return { outcome, status, live };
    },
    async sendDirective(id: string, text: string): Promise<DirectiveResult> {
      const sessionDirectory = directoryOf(id);
      await new FileOperatorChannel(sessionDirectory).sendDirective(text);
      const session = readMonitoredSession(sessionDirectory, liveness, false);
      return {
        status: session?.status ?? 'unknown',
        live: session !== undefined && ACTIVE_STATUSES.has(session.status),
      };
    },
    async operator(id: string): Promise<OperatorChannel> {
      return new FileOperatorChannel(directoryOf(id));
    },
    async pendingApprovals(id: string): Promise<PendingApproval[]> {
      return pendingApprovalsOf(directoryOf(id));
    },
    // Also for a session whose run stopped while a call waited: its resumed run applies the answer.
    async answerApproval(id: string, toolCallId: string, answer: ApprovalAnswer): Promise<ApprovalAnswerResult> {
      const sessionDirectory = directoryOf(id);
      return answerIfPending(
        pendingApprovalsOf(sessionDirectory),
        toolCallId,
        answer,
        async () => new FileOperatorChannel(sessionDirectory),
      );
    },
    async close(): Promise<void> {},
  };
}

function matches(
  session: MonitoredSession,
  filter: SessionFilter,
  isLive: (session: MonitoredSession) => boolean,
): boolean {
  if (filter.status !== undefined && !filter.status.includes(session.status)) return false;
  if (filter.hostname !== undefined && session.hostname !== filter.hostname) return false;
  // Labels are meta.json's (`labels`, from the session's creation): `key` (present) or `key=value`.
  if (filter.label !== undefined && !hasLabel(session.labels, filter.label)) return false;
  if (filter.idPrefix !== undefined && !session.id.startsWith(filter.idPrefix)) return false;
  if (filter.ids !== undefined && !filter.ids.includes(session.id)) return false;
  if (filter.accepts !== undefined && filter.accepts !== 'resume' && !isLive(session)) return false;
  return true;
}

function hasLabel(labels: Record<string, string> | undefined, wanted: string): boolean {
  if (labels === undefined) return false;
  const index = wanted.indexOf('=');
  if (index < 0) return Object.hasOwn(labels, wanted);
  const key = wanted.slice(0, index);
  return Object.hasOwn(labels, key) && labels[key] === wanted.slice(index + 1);
}

/**
 * A live session with its usage so far, replayed from its trace (meta.json has it only once a run
 * ends). A session whose model calls have not ended yet, or whose trace cannot be read, keeps
 * meta.json's figures.
 */
function withLiveUsage(session: MonitoredSession): MonitoredSession {
  if (!ACTIVE_STATUSES.has(session.status)) return session;
  try {
    const usage = State.fromJsonl(readFileSync(join(session.directory, 'trace.jsonl'))).usage;
    const unpriced = usage.unpriced_calls ?? 0;
    if (usage.input_tokens + usage.output_tokens === 0 && unpriced === 0) return session;
    return {
      ...session,
      inputTokens: usage.input_tokens,
      outputTokens: usage.output_tokens,
      costUsd: usage.cost_usd === 0 && unpriced > 0 ? null : usage.cost_usd,
      unpricedCalls: unpriced,
    };
  } catch {
    return session;
  }
}

/** The waiting calls of a session directory's trace (none when it has no trace yet). */
function pendingApprovalsOf(sessionDirectory: string): PendingApproval[] {
  const path = join(sessionDirectory, 'trace.jsonl');
  if (!existsSync(path)) return [];
  return pendingApprovalsInTrace(readFileSync(path));
}

/** A directory name, not a path (`..`, `a/b` and the like are never session ids here). */
function isPlainName(id: string): boolean {
  return id !== '' && id !== '.' && id !== '..' && !/[/\\]/.test(id);
}
