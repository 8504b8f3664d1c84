// Which fleet applies is the fleet's settings section (`@rho/fleet/settings`); these names stay
// here for the commands that still import them from the CLI.
export { fleetSources } from '@rho/fleet/settings';
export type { FleetSources } from '@rho/fleet/settings';
