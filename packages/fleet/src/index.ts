export { DEFAULT_FLEET_SCHEMA, redactUrl, resolveFleetConfig } from './fleet-config.js';
export type {
  FleetConfig,
  FleetConfigSource,
  FleetSettings,
  FleetTls,
  ResolveFleetConfigOptions,
} from './fleet-config.js';
export { connectFleet } from './connect-fleet.js';
export {
  FleetRunSupersededError,
  FleetSessionTakenError,
  FleetSignalRefusedError,
  FleetUnavailableError,
  isTransientDatabaseError,
} from './errors.js';
export { FLEET_STATS_VIEWS } from './types.js';
export type {
  AttachOptions,
  ConnectFleetOptions,
  Fleet,
  FleetListOptions,
  FleetSession,
  FleetSessionStatus,
  FleetStatsOptions,
  FleetStatsRow,
  FleetStatsView,
  FleetStatus,
  FleetWarning,
  FollowOptions,
  MigrateResult,
  MirroredRecord,
  MirrorStats,
  SessionAttachment,
  SessionRegistration,
  TraceMirror,
} from './types.js';
export { LATEST_SCHEMA_VERSION } from './migrations.js';
export { fleetRolesSql } from './roles.js';
export type { FleetRolesOptions } from './roles.js';
export { FleetLink } from './fleet-link.js';
export type { FleetLinkOptions } from './fleet-link.js';
export {
  COMPOSITE_CURSOR_FILE_SPAN,
  CompositeControlChannel,
  joinCursor,
  resumedFileControl,
  splitCursor,
} from './composite-control.js';
export { createFleetSessionSource, listedFleetSession, openFleetSessionSource } from './fleet-session-source.js';
export type { FleetSessionSourceOptions } from './fleet-session-source.js';
