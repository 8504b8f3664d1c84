import { randomUUID } from 'node:crypto';
import { TraceError } from '../errors.js';
import { DIRECTIVE_PREFIX } from '../state.js';
import { readTrace } from '../trace-reader.js';
import type { TraceContents } from '../trace-reader.js';
import type { AtifMetrics, AtifStep, AtifTrajectory } from './atif-schema.js';
import { ATIF_SCHEMA_VERSION } from './atif-schema.js';
import { contentOf, count, inFieldOrder, isPlainObject, stringOf, toolCallsOf } from './atif-fields.js';

/** How {@link traceToAtif} labels the trajectory. */
export interface TraceToAtifOptions {
  /** `session_id` of the trajectory (the session's id). Default: a random UUID. */
  sessionId?: string;
  /** `agent.name`. Default `rho`. */
  agentName?: string;
  /** `agent.version`. Default `unknown`. */
  agentVersion?: string;
  /** `agent.model_name`. Default: the model of the trace's first model call. */
  model?: string;
  /** The system prompt the session ran with; exported as a first `system` step when given. */
  systemPrompt?: string;
  /** Reasoning effort the session ran with; set on every agent step that made a model call. */
  reasoningEffort?: string;
}

interface PendingCall {
  model: string | undefined;
  metrics: AtifMetrics;
}

interface ToolOutcome {
  tool_call_id: string;
  tool_name: string;
  status: 'succeeded' | 'failed' | 'blocked' | 'not_run' | 'interrupted';
  duration_ms?: number;
  reason?: string;
  metadata?: Record<string, unknown>;
}

interface RunSummary {
  prompt?: string;
  started_at?: string;
  ended_at?: string;
  status?: string;
  limit?: string;
  errors?: RunError[];
}

interface RunError {
  content: string;
  code?: string;
  ts?: string;
  /** Metrics of the failed compaction call, when one was billed. */
  call?: Record<string, unknown>;
}

interface Totals {
  input: number;
  output: number;
  cached: number;
  reasoning: number;
  cost: number;
  unpriced: number;
  calls: number;
}

/**
 * Turns a session trace (`trace.jsonl`, written by rho or by the Python rho-agent) into an
 * ATIF-v1.6 trajectory for SFT/RL pipelines and evaluation records.
 *
 * User and system messages become `user`/`system` steps; each assistant message becomes an `agent`
 * step carrying its text (also when it came with tool calls), its tool calls, the results of those
 * calls as the observation (matched by call id), and the metrics of the model call behind it
 * (`llm_end`). Directives are user steps marked in `extra.directive`; compactions are `system`
 * steps whose message is the summary that replaced the history. `final_metrics` always holds the
 * cumulative usage (the sum of `llm_end` records, or a `usage` snapshot), whether or not the trace
 * has a `usage` record. Runs, their statuses and errors go to `extra.runs`. The trace is read by
 * {@link readTrace}: a torn last line, malformed lines and records of the wrong shape are skipped
 * (and reported in `extra`); unknown record types are ignored.
 *
 * Throws a {@link TraceError} when the trace holds no message at all (ATIF needs one step).
 */
