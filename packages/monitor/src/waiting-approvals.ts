import type { PendingApproval } from '@rho/core';
import { ConfigError, SessionNotFoundError } from '@rho/core';
import type { ListedSession } from './listed-session.js';
import type { LiveStatus } from './live-status.js';
import type { SessionFilter, SessionSource } from './session-source.js';

/** A tool call that waits for approval, with the session it waits in. */
export interface WaitingApproval extends PendingApproval {
  /** The session, as the source lists it: `waiting_approval` (a process waits) or `parked` (none runs it). */
  session: ListedSession;
}

/** What {@link listWaitingApprovals} found. */
export interface WaitingApprovals {
  /** Every waiting call of every session, the longest-waiting first. */
  calls: WaitingApproval[];
  /** Sessions that wait but whose trace could not be read, with why (their calls are not in `calls`). */
  unreadable: { sessionId: string; reason: string }[];
}

/** Which sessions {@link listWaitingApprovals} looks at: a fleet's host or label, an id prefix. */
export type WaitingApprovalsFilter = Pick<SessionFilter, 'hostname' | 'label' | 'idPrefix'>;

/** The listed statuses of a session with a call that waits: a process waits for the answer, or none runs it. */
export const WAITING_STATUSES: readonly LiveStatus[] = ['waiting_approval', 'parked'];

/** Sessions whose traces are read at once. */
const CONCURRENCY = 8;

/**
 * Every tool call that waits for approval on a source (a sessions directory, a fleet): the
 * sessions listed `waiting_approval` or `parked`, each one's waiting calls from its trace
 * ({@link SessionSource.pendingApprovals}), the longest-waiting first. A session that finished or
 * went away between the listing and the read has no call left; one whose trace cannot be read is
 * in `unreadable`.
 *
 * @throws ConfigError (code `approval_unsupported`) for a source that cannot carry approvals.
 */
export async function listWaitingApprovals(
  source: SessionSource,
  filter: WaitingApprovalsFilter = {},
): Promise<WaitingApprovals> {
  if (source.pendingApprovals === undefined)
    throw new ConfigError({
      message: `${source.description} cannot carry approvals: it has no waiting calls to list.`,
      code: 'approval_unsupported',
    });
  const pendingOf = source.pendingApprovals.bind(source);
  const { sessions } = await source.list({
    ...(filter.hostname === undefined ? {} : { hostname: filter.hostname }),
    ...(filter.label === undefined ? {} : { label: filter.label }),
    ...(filter.idPrefix === undefined ? {} : { idPrefix: filter.idPrefix }),
    status: WAITING_STATUSES,
    limit: 100_000,
  });
  return collectWaitingApprovals(sessions, pendingOf);
}

/**
 * The waiting calls of `sessions` (listed as waiting), read with `pendingOf` a few at a time,
 * the longest-waiting first: what {@link listWaitingApprovals} does once it has the sessions, for a
 * source that lists them its own way (the dashboard's).
 */
export async function collectWaitingApprovals(
  sessions: readonly ListedSession[],
  pendingOf: (id: string) => Promise<PendingApproval[]>,
): Promise<WaitingApprovals> {
  const calls: WaitingApproval[] = [];
  const unreadable: WaitingApprovals['unreadable'] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < sessions.length) {
      const session = sessions[next++]!;
      try {
        for (const call of await pendingOf(session.id)) calls.push({ ...call, session });
      } catch (error) {
        if (SessionNotFoundError.isInstance(error)) continue;
        unreadable.push({ sessionId: session.id, reason: error instanceof Error ? error.message : String(error) });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, sessions.length) }, worker));
  calls.sort(
    (a, b) =>
      compare(a.requestedAt, b.requestedAt) ||
      compare(a.session.id, b.session.id) ||
      compare(a.toolCallId, b.toolCallId),
  );
  unreadable.sort((a, b) => compare(a.sessionId, b.sessionId));
  return { calls, unreadable };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
