import type { IncomingMessage } from 'node:http';
import type { ErrorResponse } from '@daytona/toolbox-api-client';

/**
 * The operations of a generated API class (`ProcessApi`, `SandboxApi`, ...): the argument tuple
 * and the reply type of its method `Name`. The fake's handlers are typed with these, so a change
 * in the SDK's generated client (a renamed operation, a new required argument, a changed reply)
 * fails type checking of the fake.
 */
export type OperationArgs<Api, Name extends keyof Api> = Api[Name] extends (...args: infer Args) => unknown
  ? Args
  : never;
/** The reply (`response.data`) type of operation `Name` of `Api`. */
export type OperationReply<Api, Name extends keyof Api> = Api[Name] extends (
  ...args: never[]
) => Promise<{ data: infer Reply }>
  ? Reply
  : never;

/** A request as the router hands it to a route. */
export interface FakeRequest {
  /** The raw request. */
  raw: IncomingMessage;
  /** Path parameters, by the names in the route's template. */
  params: Record<string, string>;
  /** Query parameters. */
  query: URLSearchParams;
  /** The whole body. */
  body: Buffer;
  /** The body parsed as JSON (undefined when empty or not JSON). */
  json: unknown;
}

/** A reply that is not JSON (the multipart of a download). */
export class RawReply {
  constructor(
    readonly status: number,
    readonly contentType: string,
    readonly body: Buffer,
  ) {}
}

/** An HTTP error with the daemon's error body (`ErrorResponse` of the toolbox client). */
export class FakeHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: ErrorResponse['code'],
  ) {
    super(message);
  }
}

/** One route of the fake: method, template (as the generated client writes it) and its handler. */
export interface Route {
  /** Which generated API class and operation it serves, for the drift check. */
  api: string;
  operation: string;
  method: 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH';
  /** The path template, exactly as in the generated client (`/process/session/{sessionId}`). */
  template: string;
  /** Status of a successful reply. */
  status: number;
  invoke(request: FakeRequest): Promise<unknown>;
}

/**
 * Declares the route of operation `name` of `Api`: `args` builds the operation's argument tuple
 * from the request (path, query, body), and `handle` takes exactly those arguments and returns
 * the operation's reply type.
 */
export function route<Api>(api: string) {
  return <Name extends keyof Api & string>(
    name: Name,
    method: Route['method'],
    template: string,
    args: (request: FakeRequest) => OperationArgs<Api, Name>,
    handle: (...args: OperationArgs<Api, Name>) => Promise<OperationReply<Api, Name> | RawReply>,
    status = 200,
  ): Route => ({
    api,
    operation: name,
    method,
    template,
    status,
    invoke: (request) => handle(...args(request)),
  });
}

/** Matches a path against a template; returns the parameters, or undefined. */
export function matchTemplate(template: string, path: string): Record<string, string> | undefined {
  const names: string[] = [];
  const pattern = template.replace(/\{(\w+)\}/g, (_, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  const match = new RegExp(`^${pattern}$`).exec(path);
  if (match === null) return undefined;
  const params: Record<string, string> = {};
  names.forEach((name, index) => {
    params[name] = decodeURIComponent(match[index + 1] ?? '');
  });
  return params;
}

/** A required query parameter. */
export function required(query: URLSearchParams, name: string): string {
  const value = query.get(name);
  if (value === null) throw new FakeHttpError(400, `query parameter ${name} is required`, 'BAD_REQUEST');
  return value;
}

/** An optional query parameter. */
export function optional(query: URLSearchParams, name: string): string | undefined {
  return query.get(name) ?? undefined;
}

/** The JSON body as the operation's request type (the generated type is the contract). */
export function bodyOf<T>(request: FakeRequest): T {
  if (request.json === undefined) throw new FakeHttpError(400, 'a JSON body is required', 'INVALID_REQUEST_BODY');
  return request.json as T;
}

/** Its arguments as a tuple (for building an operation's argument list). */
export function tuple<T extends unknown[]>(...items: T): T {
  return items;
}
