export { RhoError, ModelApiError, ModelResponseError } from '@rho/model-client';
export { createModelClient } from '@rho/model-client';
export type { ContextWindowInfo, ContextWindowSource } from '@rho/model-client';
export type {
  ChatMessage,
  ChatToolCall,
  ModelClient,
  ModelClientOptions,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
  ModelToolCall,
  ModelResponseKind,
  RetryNotice,
  ToolSpec,
  Usage,
} from '@rho/model-client';
export {
  BackendStoppedError,
  BackendUnavailableError,
  ConfigError,
  InternalError,
  SessionBusyError,
  SessionLockedError,
  SessionNotFoundError,
  SessionWriteError,
  TraceError,
} from './errors.js';
export type { InferSchema, JsonObjectSchema, JsonSchema } from './json-schema.js';
export { defineTool } from './tool.js';
export type {
  AnyTool,
  Tool,
  ToolAnnotations,
  ToolContext,
  ToolDefinition,
  ToolInvocation,
  ToolResult,
} from './tool.js';
export type {
  BackendIsolation,
  BackendProcess,
  ExecutionBackend,
  FileInfo,
  ProcessExit,
  ReadHandle,
  SpawnOptions,
} from './execution-backend.js';
export { createLocalBackend } from './local-backend.js';
export type { LocalBackendOptions } from './local-backend.js';
export type {
  ApprovalAnsweredEvent,
  ApprovalRequestedEvent,
  CompactEvent,
  DirectiveEvent,
  HookRunEvent,
  ErrorEvent,
  RetryEvent,
  RefusalEvent,
  LlmEndEvent,
  LlmStartEvent,
  MessageEvent,
  RunEndEvent,
  RunStartEvent,
  RunStatus,
  SessionEvent,
  SessionStatus,
  StatusEvent,
  ToolBlockedEvent,
  ToolEndEvent,
  ToolStartEvent,
  TraceRecord,
  TransientEvent,
  UsageEvent,
  UsageTotals,
} from './events.js';
export { ACTIVE_SESSION_STATUSES, RUN_STATUSES, SESSION_STATUSES } from './events.js';
export { Agent } from './agent.js';
export { defaultApprovalPolicy } from './approval-policy.js';
export type { AgentOptions, ApprovalDecision, ApprovalPolicy } from './agent.js';
export { Session } from './session.js';
export type {
  ApprovalRequest,
  Approver,
  Budgets,
  ChildSessionInfo,
  RunOptions,
  RunResult,
  SessionApprovals,
  SessionOptions,
  ToolHookCall,
  ToolHooks,
  ToolHookVerdict,
} from './session-options.js';
export { DEFAULT_APPROVAL_TIMEOUT_MS } from './session-options.js';
export { checkApprovalAnswer } from './approvals.js';
export type { AnswerOutcome, ApprovalAnswer, PendingApproval } from './approvals.js';
export type { ChildAgent, ChildSession, ChildSessions, SpawnChildOptions } from './child-sessions.js';
export type { ObservedChildSession, SessionObserver } from './session-observer.js';
export { createSecretRedactor } from './secret-redaction.js';
export type { NamedSecret, SecretInput } from './secret-redaction.js';
export type { SecretRedactor } from './secret-redaction.js';
export { State } from './state.js';
export type { ReplayReport, StateObserver } from './state.js';
export { ToolRegistry } from './tool-registry.js';
export type { PreparedToolCall, RawToolCall } from './tool-registry.js';
export type { TraceSink } from './trace-sink.js';
export type { ControlChannel, TakenDirectives } from './control-channel.js';
export { FileOperatorChannel } from './operator-channel.js';
export type { ControlOutcome, OperatorChannel } from './operator-channel.js';
export { isKnownRecord, readTrace, TraceReader } from './trace-reader.js';
export type {
  RawTraceRecord,
  TraceContents,
  TraceEnd,
  TraceNote,
  TraceNoteKind,
  TraceReaderOptions,
  TraceVisitor,
} from './trace-reader.js';
export type { SessionMeta } from './session-meta.js';
export { SessionStore, rhoHome } from './session-store.js';
export type { CreateSessionOptions, SessionInfo, SessionListOptions, SessionRef } from './session-store.js';
export type { CompactionOptions, CompactResult } from './compaction.js';
export type { AgentToolOptions } from './agent-tool.js';
export { createDelegateTool } from './delegate-tool.js';
