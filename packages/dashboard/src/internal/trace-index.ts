import type { RawTraceRecord } from '@rho/core';
import type { DashboardSource } from '../dashboard-source.js';
import { cutRecord } from './event-stream.js';
import type { TraceSpan } from './span-tree.js';
import { SpanTreeBuilder } from './span-tree.js';

/** A string field of a record kept for the detail pane is cut at this many characters. */
export const DETAIL_FIELD_CHARS = 64 * 1024;
/** Record texts an index keeps for the detail pane, in all; the oldest are let go beyond it. */
export const DETAIL_BUDGET_CHARS = 32 * 1024 * 1024;
/** Sessions followed at once; the least recently used beyond it stops. */
const MAX_INDEXES = 8;
/** An index nobody uses stops after this long. */
const IDLE_MS = 60_000;
/** A source that never says it caught up is taken to have done so after this long without records. */
const QUIET_MS = 300;

/** Told of changes: `changed` is the spans made or changed, each once. */
type Subscriber = (changed: readonly TraceSpan[]) => void;

/**
 * One session's span tree, kept up to date by following its trace: the source's `follow`, so
 * sessions of a directory and of a fleet alike. The detail pane's records come from the source's
 * `readRecords` (a directory's reads them from the file by offset); a source without it has each
 * record's JSON (long strings cut at {@link DETAIL_FIELD_CHARS}) kept here, within
 * {@link DETAIL_BUDGET_CHARS}, and a record let go read again from the source when asked for.
 */
export class TraceIndex {
  readonly builder = new SpanTreeBuilder();
  /** True once the follow has read what the trace held (sources that cannot say: after the first batch). */
  caughtUp = false;
  failure: Error | undefined;
  lastUse = Date.now();
  private readonly texts: (string | undefined)[] = [];
  private kept = 0;
  private oldest = 0;
  private readonly subscribers = new Set<Subscriber>();
  private readonly waiting = new Set<() => void>();
  private readonly stop = new AbortController();
  private quiet: NodeJS.Timeout | undefined;

  constructor(
    private readonly source: DashboardSource,
    readonly id: string,
    /** Record text kept in all, for a source without `readRecords` (tests set a small one). */
    private readonly budget = DETAIL_BUDGET_CHARS,
  ) {
    void this.follow();
  }

  /** Calls `subscriber` with every change from now on; returns a function that stops it. */
  subscribe(subscriber: Subscriber): () => void {
    this.subscribers.add(subscriber);
    this.lastUse = Date.now();
    return () => {
      this.subscribers.delete(subscriber);
      this.lastUse = Date.now();
    };
  }

  /** Whether a client is following it. */
  get watched(): boolean {
    return this.subscribers.size > 0;
  }

  /** Resolves once the trace as it was has been read (or the follow failed). */
  ready(): Promise<void> {
    if (this.caughtUp || this.failure !== undefined) return Promise.resolve();
    return new Promise((resolve) => this.waiting.add(resolve));
  }

  /**
   * The records at `indexes` (as JSON texts, long strings cut): from what the index kept, and what
   * it let go from the source again (one pass from the trace's start).
   */
  async records(indexes: readonly number[]): Promise<Map<number, string>> {
    this.lastUse = Date.now();
    if (this.source.readRecords !== undefined) {
      const read = await this.source.readRecords(this.id, indexes);
      return new Map([...read].map(([index, record]) => [index, detailText(record)]));
    }
    await this.ready();
    const found = new Map<number, string>();
    const missing = new Set<number>();
    for (const index of indexes) {
      const text = this.texts[index];
      if (text !== undefined) found.set(index, text);
      else if (Number.isInteger(index) && index >= 0 && index < this.texts.length) missing.add(index);
    }
    if (missing.size === 0) return found;
    const last = Math.max(...missing);
    const stop = new AbortController();
    let position = 0;
    try {
      for await (const batch of this.source.follow(this.id, { signal: stop.signal })) {
        for (const record of batch) {
          if (missing.has(position)) found.set(position, detailText(record));
          position += 1;
        }
        if (position > last || batch.length === 0) break;
      }
    } finally {
      stop.abort();
    }
    return found;
  }

