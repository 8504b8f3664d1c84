import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FileOperatorChannel, SessionNotFoundError } from '@rho/core';
import { readApprovalAnswer } from '@rho/core/internal';
import type { ApprovalAnswer, OperatorChannel, PendingApproval, RawTraceRecord } from '@rho/core';
import { answerIfPending, followTrace, pendingApprovalsInTrace } from '@rho/monitor';
import type { ListedSession, LivenessOptions } from '@rho/monitor';
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
  ToolBucket,
  ToolStats,
} from './dashboard-source.js';
import { batches } from './internal/batches.js';
import { searchTraces } from './internal/content-search.js';
import { RecordOffsetsCache } from './internal/record-offsets.js';
import { withRecordedAnswer } from './internal/recorded-answer.js';
import { SessionIndex } from './internal/session-index.js';
import { querySessions } from './session-query.js';

/** Options of {@link createFileSource}. */
export interface FileSourceOptions {
  /** Active sessions (running, paused, waiting) are read again at most this often (default 1000 ms). */
  refreshMs?: number;
  /**
   * The whole directory is listed again at most this often (default 5000 ms; never more often
   * than ten times the last listing took, for very large directories): a finished session that
   * was resumed shows as running again within this time. New sessions are found sooner (within
   * `refreshMs`: the directory's mtime says when to look).
   */
  listingRefreshMs?: number;
  /** Liveness thresholds and probes (see `@rho/monitor`). */
  liveness?: LivenessOptions;
  /** Poll interval of followed traces (default 200 ms; `fs.watch` wakes them sooner where it works). */
  pollIntervalMs?: number;
}

/**
 * The sessions of a `sessions` directory (`$RHO_HOME/sessions`), as the dashboard shows them.
 * The listing is `@rho/monitor`'s (`listSessions`: one meta.json per session and liveness),
 * kept in memory: listed again in the background every `listingRefreshMs`, its active sessions
 * read again every `refreshMs`. Token counts, costs and tool figures come from each trace, read
 * once in short background slices and then only from where it was left (see `TraceTally`), so
 * a page of ten thousand sessions never waits for ten thousand traces; until a trace is read its
 * session shows no token count. Following is the monitor's `followTrace`, and controls
 * are core's `FileOperatorChannel`, so the agent receives them exactly as from `rho cancel`.
 * Waiting tool calls are read from the trace (again only when it changed; a call whose answer is
 * recorded but not yet applied, as in a parked session, no longer waits for anyone), and answered
 * through the same channel, exactly once, as `rho approve` answers them.
 */
