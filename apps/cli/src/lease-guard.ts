import { statSync } from 'node:fs';
import type { AnswerOutcome, ApprovalAnswer, ControlChannel, SessionStatus, TakenDirectives } from '@rho/core';

/** A session stops itself once its lease file is older than this fraction of the lease (see @rho/queue). */
const LAPSE_FRACTION = 0.8;

/**
 * The lease a queue worker holds on the task this process runs, as this process can see it
 * without the database: `RHO_TASK_LEASE_FILE`, whose modification time is the last renewal the
 * worker confirmed, and `RHO_TASK_LEASE_SECONDS`. Undefined outside a queued task.
 */
export function taskLease(env: NodeJS.ProcessEnv): { file: string; seconds: number } | undefined {
  const file = env.RHO_TASK_LEASE_FILE;
  const seconds = Number(env.RHO_TASK_LEASE_SECONDS);
  if (file === undefined || file === '' || !Number.isFinite(seconds) || seconds <= 0) return undefined;
  return { file, seconds };
}

/**
 * A control channel that also answers "cancel" once the worker's lease on this attempt lapsed:
 * the lease file was not renewed for 80% of the lease (two heartbeats missed; the job expires at
 * the full lease and may then start again elsewhere) or is gone (the worker knows it lost the
 * lease). The session asks before every model call and every tool call, and polls it while one
 * runs, so a frozen worker's session stops itself before another attempt can start: one owner
 * at a time, whatever happens to the worker.
 */
export class LeaseGuardChannel implements ControlChannel {
  private told = false;

  constructor(
    private readonly inner: ControlChannel,
    private readonly lease: { file: string; seconds: number },
    private readonly onLapse: (message: string) => void,
  ) {}

  /** Why the lease is no longer this attempt's, or undefined while it holds. */
  lapse(now = Date.now()): string | undefined {
    let age: number;
    try {
      age = now - statSync(this.lease.file).mtimeMs;
    } catch {
      return "the worker gave up this task's lease (it was lost, or the task handed back)";
    }
    const limit = this.lease.seconds * 1000 * LAPSE_FRACTION;
    if (age <= limit) return undefined;
    return `the worker has not renewed this task's ${this.lease.seconds} s lease for ${Math.round(age / 1000)} s (the worker is frozen or cut off from the queue)`;
  }

  async isCancelRequested(): Promise<boolean> {
    const lapse = this.lapse();
    if (lapse !== undefined) {
      if (!this.told) {
        this.told = true;
        this.onLapse(`${lapse}: this attempt stops now, before another attempt of the task can start elsewhere.`);
      }
      return true;
    }
    return this.inner.isCancelRequested();
  }

  isPauseRequested(): Promise<boolean> {
    return this.inner.isPauseRequested();
  }

  takeDirectives(cursor: number): Promise<TakenDirectives> {
    return this.inner.takeDirectives(cursor);
  }

  clearCancel(): Promise<void> {
    return this.inner.clearCancel();
  }

  heartbeat(): Promise<void> {
    return this.inner.heartbeat();
  }

  reportStatus(status: SessionStatus): Promise<void> {
    return this.inner.reportStatus(status);
  }

  // Answers to waiting calls come through the channel the guard wraps (the lease does not change them).
  async takeApprovalAnswer(toolCallId: string): Promise<ApprovalAnswer | undefined> {
    return this.inner.takeApprovalAnswer?.(toolCallId);
  }

  async settleApproval(toolCallId: string, answer: ApprovalAnswer): Promise<AnswerOutcome> {
    return this.inner.settleApproval === undefined
      ? { outcome: 'answered', answer }
      : this.inner.settleApproval(toolCallId, answer);
  }
}
