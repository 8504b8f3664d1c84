export { startDashboard } from './dashboard-server.js';
export type { DashboardOptions, DashboardServer } from './dashboard-server.js';
export { createFileSource } from './file-source.js';
export type { FileSourceOptions } from './file-source.js';
export { createFleetSource } from './fleet-source.js';
export type { FleetLike, FleetSessionLike, FleetSourceOptions, FleetStatsRowLike } from './fleet-source.js';
export { querySessions } from './session-query.js';
export type {
  CostBucket,
  CostStats,
  DashboardSession,
  DashboardSource,
  FollowOptions,
  SessionPage,
  SessionQuery,
  SessionSortKey,
  ToolBucket,
  ToolStats,
} from './dashboard-source.js';
