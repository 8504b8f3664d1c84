import { SessionNotFoundError } from '@rho/core';
import type { OperatorChannel, RawTraceRecord } from '@rho/core';
import type {
  CostBucket,
  CostStats,
  DashboardSession,
  DashboardSource,
  FollowOptions,
  SessionPage,
  SessionQuery,
  ToolStats,
} from './dashboard-source.js';
import { querySessions } from './session-query.js';

/** One session as a fleet lists it (the fields of `@rho/fleet`'s `FleetSession` the dashboard reads). */
export interface FleetSessionLike {
  id: string;
  parentId?: string;
  host: string;
  model?: string;
  profile?: string;
  status: string;
  firstPrompt?: string;
  startedAt: string;
  updatedAt: string;
  heartbeatAt?: string;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** One row of a fleet telemetry view. */
export type FleetStatsRowLike = Record<string, string | number | null>;

/**
 * What {@link createFleetSource} needs of a fleet: a subset of `@rho/fleet`'s `Fleet`
 * (`connectFleet(config)`), written out here so the dashboard does not depend on the fleet
 * package (and its PostgreSQL driver) to accept one.
 */
export interface FleetLike {
  listSessions(options?: { status?: string | string[]; limit?: number }): Promise<FleetSessionLike[]>;
  resolveSession(prefix: string): Promise<FleetSessionLike>;
  operator(sessionId: string): OperatorChannel;
  followRecords(
    sessionId: string,
    options?: { afterSeq?: number; signal?: AbortSignal; untilFinished?: boolean },
  ): AsyncIterable<{ seq: number; record: unknown }>;
  stats(
    view: 'cost_by_model' | 'cost_by_profile' | 'cost_by_day' | 'tool_calls',
    options?: { limit?: number },
  ): Promise<FleetStatsRowLike[]>;
}

/** Options of {@link createFleetSource}. */
export interface FleetSourceOptions {
  /** At most this many sessions are listed (newest first; default 20,000). */
  listLimit?: number;
  /** Closes the fleet's connections when the dashboard closes (default false: the caller owns it). */
  closeFleet?: () => Promise<void>;
}

/**
 * Sessions of a PostgreSQL fleet (`@rho/fleet`), as the dashboard shows them: the registry's
 * sessions (filtered, searched, sorted and paged in memory, as the fleet's list has no search or
 * offset yet), mirrored records followed as they arrive, the fleet's signals as controls, and
 * its telemetry views for the costs and tools pages. Token counts and costs are the fleet's.
 */
export function createFleetSource(
  fleet: FleetLike,
  description: string,
  options: FleetSourceOptions = {},
): DashboardSource {
  const limit = options.listLimit ?? 20_000;
  const exact = async (id: string): Promise<FleetSessionLike | undefined> => {
    try {
      const found = await fleet.resolveSession(id);
      return found.id === id ? found : undefined;
    } catch (error) {
      if (SessionNotFoundError.isInstance(error)) return undefined;
      throw error;
    }
  };
  return {
    description,
    async listSessions(query: SessionQuery): Promise<SessionPage> {
      return querySessions((await fleet.listSessions({ limit })).map(toDashboard), query);
    },
    async getSession(id: string): Promise<DashboardSession | undefined> {
      const found = await exact(id);
      return found === undefined ? undefined : toDashboard(found);
    },
    follow(id: string, followOptions: FollowOptions): AsyncIterable<RawTraceRecord[]> {
      const records = fleet.followRecords(id, { signal: followOptions.signal, untilFinished: false });
      return {
        async *[Symbol.asyncIterator]() {
          for await (const { record } of records) yield [record as RawTraceRecord];
        },
      };
    },
    async operator(id: string): Promise<OperatorChannel> {
      if ((await exact(id)) === undefined)
        throw new SessionNotFoundError({ message: `The fleet has no session ${id}.` });
      return fleet.operator(id);
    },
    async costStats(): Promise<CostStats> {
      const [byModel, byProfile, byDay] = await Promise.all([
        fleet.stats('cost_by_model', { limit: 10_000 }),
        fleet.stats('cost_by_profile', { limit: 10_000 }),
        fleet.stats('cost_by_day', { limit: 10_000 }),
      ]);
      const sessions = (await fleet.listSessions({ limit })).length;
      return {
        byModel: byModel.map((row) => bucket(row, 'model')),
        byProfile: byProfile.map((row) => bucket(row, 'profile')),
        byDay: byDay.map((row) => bucket(row, 'day')).sort((left, right) => (left.key < right.key ? -1 : 1)),
        sessions,
      };
    },
    async toolStats(): Promise<ToolStats> {
      const rows = await fleet.stats('tool_calls', { limit: 10_000 });
      const sessions = (await fleet.listSessions({ limit })).length;
      return {
        tools: rows.map((row) => ({
          name: String(row.tool ?? '?'),
          calls: numberOf(row.calls),
          failures: numberOf(row.failures),
          blocked: numberOf(row.blocked),
          p50Ms: numberOf(row.p50_ms),
        })),
        sessions,
      };
    },
    async close(): Promise<void> {
      await options.closeFleet?.();
    },
  };
}

function toDashboard(session: FleetSessionLike): DashboardSession {
  return {
    id: session.id,
    status: session.status,
    ...(session.model === undefined ? {} : { model: session.model }),
    ...(session.profile === undefined ? {} : { profile: session.profile }),
    hostname: session.host,
    startedAt: session.startedAt,
    updatedAt: session.heartbeatAt ?? session.updatedAt,
    inputTokens: session.inputTokens,
    outputTokens: session.outputTokens,
    costUsd: session.costUsd,
    ...(session.firstPrompt === undefined ? {} : { firstPrompt: session.firstPrompt }),
    ...(session.parentId === undefined ? {} : { parentId: session.parentId }),
  };
}

function bucket(row: FleetStatsRowLike, key: string): CostBucket {
  return {
    key: String(row[key] ?? '?'),
    calls: numberOf(row.calls),
    inputTokens: numberOf(row.input_tokens),
    outputTokens: numberOf(row.output_tokens),
    costUsd: numberOf(row.cost_usd),
    // The fleet's views sum known costs and do not count unpriced calls.
    unpricedCalls: 0,
  };
}

function numberOf(value: string | number | null | undefined): number {
  const number = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(number) ? number : 0;
}
