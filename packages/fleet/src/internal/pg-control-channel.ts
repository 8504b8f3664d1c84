import type { AnswerOutcome, ApprovalAnswer, ControlChannel, SessionStatus, TakenDirectives } from '@rho/core';
import type { Sql } from 'postgres';
import { FleetRunSupersededError } from '../errors.js';
import { answerFromRow, type ApprovalRow } from './approval-rows.js';

/** The flags and signal count of a registry row, as the agent reads them. */
export interface ControlRow {
  cancel_requested: boolean;
  pause_requested: boolean;
  signal_seq: string | number;
  /** The run token the row holds (absent in rows read without it). */
  run_token?: string | null;
}

/**
 * The agent's side of a session's control channel on PostgreSQL. Operators change the registry
 * row's `cancel_requested`/`pause_requested` and append to `signal_queue` in one transaction that
 * ends with a NOTIFY; the agent keeps the flags in memory, so {@link isCancelRequested} (polled
 * every 200 ms) costs nothing and never waits on the database. They are refreshed when the
 * notification arrives (milliseconds), when the listener reconnects, and by the fleet's poll of
 * every attached session (`syncIntervalMs`), which also catches up after the database or the agent
 * was away. Each applied signal is acknowledged (`acked_at`). Directives are read by cursor (the
 * per-session signal number) straight from the queue, so none is lost or repeated.
 */
export class PgControlChannel implements ControlChannel {
  private cancel = false;
  private pause = false;
  private appliedSeq = 0;
  private ackedSeq = 0;
  private syncing: Promise<void> | undefined;
  private again = false;
  /** Bumped by local changes (clearCancel): a row read before one is stale and is not applied. */
  private generation = 0;
  private clearing: Promise<void> | undefined;
  private detached = false;
  private unhealthyUntil = 0;
  /** Called after every sync that changed the flags (the bench and tests observe delivery). */
  onChange: ((state: { cancel: boolean; pause: boolean }) => void) | undefined;
  /**
   * Called once when another process took the session's row over (its run token replaced this
   * one's): from then on this process's run is asked to stop (a cancel it cannot clear).
   */
  onLost: (() => void) | undefined;
  /** Set once another process holds the row: this process's run must stop. */
  private lost = false;
  /** Set once this process registered the row: a token read before that is the previous run's. */
  private claimed = false;
  /** Bumped by every notification for the session (an operator's answer wakes the wait at once). */
  private wakes = 0;
  /** When each waiting call's answer was last read, and at which wake. */
  private readonly approvalReads = new Map<string, { at: number; wakes: number }>();

  constructor(
    private readonly sql: Sql,
    readonly sessionId: string,
    /** This process's claim on the row; undefined for channels that do not fence (tests). */
    private readonly runToken?: string,
  ) {}

  /** The registration succeeded: from now on a row holding another token means the session was taken over. */
  markClaimed(): void {
    this.claimed = true;
  }

  /** Whether another process took the session over (this process's writes change nothing now). */
  get superseded(): boolean {
    return this.lost;
  }

  async isCancelRequested(): Promise<boolean> {
    return this.cancel || this.lost;
  }

  async isPauseRequested(): Promise<boolean> {
    return this.pause;
  }

  /**
   * Reads the queue after `cursor`, waiting at most {@link AGENT_WAIT_MS} (and not at all while
   * the database is known to be away): past that, nothing now, the same cursor next turn.
   */
  async takeDirectives(cursor: number): Promise<TakenDirectives> {
    const nothing = { texts: [], cursor };
    if (Date.now() < this.unhealthyUntil) return nothing;
    const taken = this.readDirectives(cursor).catch(() => {
      this.unhealthyUntil = Date.now() + UNHEALTHY_BACKOFF_MS;
      return nothing;
    });
    const result = await withDeadline(taken, AGENT_WAIT_MS);
    if (result !== undefined) return result;
    this.unhealthyUntil = Date.now() + UNHEALTHY_BACKOFF_MS;
    return nothing;
  }

  private async readDirectives(cursor: number): Promise<TakenDirectives> {
    {
      let rows = await this.directivesAfter(cursor);
      // A cursor past the queue's end means the queue was reset (or it came from another channel): start over.
      if (rows.length === 0 && cursor > 0) {
        const [row] = await this.sql<{ signal_seq: string }[]>`
          select signal_seq from agent_registry where session_id = ${this.sessionId}`;
        if (row !== undefined && cursor > Number(row.signal_seq)) {
          rows = await this.directivesAfter(0);
          if (rows.length === 0) return { texts: [], cursor: 0 };
        }
      }
      if (rows.length === 0) return { texts: [], cursor };
      const items = rows.map((row) => {
        const seq = Number(row.seq);
        const text = directiveText(row.payload);
        return typeof text === 'string'
          ? { text, cursor: seq }
          : { text: JSON.stringify(row.payload), cursor: seq, refused: text.refused };
      });
      const last = items[items.length - 1]!.cursor;
      // Acknowledged in the background: the agent does not wait for it.
      void this.sql`
        update signal_queue set acked_at = now()
        where session_id = ${this.sessionId} and kind = 'directive' and seq <= ${last} and acked_at is null`.catch(
        () => undefined,
      );
      return {
        texts: items.flatMap((item) => (item.refused === undefined ? [item.text] : [])),
        cursor: last,
        items,
      };
    }
  }

