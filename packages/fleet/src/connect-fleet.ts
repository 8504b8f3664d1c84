import type { FleetConfig } from './fleet-config.js';
import type { ConnectFleetOptions, Fleet } from './types.js';

/**
 * Connects to the fleet's database (loading postgres.js on first use) and checks that it
 * answers. The schema is not created here: run {@link Fleet.migrate} (`rho fleet migrate`) once
 * per upgrade; operations on a missing or outdated schema throw a `FleetUnavailableError` with
 * code `fleet_schema_outdated` that says so.
 *
 * @throws FleetUnavailableError when the server does not answer or refuses the credentials (the
 * message shows the url redacted).
 */
export async function connectFleet(config: FleetConfig, options: ConnectFleetOptions = {}): Promise<Fleet> {
  const { PgFleet } = await import('./internal/pg-fleet.js');
  return PgFleet.connect(config, options);
}
