import { RhoError } from '@rho/core';

/**
 * An operator's signal (cancel, pause, resume, directive) or answer to a waiting call that the fleet refused because the
 * session is not live: it finished (`completed`, `error`, `cancelled`, `limit`, `truncated`) or
 * is `dead` (its heartbeat stopped). The message says which, and what to do instead.
 */
export class FleetSignalRefusedError extends RhoError {
  /** The session the signal was meant for. */
  readonly sessionId: string;
  /** The signal refused. */
  readonly signal: 'cancel' | 'pause' | 'resume' | 'directive' | 'approval';
  /** The session's status when it was refused (`dead` for a stopped heartbeat). */
  readonly status: string;

  constructor(options: {
    sessionId: string;
    signal: 'cancel' | 'pause' | 'resume' | 'directive' | 'approval';
    status: string;
  }) {
    const hint =
      options.status === 'dead'
        ? 'its agent stopped sending heartbeats (the process or its node is gone)'
        : `it has finished (${options.status})`;
    super('fleet_signal_refused', {
      message:
        options.signal === 'approval'
          ? `Session ${options.sessionId} is ${options.status}: the answer was not recorded because ${hint}. The fleet takes answers for live sessions only; a resumed run asks again (rho --resume ${options.sessionId}), or answer it on its node, where rho approve answers it in its session directory.`
          : `Session ${options.sessionId} is ${options.status}: the ${options.signal} was not sent because ${hint}. Signals go to live sessions only; resume the session (rho --resume ${options.sessionId}) to give it new instructions.`,
    });
    this.name = 'FleetSignalRefusedError';
    this.sessionId = options.sessionId;
    this.signal = options.signal;
    this.status = options.status;
  }

  static override isInstance(error: unknown): error is FleetSignalRefusedError {
    return RhoError.isInstance(error) && error.code === 'fleet_signal_refused';
  }
}

/**
 * The fleet's database cannot be used: it does not answer, refuses the credentials, or its schema
 * is missing or older than this version needs (`code` says which). The message shows the url
 * redacted and says what to fix.
 */
export class FleetUnavailableError extends RhoError {
  constructor(options: { message: string; code?: 'fleet_unavailable' | 'fleet_schema_outdated'; cause?: unknown }) {
    super(options.code ?? 'fleet_unavailable', { message: options.message, cause: options.cause });
    this.name = 'FleetUnavailableError';
  }

  static override isInstance(error: unknown): error is FleetUnavailableError {
    return RhoError.isInstance(error) && error.name === 'FleetUnavailableError';
  }
}

/**
 * A session id that is live in the fleet under another process: its registry row is owned by
 * that process (host, pid and run token), whose heartbeat is fresh. One session runs in one
 * process at a time; the second is refused instead of taking the row over (a session directory
 * restored from a backup on another node, or copied, must not mix its run into the first's).
 */
export class FleetSessionTakenError extends RhoError {
  readonly sessionId: string;
  readonly host: string;
  readonly pid: number | undefined;

  constructor(options: { sessionId: string; host: string; pid: number | undefined; heartbeatAgeSeconds: number }) {
    super('fleet_session_taken', {
      message:
        `Session ${options.sessionId} is live on ${options.host}${options.pid === undefined ? '' : ` (pid ${options.pid})`}, ` +
        `which sent a heartbeat ${Math.round(options.heartbeatAgeSeconds)} s ago: a session runs in one process at a time, ` +
        'so this process was not registered and mirrors nothing. Stop the other run (rho cancel ' +
        `${options.sessionId}) or wait until it ends, or start a new session instead of copying this one.`,
    });
    this.name = 'FleetSessionTakenError';
    this.sessionId = options.sessionId;
    this.host = options.host;
    this.pid = options.pid;
  }

  static override isInstance(error: unknown): error is FleetSessionTakenError {
    return RhoError.isInstance(error) && error.code === 'fleet_session_taken';
  }
}

/**
 * This process's run of a session was taken over by another process (the registry row holds
 * another run token): what it would write to the fleet is refused, and its run is stopped.
 */
export class FleetRunSupersededError extends RhoError {
  readonly sessionId: string;

  constructor(options: { sessionId: string; what: string }) {
    super('fleet_run_superseded', {
      message: `Session ${options.sessionId} is held by another process now (its run token replaced this one's): ${options.what} was not recorded in the fleet. This run stops; follow the session where it runs now (rho watch ${options.sessionId}).`,
    });
    this.name = 'FleetRunSupersededError';
    this.sessionId = options.sessionId;
  }

  static override isInstance(error: unknown): error is FleetRunSupersededError {
    return RhoError.isInstance(error) && error.code === 'fleet_run_superseded';
  }
}

/** SQLSTATEs and driver codes of a connection lost or refused: the server restarted or is down. */
const TRANSIENT_CODES: ReadonlySet<string> = new Set([
  '57P01', // admin_shutdown: the server was stopped or restarted
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: the server is starting
  '08000',
  '08001',
  '08003',
  '08006',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECTION_CLOSED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/**
 * Whether an error of the fleet's (or the queue's) database means the connection was lost or
 * refused, so the same query may succeed once the server is back: a restart, a failover, a
 * network cut. Lock and statement timeouts, permission errors and bad SQL are not.
 */
export function isTransientDatabaseError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && TRANSIENT_CODES.has(code)) return true;
  // node-postgres (the queue's driver) says a lost connection in words, without a code.
  if (error instanceof Error && /Connection terminated|connection error|Connection ended/i.test(error.message))
    return true;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause !== undefined && cause !== error && isTransientDatabaseError(cause);
}
