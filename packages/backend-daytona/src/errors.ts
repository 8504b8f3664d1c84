import { RhoError } from '@rho/core';

/** What every rho error takes: a message that says what to fix, and the underlying error. */
interface RhoErrorOptions {
  message: string;
  cause?: unknown;
}

/**
 * The Daytona service refused or failed an operation the backend needs (creating, reaching or
 * deleting the sandbox). `statusCode` is the HTTP status the service answered, when it answered.
 * Configuration mistakes (no API key, two image sources) are `ConfigError`s instead.
 */
export class DaytonaBackendError extends RhoError {
  /** HTTP status of the Daytona API's answer, if there was one. */
  readonly statusCode: number | undefined;

  constructor(options: RhoErrorOptions & { statusCode?: number | undefined; code?: string }) {
    super(options.code ?? 'daytona_error', options);
    this.name = 'DaytonaBackendError';
    this.statusCode = options.statusCode;
  }

  static override isInstance(error: unknown): error is DaytonaBackendError {
    return RhoError.isInstance(error) && error.name === 'DaytonaBackendError';
  }
}
