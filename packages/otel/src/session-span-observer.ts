import type { Attributes, Context, Span, Tracer } from '@opentelemetry/api';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from '@opentelemetry/semantic-conventions';
import type { ChildSession, ObservedChildSession, SessionEvent, SessionObserver } from '@rho/core';
import { GEN_AI, GEN_AI_OPERATION, RHO } from './gen-ai-attributes.js';
import { attributeText, conventionMessage, conventionMessages } from './internal/messages.js';
import { providerOf, serverOf } from './internal/provider.js';

/** Options of {@link createSessionSpanObserver} and `instrumentSession`. */
export interface SessionSpanOptions {
  /** Makes the spans: from `createOtlpTracing()`, or your application's own `TracerProvider`. */
  tracer: Tracer;
  /** `gen_ai.agent.name` of the session's `invoke_agent` spans. Default `rho`. */
  agentName?: string;
  /**
   * Record message content: the system prompt, input and output messages of each model call, tool
   * arguments and results (`gen_ai.system_instructions`, `gen_ai.input.messages`,
   * `gen_ai.output.messages`, `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`). They can
   * hold secrets and personal data, so the default is false: spans then carry names, ids, models,
   * token counts, timings and outcomes only.
   */
  captureContent?: boolean;
  /** The context the session's `invoke_agent` spans are children of. Default: each run starts a trace. */
  parentContext?: Context;
  /**
   * `gen_ai.provider.name`. Default: from the model client's base URL (`openai` for
   * api.openai.com and for OpenAI-compatible servers rho does not recognise).
   */
  providerName?: string;
}

/** What the observer reads of the session it watches (a `Session` has it all; a child may lack `agent`). */
type ObservedSession = Pick<ChildSession, 'id' | 'state'> & {
  readonly client: { readonly model: string; readonly baseURL?: string };
  readonly agent?: { readonly systemPrompt: string };
};

interface OpenChat {
  span: Span;
  /** Set at `llm_end`: the span waits for the next record (an `error`, the assistant message) to end. */
  endedAt?: Date;
  finishReason?: string | null;
}

interface OpenTool {
  span: Span;
  startedAt: number;
}

/**
 * A `SessionObserver` that turns a session's events into OpenTelemetry spans following the GenAI
 * semantic conventions: `invoke_agent {agent}` per run, `chat {model}` per model call and
 * `execute_tool {tool}` per tool call, with the calls' own start and end times (from the trace
 * records, not from when the observer saw them). A child session started by a tool call (delegate,
 * agent tools) gets its own observer, whose `invoke_agent` span is a child of that call's
 * `execute_tool` span.
 */
export function createSessionSpanObserver(session: ObservedSession, options: SessionSpanOptions): SessionObserver {
  return new SessionSpans(session, options, options.parentContext ?? ROOT_CONTEXT, {});
}

class SessionSpans implements SessionObserver {
  private readonly agentName: string;
  private readonly common: Attributes;
  private run: { span: Span; context: Context; input: number; output: number; errorType?: string } | undefined;
  private chat: OpenChat | undefined;
  private readonly tools = new Map<string, OpenTool>();

  constructor(
    private readonly session: ObservedSession,
    private readonly options: SessionSpanOptions,
    private readonly parentContext: Context,
    private readonly extra: Attributes,
    agentName?: string,
  ) {
    this.agentName = agentName ?? options.agentName ?? 'rho';
    const server = serverOf(session.client.baseURL);
    this.common = {
      [GEN_AI.providerName]: options.providerName ?? providerOf(session.client.baseURL),
      ...(server === undefined ? {} : { [ATTR_SERVER_ADDRESS]: server.address, [ATTR_SERVER_PORT]: server.port }),
    };
  }

  onEvent(event: SessionEvent): void {
    if (this.chat?.endedAt !== undefined && !this.settleChat(event)) return;
    switch (event.type) {
      case 'run_start':
        this.startRun(event.ts, event.prompt);
        break;
      case 'llm_start':
        this.startChat(event.ts, event.model, event.context_size, event.purpose);
        break;
      case 'llm_end':
        if (event.purpose === 'child_session') {
          // Usage of a child session rolled up into this one: the child's own spans carry its calls.
          this.addUsage(event.input_tokens, event.output_tokens);
        } else {
          this.endChat(event);
        }
        break;
      case 'tool_start':
        this.startTool(event.ts, event.tool_call_id, event.tool_name, event.tool_args);
        break;
      case 'tool_end':
        this.endTool(event.tool_call_id, event.success, event.duration_ms);
        break;
      case 'tool_blocked':
        this.blockedTool(event.ts, event.tool_call_id, event.tool_name, event.tool_args, event.reason);
        break;
      case 'message':
        if (event.role === 'tool' && this.options.captureContent === true)
          this.tools.get(event.tool_call_id)?.span.setAttribute(GEN_AI.toolCallResult, event.content);
        break;
      case 'error':
        if (this.run !== undefined) this.run.errorType = event.code ?? 'error';
        break;
      case 'run_end':
        this.endRun(event.ts, event.status, event.limit, event.usage?.cost_usd);
        break;
      default:
        break;
    }
  }

