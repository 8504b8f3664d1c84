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
    case 'refused':
      return EXIT.refused;
    // A run parked waiting for an approval did not finish the task (yet).
    case 'waiting_approval':
      return EXIT.waitingApproval;
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
  // yargs' own validation errors (a flag without its value) are bad input too, not a bug of rho.
  if (error instanceof Error && (error.name === 'ArgumentError' || error.name === 'YError'))
    return { code: EXIT.badInput, message: error.message };
  if (ConfigError.isInstance(error) || SessionNotFoundError.isInstance(error))
    return { code: EXIT.badInput, message: error.message };
  // The fleet's refusals (a signal for a session that is not live) and an unmigrated schema are
  // for the user to fix, as bad input is; @rho/fleet's errors are told by code, without loading it.
  if (RhoError.isInstance(error) && (error.code === 'fleet_signal_refused' || error.code === 'fleet_schema_outdated'))
    return { code: EXIT.badInput, message: error.message };
  if (RhoError.isInstance(error)) return { code: EXIT.failed, message: error.message };
  const database = databaseFailure(error);
  if (database !== undefined) return { code: EXIT.failed, message: database };
  const message = error instanceof Error ? error.message : String(error);
  return {
    code: EXIT.failed,
    message: `Unexpected error: ${message}. Rerun with --debug for details; this is a bug in rho if it persists.`,
  };
}

/**
 * What a PostgreSQL error that escaped a fleet or queue command means for the person who ran it
 * (told by its SQLSTATE or the driver's code, without loading the driver): a lock or statement
 * timeout says what it waited for, a server that went away says so. Undefined for other errors.
 */
export function databaseFailure(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return undefined;
  switch (code) {
    case '55P03':
      return (
        `The fleet's database kept a table locked longer than rho waits for a lock (${error.message}): another ` +
        'transaction holds it (a migration, or a transaction left open: see pg_locks and pg_stat_activity). Try ' +
        'again once it is released.'
      );
    case '57014':
      return (
        `A query of the fleet's database ran longer than rho lets one run (${error.message}): the server is ` +
        'overloaded or a table is very large. Try again, or look at the server.'
      );
    case '57P01':
    case '57P02':
    case '57P03':
    case 'CONNECTION_ENDED':
    case 'CONNECTION_DESTROYED':
    case 'CONNECTION_CLOSED':
    case 'ECONNREFUSED':
    case 'ECONNRESET':
      return (
        `The fleet's database went away while rho was using it (${error.message}): it was restarted or ` +
        'stopped. Run the command again once it answers.'
      );
    default:
      return undefined;
  }
}
