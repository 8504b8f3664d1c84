/**
 * `@rho/core/internal`: plumbing shared by rho's own packages and the CLI (the session directory's
 * meta file and lock, the Python rho-agent's sessions, choice messages, a tool's own approval
 * request, the registry's output truncation that `@rho/tools-mcp` applies too, the CLI's agent
 * and user config files, the redactor helpers, the agent-as-tool factory behind
 * `agent.asTool()`, the openai SDK preload, the fold of a trace record into a session's usage
 * totals that `State` applies). No semver promise: names here change or go without
 * notice. Lint allows importing this entry only from `packages/*`, `apps/*`, `bench/` and `test/`.
 */
export { preloadOpenAI } from '@rho/model-client';
export { FileControlChannel } from '../control-channel.js';
export {
  APPROVALS_DIRECTORY,
  approvalCallKey,
  approvalFilePath,
  claimApprovalAnswer,
  grantsApprove,
  readApprovalAnswer,
} from '../approvals.js';
export type { ApprovalGrants } from '../approvals.js';
export { approvalRequestedByTool } from '../approval-policy.js';
export { mustBeOneOf, requiredOneOf } from '../choices.js';
export { resolveSessionWithRhoAgent, rhoAgentSessionsDir, rhoAgentSessionStore } from '../rho-agent-sessions.js';
export type { FoundSession } from '../rho-agent-sessions.js';
export { readSessionMeta, updateSessionMeta } from '../session-meta.js';
export { SessionLock, sessionLockOwner } from '../session-lock.js';
export { MAX_TOOL_OUTPUT_BYTES, truncateOutput } from '../truncate.js';
export {
  configLocation,
  configProblem,
  configSource,
  formatConfigPath,
  parseConfigText,
  readConfigFile,
  validateConfig,
} from '../config-file.js';
export type { ConfigPath, ConfigSource } from '../config-file.js';
export { loadYaml } from './yaml.js';
export { mergeSecretRedactors, REDACTED } from '../secret-redaction.js';
export { createAgentTool } from '../agent-tool.js';
export { addRecordUsage, emptyUsage } from '../usage-totals.js';
