export { Agent } from './agent.js';
export type { AgentOptions, CreateAgentOptions } from './agent.js';
export { backendAccess, defaultBackendName, defaultBackendRegistry } from './backends.js';
export { createToolset } from './create-toolset.js';
export type {
  ApprovalAvailability,
  DatabasesOption,
  McpContextCost,
  Toolset,
  ToolsetOptions,
  WithheldTool,
} from './create-toolset.js';
export type { ExtraTools } from './extra-tools.js';
// What an application that installs @rho/agent alone needs from the packages below it, so it
// never imports a package it did not install.
export { ConfigError, defineTool, RhoError } from '@rho/core';
export type {
  AnyTool,
  ApprovalRequest,
  Approver,
  Budgets,
  RunResult,
  Session,
  SessionEvent,
  SessionOptions,
  ToolAnnotations,
  ToolResult,
} from '@rho/core';
export { loadProfile } from '@rho/permissions';
export type { PermissionProfile } from '@rho/permissions';
export type { DatabaseConfig, DatabaseWarning } from '@rho/tools-db';
