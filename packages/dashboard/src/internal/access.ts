import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** A new access token: 32 random bytes, URL-safe. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Whether `given` is the token, compared in constant time. */
export function tokenMatches(token: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const expected = Buffer.from(token);
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** Host names that always mean this machine. */
const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** Whether an address to listen on is a loopback one (reachable from this machine only). */
export function isLoopback(host: string): boolean {
  return LOOPBACK_NAMES.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Whether a request's `Host` header names this server. A page of another site whose name was made
 * to resolve to 127.0.0.1 (DNS rebinding) sends its own name, and is refused. When the server
 * listens on a wildcard address (`0.0.0.0`, `::`), any name is accepted: its names are not known,
 * and the token still guards every request.
 */
export function hostAllowed(header: string | undefined, listenHost: string, port: number): boolean {
  if (header === undefined) return false;
  if (listenHost === '0.0.0.0' || listenHost === '::') return true;
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(header.trim().toLowerCase());
  if (match === null) return false;
  const name = match[1]!;
  if (match[2] !== undefined && Number(match[2]) !== port) return false;
  if (isLoopback(listenHost) && isLoopback(name)) return true;
  const listen = listenHost.toLowerCase();
  return name === listen || name === `[${listen}]` || (isIP(listen) === 6 && name === `[${listen}]`);
}

/** The value of one cookie of a request. */
export function cookie(request: IncomingMessage, name: string): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index < 0) continue;
    if (part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return undefined;
}

/**
 * Whether a request that changes something comes from the dashboard's own page: its `Origin`
 * (sent by browsers on every POST) names this server, and it carries the token in a header, which
 * a page of another site can neither read nor set without a CORS preflight this server never
 * grants.
 */
export function sameOrigin(request: IncomingMessage): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}
