export { startDashboard } from './dashboard-server.js';
export type { DashboardOptions, DashboardServer } from './dashboard-server.js';
export { createFileSource } from './file-source.js';
export type { FileSourceOptions } from './file-source.js';
export { createDashboardSource } from './source-dashboard.js';
export type { SourceDashboardOptions } from './source-dashboard.js';
export { querySessions } from './session-query.js';
export type {
  CostBucket,
  CostStats,
  DashboardApprovalResult,
  DashboardSource,
  FollowOptions,
  SessionPage,
  SessionQuery,
  SessionSortKey,
  ToolBucket,
  ToolStats,
} from './dashboard-source.js';
export { hostAllowed, isLoopback, newToken, tokenMatches } from './internal/access.js';
