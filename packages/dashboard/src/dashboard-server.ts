import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '@rho/core';
import type { DashboardSource } from './dashboard-source.js';
import { cookie, hostAllowed, isLoopback, newToken, tokenMatches } from './internal/access.js';
import { handleApi } from './internal/api.js';
import { TraceIndexes } from './internal/trace-index.js';
import { send } from './internal/http.js';

/** Options of {@link startDashboard}. */
export interface DashboardOptions {
  /** Where sessions come from ({@link createFileSource}, or a fleet source). */
  source: DashboardSource;
  /** Port to listen on (default 0: a free port). */
  port?: number;
  /** Address to listen on (default `127.0.0.1`). */
  host?: string;
  /** Required to listen on an address other than loopback: the dashboard can cancel agents. */
  allowRemote?: boolean;
  /** The access token (default: 32 random bytes). */
  token?: string;
  /** How often a followed session's status is sent to its page (default 1000 ms). */
  statusIntervalMs?: number;
}

/** A running dashboard. */
export interface DashboardServer {
  /** The URL to open, with the token (`http://127.0.0.1:PORT/?token=...`), as Jupyter prints it. */
  readonly url: string;
  /** The origin, without the token. */
  readonly origin: string;
  /** The access token every request needs. */
  readonly token: string;
  /** The port it listens on. */
  readonly port: number;
  /** Stops listening, ends every open connection (live pages included) and closes the source. */
  close(): Promise<void>;
}

/** What the package build puts in `dist/assets` (see scripts/build-assets.mjs). */
interface Assets {
  html: string;
  script: Buffer;
  style: Buffer;
}

function loadAssets(): Assets {
  // dist/assets next to dist/dashboard-server.js; from the sources (tests), the built ones.
  const built = new URL('./assets/', import.meta.url);
  const directory = existsSync(built) ? built : new URL('../dist/assets/', import.meta.url);
  try {
    return {
      html: readFileSync(new URL('index.html', directory), 'utf8'),
      script: readFileSync(new URL('app.js', directory)),
      style: readFileSync(new URL('app.css', directory)),
    };
  } catch (error) {
    throw new ConfigError({
      message: `The dashboard's page is missing from ${fileURLToPath(directory)}; build the package (pnpm --filter @rho/dashboard build).`,
      cause: error,
    });
  }
}

/**
 * Serves the dashboard over `node:http`. Every request needs the token: the URL's `?token=`
 * once (answered with an HttpOnly, SameSite=Strict cookie and a redirect that drops it from the
 * address bar), then the cookie, or an `Authorization: Bearer` header for scripts. Requests
 * whose `Host` is not this server's are refused (DNS rebinding). Requests that change something
 * (POST) must also carry the token in an `X-Rho-Token` header and, when the browser sends an
 * `Origin`, come from this origin; the page is never framed (CSP `frame-ancestors 'none'`).
 */
export async function startDashboard(options: DashboardOptions): Promise<DashboardServer> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopback(host) && options.allowRemote !== true)
    throw new ConfigError({
      message: `The dashboard listens on 127.0.0.1 unless asked: to serve it on ${host}, where other machines can reach it, pass allowRemote (rho dashboard --host ${host}).`,
      code: 'dashboard_remote_refused',
    });
  const assets = loadAssets();
  const token = options.token ?? newToken();
  // The page carries the token for its control requests (X-Rho-Token); only an authenticated request gets it.
  const page = assets.html.replace('%RHO_TOKEN%', token);
  const sockets = new Set<Socket>();
  const closing = new AbortController();
  const indexes = new TraceIndexes(options.source);
  let port = 0;
  const cookieName = () => `rho_dashboard_${port}`;

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) send(response, 500, 'text/plain', `Internal error: ${String(error)}`);
      else response.destroy();
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    securityHeaders(response);
    if (!hostAllowed(request.headers.host, host, port)) {
      send(response, 421, 'text/plain', 'This dashboard does not answer to that host name.\n');
      return;
    }
    const url = new URL(request.url ?? '/', 'http://dashboard.invalid');
    const fromQuery = url.searchParams.get('token') ?? undefined;
    if (request.method === 'GET' && url.pathname === '/' && fromQuery !== undefined) {
      if (!tokenMatches(token, fromQuery)) {
        send(response, 401, 'text/plain', 'Wrong token: open the URL that rho dashboard printed.\n');
        return;
      }
      response.writeHead(303, {
        'Set-Cookie': `${cookieName()}=${token}; HttpOnly; SameSite=Strict; Path=/`,
        Location: '/',
      });
      response.end();
      return;
    }
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!tokenMatches(token, cookie(request, cookieName())) && !tokenMatches(token, bearer)) {
      send(
        response,
        401,
        'text/plain',
        'This dashboard needs its access token: open the URL that rho dashboard printed (it ends in ?token=...).\n',
      );
      return;
    }
    if (request.method === 'GET' && url.pathname === '/') {
      send(response, 200, 'text/html; charset=utf-8', page);
      return;
    }
    if (request.method === 'GET' && url.pathname === '/assets/app.js') {
      send(response, 200, 'text/javascript; charset=utf-8', assets.script);
      return;
    }
    if (request.method === 'GET' && url.pathname === '/assets/app.css') {
      send(response, 200, 'text/css; charset=utf-8', assets.style);
      return;
    }
    if (url.pathname.startsWith('/api/')) {
      await handleApi(request, response, url, {
        source: options.source,
        token,
        closing: closing.signal,
        statusIntervalMs: options.statusIntervalMs ?? 1000,
        indexes,
      });
      return;
    }
    send(response, 404, 'text/plain', 'Not found.\n');
  }

  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(
        new ConfigError({
          message:
            error.code === 'EADDRINUSE'
              ? `Port ${options.port ?? 0} on ${host} is in use; choose another with --port.`
              : `The dashboard cannot listen on ${host}:${options.port ?? 0}: ${error.message}`,
          cause: error,
        }),
      );
    };
    server.once('error', onError);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const origin = `http://${shownHost}:${port}`;
  return {
    url: `${origin}/?token=${token}`,
    origin,
    token,
    port,
    async close() {
      closing.abort();
      indexes.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      await options.source.close();
    },
  };
}

function securityHeaders(response: ServerResponse): void {
  response.setHeader(
    'Content-Security-Policy',
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  );
  response.setHeader('X-Frame-Options', 'DENY');
  response.setHeader('X-Content-Type-Options', 'nosniff');
  response.setHeader('Referrer-Policy', 'no-referrer');
  response.setHeader('Cache-Control', 'no-store');
}
