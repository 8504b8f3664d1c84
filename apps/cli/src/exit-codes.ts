import { ConfigError, RhoError, SessionNotFoundError } from '@rho/core';
import type { RunStatus } from '@rho/core';
import { EXIT } from './exit-code-map.js';

export type { ExitCode } from './exit-code-map.js';
export { EXIT, EXIT_CODE_HELP } from './exit-code-map.js';

/** The exit code for how a run ended. */
export function exitCodeForStatus(status: RunStatus): number {
  switch (status) {
    case 'completed':
      return EXIT.completed;
    // An answer cut off at the model's output limit ('truncated') is not a whole answer either.
    case 'error':
    case 'truncated':
      return EXIT.failed;
    case 'limit':
      return EXIT.limit;
    case 'cancelled':
      return EXIT.cancelled;
    default: {
      const unknown: never = status;
      return unknown;
    }
  }
}

/** A problem with the user's input or configuration, reported with exit code 2. */
export class UsageError extends ConfigError {}

/** The exit code and one-line message for an error that escaped a command. */
export function describeFailure(error: unknown): { code: number; message: string } {
  if (error instanceof Error && error.name === 'ArgumentError') return { code: EXIT.badInput, message: error.message };
  if (ConfigError.isInstance(error) || SessionNotFoundError.isInstance(error))
    return { code: EXIT.badInput, message: error.message };
  // The fleet's refusals (a signal for a session that is not live) and an unmigrated schema are
  // for the user to fix, as bad input is; @rho/fleet's errors are told by code, without loading it.
  if (RhoError.isInstance(error) && (error.code === 'fleet_signal_refused' || error.code === 'fleet_schema_outdated'))
    return { code: EXIT.badInput, message: error.message };
  if (RhoError.isInstance(error)) return { code: EXIT.failed, message: error.message };
  const message = error instanceof Error ? error.message : String(error);
  return {
    code: EXIT.failed,
    message: `Unexpected error: ${message}. Rerun with --debug for details; this is a bug in rho if it persists.`,
  };
}
