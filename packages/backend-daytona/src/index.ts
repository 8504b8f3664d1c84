export { createDaytonaBackend, KEPT_AUTO_STOP_MINUTES } from './daytona-backend.js';
export { daytonaBackendFactory } from './daytona-backend-factory.js';
export type { DaytonaBackend } from './daytona-backend.js';
export { DaytonaBackendError } from './errors.js';
export { MAX_REMOTE_STDIN_BYTES } from './internal/remote-process.js';
export { DEFAULT_SYNC_LIMITS } from './internal/sync.js';
export type { SyncLimits, SyncSummary } from './internal/sync.js';
export type { TransferSummary } from './internal/transfer.js';
export {
  DEFAULT_CREATE_TIMEOUT_SECONDS,
  DEFAULT_DAYTONA_API_URL,
  DEFAULT_SANDBOX_PATH,
  resolveDaytonaSettings,
} from './options.js';
export type { DaytonaBackendOptions, DaytonaSettings, SandboxSource } from './options.js';
