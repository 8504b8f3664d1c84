export { parseTaskSpec, parseTaskFile, deadlineFrom, taskClientFields, taskClientOptions } from './task-spec.js';
export type { TaskSpec, SqlEvalTask, TaskClientOptions } from './task-spec.js';
export type { TaskState, TaskResult, TaskRecord, TaskFilter, TaskWorkspace } from './task-types.js';
export {
  profileMayWrite,
  sweepTaskWorkspaces,
  taskWorkspaceMode,
  taskWorkspaceOf,
  workspaceRefusal,
} from './task-workspace.js';
export type { AttemptSession, TaskWorkspaceSweep } from './task-workspace.js';
export { createTaskQueue, TaskNotFoundError, DEFAULT_LEASE_SECONDS, DEFAULT_QUEUE_SCHEMA } from './task-queue.js';
export type { TaskQueue, TaskQueueOptions } from './task-queue.js';
export { createTaskWorker } from './task-worker.js';
export {
  allowedSpec,
  DEFAULT_TASK_PROFILE,
  endpointAllowed,
  normalEndpoint,
  taskAllowlist,
  taskRefusal,
} from './task-allowlist.js';
export type { TaskAllowlist, TaskAllowlistOptions } from './task-allowlist.js';
export type { TaskWorker, TaskWorkerOptions, WorkerEvent } from './task-worker.js';
export { createCliSessionRunner, sessionArguments } from './session-runner.js';
export type { CliSessionRunnerOptions, RunnableTask, RunningSession, TaskRunner } from './session-runner.js';
export { taskApprovalWait } from './task-approvals.js';
export type { TaskApprovalWait } from './task-approvals.js';
export { QueueNotFoundError, QueueUnavailableError } from './internal/queue-store.js';
export { queueRolesSql } from './queue-roles.js';
export type { QueueRolesOptions } from './queue-roles.js';
