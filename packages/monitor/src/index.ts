export { ACTIVE_STATUSES, LIVENESS_DEFAULTS, judgeLiveness, processExists } from './live-status.js';
export type { LiveStatus, Liveness, LivenessOptions } from './live-status.js';
export { listSessions, readMonitoredSession } from './list-sessions.js';
export type { ListSessionsOptions, MonitoredSession } from './list-sessions.js';
export { flattenSessionTree, groupSessions } from './group-sessions.js';
export type { SessionTreeNode } from './group-sessions.js';
export { followTrace } from './follow-trace.js';
export type { FollowTraceOptions } from './follow-trace.js';
// The trace format is core's; re-exported because every consumer of followTrace needs them.
export { isKnownRecord } from '@rho/core';
export type { RawTraceRecord } from '@rho/core';
export { watchSession } from './watch-session.js';
export type { WatchSessionOptions } from './watch-session.js';
export { readSessionContext } from './session-context.js';
export type { SessionContext, SessionContextOptions } from './session-context.js';
export { buildCoordinatorPrompt } from './coordinator-prompt.js';
export type { CoordinatorPromptOptions } from './coordinator-prompt.js';