  /**
   * Clears the cancel at once for the agent, and in the database as soon as it answers (waiting
   * at most {@link AGENT_WAIT_MS}; until the clear is done, a cancel flag read back is ignored).
   */
  async clearCancel(): Promise<void> {
    this.cancel = false;
    this.generation += 1;
    this.clearing ??= this.clearInDatabase();
    await withDeadline(this.clearing, AGENT_WAIT_MS);
  }

  private async clearInDatabase(): Promise<void> {
    for (let delay = 100; ; delay = Math.min(delay * 2, 5_000)) {
      try {
        await this.sql.begin(async (sql) => {
          const [row] = await sql<{ signal_seq: string }[]>`
            update agent_registry set cancel_requested = false, updated_at = now()
            where session_id = ${this.sessionId} returning signal_seq`;
          // Notifications of signals up to here (a cancel cleared before it arrived) are stale.
          if (row !== undefined) this.appliedSeq = Math.max(this.appliedSeq, Number(row.signal_seq));
          await sql`update signal_queue set acked_at = now()
            where session_id = ${this.sessionId} and kind = 'cancel' and acked_at is null`;
        });
        break;
      } catch {
        if (this.detached) break;
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
      }
    }
    this.generation += 1;
    this.clearing = undefined;
  }

  /** A sign of life; sent in the background (the fleet's poll beats for every attached session too). */
  async heartbeat(): Promise<void> {
    void this.sql`update agent_registry set heartbeat_at = now()
      where session_id = ${this.sessionId} and ${this.ownRow()}`.catch(() => undefined);
  }

  /** Sent in the background; the mirrored `status` record says the same. */
  async reportStatus(status: SessionStatus): Promise<void> {
    void this.sql`update agent_registry set status = ${status}, heartbeat_at = now(), updated_at = now()
      where session_id = ${this.sessionId} and ${this.ownRow()}`.catch(() => undefined);
  }

  /** The fencing condition of every write: the row still holds this process's run token. */
  private ownRow() {
    return this.runToken === undefined ? this.sql`true` : this.sql`run_token = ${this.runToken}`;
  }

  /** Stops retrying in the background (the attachment closed). */
  detach(): void {
    this.detached = true;
  }

  /** Reads the flags now (coalescing concurrent calls); never throws. */
  sync(): Promise<void> {
    if (this.syncing !== undefined) {
      this.again = true;
      return this.syncing;
    }
    this.syncing = (async () => {
      try {
        do {
          this.again = false;
          const generation = this.generation;
          const [row] = await this.sql<ControlRow[]>`
            select cancel_requested, pause_requested, signal_seq, run_token from agent_registry
            where session_id = ${this.sessionId}`;
          if (row !== undefined) await this.apply(row, generation);
        } while (this.again);
      } catch {
        // The fleet's poll and the listener's reconnection try again.
      } finally {
        this.syncing = undefined;
      }
    })();
    return this.syncing;
  }

  /** The generation to pass to {@link apply} with a row read from now on. */
  get currentGeneration(): number {
    return this.generation;
  }

  /**
   * A notification for this session (`<id> <kind> <seq>`, sent at the operator's commit), or
   * `undefined` after the listener reconnected: a wake-up, nothing more. The flags are read from
   * the session's registry row, which only an operator can change (grants and row-level
   * security); the payload is never trusted, since NOTIFY needs no privilege and any role that can
   * connect to the database can send one on this channel.
   */
  notified(_payload: string | undefined): void {
    this.wakes += 1;
    void this.sync();
  }

  /**
   * The answer recorded in the fleet for a waiting call. The database is read when a notification
   * arrived since the last read (an operator's `answer_approval` notifies at commit), and at
   * least every {@link APPROVAL_POLL_MS} otherwise; never waiting more than {@link AGENT_WAIT_MS}.
   */
  async takeApprovalAnswer(toolCallId: string): Promise<ApprovalAnswer | undefined> {
    const last = this.approvalReads.get(toolCallId);
    const now = Date.now();
    if (last !== undefined && last.wakes === this.wakes && now - last.at < APPROVAL_POLL_MS) return undefined;
    if (now < this.unhealthyUntil) return undefined;
    this.approvalReads.set(toolCallId, { at: now, wakes: this.wakes });
    const read = this.readApproval(toolCallId).catch(() => {
      this.unhealthyUntil = Date.now() + UNHEALTHY_BACKOFF_MS;
      return undefined;
    });
    const answer = await withDeadline(read, AGENT_WAIT_MS);
    if (answer !== undefined) this.approvalReads.delete(toolCallId);
    return answer;
  }

