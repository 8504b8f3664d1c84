import { SessionNotFoundError } from '@rho/core';
import type { ApprovalAnswer, OperatorChannel, PendingApproval, RawTraceRecord } from '@rho/core';
import type { ListedSession, SessionSource, SessionStatsRow } from '@rho/monitor';
import type {
  ContentSearch,
  ContentSearchOptions,
  CostBucket,
  CostStats,
  DashboardApprovalResult,
  DashboardSource,
  FollowOptions,
  SessionPage,
  SessionQuery,
  ToolStats,
} from './dashboard-source.js';
import { withRecordedAnswer } from './internal/recorded-answer.js';
import { querySessions } from './session-query.js';

/** Options of {@link createDashboardSource}. */
export interface SourceDashboardOptions {
  /** At most this many sessions are listed (newest first; default 20,000). */
  listLimit?: number;
  /** Closes the source when the dashboard closes (default false: the caller owns it). */
  closeSource?: boolean;
}

/**
 * Any `@rho/monitor` `SessionSource` as the dashboard shows it (a fleet's:
 * `createFleetSessionSource` of `@rho/fleet`): its sessions (filtered, searched, sorted and paged
 * in memory, as a source's list has no search or offset), its records followed as they arrive, its
 * signals as the controls, its approvals (when it has them: `pendingApprovals` and `answerApproval`)
 * for the waiting calls, its content search (when it has one: `searchContent`, a fleet's is SQL
 * over its mirrored traces), and its telemetry views (`stats`), when it has them, for the costs and
 * tools pages. Token counts and costs are the source's. A sessions directory has its own, faster
 * dashboard source ({@link createFileSource}: a listing kept in memory, and tallies of the traces).
 */
export function createDashboardSource(source: SessionSource, options: SourceDashboardOptions = {}): DashboardSource {
  const limit = options.listLimit ?? 20_000;
  const listed = async (): Promise<ListedSession[]> => (await source.list({ limit })).sessions;
  const stats = async (view: Parameters<NonNullable<SessionSource['stats']>>[0]): Promise<SessionStatsRow[]> =>
    source.stats === undefined ? [] : source.stats(view, { limit: 10_000 });
  const known = async (id: string): Promise<void> => {
    if ((await source.get(id)) === undefined) throw new SessionNotFoundError({ message: `No session ${id}.` });
  };
  const { pendingApprovals, answerApproval } = source;
  const approvals: Pick<DashboardSource, 'pendingApprovals' | 'answerApproval'> =
    pendingApprovals === undefined || answerApproval === undefined
      ? {}
      : {
          async pendingApprovals(id: string): Promise<PendingApproval[]> {
            return pendingApprovals.call(source, id);
          },
          async answerApproval(
            id: string,
            toolCallId: string,
            answer: ApprovalAnswer,
          ): Promise<DashboardApprovalResult> {
            await known(id);
            const result = await answerApproval.call(source, id, toolCallId, answer);
            return withRecordedAnswer(result, toolCallId, () => source.readTrace(id));
          },
        };
  const { searchContent } = source;
  const search: Pick<DashboardSource, 'searchContent'> =
    searchContent === undefined
      ? {}
      : {
          async searchContent(searchOptions: ContentSearchOptions): Promise<ContentSearch> {
            return searchContent.call(source, searchOptions);
          },
        };
  return {
    description: source.description,
    ...approvals,
    ...search,
    async listSessions(query: SessionQuery): Promise<SessionPage> {
      return querySessions(await listed(), query);
    },
    async getSession(id: string): Promise<ListedSession | undefined> {
      return source.get(id);
    },
    follow(id: string, followOptions: FollowOptions): AsyncIterable<RawTraceRecord[]> {
      const records = source.follow(id, { signal: followOptions.signal, follow: true, children: false });
      return {
        async *[Symbol.asyncIterator]() {
          for await (const { record } of records) yield [record];
        },
      };
    },
    async operator(id: string): Promise<OperatorChannel> {
      return source.operator(id);
    },
    async costStats(): Promise<CostStats> {
      const [byModel, byProfile, byDay] = await Promise.all([
        stats('cost_by_model'),
        stats('cost_by_profile'),
        stats('cost_by_day'),
      ]);
      const sessions = (await listed()).length;
      return {
        byModel: byModel.map((row) => bucket(row, 'model')),
        byProfile: byProfile.map((row) => bucket(row, 'profile')),
        byDay: byDay.map((row) => bucket(row, 'day')).sort((left, right) => (left.key < right.key ? -1 : 1)),
        sessions,
      };
    },
    async toolStats(): Promise<ToolStats> {
      const rows = await stats('tool_calls');
      const sessions = (await listed()).length;
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
      if (options.closeSource === true) await source.close();
    },
  };
}

function bucket(row: SessionStatsRow, key: string): CostBucket {
  return {
    key: String(row[key] ?? '?'),
    calls: numberOf(row.calls),
    inputTokens: numberOf(row.input_tokens),
    outputTokens: numberOf(row.output_tokens),
    costUsd: numberOf(row.cost_usd),
    // A fleet's views sum known costs and do not count unpriced calls.
    unpricedCalls: 0,
  };
}

function numberOf(value: string | number | null | undefined): number {
  const number = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(number) ? number : 0;
}