  close(): void {
    clearTimeout(this.quiet);
    this.stop.abort();
    this.subscribers.clear();
    this.settle();
  }

  private async follow(): Promise<void> {
    try {
      for await (const batch of this.source.follow(this.id, { signal: this.stop.signal })) {
        for (const record of batch) {
          this.builder.add(record);
          // A source that reads records by index keeps them; for the others, the index does.
          if (this.source.readRecords === undefined) this.keep(detailText(record));
        }
        const changed = this.builder.takeChanged();
        if (changed.length > 0) for (const subscriber of this.subscribers) subscriber(changed);
        // An empty batch: the follow caught up with what was written. A source that never says so
        // (a fleet's, record by record) is taken as caught up once nothing came for a moment.
        clearTimeout(this.quiet);
        if (batch.length === 0 && !this.caughtUp) this.markCaughtUp();
        else if (!this.caughtUp) this.quiet = setTimeout(() => this.markCaughtUp(), QUIET_MS);
        // While a long trace is read, let the pages' streams write what was built so far before
        // the next batch (else the first spans leave only once the whole first read is built).
        if (!this.caughtUp && this.subscribers.size > 0) await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      this.failure = error instanceof Error ? error : new Error(String(error));
    } finally {
      clearTimeout(this.quiet);
      const was = this.caughtUp;
      this.caughtUp = true;
      if (!was || this.failure !== undefined) for (const subscriber of this.subscribers) subscriber([]);
      this.settle();
    }
  }

  private markCaughtUp(): void {
    this.caughtUp = true;
    // The source's record offsets are made now, while the page draws the tree, not on the first click.
    this.source.readRecords?.(this.id, []).catch(() => undefined);
    for (const subscriber of this.subscribers) subscriber([]);
    this.settle();
  }

  private settle(): void {
    for (const resolve of this.waiting) resolve();
    this.waiting.clear();
  }

  private keep(text: string): void {
    this.texts.push(text);
    this.kept += text.length;
    while (this.kept > this.budget && this.oldest < this.texts.length - 1) {
      this.kept -= this.texts[this.oldest]?.length ?? 0;
      this.texts[this.oldest] = undefined;
      this.oldest += 1;
    }
  }
}

/** A record's JSON for the detail pane: long strings cut. */
function detailText(record: RawTraceRecord): string {
  const json = JSON.stringify(record);
  return json.length > DETAIL_FIELD_CHARS ? JSON.stringify(cutRecord(record, json.length, DETAIL_FIELD_CHARS)) : json;
}

/**
 * The indexes of the sessions being looked at: one per session, shared by every page that shows
 * it; at most {@link MAX_INDEXES}, an index unused for {@link IDLE_MS} (no page follows it) stops.
 */
export class TraceIndexes {
  private readonly indexes = new Map<string, TraceIndex>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly source: DashboardSource) {
    this.sweeper = setInterval(() => this.sweep(), 10_000);
    this.sweeper.unref();
  }

  get(id: string): TraceIndex {
    let index = this.indexes.get(id);
    if (index === undefined || index.failure !== undefined) {
      index?.close();
      index = new TraceIndex(this.source, id);
    }
    this.indexes.delete(id);
    this.indexes.set(id, index);
    index.lastUse = Date.now();
    for (const [key, other] of this.indexes) {
      if (this.indexes.size <= MAX_INDEXES) break;
      if (other.watched && key !== id) continue;
      other.close();
      this.indexes.delete(key);
    }
    return index;
  }

  close(): void {
    clearInterval(this.sweeper);
    for (const index of this.indexes.values()) index.close();
    this.indexes.clear();
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, index] of this.indexes)
      if (!index.watched && now - index.lastUse > IDLE_MS) {
        index.close();
        this.indexes.delete(key);
      }
  }
}
