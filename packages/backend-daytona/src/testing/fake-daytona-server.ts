import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CreateSandbox, Sandbox as SandboxDto, SandboxApi, SandboxState } from '@daytona/api-client';
import type { ErrorResponse } from '@daytona/toolbox-api-client';
import { FakeSandbox } from './fake-sandbox.js';
import { bodyOf, FakeHttpError, matchTemplate, RawReply, route, tuple, type Route } from './routes.js';
import { toolboxRoutes } from './toolbox-routes.js';

/** Options of {@link startFakeDaytona}. */
export interface FakeDaytonaOptions {
  /** The API key the fake accepts (default: a random one, in `apiKey`). */
  apiKey?: string;
  /** Snapshot names that exist (default `['daytonaio/sandbox']`). */
  snapshots?: readonly string[];
  /** Directory holding the sandboxes' file systems (default: a new temporary directory, removed on close). */
  root?: string;
}

/** A request the fake received. */
export interface FakeRequestRecord {
  method: string;
  path: string;
  /** `Api.operation` of the generated client it matched, or `unknown`. */
  operation: string;
  /** The body, as text (for process operations: the command sent). */
  body: string;
}

/** A running fake Daytona API (control plane and toolbox), see {@link startFakeDaytona}. */
export interface FakeDaytona {
  /** Value for `DAYTONA_API_URL`. */
  readonly apiUrl: string;
  /** Value for `DAYTONA_API_KEY`. */
  readonly apiKey: string;
  /** Every request, in order. */
  readonly requests: FakeRequestRecord[];
  /**
   * Requests no route matched (`METHOD /path`): the SDK called an endpoint the fake does not
   * implement. Tests assert it stays empty.
   */
  readonly unknownRoutes: string[];
  /** Sandboxes by id (deleted ones included, with `state: 'destroyed'`). */
  readonly sandboxes: Map<string, { dto: SandboxDto; request: CreateSandbox; sandbox: FakeSandbox }>;
  /** The routes the fake implements (for the drift check against the generated clients). */
  readonly routes: { control: Route[]; toolbox: Route[] };
  /** Stops the server, kills what the sandboxes still run, and removes their files. */
  close(): Promise<void>;
}

/**
 * Starts a fake Daytona API on 127.0.0.1 that implements the endpoints `@daytonaio/sdk` calls for
 * the backend: the control plane (`/api/sandbox`: create, get, delete) and the sandbox toolbox
 * (`/toolbox/{id}/...`: execute, sessions and their commands and logs, files: info, list,
 * folder, delete, move, permissions, bulk upload and download, the home directory). Commands and
 * file operations happen for real in a temporary directory that plays the sandbox's file system
 * (see `FakeSandbox`). Every handler is typed with the SDK's own generated API clients, and a
 * request to any other endpoint is answered 404 and recorded in `unknownRoutes`.
 *
 * The SDK's WebSocket event stream (`/api/socket.io/`) is declined (the SDK then polls, as it does
 * without WebSockets); it is neither recorded as unknown nor served.
 */
