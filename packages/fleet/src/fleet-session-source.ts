import { ACTIVE_SESSION_STATUSES, SessionNotFoundError } from '@rho/core';
import type { ApprovalAnswer, OperatorChannel, PendingApproval, RawTraceRecord } from '@rho/core';
import { answerIfPending, parkedOrDead, pendingApprovalsInTrace } from '@rho/monitor';
import type {
  ApprovalAnswerResult,
  ContentSearch,
  ContentSearchOptions,
  ControlKind,
  ControlResult,
  DirectiveResult,
  FollowedRecord,
  FollowSessionOptions,
  ListedSession,
  SessionFilter,
  SessionList,
  SessionSource,
  SessionStatsRow,
  SessionStatsView,
} from '@rho/monitor';
import { connectFleet } from './connect-fleet.js';
import { redactUrl } from './fleet-config.js';
import type { FleetConfig } from './fleet-config.js';
import { followFleetSession } from './follow-fleet-session.js';
import { mirroredTrace } from './mirrored-trace.js';
import type { ConnectFleetOptions, Fleet, FleetListOptions, FleetSession, FleetSessionStatus } from './types.js';

/** Live statuses: a session that can take a signal. */
const LIVE: readonly FleetSessionStatus[] = ACTIVE_SESSION_STATUSES;

/** Options of {@link createFleetSessionSource}. */
export interface FleetSessionSourceOptions {
  /** Close the fleet's connections when the source closes (default false: the caller owns the fleet). */
  closeFleet?: boolean;
  /** How often a follow looks for new child sessions, in ms (default 1,000). */
  discoverIntervalMs?: number;
}

/**
 * A fleet's sessions as a `@rho/monitor` `SessionSource`: every node's sessions from the registry
 * (with the fleet's live status: `dead` once a heartbeat is stale), their mirrored traces followed
 * as they arrive (and their child agents', as they register), and the fleet's signals, which reach
 * the agent wherever it runs. A signal to a session that is not live is refused with a
 * {@link FleetSignalRefusedError} (code `fleet_signal_refused`): across machines an operator must
 * know the request will not be read. Telemetry views are `stats`. Waiting tool calls are read from
 * the mirrored trace, and answered through the fleet (`answer_approval`: exactly once across nodes).
 * Content search is the fleet's SQL over the mirrored traces (`Fleet.searchContent`).
 */
