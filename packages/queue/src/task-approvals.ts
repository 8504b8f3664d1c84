import { parseDuration } from '@rho/core/settings';
import type { TaskAllowlist } from './task-allowlist.js';
import type { TaskSpec } from './task-spec.js';
import { MAX_ATTEMPT_SECONDS } from './task-queue.js';

/**
 * How the tool calls of a task with `auto_approve: false` wait for approval on the worker: what
 * its session is started with (`--when-unattended wait`, `--approval-timeout`, `--on-timeout`,
 * and `RHO_TASK_APPROVAL_DEADLINE`).
 */
export interface TaskApprovalWait {
  /** How long one call waits, in milliseconds (`--approval-timeout`). */
  timeoutMs: number;
  /**
   * No call waits past this moment (ISO-8601): a little before the task's deadline (or the end of
   * the attempt pg-boss allows), so that the run ends by the timeout's answer, not by the deadline.
   */
  deadline: string;
  /** What a timeout answers (`--on-timeout`). */
  onTimeout: 'deny' | 'approve';
}

/** The shortest and longest time a run is given to end after a timeout's answer, before the deadline. */
const MARGIN_MS = { min: 5_000, max: 60_000 } as const;

/**
 * How a task's calls wait for approval when its attempt starts at `startedAt` (epoch ms), or
 * undefined for a task whose calls are approved (`auto_approve` not false) or an eval question.
 * A call waits the task's `approval_timeout`, else the worker's longest wait, and never past a
 * moment a little before the task's deadline (a tenth of the time left, from 5 s to 60 s): there
 * the timeout answers, and the run has that time left to end before the deadline stops it.
 */
export function taskApprovalWait(
  spec: TaskSpec,
  allow: Pick<TaskAllowlist, 'maxApprovalWaitMs'>,
  attempt: { deadline: Date | null; startedAt: number },
): TaskApprovalWait | undefined {
  if (spec.auto_approve !== false || spec.sql_eval !== undefined) return undefined;
  const asked = spec.approval_timeout === undefined ? undefined : parseDuration(spec.approval_timeout);
  const longest = Math.min(asked ?? allow.maxApprovalWaitMs, allow.maxApprovalWaitMs);
  // pg-boss ends an attempt after MAX_ATTEMPT_SECONDS whatever its heartbeats: that is a deadline too.
  const end = Math.min(
    attempt.deadline?.getTime() ?? Number.POSITIVE_INFINITY,
    attempt.startedAt + MAX_ATTEMPT_SECONDS * 1000,
  );
  const left = Math.max(0, end - attempt.startedAt);
  const margin = Math.min(MARGIN_MS.max, Math.max(MARGIN_MS.min, left / 10));
  const until = Math.max(attempt.startedAt, end - margin);
  return {
    timeoutMs: Math.max(1000, Math.min(longest, until - attempt.startedAt)),
    deadline: new Date(until).toISOString(),
    onTimeout: spec.on_timeout ?? 'deny',
  };
}
