import type { RawTraceRecord } from '@rho/core';
import { addRecordUsage, emptyUsage } from '@rho/core/internal';

/** What the header of a readable export says about the session. */
export interface TranscriptHeader {
  sessionId: string;
  model?: string;
  profile?: string;
  workingDir?: string;
  startedAt?: string;
  status?: string;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  /** Sum of known costs; null when calls were made and none had a price. */
  costUsd: number | null;
  modelCalls: number;
}

/** A tool call and what became of it. */
export interface TranscriptToolCall {
  kind: 'tool';
  id: string;
  name: string;
  /** The arguments as the trace has them (an object, or the raw text of malformed ones). */
  args: unknown;
  output?: string;
  /** The other fields of a result the tool gave as a JSON object with an `output` (bash's `metadata`), as JSON text. */
  outputDetails?: string;
  /** `interrupted`: no result in the trace (the run stopped before the call ended). */
  status: 'succeeded' | 'failed' | 'blocked' | 'interrupted';
  /** Why a blocked call was refused. */
  reason?: string;
  childSessionId?: string;
}

/** One entry of the conversation, in trace order. */
export type TranscriptEntry =
  | { kind: 'run'; prompt?: string; ts?: string }
  | { kind: 'user'; text: string; ts?: string }
  | { kind: 'system'; text: string }
  | { kind: 'assistant'; text: string; reasoning?: string; ts?: string }
  | TranscriptToolCall
  | { kind: 'directive'; text: string; delivered: boolean; ts?: string }
  | { kind: 'approval_requested'; tool: string; toolCallId: string; reason?: string; ts?: string }
  | {
      kind: 'approval';
      tool: string;
      toolCallId: string;
      decision: string;
      scope?: string;
      by?: string;
      source?: string;
      reason?: string;
      ts?: string;
    }
  | { kind: 'compaction'; trigger: string; tokensBefore?: number; tokensAfter?: number; summary: string; ts?: string }
  | { kind: 'error'; content: string; code?: string; ts?: string }
  | { kind: 'child'; id: string; model?: string }
  | { kind: 'run_end'; status: string; limit?: string; ts?: string };

/** The final diff's stats (no patch: a readable export names the files, `--format patch` has the diff). */
export interface TranscriptChanges {
  files: { path: string; oldPath?: string; status: string; additions: number; deletions: number; binary: boolean }[];
  stats: { files: number; additions: number; deletions: number };
}

/** A session as a readable transcript: what `rho export --format md|html` renders. */
export interface Transcript {
  header: TranscriptHeader;
  entries: TranscriptEntry[];
  changes?: TranscriptChanges;
  /** Lines of the trace that could not be read (skipped, or a torn last line). */
  unreadableLines: number;
}

/** What the session's `meta.json` says, when it has one. */
export interface TranscriptMeta {
  id?: string;
  model?: string;
  profile?: string;
  working_dir?: string;
  started_at?: string;
  status?: string;
}

// The prefix rho puts before a directive's text in the user message that delivers it (core's DIRECTIVE_PREFIX).
const DIRECTIVE_PREFIX = '[Operator directive] ';

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The text of a message's content: a string, or the text parts of a list of parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) => {
      if (typeof part === 'string') return part;
      if (typeof part === 'object' && part !== null) {
        const { type, text: partText } = part as { type?: unknown; text?: unknown };
        if (typeof partText === 'string') return partText;
        if (typeof type === 'string') return `[${type}]`;
      }
      return '';
    })
    .join('');
}

