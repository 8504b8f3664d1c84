import type { Sql } from 'postgres';

/** Called with the notification's payload; `undefined` after the listener (re)connected: resync everything. */
export type NotificationHandler = (payload: string | undefined) => void;

/**
 * LISTEN on one channel for the whole process, dispatching by payload prefix (a session id). The
 * driver re-listens after a dropped connection, but while the server is down its attempts back
 * off to as much as 20 s apart; so a watchdog sends itself a ping every `watchdogMs` and, when the
 * ping does not come back, listens again. Every (re)listen calls each handler with `undefined`, so
 * whoever waits reads what it may have missed. Notifications only make things fast: every user
 * also polls.
 *
 * Nothing of the LISTEN rejects where no one waits: the driver catches its own re-listens, and
 * `listen()` here catches its own (polling covers the meantime; the database being away is
 * reported by the follows that poll). The unhandled ECONNREFUSED that once ended `rho watch`
 * during a restart came from the driver's array-types query on a new pool connection, not from
 * here: see patches/postgres@3.4.9.patch.
 */
export class NotificationHub {
  private readonly handlers = new Map<string, Set<NotificationHandler>>();
  private unlisten: (() => Promise<void>) | undefined;
  private listening: Promise<void> | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private pingToken = '';
  private pingAnswered = true;
  private closed = false;

  constructor(
    private readonly sql: Sql,
    readonly channel: string,
    private readonly watchdogMs = 3_000,
  ) {}

  /** Calls `handler` for notifications about `key`; returns the unsubscription. Starts listening on first use. */
  subscribe(key: string, handler: NotificationHandler): () => void {
    let set = this.handlers.get(key);
    if (set === undefined) this.handlers.set(key, (set = new Set()));
    set.add(handler);
    void this.ensureListening();
    return () => {
      set.delete(handler);
      if (set.size === 0) this.handlers.delete(key);
    };
  }

  /** Resolves once the first LISTEN succeeded (or failed: polling covers it). */
  ready(): Promise<void> {
    return this.ensureListening();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.watchdog !== undefined) clearInterval(this.watchdog);
    await this.unlisten?.().catch(() => undefined);
    this.handlers.clear();
  }

  private ensureListening(): Promise<void> {
    if (this.listening !== undefined) return this.listening;
    this.listening = this.listen();
    if (this.watchdog === undefined && !this.closed) {
      this.watchdog = setInterval(() => void this.checkListener(), this.watchdogMs);
      this.watchdog.unref();
    }
    return this.listening;
  }

  private async listen(): Promise<void> {
    try {
      const previous = this.unlisten;
      this.unlisten = undefined;
      await previous?.().catch(() => undefined);
      const result = await this.sql.listen(
        this.channel,
        (payload) => this.dispatch(payload),
        () => this.resyncAll(),
      );
      this.unlisten = result.unlisten;
    } catch {
      // The server is away: the watchdog tries again, polling covers the meantime.
    }
  }

  private async checkListener(): Promise<void> {
    if (this.closed || this.handlers.size === 0) return;
    if (!this.pingAnswered) {
      // The last ping never came back: the LISTEN is gone. Listen again.
      this.listening = this.listen();
      await this.listening;
    }
    this.pingAnswered = false;
    this.pingToken = `!ping:${Math.random().toString(36).slice(2)}`;
    await this.sql`select pg_notify(${this.channel}, ${this.pingToken})`.catch(() => undefined);
  }

  private dispatch(payload: string): void {
    if (payload === this.pingToken) {
      this.pingAnswered = true;
      return;
    }
    if (payload.startsWith('!ping:')) return;
    // One notification may concern several sessions: `<id> <rest>,<id> <rest>,...`.
    for (const item of payload.split(',')) {
      const separator = item.indexOf(' ');
      const key = separator === -1 ? item : item.slice(0, separator);
      for (const handler of this.handlers.get(key) ?? []) handler(item);
    }
  }

  private resyncAll(): void {
    this.pingAnswered = true;
    for (const set of this.handlers.values()) for (const handler of set) handler(undefined);
  }
}
