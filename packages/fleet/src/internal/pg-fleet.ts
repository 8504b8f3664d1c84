import type { FleetConfig } from '../fleet-config.js';
import type { ConnectFleetOptions, Fleet } from '../types.js';

export class PgFleet {
  static async connect(_config: FleetConfig, _options: ConnectFleetOptions): Promise<Fleet> {
    throw new Error('connectFleet is not implemented yet');
  }
}
