import type { APIConnectionError, APIError } from 'openai';

/** The SDK's error classes (the SDK is loaded lazily, so they are passed in). */
export type SdkErrors = Pick<typeof import('openai'), 'APIConnectionError' | 'APIConnectionTimeoutError' | 'APIError'>;
import { ModelApiError, ModelResponseError } from '../errors.js';
import type { ModelResponseKind } from '../errors.js';
import { isRetryableStatus, retryAfterMs } from './retry-policy.js';

/** What went wrong in one attempt, before it is known whether it will be retried. */
export interface Failure {
  /** HTTP status code, when the provider answered with one. */
  statusCode: number | undefined;
  /** The provider's own message, when it sent one. */
  providerMessage: string | undefined;
  /** What happened, for people, without the attempt count. */
  description: string;
  /** Whether the same request may succeed when repeated. */
  retryable: boolean;
  /** The wait the provider asked for, if any. */
  retryAfterMs: number | undefined;
  /** The original error. */
  cause: unknown;
  /** Set when the provider answered, but not with a complete answer. */
  response?: { kind: ModelResponseKind; received: string };
}

/** Where the request went and for which model: used to say what to fix. */
export interface FailureContext {
  baseURL: string;
  model: string;
}

// In-stream error objects carry no HTTP status; these types and codes mean "try again".
const TRANSIENT_STREAM_ERROR = /server_error|overloaded|rate_limit|timeout|unavailable|internal/i;

/** Classifies an error thrown by the SDK or by reading the stream. */
export function classifyFailure(
  error: unknown,
  timedOut: 'first_byte' | 'idle' | 'answer' | undefined,
  timeoutMs: number,
  context: FailureContext,
  sdk: SdkErrors,
): Failure {
  const { APIConnectionError, APIConnectionTimeoutError, APIError } = sdk;
  if (timedOut === 'answer') {
    const description = `the answer from ${context.baseURL} took longer than ${formatDuration(timeoutMs)} (answer time limit; raise it with --max-answer-time or RHO_MAX_ANSWER_TIME)`;
    return {
      statusCode: undefined,
      providerMessage: undefined,
      description,
      // The same request would drip again: a server this slow is not retried.
      retryable: false,
      retryAfterMs: undefined,
      cause: error,
      response: { kind: 'answer_too_long', received: `more than ${formatDuration(timeoutMs)} of streaming` },
    };
  }
  if (timedOut === 'idle') {
    return {
      statusCode: undefined,
      providerMessage: undefined,
      description: `the stream from ${context.baseURL} stalled: nothing arrived for ${formatDuration(timeoutMs)} (idle timeout; raise it with --idle-timeout or RHO_IDLE_TIMEOUT)`,
      retryable: true,
      retryAfterMs: undefined,
      cause: error,
    };
  }
  if (timedOut === 'first_byte' || error instanceof APIConnectionTimeoutError) {
    return {
      statusCode: undefined,
      providerMessage: undefined,
      description: `no response from ${context.baseURL} within ${formatDuration(timeoutMs)} (first-byte timeout; a slow or busy model may need more: --first-byte-timeout or RHO_FIRST_BYTE_TIMEOUT)`,
      retryable: true,
      retryAfterMs: undefined,
      cause: error,
    };
  }
  if (ModelResponseError.isInstance(error)) {
    return {
      statusCode: error.statusCode,
      providerMessage: undefined,
      description: error.message,
      retryable: error.isRetryable,
      retryAfterMs: undefined,
      cause: error.cause,
      response: { kind: error.kind, received: error.received },
    };
  }
  if (error instanceof APIConnectionError) return connectionFailure(error, context);
  if (error instanceof APIError) {
    const providerMessage = providerMessageOf(error);
    if (typeof error.status === 'number') {
      const header = error.headers instanceof Headers ? error.headers : undefined;
      const shouldRetry = header?.get('x-should-retry');
      const retryable =
        shouldRetry === 'true' ? true : shouldRetry === 'false' ? false : isRetryableStatus(error.status);
      return {
        statusCode: error.status,
        providerMessage,
        description: `API error ${error.status}`,
        retryable,
        retryAfterMs: retryAfterMs(header),
        cause: error,
      };
    }
    // An error object sent inside the event stream.
    const kind = `${String(error.type ?? '')} ${String(error.code ?? '')} ${providerMessage ?? ''}`;
    return {
      statusCode: undefined,
      providerMessage,
      description: 'the provider reported an error in the stream',
      retryable: TRANSIENT_STREAM_ERROR.test(kind),
      retryAfterMs: undefined,
      cause: error,
    };
  }
  if (error instanceof SyntaxError) {
    return {
      statusCode: undefined,
      providerMessage: undefined,
      description: `the provider sent a malformed response (${error.message})`,
      retryable: false,
      retryAfterMs: undefined,
      cause: error,
    };
  }
  // Reading the body failed: undici reports a dropped connection as `TypeError: terminated`.
  const reason = describeCause(error);
  return {
    statusCode: undefined,
    providerMessage: undefined,
    description: `the connection to ${context.baseURL} dropped mid-response (${reason})`,
    retryable: true,
    retryAfterMs: undefined,
    cause: error,
  };
}

