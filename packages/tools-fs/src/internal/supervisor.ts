import type { BackendProcess } from '@rho/core';

/** Why a supervised run was stopped before it finished. */
export type StopReason = 'timeout' | 'cancelled';

/** How often the process groups are looked at while they are given time to end: soon at first, then every 50 ms. */
const FIRST_POLL_MS = 2;
const POLL_MS = 50;
/** How long to wait for the groups to disappear after SIGKILL before giving up on them. */
const AFTER_KILL_MS = 2000;

/**
 * Enforces a deadline and a cancellation signal on a set of processes: when either fires, every
 * process group gets SIGTERM, and SIGKILL after a grace period (for programs that ignore SIGTERM,
 * including children that outlive a parent which did exit on SIGTERM). {@link finish} waits for
 * that, so a tool returns only once nothing it started is left.
 */
export class ProcessSupervisor {
  /** Set once the run was stopped. */
  reason: StopReason | undefined;
  private readonly processes: BackendProcess[] = [];
  private deadline: NodeJS.Timeout | undefined;
  private readonly onAbort = (): void => this.stop('cancelled');
  private resolveStopped: () => void = () => {};
  private ended: Promise<void> | undefined;
  /** Settles when the run is stopped (never, if it is not). */
  readonly stopped = new Promise<void>((resolve) => {
    this.resolveStopped = resolve;
  });

  constructor(private readonly options: { timeoutMs: number; signal?: AbortSignal | undefined; graceMs?: number }) {
    if (options.signal?.aborted) {
      this.reason = 'cancelled';
      this.resolveStopped();
    } else {
      options.signal?.addEventListener('abort', this.onAbort, { once: true });
    }
    if (Number.isFinite(options.timeoutMs)) {
      this.deadline = setTimeout(() => this.stop('timeout'), options.timeoutMs);
    }
  }

  /** Watches a process; a process added after the stop is killed at once. */
  track(child: BackendProcess): void {
    this.processes.push(child);
    if (this.reason !== undefined) {
      child.kill('SIGTERM');
      child.kill('SIGKILL');
    }
  }

  /** Stops every process: SIGTERM now; {@link finish} sends SIGKILL after the grace period. */
  stop(reason: StopReason): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.resolveStopped();
    for (const child of this.processes) child.kill('SIGTERM');
    this.ended = this.endGroups();
  }

  /**
   * Settles once every process group is gone, when the run was stopped (at once otherwise):
   * groups still there at the end of the grace period get SIGKILL. Then releases the timers and
   * the abort listener. Call it once the processes were waited for, before returning a result.
   */
  async finish(): Promise<void> {
    this.dispose();
    if (this.reason === undefined) return;
    // Stopped by a signal that was already aborted at construction: nothing got SIGTERM yet.
    this.ended ??= this.endGroups();
    await this.ended;
  }

  /** Releases the deadline and the abort listener (a stop already under way still ends its groups). */
  dispose(): void {
    clearTimeout(this.deadline);
    this.options.signal?.removeEventListener('abort', this.onAbort);
  }

  private async endGroups(): Promise<void> {
    const graceMs = this.options.graceMs ?? 2000;
    await this.waitUntilGone(graceMs);
    // A group whose leader exited can still hold children that ignore SIGTERM: the group is
    // signalled, not the leader, so they get it too.
    for (const child of this.processes) child.kill('SIGKILL');
    await this.waitUntilGone(AFTER_KILL_MS);
  }

  private async waitUntilGone(limitMs: number): Promise<void> {
    const started = performance.now();
    let pause = FIRST_POLL_MS;
    for (;;) {
      const unknown = this.processes.some((child) => child.groupAlive === undefined);
      const alive = this.processes.some((child) => child.groupAlive?.() === true);
      if (!unknown && !alive) return;
      const left = limitMs - (performance.now() - started);
      if (left <= 0) return;
      await new Promise<void>((resolve) => {
        setTimeout(resolve, Math.min(pause, left));
      });
      pause = Math.min(pause * 2, POLL_MS);
    }
  }
}
