export { Agent } from './agent.js';
export type { AgentOptions, CreateAgentOptions } from './agent.js';
export { createToolset } from './create-toolset.js';
export type { ApprovalAvailability, DatabasesOption, Toolset, ToolsetOptions, WithheldTool } from './create-toolset.js';
export type { ExtraTools } from './extra-tools.js';
