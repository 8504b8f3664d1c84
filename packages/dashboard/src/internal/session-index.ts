import { readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ACTIVE_STATUSES, listSessions, readMonitoredSession } from '@rho/monitor';
import type { ListedSession, LivenessOptions, MonitoredSession } from '@rho/monitor';
import { TraceTally } from './trace-tally.js';

/** Options of {@link SessionIndex}. */
export interface SessionIndexOptions {
  /** Active sessions are read again at most this often (ms). */
  activeRefreshMs: number;
  /** The whole directory is listed again at most this often (ms), and never more often than ten times the last listing took. */
  fullRefreshMs: number;
  /** Liveness thresholds and probes. */
  liveness?: LivenessOptions;
}

interface Entry {
  session: MonitoredSession;
  tally: TraceTally;
  /** Whether the tally has read the trace at least once. */
  tallied: boolean;
}

/** How long one slice of background trace reading may hold the event loop (ms). */
const SLICE_MS = 20;

/**
 * The file source's listing, kept in memory and brought up to date in three ways, so requests
 * are answered from memory and the event loop is never held long:
 * - the whole directory (`@rho/monitor`'s `listSessions`: one meta.json per session) is listed
 *   at most every `fullRefreshMs` (and at most a tenth of the time), in the background once there
 *   is a first listing: it catches finished sessions that were resumed, and deleted ones;
 * - new sessions are found at once: the directory's mtime changes when one is created, and then
 *   only the new names are read;
 * - active sessions (running, paused, waiting, created) are read again every `activeRefreshMs`;
 * - token counts come from each trace, read in slices of 20 ms after a listing (a finished
 *   session's trace once, then only a stat; a growing one from where it was left).
 */
export class SessionIndex {
  private readonly entries = new Map<string, Entry>();
  private readonly byId = new Map<string, Entry>();
  private rows: ListedSession[] = [];
  private listedAt = -Infinity;
  private activeAt = -Infinity;
  private lastListingMs = 0;
  private listingScheduled = false;
  private readonly untallied: Entry[] = [];
  /** Directory names seen but not yet sessions (created, meta.json not written yet). */
  private readonly pending = new Set<string>();
  private baseMtimeMs = -1;
  private backfilling = false;
  private closed = false;

  constructor(
    private readonly base: string,
    private readonly options: SessionIndexOptions,
  ) {}

  /** The sessions, newest first (as listed; queries sort them). */
  sessions(): ListedSession[] {
    this.refresh();
    return this.rows;
  }

  /**
   * One session by id. An id not known yet is looked for among the directory's new names (a stat
   * of the directory, and a readdir only when it changed), never with a whole listing, so a page
   * left open on a deleted session costs nothing.
   */
  find(id: string): { session: ListedSession; directory: string } | undefined {
    this.refresh();
    let entry = this.byId.get(id);
    if (entry === undefined) {
      this.discover(Date.now());
      entry = this.byId.get(id);
    }
    return entry === undefined ? undefined : { session: toDashboard(entry), directory: entry.session.directory };
  }

  /** Every session's tally, each brought up to date (for the costs and tools pages). */
  tallies(): { profile: string | undefined; tally: TraceTally }[] {
    this.refresh();
    const all: { profile: string | undefined; tally: TraceTally }[] = [];
    for (const entry of this.entries.values()) {
      entry.tally.update();
      entry.tallied = true;
      all.push({ profile: entry.session.profile, tally: entry.tally });
    }
    this.untallied.length = 0;
    this.rebuildRows();
    return all;
  }

  /** Stops background work. */
  close(): void {
    this.closed = true;
  }

  private refresh(): void {
    const now = Date.now();
    if (this.listedAt === -Infinity) {
      this.list();
      return;
    }
    const listingDue = now - this.listedAt >= Math.max(this.options.fullRefreshMs, 10 * this.lastListingMs);
    if (listingDue && !this.listingScheduled) {
      this.listingScheduled = true;
      setImmediate(() => {
        this.listingScheduled = false;
        if (!this.closed) this.list();
      });
    }
    if (now - this.activeAt >= this.options.activeRefreshMs) {
      this.discover(now);
      this.refreshActive(now);
    }
  }

