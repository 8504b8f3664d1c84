export { BUILTIN_PROFILES, builtinProfile } from './builtin-profiles.js';
export { loadProfile } from './load-profile.js';
export type { LoadProfileOptions } from './load-profile.js';
export {
  APPROVAL_MODES,
  DATABASE_MODES,
  DEFAULT_DANGEROUS_PATTERNS,
  DEFAULT_DANGEROUS_TOOLS,
  FILE_WRITE_MODES,
  NETWORK_MODES,
  SANDBOX_MODES,
  SHELL_MODES,
  databaseExportsEnabled,
  parseProfile,
} from './permission-profile.js';
export type {
  ApprovalMode,
  DatabaseMode,
  FileWriteMode,
  NetworkMode,
  PermissionProfile,
  ProfileSandboxMode,
  ShellMode,
} from './permission-profile.js';
export { approvalPolicy, BUILTIN_TOOL_NAMES, everyCallNeedsApproval } from './approval-policy.js';
export type {
  ApprovalPolicyOptions,
  ApprovalRequirement,
  ApprovalSubject,
  ProfileApprovalPolicy,
} from './approval-policy.js';
export { checkShellCommand } from './check-shell-command.js';
export type {
  CheckShellCommandOptions,
  ShellCommand,
  ShellDecision,
  ShellOperator,
  ShellPlan,
} from './check-shell-command.js';
export { sandboxStatus, sandboxWrapper } from './sandbox-wrapper.js';
export {
  createLimitCgroup,
  DEFAULT_SANDBOX_LIMITS,
  formatBytes,
  parseByteSize,
  resolveSandboxLimits,
  SANDBOX_LIMIT_KEYS,
  SandboxLimitRun,
} from './sandbox-limits.js';
export type {
  LimitCgroup,
  LimitEnforcement,
  LimitHit,
  LimitOutcome,
  SandboxLimitArguments,
  SandboxLimitOptions,
  SandboxLimits,
} from './sandbox-limits.js';
export type {
  SandboxMode,
  SandboxRunOptions,
  SandboxStatus,
  SandboxUnavailableCause,
  SandboxWrapper,
} from './sandbox-wrapper.js';
export { checkReadPath, PROC_READABLE } from './check-read-path.js';
export {
  DEFAULT_SECRET_ALLOW,
  DEFAULT_SECRET_FILES,
  gitConfigKeyNamesProgram,
  readView,
  sanitizeGitConfig,
  SECRET_SCAN_MAX_ENTRIES,
  SYSTEM_READ_ROOTS,
  SYSTEM_SECRETS,
} from './read-view.js';
export type { ReadDecision, ReadRule, ReadView, ReadViewOptions, ViewMask, ViewRoot } from './read-view.js';
export type { ReadPathDecision } from './check-read-path.js';
export { checkWritePath } from './check-write-path.js';
export type { CheckWritePathOptions, PathDecision, WriteKind } from './check-write-path.js';
export { openWriteTarget } from './write-target.js';
export type { OpenWriteTargetOptions, WriteTarget } from './write-target.js';
export { checkSql } from './check-sql.js';
export type { SqlDecision, SqlDialect } from './check-sql.js';
export { explainPolicy, formatPolicyExplanation } from './explain-policy.js';
export type { PolicyExplanation, PolicyRequest, WriteTool } from './explain-policy.js';
export {
  declaredMcpIdentity,
  MCP_DECISIONS,
  mcpPatternProblem,
  mcpReadOnlyProblem,
  mcpToolRuling,
  promisesNoChanges,
} from './mcp-rules.js';
export type { McpDecision, McpPermissions, McpToolIdentity, McpToolRuling } from './mcp-rules.js';
export { LOCAL_FILES } from './file-lookup.js';
export type { EntryKind, FileLookup } from './file-lookup.js';
