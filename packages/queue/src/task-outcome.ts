import type { TaskResult, TaskState } from './task-types.js';

/**
 * The task's final state and result when its attempt's session ended: stopped by the worker for a
 * cancel or the deadline (`cancelled`, `expired`), else by how the run ended: `done` when it
 * completed, `failed` otherwise (`refused`, `waiting_approval`: parked, and said so, ...).
 */
export function attemptOutcome(
  reason: 'cancelled' | 'expired' | undefined,
  result: TaskResult,
  host: string,
): { state: TaskState; result: TaskResult } {
  if (reason === 'cancelled') return { state: 'cancelled', result };
  if (reason === 'expired')
    return {
      state: 'expired',
      result: { ...result, status: 'expired', error: 'the deadline passed while the task ran' },
    };
  if (result.status === 'completed') return { state: 'done', result };
  // Stopped from outside the worker while a call waited for approval: parked, not retried.
  return { state: 'failed', result: result.status === 'waiting_approval' ? parkedResult(result, host) : result };
}

/**
 * A result whose session stopped while a call waited for approval (it was stopped from outside
 * the worker: its status is `waiting_approval`), made to say so: which call, where the session
 * is, and how to answer and continue it. The queue does not run the task again: the parked
 * session holds its work, and a second run beside it would do the task twice.
 */
export function parkedResult(result: TaskResult, host: string): TaskResult {
  const id = result.session_id ?? '?';
  const call = result.pending_approval;
  const what = call === undefined ? 'a call' : `call ${call.tool_call_id} (${call.tool_name})`;
  return {
    ...result,
    error: `the session ${id} stopped on ${host} while ${what} waited for approval; it is parked, not done, and the queue does not run it again: answer with rho approve ${id} or rho deny ${id} (on ${host}, or any node of its fleet), then continue it on ${host} with rho --resume ${id}`,
  };
}