/** Arguments of a tool call: parsed when they are JSON text, else as they are. */
function parseArgs(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

function toolCallsOf(value: unknown): { id: string; name: string; args: unknown }[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((call: unknown) => {
    if (typeof call !== 'object' || call === null) return [];
    const { id, function: fn, name, arguments: args } = call as Record<string, unknown>;
    const inner = typeof fn === 'object' && fn !== null ? (fn as Record<string, unknown>) : {};
    return [
      {
        id: typeof id === 'string' ? id : '',
        name: text(inner.name) ?? text(name) ?? 'unknown',
        args: parseArgs(inner.arguments ?? args),
      },
    ];
  });
}

/** A tool result that is a JSON object with a string `output` (as bash gives it): that output, and the rest. */
function splitResult(content: string): { output: string; details?: string } {
  if (!content.startsWith('{')) return { output: content };
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return { output: content };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { output: content };
  const { output, ...rest } = value as Record<string, unknown>;
  if (typeof output !== 'string') return { output: content };
  return Object.keys(rest).length === 0 ? { output } : { output, details: JSON.stringify(rest, null, 2) };
}

/**
 * Builds the transcript of a session from its trace records (as {@link readTrace} gives them),
 * its `meta.json` and its final diff: the conversation in trace order, each tool call with its
 * arguments and output (matched by call id), and the header's usage folded from its `llm_end`
 * records (or the last `usage` snapshot) by core's `addRecordUsage`, the fold `State` applies, so
 * the header says what `State.fromJsonl` of the same trace says. Nothing is added that the trace
 * and the metadata do not hold.
 */
export function buildTranscript(
  records: readonly RawTraceRecord[],
  options: { sessionId: string; meta?: TranscriptMeta; changes?: TranscriptChanges; unreadableLines?: number },
): Transcript {
  const meta = options.meta ?? {};
  const entries: TranscriptEntry[] = [];
  const calls = new Map<string, TranscriptToolCall>();
  // Core's own fold of the records that State applies: the header's figures are the session's.
  const usage = emptyUsage();
  let modelCalls = 0;
  let firstModel: string | undefined;
  let firstTs: string | undefined;
  let lastStatus: string | undefined;
  let pendingDirective: string | undefined;
  const callOf = (record: RawTraceRecord): TranscriptToolCall | undefined =>
    calls.get(typeof record.tool_call_id === 'string' ? record.tool_call_id : '');

  for (const record of records) {
    const ts = text(record.ts);
    firstTs ??= ts;
    const at = ts === undefined ? {} : { ts };
    switch (record.type) {
      case 'run_start':
        entries.push({
          kind: 'run',
          ...(text(record.prompt) === undefined ? {} : { prompt: record.prompt as string }),
          ...at,
        });
        break;
      case 'run_end':
        lastStatus = text(record.status) ?? lastStatus;
        entries.push({
          kind: 'run_end',
          status: text(record.status) ?? 'unknown',
          ...(text(record.limit) === undefined ? {} : { limit: record.limit as string }),
          ...at,
        });
        break;
      case 'error':
        entries.push({
          kind: 'error',
          content: contentText(record.content),
          ...(text(record.code) === undefined ? {} : { code: record.code as string }),
          ...at,
        });
        break;
      case 'llm_start':
        firstModel ??= text(record.model);
        break;
      case 'llm_end':
        firstModel ??= text(record.model);
        modelCalls += 1;
        addRecordUsage(usage, record);
        if (record.purpose === 'child_session' && text(record.child_session_id) !== undefined) {
          const model = text(record.model);
          entries.push({
            kind: 'child',
            id: record.child_session_id as string,
            ...(model === undefined ? {} : { model }),
          });
        }
        break;
      case 'usage':
        addRecordUsage(usage, record);
        break;
      case 'directive':
        pendingDirective = contentText(record.text);
        break;
      case 'compact':
        entries.push({
          kind: 'compaction',
          trigger: text(record.trigger) ?? 'unknown',
          ...(typeof record.tokens_before === 'number' ? { tokensBefore: record.tokens_before } : {}),
          ...(typeof record.tokens_after === 'number' ? { tokensAfter: record.tokens_after } : {}),
          summary: typeof record.summary === 'string' ? record.summary : '',
          ...at,
        });
        break;
      case 'approval_requested':
        entries.push({
          kind: 'approval_requested',
          tool: text(record.tool_name) ?? 'unknown',
          toolCallId: typeof record.tool_call_id === 'string' ? record.tool_call_id : '',
          ...(text(record.reason) === undefined ? {} : { reason: record.reason as string }),
          ...at,
        });
        break;
      case 'approval_answered':
        entries.push({
          kind: 'approval',
          tool: text(record.tool_name) ?? 'unknown',
          toolCallId: typeof record.tool_call_id === 'string' ? record.tool_call_id : '',
          decision: text(record.decision) ?? 'unknown',
          ...(text(record.scope) === undefined ? {} : { scope: record.scope as string }),
          ...(text(record.by) === undefined ? {} : { by: record.by as string }),
          ...(text(record.source) === undefined ? {} : { source: record.source as string }),
          ...(text(record.reason) === undefined ? {} : { reason: record.reason as string }),
          ...at,
        });
        break;
      case 'tool_end': {
        const call = callOf(record);
        if (call === undefined) break;
        call.status = record.success === false ? 'failed' : 'succeeded';
        const metadata = record.metadata as Record<string, unknown> | undefined;
        const child = text(metadata?.child_session_id);
        if (child !== undefined) call.childSessionId = child;
        break;
      }
      case 'tool_blocked': {
        const call = callOf(record);
        if (call === undefined) break;
        call.status = 'blocked';
        if (text(record.reason) !== undefined) call.reason = record.reason as string;
        break;
      }
      case 'message': {
        const content = contentText(record.content);
        if (record.role === 'user') {
          const isDirective =
            record.directive === true || (pendingDirective !== undefined && content.startsWith(DIRECTIVE_PREFIX));
          if (isDirective) {
            const directive =
              pendingDirective ??
              (content.startsWith(DIRECTIVE_PREFIX) ? content.slice(DIRECTIVE_PREFIX.length) : content);
            entries.push({ kind: 'directive', text: directive, delivered: true, ...at });
            pendingDirective = undefined;
          } else entries.push({ kind: 'user', text: content, ...at });
        } else if (record.role === 'system') {
          entries.push({ kind: 'system', text: content });
        } else if (record.role === 'assistant') {
          const reasoning = text(record.reasoning_content) ?? text(record.reasoning);
          if (content !== '' || reasoning !== undefined)
            entries.push({
              kind: 'assistant',
              text: content,
              ...(reasoning === undefined ? {} : { reasoning }),
              ...at,
            });
          for (const { id, name, args } of toolCallsOf(record.tool_calls)) {
            const call: TranscriptToolCall = { kind: 'tool', id, name, args, status: 'interrupted' };
            calls.set(id, call);
            entries.push(call);
          }
        } else if (record.role === 'tool') {
          const call = callOf(record);
          if (call !== undefined) {
            const { output, details } = splitResult(content);
            call.output = output;
            if (details !== undefined) call.outputDetails = details;
            // A result without tool_end (a trace of the Python original) still means the call ran.
            if (call.status === 'interrupted') call.status = 'succeeded';
          } else entries.push({ kind: 'system', text: content });
        }
        break;
      }
      default:
        break;
    }
  }
  if (pendingDirective !== undefined) entries.push({ kind: 'directive', text: pendingDirective, delivered: false });

  const model = text(meta.model) ?? firstModel;
  const startedAt = text(meta.started_at) ?? firstTs;
  const status = text(meta.status) ?? lastStatus;
  const header: TranscriptHeader = {
    sessionId: text(meta.id) ?? options.sessionId,
    ...(model === undefined ? {} : { model }),
    ...(text(meta.profile) === undefined ? {} : { profile: meta.profile! }),
    ...(text(meta.working_dir) === undefined ? {} : { workingDir: meta.working_dir! }),
    ...(startedAt === undefined ? {} : { startedAt }),
    ...(status === undefined ? {} : { status }),
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    cachedTokens: usage.cached_tokens,
    reasoningTokens: usage.reasoning_tokens,
    costUsd: (usage.unpriced_calls ?? 0) > 0 && usage.cost_usd === 0 ? null : usage.cost_usd,
    modelCalls,
  };
  return {
    header,
    entries,
    ...(options.changes === undefined ? {} : { changes: options.changes }),
    unreadableLines: options.unreadableLines ?? 0,
  };
}
