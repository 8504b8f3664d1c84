export {
  ACTIVE_STATUSES,
  judgeLiveness,
  LISTED_STATUSES,
  LISTING_ONLY_STATUSES,
  PARKED_REASON,
  parkedOrDead,
} from './live-status.js';
export type { ListingOnlyStatus, LiveStatus, Liveness, LivenessOptions } from './live-status.js';
export type { ListedSession } from './listed-session.js';
export type {
  ControlKind,
  ControlResult,
  DirectiveResult,
  FollowedRecord,
  FollowSessionOptions,
  SessionFilter,
  SessionList,
  SessionSource,
  SessionStatsRow,
  SessionStatsView,
} from './session-source.js';
export { CONTENT_HITS_PER_SESSION, CONTENT_SNIPPET_SIDE, contentMatcher } from './content-search.js';
export type { ContentHit, ContentMatch, ContentSearch, ContentSearchOptions } from './content-search.js';
export { answerIfPending, pendingApprovalsInTrace } from './pending-approvals.js';
export type { ApprovalAnswerResult } from './pending-approvals.js';
export { collectWaitingApprovals, listWaitingApprovals, WAITING_STATUSES } from './waiting-approvals.js';
export type { WaitingApproval, WaitingApprovals, WaitingApprovalsFilter } from './waiting-approvals.js';
export { createDirectorySource } from './directory-source.js';
export type { DirectorySourceOptions } from './directory-source.js';
export { copySession } from './copy-session.js';
export { listSessions, readMonitoredSession } from './list-sessions.js';
export type { ListSessionsOptions, MonitoredSession } from './list-sessions.js';
export { flattenSessionTree, groupSessions } from './group-sessions.js';
export type { SessionTreeNode } from './group-sessions.js';
export { followTrace } from './follow-trace.js';
export type { FollowTraceOptions } from './follow-trace.js';
export { watchSession } from './watch-session.js';
export type { WatchSessionOptions } from './watch-session.js';
export { watchWithChildren } from './watch-with-children.js';
export { readSessionContext } from './session-context.js';
export type { SessionContext, SessionContextOptions } from './session-context.js';
export { buildCoordinatorPrompt } from './coordinator-prompt.js';
export type { CoordinatorPromptOptions } from './coordinator-prompt.js';
export { FOLLOW_QUEUE_HIGH_WATER, followMerged } from './follow-merged.js';
export type { FollowMergedOptions, RecordFollower } from './follow-merged.js';
