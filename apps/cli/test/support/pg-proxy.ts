// A TCP proxy in front of the shared PostgreSQL, for tests of a database restart: `down()` cuts
// every connection and refuses new ones, as a restarting server does; `up()` accepts again;
// `downAtArrayTypes()` goes down the moment a new connection is starting up (see there).
import { connect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';

/** A free TCP port on 127.0.0.1 (nothing listens on it when this returns). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A proxy to the shared PostgreSQL on `port` that can be "restarted" (connections cut, then refused). */
export async function startPgProxy(port: number) {
  const sockets = new Set<Socket>();
  let connections = 0;
  let downAtTypes = false;
  let cutsAtTypes = 0;
  const listen = async (): Promise<Server> => {
    const server = createServer((socket) => {
      connections += 1;
      const upstream = connect(5432, '127.0.0.1');
      sockets.add(socket).add(upstream);
      socket.pipe(upstream).pipe(socket);
      socket.on('data', (chunk: Buffer) => {
        if (!downAtTypes || !chunk.includes('typarray')) return;
        downAtTypes = false;
        cutsAtTypes += 1;
        void down();
      });
      const end = () => {
        socket.destroy();
        upstream.destroy();
      };
      socket.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return server;
  };
  let server = await listen();
  async function down(): Promise<void> {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    });
  }
  return {
    connections: () => connections,
    /** The server goes down: every connection is cut and new ones are refused. */
    down,
    /**
     * Goes down (as `down()`) when a client next asks for the array types: the query postgres.js
     * sends first on every new connection (`fetch_types`), before the query that opened it runs.
     */
    downAtArrayTypes() {
      downAtTypes = true;
    },
    /** How many times `downAtArrayTypes()` brought the proxy down. */
    cutsAtArrayTypes: () => cutsAtTypes,
    async up() {
      server = await listen();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
