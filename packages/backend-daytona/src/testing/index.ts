/**
 * Test support: a fake Daytona API server that the real `@daytonaio/sdk` talks to, running
 * commands and file operations for real in a temporary directory (under bubblewrap).
 */
export { startFakeDaytona } from './fake-daytona-server.js';
export type { FakeDaytona, FakeDaytonaOptions, FakeRequestRecord } from './fake-daytona-server.js';
export { FAKE_HOME, FakeSandbox } from './fake-sandbox.js';
export type { FakeCommand } from './fake-sandbox.js';
export type { OperationArgs, OperationReply, Route } from './routes.js';
