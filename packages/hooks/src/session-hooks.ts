import type { HookRunEvent, State, ToolHookCall, ToolHooks, ToolHookVerdict, TraceRecord } from '@rho/core';
import type { HookConfig, HooksConfig, NotificationEvent } from './config.js';
import { hookMatchesTool, NOTIFICATION_EVENTS } from './config.js';
import { notificationsOf, toolPayload } from './payloads.js';
import type { HookRunResult } from './run-hook.js';
import { runHook } from './run-hook.js';

/** Where the hooks' runs are recorded: a session's {@link State}. */
export type HookRecorder = Pick<State, 'append'>;

/** Options of {@link createSessionHooks}. */
export interface SessionHooksOptions {
  /** The environment the commands inherit; default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Where the commands run; default the current directory. */
  cwd?: string;
}

/** The hooks of one session: its tool hooks, and the notification hooks once {@link attach}ed. */
export interface SessionHooks {
  /** For `SessionOptions.toolHooks`: undefined when no `pre_tool` or `post_tool` hook is configured. */
  readonly toolHooks: ToolHooks | undefined;
  /**
   * Observes the session's trace (a notification hook runs once for each record that marks its
   * event) and records every hook's run in it, those of tool calls made before too.
   */
  attach(session: { readonly id: string; readonly state: Pick<State, 'append' | 'addObserver'> }): void;
  /**
   * Waits for the notification hooks still running (each ends by its timeout), at most
   * `timeoutMs` when given: call it before the process exits, after the run's end.
   */
  drain(timeoutMs?: number): Promise<void>;
}

type Decision = ToolHookVerdict['decision'];
const STRICTNESS: Record<Decision, number> = { allow: 1, ask: 2, deny: 3 };

/** A `pre_tool` hook's answer: a verdict, no opinion (undefined), or why its answer was not one. */
type PreToolAnswer = { verdict?: ToolHookVerdict; problem?: string };

/**
 * The hooks of `config` for one session. A hook never fails the run nor holds it past its
 * timeout: a failure or a timeout is recorded in the trace (`hook` records) and is no opinion.
 * Several `pre_tool` verdicts combine to the strictest (deny, then ask, then allow); a verdict
 * only changes whether a call is asked about, never what the profile offers or a tool refuses.
 */