  onChildSession(child: ObservedChildSession): SessionObserver | undefined {
    const tool = child.toolCallId === undefined ? undefined : this.tools.get(child.toolCallId);
    const parent = tool?.span ?? this.run?.span;
    const context = parent === undefined ? this.parentContext : trace.setSpan(ROOT_CONTEXT, parent);
    return new SessionSpans(
      child.session,
      this.options,
      context,
      { [RHO.parentSessionId]: child.parentSessionId },
      child.toolName ?? 'subagent',
    );
  }

  private startRun(ts: string, prompt: string): void {
    this.endOpenSpans(new Date(ts), 'interrupted');
    this.run?.span.end(new Date(ts));
    const span = this.options.tracer.startSpan(
      `${GEN_AI_OPERATION.invokeAgent} ${this.agentName}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: new Date(ts),
        attributes: {
          [GEN_AI.operationName]: GEN_AI_OPERATION.invokeAgent,
          [GEN_AI.agentName]: this.agentName,
          [GEN_AI.conversationId]: this.session.id,
          [GEN_AI.requestModel]: this.session.client.model,
          ...this.common,
          ...this.extra,
          ...(this.options.captureContent === true
            ? {
                ...(this.session.agent === undefined
                  ? {}
                  : {
                      [GEN_AI.systemInstructions]: JSON.stringify([
                        { type: 'text', content: this.session.agent.systemPrompt },
                      ]),
                    }),
                [GEN_AI.inputMessages]: JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: prompt }] }]),
              }
            : {}),
        },
      },
      this.parentContext,
    );
    this.run = { span, context: trace.setSpan(this.parentContext, span), input: 0, output: 0 };
  }

  private startChat(ts: string, model: string, contextSize: number, purpose: string | undefined): void {
    const capture = this.options.captureContent === true;
    const span = this.options.tracer.startSpan(
      `${GEN_AI_OPERATION.chat} ${model}`,
      {
        kind: SpanKind.CLIENT,
        startTime: new Date(ts),
        attributes: {
          [GEN_AI.operationName]: GEN_AI_OPERATION.chat,
          [GEN_AI.requestModel]: model,
          [GEN_AI.conversationId]: this.session.id,
          [RHO.contextSize]: contextSize,
          ...this.common,
          ...(purpose === undefined ? {} : { [RHO.purpose]: purpose }),
          ...(capture && this.session.agent !== undefined
            ? {
                [GEN_AI.systemInstructions]: JSON.stringify([
                  { type: 'text', content: this.session.agent.systemPrompt },
                ]),
              }
            : {}),
          // Records reach observers as they are appended: the history now is what this call sends.
          ...(capture
            ? { [GEN_AI.inputMessages]: JSON.stringify(conventionMessages(this.session.state.messages)) }
            : {}),
        },
      },
      this.run?.context ?? this.parentContext,
    );
    this.chat = { span };
  }

  private endChat(event: Extract<SessionEvent, { type: 'llm_end' }>): void {
    const chat = this.chat;
    if (chat === undefined) return;
    chat.span.setAttributes({
      [GEN_AI.responseModel]: event.model,
      ...(event.response_id === undefined ? {} : { [GEN_AI.responseId]: event.response_id }),
      ...(event.finish_reason === undefined || event.finish_reason === null
        ? {}
        : { [GEN_AI.responseFinishReasons]: [event.finish_reason] }),
      ...(event.usage_reported === false
        ? {}
        : {
            [GEN_AI.usageInputTokens]: event.input_tokens,
            [GEN_AI.usageOutputTokens]: event.output_tokens,
            [GEN_AI.usageCacheReadInputTokens]: event.cache_read_tokens,
            [GEN_AI.usageReasoningOutputTokens]: event.reasoning_tokens,
          }),
      ...(event.cost_usd === null ? {} : { [RHO.costUsd]: event.cost_usd }),
    });
    this.addUsage(event.input_tokens, event.output_tokens);
    chat.endedAt = new Date(event.ts);
    chat.finishReason = event.finish_reason ?? null;
  }

  /**
   * The record after `llm_end` says how the call ended: an `error` (the call failed), the
   * assistant message (its output), a refusal. Returns whether `event` still needs handling.
   */
  private settleChat(event: SessionEvent): boolean {
    const chat = this.chat!;
    if (event.type === 'text' || event.type === 'reasoning') return true;
    if (event.type === 'refusal') {
      if (this.options.captureContent === true) chat.span.setAttribute(RHO.refusal, event.content);
      return false;
    }
    if (event.type === 'error') {
      chat.span.setAttribute(ATTR_ERROR_TYPE, event.code ?? 'error');
      chat.span.setStatus({ code: SpanStatusCode.ERROR, message: event.content });
    } else if (event.type === 'message' && event.role === 'assistant' && this.options.captureContent === true) {
      chat.span.setAttribute(GEN_AI.outputMessages, JSON.stringify([conventionMessage(event, chat.finishReason)]));
    }
    chat.span.end(chat.endedAt);
    this.chat = undefined;
    return true;
  }

  private startTool(ts: string, id: string, name: string, args: unknown): OpenTool {
    const startedAt = Date.parse(ts);
    const span = this.options.tracer.startSpan(
      `${GEN_AI_OPERATION.executeTool} ${name}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: new Date(startedAt),
        attributes: {
          [GEN_AI.operationName]: GEN_AI_OPERATION.executeTool,
          [GEN_AI.toolName]: name,
          [GEN_AI.toolCallId]: id,
          [GEN_AI.toolType]: 'function',
          [GEN_AI.conversationId]: this.session.id,
          ...(this.options.captureContent === true ? { [GEN_AI.toolCallArguments]: attributeText(args) } : {}),
        },
      },
      this.run?.context ?? this.parentContext,
    );
    const tool = { span, startedAt };
    this.tools.set(id, tool);
    return tool;
  }

  private endTool(id: string, success: boolean, durationMs: number): void {
    const tool = this.tools.get(id);
    if (tool === undefined) return;
    this.tools.delete(id);
    if (!success) {
      tool.span.setAttribute(ATTR_ERROR_TYPE, 'tool_error');
      tool.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    // tool_end is written once every call of the response is done: its duration is the call's own.
    tool.span.end(new Date(tool.startedAt + durationMs));
  }

  private blockedTool(ts: string, id: string, name: string, args: unknown, reason: string): void {
    const tool = this.startTool(ts, id, name, args);
    this.tools.delete(id);
    tool.span.setAttributes({ [ATTR_ERROR_TYPE]: 'tool_blocked', [RHO.toolBlockedReason]: reason });
    tool.span.setStatus({ code: SpanStatusCode.ERROR, message: reason });
    tool.span.end(new Date(ts));
  }

  private addUsage(input: number, output: number): void {
    if (this.run === undefined) return;
    this.run.input += input;
    this.run.output += output;
  }

  private endRun(ts: string, status: string, limit: string | undefined, costUsd: number | null | undefined): void {
    const end = new Date(ts);
    this.endOpenSpans(end, status);
    const run = this.run;
    if (run === undefined) return;
    run.span.setAttributes({
      [RHO.runStatus]: status,
      [GEN_AI.usageInputTokens]: run.input,
      [GEN_AI.usageOutputTokens]: run.output,
      ...(limit === undefined ? {} : { [RHO.runLimit]: limit }),
      ...(costUsd === undefined || costUsd === null ? {} : { [RHO.costUsd]: costUsd }),
    });
    if (status === 'error') {
      run.span.setAttribute(ATTR_ERROR_TYPE, run.errorType ?? 'error');
      run.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    run.span.end(end);
    this.run = undefined;
  }

  /** Ends what a run left open (a cancelled model call, tool calls that never finished). */
  private endOpenSpans(end: Date, why: string): void {
    if (this.chat !== undefined) {
      if (this.chat.endedAt === undefined) this.chat.span.setAttribute(ATTR_ERROR_TYPE, why);
      this.chat.span.end(this.chat.endedAt ?? end);
      this.chat = undefined;
    }
    for (const tool of this.tools.values()) {
      tool.span.setAttribute(ATTR_ERROR_TYPE, why);
      tool.span.end(end);
    }
    this.tools.clear();
  }
}
