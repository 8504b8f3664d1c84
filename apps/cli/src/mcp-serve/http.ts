import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { hostAllowed, tokenMatches } from '@rho/dashboard';
import { connectionServer } from './serve.js';
import type { ServeContext } from './serve-context.js';
import { onDisconnect } from './serve-context.js';

/** A listening `rho mcp serve --http`. */
export interface HttpServe {
  /** `http://host:port/mcp`. */
  readonly url: string;
  close(): Promise<void>;
}

function deny(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, {
    'content-type': 'application/json',
    ...(status === 401 ? { 'www-authenticate': 'Bearer' } : {}),
  });
  response.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message }, id: null }));
}

/**
 * Streamable HTTP at `/mcp`: every request carries `Authorization: Bearer <token>` (compared in
 * constant time) and a `Host` naming this server (DNS rebinding is refused, as by the dashboard).
 * Each MCP session (`mcp-session-id`) has its own server and transport; its end (DELETE, or the
 * transport closing) is the client's disconnection.
 */
export async function serveHttp(
  context: ServeContext,
  options: { host: string; port: number; token: string; version: string },
): Promise<HttpServe> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let connections = 0;
  const disconnecting = new Set<Promise<void>>();
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const address = server.address() as AddressInfo;
    if (!hostAllowed(request.headers.host, options.host, address.port))
      return deny(response, 403, 'The Host header does not name this server.');
    const header = request.headers.authorization;
    const given = header?.startsWith('Bearer ') === true ? header.slice('Bearer '.length).trim() : undefined;
    if (!tokenMatches(options.token, given))
      return deny(response, 401, 'Missing or wrong bearer token (Authorization: Bearer TOKEN).');
    if (new URL(request.url ?? '/', 'http://localhost').pathname !== '/mcp')
      return deny(response, 404, 'The MCP endpoint is /mcp.');
    const id = request.headers['mcp-session-id'];
    const existing = typeof id === 'string' ? sessions.get(id) : undefined;
    if (existing !== undefined) return existing.handleRequest(request, response);
    if (typeof id === 'string') return deny(response, 404, 'Unknown MCP session: initialize a new one.');
    const connection = ++connections;
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      const done = onDisconnect(context, connection).finally(() => disconnecting.delete(done));
      disconnecting.add(done);
    };
    await connectionServer(context, connection, options.version).connect(transport);
    return transport.handleRequest(request, response);
  };
  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) deny(response, 500, error instanceof Error ? error.message : String(error));
      else response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const shown = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${shown}:${port}/mcp`,
    async close() {
      await Promise.all([...sessions.values()].map((transport) => transport.close().catch(() => {})));
      await Promise.all([...disconnecting]);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}
