import { join, resolve } from 'node:path';
import { FileOperatorChannel, SessionNotFoundError } from '@rho/core';
import type { OperatorChannel, RawTraceRecord } from '@rho/core';
import { followTrace, listSessions } from '@rho/monitor';
import type { LivenessOptions, MonitoredSession } from '@rho/monitor';
import type {
  CostBucket,
  CostStats,
  DashboardSession,
  DashboardSource,
  FollowOptions,
  SessionPage,
  SessionQuery,
  ToolBucket,
  ToolStats,
} from './dashboard-source.js';
import { batches } from './internal/batches.js';
import { TraceTally } from './internal/trace-tally.js';
import { querySessions } from './session-query.js';

/** Options of {@link createFileSource}. */
export interface FileSourceOptions {
  /** The listing is read again at most this often (default 1000 ms); a page asks at least this late sees changes. */
  refreshMs?: number;
  /** Liveness thresholds and probes (see `@rho/monitor`). */
  liveness?: LivenessOptions;
  /** Poll interval of followed traces (default 200 ms; `fs.watch` wakes them sooner where it works). */
  pollIntervalMs?: number;
}

interface Snapshot {
  at: number;
  sessions: DashboardSession[];
  directories: Map<string, string>;
  profiles: Map<string, string | undefined>;
}

/**
 * The sessions of a `sessions` directory (`$RHO_HOME/sessions`), as the dashboard shows them.
 * The listing is `@rho/monitor`'s (`listSessions`: one meta.json per session and liveness),
 * cached for `refreshMs`; token counts, costs and tool figures come from each trace read once
 * and then only from where it was left (see `TraceTally`), so a page of ten thousand sessions
 * never reads ten thousand whole traces. Following is the monitor's `followTrace`, and controls
 * are core's `FileOperatorChannel`, so the agent receives them exactly as from `rho cancel`.
 */
export function createFileSource(directory: string, options: FileSourceOptions = {}): DashboardSource {
  const base = resolve(directory);
  const refreshMs = options.refreshMs ?? 1000;
  const tallies = new Map<string, TraceTally>();
  let snapshot: Snapshot | undefined;

  const tally = (sessionDirectory: string): TraceTally => {
    let found = tallies.get(sessionDirectory);
    if (found === undefined) {
      found = new TraceTally(join(sessionDirectory, 'trace.jsonl'));
      tallies.set(sessionDirectory, found);
    }
    found.update();
    return found;
  };

  let refreshing = false;
  let lastDurationMs = 0;
  const build = (): Snapshot => {
    const started = Date.now();
    const listed = listSessions(base, { ...options.liveness, promptFromTrace: true });
    const directories = new Map<string, string>();
    const profiles = new Map<string, string | undefined>();
    const sessions = listed.map((session) => {
      directories.set(session.id, session.directory);
      profiles.set(session.directory, session.profile);
      return toDashboard(session, tally(session.directory));
    });
    lastDurationMs = Date.now() - started;
    snapshot = { at: Date.now(), sessions, directories, profiles };
    return snapshot;
  };
  // Stale while revalidating: a request is answered from the last listing, and a listing older
  // than refreshMs (or twice as long as the last one took, for very large directories) is read
  // again right after, so no request waits for ten thousand meta.json files but the first.
  const current = (): Snapshot => {
    if (snapshot === undefined) return build();
    const age = Date.now() - snapshot.at;
    if (age >= Math.max(refreshMs, 2 * lastDurationMs) && !refreshing) {
      refreshing = true;
      setImmediate(() => {
        try {
          if (!closed) build();
        } finally {
          refreshing = false;
        }
      });
    }
    return snapshot;
  };
  // Listing ahead of the first request: the page opened from the printed URL finds it ready.
  let closed = false;
  setImmediate(() => {
    if (snapshot === undefined && !closed) build();
  });

  const directoryOf = (id: string): string => {
    const found = current().directories.get(id);
    if (found !== undefined) return found;
    // A session created since the last listing: look again now.
    const fresh = build().directories.get(id);
    if (fresh !== undefined) return fresh;
    throw new SessionNotFoundError({ message: `No session ${id} in ${base}.` });
  };

  return {
    description: `files: ${base}`,
    async listSessions(query: SessionQuery): Promise<SessionPage> {
      return querySessions(current().sessions, query);
    },
    async getSession(id: string): Promise<DashboardSession | undefined> {
      const found = current().sessions.find((session) => session.id === id);
      if (found !== undefined) return found;
      return build().sessions.find((session) => session.id === id);
    },
    follow(id: string, followOptions: FollowOptions): AsyncIterable<RawTraceRecord[]> {
      const path = join(directoryOf(id), 'trace.jsonl');
      return batches((onIdle) =>
        followTrace(path, {
          fromStart: true,
          signal: followOptions.signal,
          onIdle,
          ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
        }),
      );
    },
    async operator(id: string): Promise<OperatorChannel> {
      return new FileOperatorChannel(directoryOf(id));
    },
    async costStats(): Promise<CostStats> {
      const { profiles } = current();
      const byModel = new Map<string, CostBucket>();
      const byProfile = new Map<string, CostBucket>();
      const byDay = new Map<string, CostBucket>();
      for (const [sessionDirectory, profile] of profiles) {
        for (const entry of tally(sessionDirectory).byModelDay.values()) {
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
        sessions: profiles.size,
      };
    },
    async toolStats(): Promise<ToolStats> {
      const { profiles } = current();
      const merged = new Map<string, { calls: number; failures: number; blocked: number; durations: number[] }>();
      for (const sessionDirectory of profiles.keys()) {
        for (const [name, entry] of tally(sessionDirectory).tools) {
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
      return { tools, sessions: profiles.size };
    },
    async close(): Promise<void> {
      closed = true;
      tallies.clear();
      snapshot = undefined;
    },
  };
}

function toDashboard(session: MonitoredSession, tally: TraceTally): DashboardSession {
  const reason = session.deadReason ?? session.problem;
  const updatedAt = session.heartbeatAt ?? session.updatedAt;
  return {
    id: session.id,
    status: session.status,
    ...(reason === undefined ? {} : { statusReason: reason }),
    ...(session.model === undefined ? {} : { model: session.model }),
    ...(session.profile === undefined ? {} : { profile: session.profile }),
    ...(session.hostname === undefined ? {} : { hostname: session.hostname }),
    startedAt: session.startedAt,
    ...(updatedAt === undefined ? {} : { updatedAt }),
    inputTokens: tally.inputTokens,
    outputTokens: tally.outputTokens,
    ...(session.costUsd === undefined ? {} : { costUsd: session.costUsd }),
    ...(session.firstPrompt === undefined ? {} : { firstPrompt: session.firstPrompt }),
    ...(session.parentId === undefined ? {} : { parentId: session.parentId }),
  };
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
