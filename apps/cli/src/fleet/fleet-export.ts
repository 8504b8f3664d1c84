import type { AtifTrajectory } from '@rho/core/atif';
import { SessionNotFoundError } from '@rho/core';
import { traceToAtif } from '@rho/core/atif';
import type { FleetConfig } from '@rho/fleet';
import { connectFleet } from '@rho/fleet';
import { mirroredTrace } from './fleet-records.js';

/**
 * A session of the fleet as an ATIF trajectory, built from the trace records the fleet mirrored
 * (in sequence order, so the trajectory is the one its own node would export). Undefined when the
 * fleet does not know the session either.
 */
export async function exportFromFleet(
  config: FleetConfig,
  prefix: string,
  agentVersion: string,
): Promise<AtifTrajectory | undefined> {
  const fleet = await connectFleet(config, { maxConnections: 2, connectTimeoutSeconds: 5 });
  try {
    let session;
    try {
      session = await fleet.resolveSession(prefix);
    } catch (error) {
      // Several candidates is worth saying as is; none means the local message stands.
      if (SessionNotFoundError.isInstance(error) && !/several|ambiguous|more than one/i.test(error.message))
        return undefined;
      throw error;
    }
    return traceToAtif(await mirroredTrace(fleet, session.id), {
      agentVersion,
      sessionId: session.id,
      ...(session.model === undefined ? {} : { model: session.model }),
    });
  } finally {
    await fleet.close().catch(() => {});
  }
}