export function createFleetSessionSource(fleet: Fleet, options: FleetSessionSourceOptions = {}): SessionSource {
  // The status each session was last listed with, for what a control request reports.
  const lastSeen = new Map<string, FleetSession>();
  const seen = (sessions: FleetSession[]): FleetSession[] => {
    for (const session of sessions) lastSeen.set(session.id, session);
    return sessions;
  };
  const exact = async (id: string): Promise<FleetSession | undefined> =>
    seen(await fleet.listSessions({ idPrefix: id, limit: 20 })).find((session) => session.id === id);
  const statusOf = async (id: string): Promise<string> => (lastSeen.get(id) ?? (await exact(id)))?.status ?? 'unknown';

  return {
    kind: 'fleet',
    description: `the fleet at ${redactUrl(fleet.config.url)} (schema ${fleet.config.schema})`,
    async list(filter: SessionFilter = {}): Promise<SessionList> {
      const query: FleetListOptions = {
        ...(filter.hostname === undefined ? {} : { host: filter.hostname }),
        ...(filter.label === undefined ? {} : { label: filter.label }),
        ...(filter.idPrefix === undefined ? {} : { idPrefix: filter.idPrefix }),
        ...(filter.ids === undefined ? {} : { ids: filter.ids }),
      };
      const accepted: readonly FleetSessionStatus[] | undefined =
        filter.accepts === undefined ? undefined : filter.accepts === 'resume' ? ['paused'] : LIVE;
      const wanted = filter.status as readonly FleetSessionStatus[] | undefined;
      const status =
        accepted === undefined
          ? wanted
          : wanted === undefined
            ? accepted
            : wanted.filter((item) => accepted.includes(item));
      if (status !== undefined) query.status = [...status];
      let sessions = seen(
        await fleet.listSessions({ ...query, ...(filter.limit === undefined ? {} : { limit: filter.limit }) }),
      );
      // Older sessions that are still live stay in a limited listing, so a long run never drops out of sight.
      if (filter.keepLive === true && filter.limit !== undefined && sessions.length >= filter.limit && !status) {
        const shown = new Set(sessions.map((session) => session.id));
        const live = seen(await fleet.listSessions({ ...query, status: [...LIVE] }));
        sessions = [...sessions, ...live.filter((session) => !shown.has(session.id))];
      }
      return { sessions: sessions.map(listedFleetSession) };
    },
    async get(id: string): Promise<ListedSession | undefined> {
      const found = await exact(id);
      return found === undefined ? undefined : listedFleetSession(found);
    },
    async resolve(reference: string): Promise<ListedSession> {
      const session = await fleet.resolveSession(reference);
      lastSeen.set(session.id, session);
      return listedFleetSession(session);
    },
    follow(id: string, followOptions: FollowSessionOptions = {}): AsyncIterable<FollowedRecord> {
      return (async function* () {
        const target = await fleet.resolveSession(id);
        const afterSeq = followOptions.fromStart === false ? target.records : 0;
        const follow = followOptions.follow ?? false;
        if (followOptions.children === false) {
          for await (const { record } of fleet.followRecords(target.id, {
            afterSeq,
            untilFinished: !follow,
            ...(followOptions.signal === undefined ? {} : { signal: followOptions.signal }),
            ...(followOptions.onConnectionLost === undefined
              ? {}
              : { onConnectionLost: followOptions.onConnectionLost }),
          }))
            yield { record: record as unknown as RawTraceRecord };
          return;
        }
        for await (const { record, childId } of followFleetSession(fleet, target, {
          afterSeq,
          follow,
          ...(followOptions.signal === undefined ? {} : { signal: followOptions.signal }),
          ...(followOptions.onConnectionLost === undefined ? {} : { onConnectionLost: followOptions.onConnectionLost }),
          ...(options.discoverIntervalMs === undefined ? {} : { discoverIntervalMs: options.discoverIntervalMs }),
        }))
          yield {
            record: record as unknown as RawTraceRecord,
            ...(childId === undefined ? {} : { childId }),
          };
      })();
    },
    readTrace: (id: string) => mirroredTrace(fleet, id),
    async control(id: string, kind: ControlKind): Promise<ControlResult> {
      const operator = fleet.operator(id);
      const outcome =
        kind === 'cancel'
          ? await operator.requestCancel()
          : kind === 'pause'
            ? await operator.requestPause()
            : await operator.requestResume();
      // Not refused: the session is live.
      return { outcome, status: await statusOf(id), live: true };
    },
    async sendDirective(id: string, text: string): Promise<DirectiveResult> {
      await fleet.operator(id).sendDirective(text);
      return { status: await statusOf(id), live: true };
    },
    async operator(id: string): Promise<OperatorChannel> {
      if ((await exact(id)) === undefined)
        throw new SessionNotFoundError({ message: `The fleet has no session ${id}.` });
      return fleet.operator(id);
    },
    async pendingApprovals(id: string): Promise<PendingApproval[]> {
      return pendingApprovalsInTrace(await mirroredTrace(fleet, id));
    },
    async answerApproval(id: string, toolCallId: string, answer: ApprovalAnswer): Promise<ApprovalAnswerResult> {
      const pending = pendingApprovalsInTrace(await mirroredTrace(fleet, id));
      return answerIfPending(pending, toolCallId, answer, async () => fleet.operator(id));
    },
    searchContent: (search: ContentSearchOptions): Promise<ContentSearch> => fleet.searchContent(search),
    stats: (view: SessionStatsView, statsOptions?: { limit?: number }): Promise<SessionStatsRow[]> =>
      fleet.stats(view, statsOptions),
    async close(): Promise<void> {
      if (options.closeFleet === true) await fleet.close().catch(() => {});
    },
  };
}

/**
 * Connects to a fleet (see {@link connectFleet}) and returns its sessions as a `SessionSource`
 * that closes the connection when it is closed.
 *
 * @throws FleetUnavailableError when the server does not answer or refuses the credentials.
 */
export async function openFleetSessionSource(
  config: FleetConfig,
  options: ConnectFleetOptions & Omit<FleetSessionSourceOptions, 'closeFleet'> = {},
): Promise<SessionSource> {
  const { discoverIntervalMs, ...connect } = options;
  const fleet = await connectFleet(config, connect);
  return createFleetSessionSource(fleet, {
    closeFleet: true,
    ...(discoverIntervalMs === undefined ? {} : { discoverIntervalMs }),
  });
}

/** A registry row as every view lists a session (`@rho/monitor`'s `ListedSession`). */
export function listedFleetSession(session: FleetSession): ListedSession {
  // A session that waits for approval with no agent behind it is parked, not dead.
  const parked = parkedOrDead(session.recordedStatus, { status: session.status });
  return {
    id: session.id,
    status: parked.status,
    ...(parked.reason === undefined ? {} : { statusReason: parked.reason }),
    recordedStatus: session.recordedStatus,
    ...(session.model === undefined ? {} : { model: session.model }),
    ...(session.profile === undefined ? {} : { profile: session.profile }),
    hostname: session.host,
    ...(session.pid === undefined ? {} : { pid: session.pid }),
    ...(session.cwd === undefined ? {} : { cwd: session.cwd }),
    labels: session.labels,
    startedAt: session.startedAt,
    updatedAt: session.updatedAt,
    ...(session.heartbeatAt === undefined ? {} : { heartbeatAt: session.heartbeatAt }),
    ...(session.firstPrompt === undefined ? {} : { firstPrompt: session.firstPrompt }),
    ...(session.parentId === undefined ? {} : { parentId: session.parentId }),
    inputTokens: session.inputTokens,
    outputTokens: session.outputTokens,
    // Nothing priced: the cost is unknown, not zero.
    costUsd: session.costUsd === 0 && session.unpricedCalls > 0 ? null : session.costUsd,
    unpricedCalls: session.unpricedCalls,
    records: session.records,
  };
}
