/**
 * `@rho/hooks`: hooks of a rho session. Commands (or HTTP POSTs, HMAC-signed) run on the session's
 * notification events and around its tool calls, each with a timeout, recorded in the trace.
 * See docs/hooks.md.
 */
export {
  DEFAULT_HOOK_TIMEOUT_SECONDS,
  emptyHooksConfig,
  HOOK_EVENTS,
  hookMatchesTool,
  MAX_HOOK_TIMEOUT_SECONDS,
  NOTIFICATION_EVENTS,
  parseHooksSources,
  TOOL_EVENTS,
} from './config.js';
export type {
  CommandHookConfig,
  HookConfig,
  HookEvent,
  HooksConfig,
  HooksSource,
  HttpHookConfig,
  NotificationEvent,
  ToolEvent,
} from './config.js';
export { notificationsOf, toolPayload } from './payloads.js';
export type { HookPayloadBase, NotificationPayload, ToolPayload } from './payloads.js';
export { MAX_HOOK_OUTPUT_BYTES, runHook, SIGNATURE_HEADER, signBody } from './run-hook.js';
export type { HookRunInput, HookRunResult } from './run-hook.js';
export { createSessionHooks } from './session-hooks.js';
export type { HookRecorder, SessionHooks, SessionHooksOptions } from './session-hooks.js';