function connectionFailure(error: APIConnectionError, context: FailureContext): Failure {
  const code = findErrorCode(error);
  const base = { statusCode: undefined, providerMessage: undefined, retryAfterMs: undefined, cause: error };
  // Refused and unknown-host failures do not heal within a retry window; say what to fix at once.
  if (code === 'ECONNREFUSED') {
    return {
      ...base,
      description: `cannot reach ${context.baseURL} (connection refused): is the server running? set OPENAI_BASE_URL or --base-url`,
      retryable: false,
    };
  }
  if (code === 'ENOTFOUND') {
    return {
      ...base,
      description: `cannot reach ${context.baseURL} (unknown host): check OPENAI_BASE_URL or --base-url`,
      retryable: false,
    };
  }
  const cause = describeCause(error);
  // fetch refuses some URLs outright (ports it blocks, malformed URLs): retrying cannot help.
  if (/bad port|invalid url|unsupported protocol/i.test(cause)) {
    return {
      ...base,
      description: `cannot use ${context.baseURL} (${cause}): check OPENAI_BASE_URL or --base-url`,
      retryable: false,
    };
  }
  return {
    ...base,
    description: `cannot reach ${context.baseURL} (${code ?? cause}): check the network, OPENAI_BASE_URL or --base-url`,
    retryable: true,
  };
}

/** Turns the last failure into the error the caller sees. */
export function toModelApiError(
  failure: Failure,
  attempts: number,
  context: FailureContext,
  outputStarted: boolean,
): ModelApiError {
  const attemptText = `after ${attempts} attempt${attempts === 1 ? '' : 's'}`;
  const detail = failure.providerMessage !== undefined ? `: ${failure.providerMessage}` : '';
  let message = `${failure.description} (${attemptText})${detail}`;
  const hint = hintFor(failure.statusCode, context);
  if (hint !== undefined) message += ` (${hint})`;
  if (outputStarted && failure.retryable) {
    message += '; not retried because part of the answer was already streamed and may have been acted on';
  }
  const options = {
    message,
    cause: failure.cause,
    ...(failure.statusCode === undefined ? {} : { statusCode: failure.statusCode }),
    isRetryable: failure.retryable,
    ...(failure.providerMessage === undefined ? {} : { providerMessage: failure.providerMessage }),
    attempts,
  };
  return failure.response === undefined
    ? new ModelApiError(options)
    : new ModelResponseError({ ...options, ...failure.response });
}

/** `5 s`, `1.5 s`, `250 ms`: a timeout as people read it. */
export function formatDuration(milliseconds: number): string {
  if (milliseconds < 1000) return `${milliseconds} ms`;
  const seconds = milliseconds / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}

/** A short reason for a retry line: `rate limited (429)`, `server error 503`, `no response within 5 s`. */
export function retryReason(failure: Failure): string {
  if (failure.statusCode === 429) return 'rate limited (429)';
  if (failure.statusCode !== undefined && failure.statusCode >= 500) return `server error ${failure.statusCode}`;
  if (failure.statusCode !== undefined) return `API error ${failure.statusCode}`;
  if (failure.response !== undefined)
    return failure.response.kind === 'no_choices' ? 'an empty answer' : 'an unfinished answer';
  // The description without its hint: everything before the first ' (' that starts a hint or ':'.
  const cut = failure.description.search(/ \(|: /);
  return cut > 0 ? failure.description.slice(0, cut) : failure.description;
}

function hintFor(statusCode: number | undefined, context: FailureContext): string | undefined {
  switch (statusCode) {
    case 401:
      return 'the API key was rejected: check OPENAI_API_KEY';
    case 403:
      return `the API key may not use model ${context.model} or this endpoint: check OPENAI_API_KEY and the model's access`;
    case 404:
      return `check the model name (${context.model}) and the base URL (${context.baseURL})`;
    case 429:
      return 'rate limited or out of quota: wait, lower the concurrency, or check the account';
    default:
      return undefined;
  }
}

function providerMessageOf(error: APIError): string | undefined {
  const body = error.error as Record<string, unknown> | undefined;
  if (body !== undefined && body !== null && typeof body === 'object') {
    const message = body['message'];
    if (typeof message === 'string' && message !== '') return message;
    if (message !== undefined) return JSON.stringify(message);
    return JSON.stringify(body);
  }
  // No JSON body: the SDK put the raw text after the status in its message.
  const prefix = error.status === undefined ? '' : `${error.status} `;
  const text = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
  return text === '' || text.endsWith('status code (no body)') ? undefined : text;
}

function findErrorCode(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const current = queue.shift();
    if (current === null || typeof current !== 'object' || seen.has(current)) continue;
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
    queue.push((current as { cause?: unknown }).cause);
    const nested = (current as { errors?: unknown }).errors;
    if (Array.isArray(nested)) queue.push(...nested);
  }
  return undefined;
}

function describeCause(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current !== undefined && current !== null; depth += 1) {
    if (current instanceof Error) {
      if (current.message !== '' && !parts.includes(current.message)) parts.push(current.message);
      current = current.cause;
    } else {
      parts.push(String(current));
      break;
    }
  }
  return parts.length > 0 ? parts.join(': ') : 'unknown error';
}
