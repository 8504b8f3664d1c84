export { createSandboxBackend } from './sandbox-backend.js';
export type { SandboxBackend, SandboxBackendOptions } from './sandbox-backend.js';
export { sandboxBackendFactory } from './sandbox-backend-factory.js';