export async function startFakeDaytona(options: FakeDaytonaOptions = {}): Promise<FakeDaytona> {
  const apiKey = options.apiKey ?? `fake-${randomBytes(12).toString('hex')}`;
  const ownRoot = options.root === undefined;
  const root = options.root ?? mkdtempSync(join(tmpdir(), 'fake-daytona-'));
  const snapshots = new Set(options.snapshots ?? ['daytonaio/sandbox']);
  const requests: FakeRequestRecord[] = [];
  const unknownRoutes: string[] = [];
  const sandboxes: FakeDaytona['sandboxes'] = new Map();
  let baseUrl = '';
  let count = 0;

  const sandboxRecord = (idOrName: string) => {
    const found = sandboxes.get(idOrName) ?? [...sandboxes.values()].find((record) => record.dto.name === idOrName);
    if (found === undefined || found.dto.state === 'destroyed') {
      throw new FakeHttpError(404, `Sandbox with ID or name ${idOrName} not found`, 'NOT_FOUND');
    }
    return found;
  };
  const setState = (dto: SandboxDto, state: SandboxState): SandboxDto => {
    dto.state = state;
    dto.updatedAt = new Date().toISOString();
    return dto;
  };

  const sandboxRoute = route<SandboxApi>('SandboxApi');
  const control: Route[] = [
    sandboxRoute(
      'createSandbox',
      'POST',
      '/sandbox',
      (request) => tuple(bodyOf<CreateSandbox>(request)),
      async (body) => {
        if (body.snapshot !== undefined && !snapshots.has(body.snapshot)) {
          throw new FakeHttpError(404, `Snapshot ${body.snapshot} not found`, 'NOT_FOUND');
        }
        if (body.snapshot !== undefined && body.buildInfo !== undefined) {
          throw new FakeHttpError(400, 'Cannot specify both snapshot and buildInfo', 'BAD_REQUEST');
        }
        count += 1;
        const id = `fake-sandbox-${count}-${randomBytes(4).toString('hex')}`;
        const now = new Date().toISOString();
        const env = { ...body.env };
        const sandbox = new FakeSandbox(id, join(root, id), {
          PATH: '/usr/local/bin:/usr/bin:/bin',
          ...env,
          HOME: '/home/daytona',
          USER: 'daytona',
        });
        const dto: SandboxDto = {
          id,
          organizationId: 'fake-organization',
          name: body.name ?? id,
          ...(body.snapshot === undefined ? {} : { snapshot: body.snapshot }),
          user: body.user ?? 'daytona',
          env,
          labels: { ...body.labels },
          public: body.public ?? false,
          networkBlockAll: body.networkBlockAll ?? false,
          target: body.target ?? 'us',
          cpu: body.cpu ?? 1,
          gpu: body.gpu ?? 0,
          memory: body.memory ?? 1,
          disk: body.disk ?? 3,
          // A Dockerfile or image is built first; a snapshot starts at once.
          state: body.buildInfo === undefined ? 'creating' : 'pending_build',
          ...(body.autoStopInterval === undefined ? {} : { autoStopInterval: body.autoStopInterval }),
          createdAt: now,
          updatedAt: now,
          toolboxProxyUrl: `${baseUrl}/toolbox`,
        };
        sandboxes.set(id, { dto, request: body, sandbox });
        return structuredClone(dto);
      },
    ),
    sandboxRoute(
      'getSandbox',
      'GET',
      '/sandbox/{sandboxIdOrName}',
      (request) => tuple(request.params['sandboxIdOrName'] ?? '', undefined, request.query.get('verbose') === 'true'),
      async (idOrName) => {
        const { dto } = sandboxRecord(idOrName);
        // Each look moves a new sandbox one step on: pending_build -> creating -> started.
        if (dto.state === 'pending_build') setState(dto, 'creating');
        else if (dto.state === 'creating') setState(dto, 'started');
        return structuredClone(dto);
      },
    ),
    sandboxRoute(
      'setAutostopInterval',
      'POST',
      '/sandbox/{sandboxIdOrName}/autostop/{interval}',
      (request) => tuple(request.params['sandboxIdOrName'] ?? '', Number(request.params['interval'])),
      async (idOrName, interval) => {
        if (!Number.isInteger(interval) || interval < 0) {
          throw new FakeHttpError(400, 'interval must be a whole number of minutes', 'BAD_REQUEST');
        }
        const { dto } = sandboxRecord(idOrName);
        dto.autoStopInterval = interval;
        return structuredClone(dto);
      },
    ),
    sandboxRoute(
      'deleteSandbox',
      'DELETE',
      '/sandbox/{sandboxIdOrName}',
      (request) => tuple(request.params['sandboxIdOrName'] ?? ''),
      async (idOrName) => {
        const record = sandboxRecord(idOrName);
        record.sandbox.destroy();
        const reply = structuredClone(setState(record.dto, 'destroying'));
        setState(record.dto, 'destroyed');
        return reply;
      },
    ),
  ];

  const toolbox = toolboxRoutes((request) => {
    const { sandbox, dto } = sandboxRecord(request.params['sandboxId'] ?? '');
    if (dto.state !== 'started')
      throw new FakeHttpError(409, `Sandbox ${dto.id} is not started (${dto.state})`, 'CONFLICT');
    return sandbox;
  });

  const dispatch = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://fake');
    const body = await readBody(request);
    const method = request.method ?? 'GET';
    const record: FakeRequestRecord = { method, path: url.pathname, operation: 'unknown', body: body.toString('utf8') };
    requests.push(record);
    if (url.pathname.startsWith('/api/socket.io')) {
      reply(response, 404, errorBody(404, 'event stream not served by the fake', url.pathname, method));
      record.operation = 'declined:socket.io';
      return;
    }
    if (request.headers.authorization !== `Bearer ${apiKey}`) {
      reply(response, 401, errorBody(401, 'Invalid credentials', url.pathname, method, 'UNAUTHORIZED'));
      record.operation = 'unauthorized';
      return;
    }
    let found: { entry: Route; params: Record<string, string> } | undefined;
    const toolboxMatch = /^\/toolbox\/([^/]+)(\/.*)$/.exec(url.pathname);
    const [table, path, extra] = toolboxMatch
      ? [toolbox, toolboxMatch[2] ?? '', { sandboxId: decodeURIComponent(toolboxMatch[1] ?? '') }]
      : [control, url.pathname.replace(/^\/api/, ''), {}];
    for (const entry of table) {
      if (entry.method !== method) continue;
      const params = matchTemplate(entry.template, path);
      if (params !== undefined) {
        found = { entry, params: { ...params, ...extra } };
        break;
      }
    }
    if (found === undefined) {
      unknownRoutes.push(`${method} ${url.pathname}`);
      reply(
        response,
        404,
        errorBody(404, `The fake does not implement ${method} ${url.pathname}`, url.pathname, method, 'NOT_FOUND'),
      );
      return;
    }
    record.operation = `${found.entry.api}.${found.entry.operation}`;
    let json: unknown;
    if (body.length > 0 && (request.headers['content-type'] ?? '').includes('json'))
      json = JSON.parse(body.toString('utf8'));
    try {
      const result = await found.entry.invoke({
        raw: request,
        params: found.params,
        query: url.searchParams,
        body,
        json,
      });
      if (result instanceof RawReply) {
        response.writeHead(result.status, { 'content-type': result.contentType, 'content-length': result.body.length });
        response.end(result.body);
      } else if (result === undefined) {
        response.writeHead(found.entry.status === 204 ? 204 : found.entry.status);
        response.end();
      } else {
        reply(response, found.entry.status, result);
      }
    } catch (error) {
      const status = error instanceof FakeHttpError ? error.status : 500;
      const code = error instanceof FakeHttpError ? error.code : 'INTERNAL_SERVER_ERROR';
      reply(response, status, errorBody(status, (error as Error).message, url.pathname, method, code));
    }
  };

  const server = createServer((request, response) => {
    dispatch(request, response).catch((error: unknown) => {
      if (!response.headersSent)
        reply(response, 500, errorBody(500, String(error), request.url ?? '', request.method ?? ''));
    });
  });
  // The SDK's event stream asks for a WebSocket upgrade: declined, so it falls back to polling.
  server.on('upgrade', (request: IncomingMessage, socket) => {
    requests.push({ method: 'UPGRADE', path: request.url ?? '', operation: 'declined:socket.io', body: '' });
    socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    apiUrl: `${baseUrl}/api`,
    apiKey,
    requests,
    unknownRoutes,
    sandboxes,
    routes: { control, toolbox },
    async close() {
      for (const { sandbox } of sandboxes.values()) sandbox.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (ownRoot) rmSync(root, { recursive: true, force: true });
    },
  };
}

function errorBody(
  statusCode: number,
  message: string,
  path: string,
  method: string,
  code?: ErrorResponse['code'],
): ErrorResponse {
  return {
    statusCode,
    message,
    path,
    method,
    timestamp: new Date().toISOString(),
    ...(code === undefined ? {} : { code }),
  };
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => resolve(Buffer.concat(chunks)));
    request.once('error', reject);
  });
}