export function traceToAtif(
  trace: string | Uint8Array | TraceContents,
  options: TraceToAtifOptions = {},
): AtifTrajectory {
  const { records, skipped, tornLastLine } =
    typeof trace === 'string' || trace instanceof Uint8Array ? readTrace(trace) : trace;
  const skippedLines = skipped.filter((note) => note.kind !== 'invalid_record').map((note) => note.line);
  const invalidRecords = skipped
    .filter((note) => note.kind === 'invalid_record')
    .map(({ line, type, reason }) => ({ line, type, reason }));

  const steps: AtifStep[] = [];
  const runs: RunSummary[] = [];
  const totals: Totals = { input: 0, output: 0, cached: 0, reasoning: 0, cost: 0, unpriced: 0, calls: 0 };
  // The step that issued each tool call, so that results land on it wherever they appear.
  const stepOfCall = new Map<string, AtifStep>();
  const outcomes = new Map<string, ToolOutcome>();
  const answered = new Set<string>();
  let pending: PendingCall | undefined;
  let compactionCall: PendingCall | undefined;
  let pendingDirective: { text: string; ts?: string } | undefined;
  let firstModel: string | undefined;
  let usageSnapshotOnly = false;

  const push = (step: Omit<AtifStep, 'step_id'>): AtifStep => {
    const full = { step_id: steps.length + 1, ...step } as AtifStep;
    steps.push(full);
    return full;
  };
  const currentRun = (): RunSummary => {
    if (runs.length === 0) runs.push({});
    return runs[runs.length - 1]!;
  };

  if (options.systemPrompt !== undefined && options.systemPrompt !== '') {
    push({ source: 'system', message: options.systemPrompt, extra: { kind: 'system_prompt' } });
  }

  for (const record of records) {
    const ts = typeof record.ts === 'string' ? record.ts : undefined;
    switch (record.type) {
      case 'run_start':
        runs.push({
          ...(typeof record.prompt === 'string' ? { prompt: record.prompt } : {}),
          ...(ts === undefined ? {} : { started_at: ts }),
        });
        break;
      case 'run_end': {
        const run = currentRun();
        if (typeof record.status === 'string') run.status = record.status;
        if (typeof record.limit === 'string') run.limit = record.limit;
        if (ts !== undefined) run.ended_at = ts;
        break;
      }
      case 'error': {
        const run = currentRun();
        const entry: RunError = {
          content: stringOf(record.content),
          ...(typeof record.code === 'string' ? { code: record.code } : {}),
          ...(ts === undefined ? {} : { ts }),
        };
        if (record.code === 'compaction_failed' && compactionCall !== undefined) {
          entry.call = {
            ...(compactionCall.model === undefined ? {} : { model: compactionCall.model }),
            ...compactionCall.metrics,
          };
          compactionCall = undefined;
        }
        (run.errors ??= []).push(entry);
        break;
      }
      case 'llm_start':
        if (firstModel === undefined && typeof record.model === 'string' && record.model !== '')
          firstModel = record.model;
        break;
      case 'llm_end': {
        const model = typeof record.model === 'string' && record.model !== '' ? record.model : undefined;
        firstModel ??= model;
        const input = count(record.input_tokens);
        const output = count(record.output_tokens);
        const cached = count(record.cache_read_tokens);
        const reasoning = count(record.reasoning_tokens);
        totals.calls += 1;
        totals.input += input;
        totals.output += output;
        totals.cached += cached;
        totals.reasoning += reasoning;
        if (typeof record.cost_usd === 'number' && Number.isFinite(record.cost_usd)) totals.cost += record.cost_usd;
        else totals.unpriced += 1;
        // A child session's unpriced calls are unpriced calls of this session too.
        if (record.purpose === 'child_session') totals.unpriced += count(record.unpriced_calls);
        usageSnapshotOnly = false;
        const extra: Record<string, unknown> = { reasoning_tokens: reasoning };
        if (typeof record.duration_ms === 'number') extra.duration_ms = record.duration_ms;
        if (typeof record.finish_reason === 'string') extra.finish_reason = record.finish_reason;
        if (record.usage_reported === false) extra.usage_reported = false;
        if (record.cost_usd === null) extra.cost_unknown = true;
        const call: PendingCall = {
          model,
          metrics: {
            prompt_tokens: input,
            completion_tokens: output,
            cached_tokens: cached,
            ...(typeof record.cost_usd === 'number' && Number.isFinite(record.cost_usd)
              ? { cost_usd: record.cost_usd }
              : {}),
            extra,
          },
        };
        // A call made for compaction is not an agent turn: its metrics go to the compaction step.
        if (record.purpose === 'compaction') compactionCall = call;
        else pending = call;
        break;
      }
      case 'usage':
        // A snapshot of cumulative usage (State.toJsonl) replaces the running totals, as replay does.
        totals.input = count(record.input_tokens);
        totals.output = count(record.output_tokens);
        totals.cached = count(record.cached_tokens);
        totals.reasoning = count(record.reasoning_tokens);
        totals.cost = typeof record.cost_usd === 'number' && Number.isFinite(record.cost_usd) ? record.cost_usd : 0;
        totals.unpriced = count(record.unpriced_calls);
        usageSnapshotOnly = true;
        break;
      case 'directive':
        pendingDirective = { text: stringOf(record.text), ...(ts === undefined ? {} : { ts }) };
        break;
      case 'compact': {
        const summary = typeof record.summary === 'string' ? record.summary : undefined;
        const compaction: Record<string, unknown> = {
          trigger: typeof record.trigger === 'string' ? record.trigger : 'unknown',
          ...(typeof record.tokens_before === 'number' ? { tokens_before: record.tokens_before } : {}),
          ...(typeof record.tokens_after === 'number' ? { tokens_after: record.tokens_after } : {}),
          summary_recorded: summary !== undefined,
        };
        if (Array.isArray(record.kept)) compaction.kept_messages = record.kept;
        if (compactionCall !== undefined) {
          compaction.summary_call = {
            ...(compactionCall.model === undefined ? {} : { model: compactionCall.model }),
            ...compactionCall.metrics,
          };
          compactionCall = undefined;
        }
        push({
          source: 'system',
          ...(ts === undefined ? {} : { timestamp: ts }),
          message: summary ?? '',
          extra: { kind: 'compaction', compaction },
        });
        break;
      }
      case 'message': {
        const role = record.role;
        if (role === 'user' || role === 'system') {
          const content = contentOf(record.content);
          const isDirective =
            role === 'user' &&
            (record.directive === true || (pendingDirective !== undefined && content.startsWith(DIRECTIVE_PREFIX)));
          const extra: Record<string, unknown> | undefined = isDirective
            ? {
                kind: 'directive',
                directive: {
                  text:
                    pendingDirective?.text ??
                    content.slice(content.startsWith(DIRECTIVE_PREFIX) ? DIRECTIVE_PREFIX.length : 0),
                },
              }
            : undefined;
          if (isDirective) pendingDirective = undefined;
          push({
            source: role,
            ...(ts === undefined ? {} : { timestamp: ts }),
            message: content,
            ...(extra === undefined ? {} : { extra }),
          });
        } else if (role === 'assistant') {
          const toolCalls = toolCallsOf(record.tool_calls);
          const reasoning =
            typeof record.reasoning_content === 'string'
              ? record.reasoning_content
              : typeof record.reasoning === 'string'
                ? record.reasoning
                : undefined;
          const call = pending;
          pending = undefined;
          const stepModel = call?.model;
          const step = push({
            source: 'agent',
            ...(ts === undefined ? {} : { timestamp: ts }),
            ...(stepModel !== undefined && stepModel !== (options.model ?? firstModel)
              ? { model_name: stepModel }
              : {}),
            ...(options.reasoningEffort !== undefined && call !== undefined
              ? { reasoning_effort: options.reasoningEffort }
              : {}),
            message: contentOf(record.content),
            ...(reasoning === undefined || reasoning === '' ? {} : { reasoning_content: reasoning }),
            ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }),
            ...(call === undefined ? {} : { metrics: call.metrics }),
          });
          for (const toolCall of toolCalls) stepOfCall.set(toolCall.tool_call_id, step);
        } else if (role === 'tool') {
          const callId = typeof record.tool_call_id === 'string' ? record.tool_call_id : undefined;
          const content = contentOf(record.content);
          const owner = callId === undefined ? undefined : stepOfCall.get(callId);
          if (owner !== undefined && callId !== undefined) {
            (owner.observation ??= { results: [] }).results.push({ source_call_id: callId, content });
            answered.add(callId);
          } else {
            // A result without its call (a trace cut at its start): kept as a system observation.
            push({
              source: 'system',
              ...(ts === undefined ? {} : { timestamp: ts }),
              message: '',
              observation: { results: [{ content }] },
              extra: { kind: 'orphan_tool_result', ...(callId === undefined ? {} : { tool_call_id: callId }) },
            });
          }
        }
        break;
      }
      case 'tool_start': {
        const id = stringOf(record.tool_call_id);
        if (!outcomes.has(id))
          outcomes.set(id, { tool_call_id: id, tool_name: stringOf(record.tool_name), status: 'not_run' });
        break;
      }
      case 'tool_end': {
        const id = stringOf(record.tool_call_id);
        const outcome: ToolOutcome = outcomes.get(id) ?? {
          tool_call_id: id,
          tool_name: stringOf(record.tool_name),
          status: 'not_run',
        };
        outcome.status = record.success === false ? 'failed' : 'succeeded';
        if (typeof record.duration_ms === 'number') outcome.duration_ms = record.duration_ms;
        if (isPlainObject(record.metadata)) outcome.metadata = record.metadata;
        outcomes.set(id, outcome);
        break;
      }
      case 'tool_blocked': {
        const id = stringOf(record.tool_call_id);
        outcomes.set(id, {
          tool_call_id: id,
          tool_name: stringOf(record.tool_name),
          status: 'blocked',
          ...(typeof record.reason === 'string' ? { reason: record.reason } : {}),
        });
        break;
      }
      default:
        // status and record types added later carry nothing a trajectory needs.
        break;
    }
  }

  if (pendingDirective !== undefined) {
    // A directive whose message never made it to the trace (a crash in between): still an instruction the operator gave.
    push({
      source: 'user',
      ...(pendingDirective.ts === undefined ? {} : { timestamp: pendingDirective.ts }),
      message: `${DIRECTIVE_PREFIX}${pendingDirective.text}`,
      extra: { kind: 'directive', directive: { text: pendingDirective.text }, delivered: false },
    });
  }

  // Outcome of every tool call, on the step that issued it (ObservationResult has no `extra` in v1.6).
  for (const step of steps) {
    if (step.tool_calls === undefined) continue;
    const stepOutcomes = step.tool_calls.map((call): ToolOutcome => {
      const outcome = outcomes.get(call.tool_call_id);
      if (outcome !== undefined) return outcome;
      return {
        tool_call_id: call.tool_call_id,
        tool_name: call.function_name,
        status: answered.has(call.tool_call_id) ? 'not_run' : 'interrupted',
      };
    });
    step.extra = { ...step.extra, tool_outcomes: stepOutcomes };
  }

  if (steps.length === 0) {
    throw new TraceError({
      message:
        'The trace holds no messages, so there is nothing to export (ATIF needs at least one step). Check that the session ran a task.',
    });
  }

  const model = options.model ?? firstModel;
  const extra: Record<string, unknown> = { exporter: 'rho', runs };
  if (skippedLines.length > 0) extra.skipped_lines = skippedLines;
  if (invalidRecords.length > 0) extra.invalid_records = invalidRecords;
  if (tornLastLine) extra.torn_last_line = true;
  const finalExtra: Record<string, unknown> = { total_reasoning_tokens: totals.reasoning, model_calls: totals.calls };
  if (totals.unpriced > 0) finalExtra.unpriced_calls = totals.unpriced;
  if (usageSnapshotOnly) finalExtra.from_usage_snapshot = true;
  return {
    schema_version: ATIF_SCHEMA_VERSION,
    session_id: options.sessionId ?? randomUUID(),
    agent: {
      name: options.agentName ?? 'rho',
      version: options.agentVersion ?? 'unknown',
      ...(model === undefined ? {} : { model_name: model }),
    },
    steps: steps.map(inFieldOrder),
    final_metrics: {
      total_prompt_tokens: totals.input,
      total_completion_tokens: totals.output,
      total_cached_tokens: totals.cached,
      // An unknown cost is null (with extra.unpriced_calls), never 0.
      total_cost_usd: totals.unpriced > 0 && totals.cost === 0 ? null : totals.cost,
      total_steps: steps.length,
      extra: finalExtra,
    },
    extra,
  };
}