export function createSessionHooks(config: HooksConfig, options: SessionHooksOptions = {}): SessionHooks {
  const baseEnv = options.env ?? process.env;
  const pending = new Set<Promise<void>>();
  let recorder: HookRecorder | undefined;
  const held: Omit<HookRunEvent, 'ts'>[] = [];
  const record = (entry: Omit<HookRunEvent, 'ts'>): void => {
    if (recorder === undefined) held.push(entry);
    else recorder.append(entry);
  };
  const run = async (
    hook: HookConfig,
    event: string,
    body: string,
    env: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<HookRunResult> =>
    runHook(hook, {
      event,
      body,
      env: { RHO_HOOK_EVENT: event, ...env },
      baseEnv,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(signal === undefined ? {} : { signal }),
    });

  const preTool = config.pre_tool;
  const postTool = config.post_tool;
  const toolHooks: ToolHooks | undefined =
    preTool.length === 0 && postTool.length === 0
      ? undefined
      : {
          async beforeToolCall(call: ToolHookCall, signal: AbortSignal): Promise<ToolHookVerdict | undefined> {
            const hooks = preTool.filter((hook) => hookMatchesTool(hook, call.toolName));
            if (hooks.length === 0) return undefined;
            const body = JSON.stringify(toolPayload('pre_tool', call));
            const answers = await Promise.all(
              hooks.map(async (hook) => {
                const result = await run(hook, 'pre_tool', body, toolEnv(call), signal);
                const answer = preToolAnswer(result, hook);
                const failed = result.outcome === 'timeout' || answer.problem !== undefined;
                record({
                  type: 'hook',
                  event: 'pre_tool',
                  hook: hook.label,
                  outcome: result.outcome === 'timeout' ? 'timeout' : failed ? 'failed' : 'ok',
                  duration_ms: result.durationMs,
                  tool_call_id: call.toolCallId,
                  ...(answer.verdict === undefined ? {} : { decision: answer.verdict.decision }),
                  ...(answer.verdict?.reason !== undefined
                    ? { reason: answer.verdict.reason }
                    : failed
                      ? { reason: answer.problem ?? failureReason(result) }
                      : {}),
                });
                return answer.verdict;
              }),
            );
            return strictest(answers);
          },
          async afterToolCall(call, result, signal): Promise<void> {
            const hooks = postTool.filter((hook) => hookMatchesTool(hook, call.toolName));
            if (hooks.length === 0) return;
            const body = JSON.stringify(toolPayload('post_tool', call, result));
            await Promise.all(
              hooks.map(async (hook) => {
                const ran = await run(hook, 'post_tool', body, toolEnv(call), signal);
                record(runRecord('post_tool', hook, ran, call.toolCallId));
              }),
            );
          },
        };

  const notify = (event: NotificationEvent, sessionId: string, body: string): void => {
    for (const hook of config[event]) {
      const running = run(hook, event, body, { RHO_SESSION_ID: sessionId })
        .then((result) => record(runRecord(event, hook, result)))
        .catch(() => {})
        .finally(() => pending.delete(running));
      pending.add(running);
    }
  };
  const anyNotification = NOTIFICATION_EVENTS.some((event) => config[event].length > 0);

  return {
    toolHooks,
    attach(session) {
      recorder = session.state;
      for (const entry of held.splice(0)) recorder.append(entry);
      if (!anyNotification) return;
      session.state.addObserver((traced: TraceRecord) => {
        for (const { event, payload } of notificationsOf(traced, session.id))
          if (config[event].length > 0) notify(event, session.id, JSON.stringify(payload));
      });
    },
    async drain(timeoutMs) {
      const all = Promise.all([...pending]).then(() => undefined);
      if (timeoutMs === undefined) return all;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([all, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
    },
  };
}

function toolEnv(call: ToolHookCall): Record<string, string> {
  return { RHO_SESSION_ID: call.sessionId, RHO_TOOL_NAME: call.toolName, RHO_TOOL_CALL_ID: call.toolCallId };
}

function runRecord(
  event: string,
  hook: HookConfig,
  result: HookRunResult,
  toolCallId?: string,
): Omit<HookRunEvent, 'ts'> {
  return {
    type: 'hook',
    event,
    hook: hook.label,
    outcome: result.outcome,
    duration_ms: result.durationMs,
    ...(toolCallId === undefined ? {} : { tool_call_id: toolCallId }),
    ...(result.outcome === 'ok' ? {} : { reason: failureReason(result) }),
  };
}

function failureReason(result: HookRunResult): string {
  const said = (result.stderr.trim() || (result.status === undefined ? '' : result.stdout.trim())).split('\n', 1)[0];
  const reason = `${result.error ?? result.outcome}${said === undefined || said === '' ? '' : `: ${said}`}`;
  return reason.length > 500 ? `${reason.slice(0, 497)}...` : reason;
}

/**
 * The `pre_tool` protocol: exit 0 (HTTP 2xx) with `{"decision": "allow"|"deny"|"ask", "reason": ...}`
 * on standard output (the response's body), or nothing for no opinion; exit 2 denies, standard
 * error being the reason. Anything else is no opinion, recorded as failed.
 */
function preToolAnswer(result: HookRunResult, hook: HookConfig): PreToolAnswer {
  if (result.outcome === 'timeout') return {};
  if (result.exitCode === 2) {
    const reason = result.stderr.trim() || `${hook.label} exited with code 2`;
    return { verdict: { decision: 'deny', reason: reason.length > 2000 ? `${reason.slice(0, 1997)}...` : reason } };
  }
  if (result.outcome !== 'ok') return { problem: failureReason(result) };
  const text = result.stdout.trim();
  if (text === '') return {};
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return { problem: 'its output is not JSON: print {"decision": "allow"|"deny"|"ask", "reason": "..."} or nothing' };
  }
  if (typeof answer !== 'object' || answer === null) return { problem: 'its output is not a JSON object' };
  const { decision, reason } = answer as { decision?: unknown; reason?: unknown };
  if (decision !== 'allow' && decision !== 'deny' && decision !== 'ask')
    return { problem: `its decision must be allow, deny or ask (got ${JSON.stringify(decision) ?? 'none'})` };
  const why = typeof reason === 'string' && reason.trim() !== '' ? reason.trim() : undefined;
  if (decision === 'deny') return { verdict: { decision, reason: why ?? `denied by ${hook.label}` } };
  return { verdict: why === undefined ? { decision } : { decision, reason: why } };
}

/** The strictest verdict (deny, then ask, then allow); the first of equal ones. */
function strictest(verdicts: readonly (ToolHookVerdict | undefined)[]): ToolHookVerdict | undefined {
  let best: ToolHookVerdict | undefined;
  for (const verdict of verdicts)
    if (verdict !== undefined && (best === undefined || STRICTNESS[verdict.decision] > STRICTNESS[best.decision]))
      best = verdict;
  return best;
}