export function createFileSource(directory: string, options: FileSourceOptions = {}): DashboardSource {
  const base = resolve(directory);
  const index = new SessionIndex(base, {
    activeRefreshMs: options.refreshMs ?? 1000,
    fullRefreshMs: options.listingRefreshMs ?? 5000,
    ...(options.liveness === undefined ? {} : { liveness: options.liveness }),
  });
  // Listing ahead of the first request: the page opened from the printed URL finds it ready.
  const warm = setImmediate(() => index.sessions());

  const directoryOf = (id: string): string => {
    const found = index.find(id);
    if (found === undefined) throw new SessionNotFoundError({ message: `No session ${id} in ${base}.` });
    return found.directory;
  };
  const pending = new PendingCache();
  const offsets = new RecordOffsetsCache();

  return {
    description: `files: ${base}`,
    async listSessions(query: SessionQuery): Promise<SessionPage> {
      return querySessions(index.sessions(), query);
    },
    async getSession(id: string): Promise<ListedSession | undefined> {
      return index.find(id)?.session;
    },
    follow(id: string, followOptions: FollowOptions): AsyncIterable<RawTraceRecord[]> {
      const path = join(directoryOf(id), 'trace.jsonl');
      return batches((onIdle, onChunk) =>
        followTrace(path, {
          fromStart: true,
          signal: followOptions.signal,
          onIdle,
          onChunk,
          ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
        }),
      );
    },
    async readRecords(id: string, indexes: readonly number[]): Promise<Map<number, RawTraceRecord>> {
      return offsets.of(join(directoryOf(id), 'trace.jsonl')).read(indexes);
    },
    async operator(id: string): Promise<OperatorChannel> {
      return new FileOperatorChannel(directoryOf(id));
    },
    async pendingApprovals(id: string): Promise<PendingApproval[]> {
      const directory = directoryOf(id);
      // A call answered while no process runs the session (parked) waits for its resume, not for a person.
      return pending.of(directory).filter((call) => readApprovalAnswer(directory, call.toolCallId) === undefined);
    },
    // Also for a parked session (its run stopped while a call waited): its resumed run applies the answer.
    async answerApproval(id: string, toolCallId: string, answer: ApprovalAnswer): Promise<DashboardApprovalResult> {
      const directory = directoryOf(id);
      const result = await answerIfPending(
        pending.of(directory),
        toolCallId,
        answer,
        async () => new FileOperatorChannel(directory),
      );
      return withRecordedAnswer(result, toolCallId, async () => readFileSync(join(directory, 'trace.jsonl')));
    },
    async sessionDirectory(id: string): Promise<string | undefined> {
      return index.find(id)?.directory;
    },
    async searchContent(search: ContentSearchOptions): Promise<ContentSearch> {
      const sessions = [...index.sessions()]
        .sort((left, right) => (left.startedAt < right.startedAt ? 1 : left.startedAt > right.startedAt ? -1 : 0))
        .flatMap((session) => {
          const directory = index.find(session.id)?.directory;
          return directory === undefined ? [] : [{ id: session.id, directory }];
        });
      return searchTraces(sessions, search);
    },
    async costStats(): Promise<CostStats> {
      const tallies = index.tallies();
      const byModel = new Map<string, CostBucket>();
      const byProfile = new Map<string, CostBucket>();
      const byDay = new Map<string, CostBucket>();
      for (const { profile, tally } of tallies) {
        for (const entry of tally.byModelDay.values()) {
          add(byModel, entry.model, entry);
          add(byProfile, profile ?? 'unknown', entry);
          add(byDay, entry.day, entry);
        }
      }
      const byCost = (left: CostBucket, right: CostBucket) => right.costUsd - left.costUsd || right.calls - left.calls;
      return {
        byModel: [...byModel.values()].sort(byCost),
        byProfile: [...byProfile.values()].sort(byCost),
        byDay: [...byDay.values()].sort((left, right) => (left.key < right.key ? -1 : 1)),
        sessions: tallies.length,
      };
    },
    async toolStats(): Promise<ToolStats> {
      const tallies = index.tallies();
      const merged = new Map<string, { calls: number; failures: number; blocked: number; durations: number[] }>();
      for (const { tally } of tallies) {
        for (const [name, entry] of tally.tools) {
          let into = merged.get(name);
          if (into === undefined) {
            into = { calls: 0, failures: 0, blocked: 0, durations: [] };
            merged.set(name, into);
          }
          into.calls += entry.calls;
          into.failures += entry.failures;
          into.blocked += entry.blocked;
          for (const duration of entry.durations) into.durations.push(duration);
        }
      }
      const tools: ToolBucket[] = [...merged].map(([name, entry]) => toolBucket(name, entry));
      tools.sort((left, right) => right.calls + right.blocked - (left.calls + left.blocked));
      const byModel = new Map<string, number[]>();
      for (const { tally } of tallies)
        for (const [model, durations] of tally.modelDurations) {
          const into = byModel.get(model) ?? [];
          for (const duration of durations) into.push(duration);
          byModel.set(model, into);
        }
      const models = [...byModel].map(([name, durations]) =>
        toolBucket(name, { calls: durations.length, failures: 0, blocked: 0, durations: [...durations] }),
      );
      models.sort((left, right) => right.calls - left.calls);
      return { tools, models, sessions: tallies.length };
    },
    async close(): Promise<void> {
      clearImmediate(warm);
      index.close();
    },
  };
}

/**
 * The waiting calls of session directories, each read again only when its trace changed (its size
 * or mtime): the pages ask every two seconds, and a waiting session writes nothing to its trace.
 */
class PendingCache {
  private readonly entries = new Map<string, { size: number; mtimeMs: number; pending: PendingApproval[] }>();

  of(directory: string): PendingApproval[] {
    const path = join(directory, 'trace.jsonl');
    let size: number;
    let mtimeMs: number;
    try {
      ({ size, mtimeMs } = statSync(path));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const cached = this.entries.get(path);
    if (cached !== undefined && cached.size === size && cached.mtimeMs === mtimeMs) return cached.pending;
    const pending = pendingApprovalsInTrace(readFileSync(path));
    this.entries.delete(path);
    this.entries.set(path, { size, mtimeMs, pending });
    // The traces asked about lately (waiting sessions, open pages): the oldest go first.
    if (this.entries.size > 256) this.entries.delete(this.entries.keys().next().value!);
    return pending;
  }
}

function add(
  buckets: Map<string, CostBucket>,
  key: string,
  entry: { calls: number; inputTokens: number; outputTokens: number; costUsd: number; unpricedCalls: number },
): void {
  let bucket = buckets.get(key);
  if (bucket === undefined) {
    bucket = { key, calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, unpricedCalls: 0 };
    buckets.set(key, bucket);
  }
  bucket.calls += entry.calls;
  bucket.inputTokens += entry.inputTokens;
  bucket.outputTokens += entry.outputTokens;
  bucket.costUsd += entry.costUsd;
  bucket.unpricedCalls += entry.unpricedCalls;
}

function toolBucket(
  name: string,
  entry: { calls: number; failures: number; blocked: number; durations: number[] },
): ToolBucket {
  const sorted = entry.durations.sort((left, right) => left - right);
  const at = (fraction: number) =>
    sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
  const total = sorted.reduce((sum, value) => sum + value, 0);
  return {
    name,
    calls: entry.calls,
    failures: entry.failures,
    blocked: entry.blocked,
    meanMs: sorted.length === 0 ? 0 : total / sorted.length,
    p50Ms: at(0.5),
    p95Ms: at(0.95),
    maxMs: sorted.length === 0 ? 0 : sorted[sorted.length - 1]!,
  };
}
