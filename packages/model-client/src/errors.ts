const RHO_ERROR_BRAND = Symbol.for('rho.error');

/** Options shared by every rho error. */
export interface RhoErrorOptions {
  /** Human-readable message: what happened and what to do about it. */
  message: string;
  /** The underlying error, if any. */
  cause?: unknown;
}

/**
 * Base class of every error rho throws. `code` is stable and meant for programs; `message` is for
 * people. `RhoError.isInstance()` works across two installed copies of the package, because it
 * checks a global symbol brand rather than the prototype chain.
 */
export class RhoError extends Error {
  /** Stable machine-readable code, for example `model_api_error`. */
  readonly code: string;
  private readonly [RHO_ERROR_BRAND] = true;

  constructor(code: string, options: RhoErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RhoError';
    this.code = code;
  }

  /** True for any rho error, even one created by another copy of this package. */
  static isInstance(error: unknown): error is RhoError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[RHO_ERROR_BRAND] === true;
  }
}

/** Options of {@link ModelApiError}. */
export interface ModelApiErrorOptions extends RhoErrorOptions {
  /** HTTP status code, when the provider answered. */
  statusCode?: number;
  /** Whether repeating the same request may succeed. */
  isRetryable: boolean;
  /** The provider's own error message, verbatim. */
  providerMessage?: string;
  /** How many attempts were made before giving up. */
  attempts?: number;
}

/** The model API failed: an HTTP error, a dropped connection, a timeout. */
export class ModelApiError extends RhoError {
  /** HTTP status code, when the provider answered. */
  readonly statusCode: number | undefined;
  /** Whether repeating the same request may succeed. */
  readonly isRetryable: boolean;
  /** The provider's own error message, verbatim. */
  readonly providerMessage: string | undefined;
  /** How many attempts were made before giving up. */
  readonly attempts: number;

  constructor(options: ModelApiErrorOptions) {
    super('model_api_error', options);
    this.name = 'ModelApiError';
    this.statusCode = options.statusCode;
    this.isRetryable = options.isRetryable;
    this.providerMessage = options.providerMessage;
    this.attempts = options.attempts ?? 1;
  }

  static override isInstance(error: unknown): error is ModelApiError {
    return RhoError.isInstance(error) && error.code === 'model_api_error';
  }
}

/** How a response that the provider sent fell short of an answer. */
export type ModelResponseKind =
  /** The stream ended (connection closed cleanly) before any choice said it was finished. */
  | 'incomplete_stream'
  /** A streaming request was answered with a body that is not an event stream (an HTML or JSON page). */
  | 'not_a_stream'
  /** Every chunk had `choices: []` (or none at all): nothing of an answer arrived. */
  | 'no_choices'
  /** The answer took longer than its time limit (`maxAnswerMs`), however steadily it arrived. */
  | 'answer_too_long'
  /** The answer grew past its size limit (`maxAnswerBytes`: text, reasoning and tool arguments together). */
  | 'answer_too_large';

/** Options of {@link ModelResponseError}. */
export interface ModelResponseErrorOptions extends ModelApiErrorOptions {
  /** What was wrong with the response. */
  kind: ModelResponseKind;
  /** What arrived, for people: chunk count, text length, unfinished tool calls, the start of a body. */
  received: string;
}

/**
 * The provider answered, but not with a complete answer: a stream that ended without a
 * `finish_reason`, a streaming request answered with an HTML or JSON page, a stream of empty
 * choices. It is a {@link ModelApiError} (code `model_api_error`), so callers that handle API
 * failures handle it too; `kind` and `received` say what arrived.
 */
export class ModelResponseError extends ModelApiError {
  /** What was wrong with the response. */
  readonly kind: ModelResponseKind;
  /** What arrived, for people. */
  readonly received: string;

  constructor(options: ModelResponseErrorOptions) {
    super(options);
    this.name = 'ModelResponseError';
    this.kind = options.kind;
    this.received = options.received;
  }

  static override isInstance(error: unknown): error is ModelResponseError {
    return (
      ModelApiError.isInstance(error) &&
      typeof (error as { kind?: unknown }).kind === 'string' &&
      typeof (error as { received?: unknown }).received === 'string'
    );
  }
}