  /**
   * Records the agent's own answer (its timeout) unless one is recorded already, fenced like every
   * write: only while the row holds this process's run token. Returns the answer that won.
   *
   * @throws FleetRunSupersededError when another process holds the session (nothing was recorded).
   */
  async settleApproval(toolCallId: string, answer: ApprovalAnswer): Promise<AnswerOutcome> {
    const [inserted] = await this.sql<ApprovalRow[]>`
      insert into approval_answers (session_id, tool_call_id, decision, scope, reason, answered_by, source, answered_at)
      select ${this.sessionId}, ${toolCallId}, ${answer.decision}, ${answer.scope ?? 'once'}, ${answer.reason ?? null},
        ${answer.by ?? null}, ${answer.source ?? 'operator'}, ${answer.at ?? new Date().toISOString()}::timestamptz
      where exists (select 1 from agent_registry where session_id = ${this.sessionId} and ${this.ownRow()})
      on conflict do nothing
      returning decision, scope, reason, answered_by, source, answered_at`;
    if (inserted !== undefined) {
      this.approvalReads.delete(toolCallId);
      return { outcome: 'answered', answer: answerFromRow(inserted) };
    }
    const winner = await this.readApproval(toolCallId);
    if (winner !== undefined) return { outcome: 'already_answered', answer: winner };
    throw new FleetRunSupersededError({ sessionId: this.sessionId, what: `the answer to tool call ${toolCallId}` });
  }

  private async readApproval(toolCallId: string): Promise<ApprovalAnswer | undefined> {
    const [row] = await this.sql<ApprovalRow[]>`
      select decision, scope, reason, answered_by, source, answered_at from approval_answers
      where session_id = ${this.sessionId} and tool_call_id = ${toolCallId}`;
    return row === undefined ? undefined : answerFromRow(row);
  }

  /** Applies a registry row read at `generation` (here or by the fleet's poll of every attached session). */
  async apply(row: ControlRow, generation: number): Promise<void> {
    if (this.runToken !== undefined && row.run_token !== undefined && row.run_token !== this.runToken) {
      if (!this.claimed) return;
      // Another process registered the session after this one's heartbeat went stale (it was
      // paused, or cut off): this run stops, and its writes are fenced off already.
      if (!this.lost) {
        this.lost = true;
        this.onChange?.({ cancel: true, pause: this.pause });
        this.onLost?.();
      }
      return;
    }
    const seq = Number(row.signal_seq);
    // Read before a local change, or older than what was applied: a fresher read follows.
    if (generation !== this.generation || seq < this.appliedSeq) return;
    // While a clear is on its way to the database, the flag read back is the one being cleared.
    const cancel = this.clearing === undefined && row.cancel_requested;
    const changed = cancel !== this.cancel || row.pause_requested !== this.pause;
    this.cancel = cancel;
    this.pause = row.pause_requested;
    if (changed) this.onChange?.({ cancel: this.cancel, pause: this.pause });
    if (seq > this.ackedSeq) {
      this.appliedSeq = Math.max(this.appliedSeq, seq);
      await this.sql`update signal_queue set acked_at = now()
        where session_id = ${this.sessionId} and kind <> 'directive' and acked_at is null and seq <= ${seq}`;
      this.ackedSeq = Math.max(this.ackedSeq, seq);
    }
  }

  /** The signal number last applied (what the fleet's poll compares). */
  get seenSeq(): number {
    return this.appliedSeq;
  }

  private directivesAfter(cursor: number) {
    return this.sql<{ seq: string; payload: unknown }[]>`
      select seq, payload from signal_queue
      where session_id = ${this.sessionId} and kind = 'directive' and seq > ${cursor}
      order by seq`;
  }
}

/** The longest an agent-side call waits for the database before answering without it. */
const AGENT_WAIT_MS = 250;
/** How often a waiting call's answer is read without a notification (a notification reads at once). */
const APPROVAL_POLL_MS = 2_000;
/** After a failed read, how long the agent does not wait for the database at all. */
const UNHEALTHY_BACKOFF_MS = 2_000;

/** The promise's value, or `undefined` when it takes longer than `milliseconds`. */
export function withDeadline<T>(promise: Promise<T>, milliseconds: number): Promise<T | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), milliseconds);
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(undefined);
      },
    );
  });
}

/** The text of a queued directive (`{"text": string}`), or why it is refused. */
function directiveText(payload: unknown): string | { refused: string } {
  if (typeof payload === 'object' && payload !== null && !Array.isArray(payload)) {
    const text = (payload as { text?: unknown }).text;
    if (typeof text === 'string') return text.trim() === '' ? { refused: "the directive's text is empty." } : text;
  }
  const shown = JSON.stringify(payload) ?? 'null';
  return {
    refused: `the queued signal is not {"text": string}: ${shown.length > 200 ? `${shown.slice(0, 200)}...` : shown}.`,
  };
}
