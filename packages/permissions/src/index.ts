export { BUILTIN_PROFILES, builtinProfile } from './builtin-profiles.js';
export { loadProfile } from './load-profile.js';
export type { LoadProfileOptions } from './load-profile.js';
export {
  APPROVAL_MODES,
  DATABASE_MODES,
  DEFAULT_DANGEROUS_PATTERNS,
  DEFAULT_DANGEROUS_TOOLS,
  FILE_WRITE_MODES,
  SANDBOX_MODES,
  SHELL_MODES,
  parseProfile,
  profileToDocument,
} from './permission-profile.js';
export type {
  ApprovalMode,
  DatabaseMode,
  FileWriteMode,
  PermissionProfile,
  ProfileSandboxMode,
  ShellMode,
} from './permission-profile.js';
export {
  approvalPolicy,
  BUILTIN_TOOL_NAMES,
  everyCallNeedsApproval,
  matchDangerousPattern,
} from './approval-policy.js';
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
export { gawkAvailable, hardenPlan, scrubEnvironment } from './harden-plan.js';
export type { HardenedPlan } from './harden-plan.js';
export {
  BUBBLEWRAP_INSTALL,
  commandNeedsNetwork,
  NETWORK_PROGRAMS,
  sandboxModeOf,
  sandboxOffWarning,
  sandboxStatus,
  sandboxWrapper,
} from './sandbox-wrapper.js';
export type {
  SandboxLookupOptions,
  SandboxMode,
  SandboxRunOptions,
  SandboxStatus,
  SandboxWrapper,
} from './sandbox-wrapper.js';
export { ALLOWED_PROGRAMS } from './internal/program-rules.js';
export {
  AUTO_EXECUTED_NAMES,
  checkWritePath,
  createExclusive,
  EXPORT_EXTENSIONS,
  SENSITIVE_DIRECTORIES,
  SENSITIVE_FILES,
  SENSITIVE_SYSTEM_ROOTS,
} from './check-write-path.js';
export type { CheckWritePathOptions, PathDecision, WriteKind } from './check-write-path.js';
export { openWriteTarget } from './write-target.js';
export type { OpenWriteTargetOptions, WriteTarget } from './write-target.js';
export { checkSql } from './check-sql.js';
export type { SqlDecision, SqlDialect } from './check-sql.js';
export { buildFunctionCatalog } from './internal/sql/function-policy.js';
export type { SqlFunctionCatalog, SqlFunctionRow, SqlServerContext } from './internal/sql/function-policy.js';
export { canonicalMysql, lexMysql } from './internal/sql/mysql-lexer.js';
export type { MysqlLexMode, MysqlLexResult, MysqlToken } from './internal/sql/mysql-lexer.js';
export { readSql } from './sql-reading.js';
export type { SqlReading, SqlSpan } from './sql-reading.js';
export { explainPolicy, formatPolicyExplanation } from './explain-policy.js';
export type { PolicyExplanation, PolicyRequest, WriteTool } from './explain-policy.js';
export { declaredMcpIdentity, MCP_DECISIONS, mcpPatternProblem, mcpToolRuling } from './mcp-rules.js';
export type { McpDecision, McpPermissions, McpToolIdentity, McpToolRuling } from './mcp-rules.js';
