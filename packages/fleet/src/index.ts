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