  /** Adds sessions created since the last look: one stat of the directory, a readdir only when it changed. */
  private discover(now: number): void {
    const mtime = statSync(this.base, { throwIfNoEntry: false })?.mtimeMs;
    if (mtime !== undefined && mtime !== this.baseMtimeMs) {
      this.baseMtimeMs = mtime;
      const known = new Set([...this.entries.keys()].map((directory) => basename(directory)));
      for (const name of readdirSync(this.base)) if (!known.has(name)) this.pending.add(name);
    }
    if (this.pending.size === 0) return;
    for (const name of [...this.pending]) {
      const session = readMonitoredSession(join(this.base, name), { ...this.options.liveness, now }, true);
      if (session === undefined) continue;
      this.pending.delete(name);
      const entry: Entry = { session, tally: new TraceTally(join(session.directory, 'trace.jsonl')), tallied: false };
      this.entries.set(session.directory, entry);
      this.byId.set(session.id, entry);
      this.untallied.push(entry);
      this.rows = [...this.rows, toDashboard(entry)];
    }
    this.backfill();
  }

  /** Lists the whole directory; traces not read yet are queued for the background reader. */
  list(): void {
    const started = Date.now();
    this.baseMtimeMs = statSync(this.base, { throwIfNoEntry: false })?.mtimeMs ?? -1;
    this.pending.clear();
    const listed = listSessions(this.base, { ...this.options.liveness, promptFromTrace: true });
    const seen = new Set<string>();
    this.byId.clear();
    for (const session of listed) {
      seen.add(session.directory);
      let entry = this.entries.get(session.directory);
      if (entry === undefined) {
        entry = { session, tally: new TraceTally(join(session.directory, 'trace.jsonl')), tallied: false };
        this.entries.set(session.directory, entry);
        this.untallied.push(entry);
      } else {
        entry.session = session;
        // A trace that grew since: read its new records with the next slice.
        if (entry.tallied && ACTIVE_STATUSES.has(session.status)) entry.tally.update();
      }
      this.byId.set(session.id, entry);
    }
    for (const directory of [...this.entries.keys()]) if (!seen.has(directory)) this.entries.delete(directory);
    this.listedAt = Date.now();
    this.activeAt = this.listedAt;
    this.lastListingMs = this.listedAt - started;
    this.rebuildRows(listed);
    this.backfill();
  }

  private refreshActive(now: number): void {
    this.activeAt = now;
    let changed = false;
    for (const entry of this.entries.values()) {
      if (!ACTIVE_STATUSES.has(entry.session.status) && entry.session.status !== 'created') continue;
      const fresh = readMonitoredSession(entry.session.directory, { ...this.options.liveness, now }, true);
      if (fresh !== undefined) entry.session = fresh;
      entry.tally.update();
      entry.tallied = true;
      changed = true;
    }
    if (changed) this.rebuildRows();
  }

  private rebuildRows(order?: MonitoredSession[]): void {
    const sessions = order ?? this.rows.map((row) => this.byId.get(row.id)?.session).filter((row) => row !== undefined);
    this.rows = sessions.map((session) => toDashboard(this.entries.get(session.directory)!));
  }

  /** Reads the queued traces in slices, so requests and live streams are served in between. */
  private backfill(): void {
    if (this.backfilling || this.untallied.length === 0) return;
    this.backfilling = true;
    const slice = () => {
      if (this.closed) return;
      const until = Date.now() + SLICE_MS;
      while (this.untallied.length > 0 && Date.now() < until) {
        const entry = this.untallied.pop()!;
        if (entry.tallied) continue;
        entry.tally.update();
        entry.tallied = true;
      }
      this.rebuildRows();
      if (this.untallied.length > 0) setImmediate(slice);
      else this.backfilling = false;
    };
    setImmediate(slice);
  }
}

/**
 * A session of the index as the pages list it: the monitor's listed session, with its tokens
 * once its trace was tallied. The cost is meta.json's (the session's total at the end of its last
 * run), except for a running session, whose meta.json has none yet: its trace's so far, as
 * `rho ps` shows it (unpriced while its only calls have no price). The directory stays on the server.
 */
function toDashboard(entry: Entry): ListedSession {
  const { session, tally, tallied } = entry;
  const { directory: _directory, ...listed } = session;
  if (!tallied) return listed;
  const running = ACTIVE_STATUSES.has(session.status);
  const unpriced = tally.unpricedCalls;
  return {
    ...listed,
    inputTokens: tally.inputTokens,
    outputTokens: tally.outputTokens,
    ...(running && tally.calls > 0
      ? { costUsd: tally.costUsd === 0 && unpriced > 0 ? null : tally.costUsd, unpricedCalls: unpriced }
      : {}),
  };
}
