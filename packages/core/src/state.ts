import type { ChatMessage, ChatToolCall } from '@rho/model-client';
import type { ApprovalGrants, PendingApproval } from './approvals.js';
import { approvalCallKey } from './approvals.js';
import type { RunStatus, SessionStatus, TraceRecord, UsageTotals } from './events.js';
import type { SecretRedactor } from './secret-redaction.js';
import { RUN_STATUSES, timestamp } from './events.js';
import { answerDanglingToolCalls, parkedToolCalls } from './internal/dangling-tool-calls.js';
import { TraceReader } from './trace-reader.js';
import { addRecordUsage, emptyUsage } from './usage-totals.js';
import type { TraceSink } from './trace-sink.js';

/** Receives every record as it is appended, in order. */
export type StateObserver = (record: TraceRecord) => void;

/** What {@link State.fromJsonl} found that a reader should know about. */
export interface ReplayReport {
  /** Lines that were not valid JSON records (1-based), excluding a torn last line. */
  skippedLines: number[];
  /** True when the last line was torn (a crash mid-write) and was ignored. */
  tornLastLine: boolean;
  /** Tool calls that never got a result (the process died mid-tool); answered with a synthetic result. */
  interruptedToolCalls: { id: string; name: string }[];
  /** Records that are valid JSON but not of a shape replay can use (`tool_calls: [null]`), skipped. */
  invalidRecords: { line: number; type: string; reason: string }[];
  /** Directives whose message never reached the trace (a crash in between); delivered from their record. */
  recoveredDirectives: number;
}

/** What a directive's user message starts with. */
export const DIRECTIVE_PREFIX = '[Operator directive] ';

export { INTERRUPTED_TOOL_RESULT } from './internal/dangling-tool-calls.js';

/** A `run_end` status this version knows; another writer's unknown one is taken for `completed`. */
const KNOWN_RUN_STATUSES: ReadonlySet<string> = new Set(RUN_STATUSES);

/**
 * The memory of a session: messages, cumulative usage, status and run count. Every change goes
 * through {@link State.append}, which applies a trace record, persists it to the trace sink and
 * notifies observers; {@link State.fromJsonl} applies the same records, so a replayed state is
 * the state the live session had.
 */
export class State {
  /** Chat history sent to the model (without the system prompt). */
  messages: ChatMessage[] = [];
  /** Cumulative usage of every model call of the session. */
  usage: UsageTotals = emptyUsage();
  /** Current status. */
  status: SessionStatus = 'created';
  /** Number of runs started. */
  runCount = 0;
  /** Input tokens of the last model call (the real context size), if any. */
  lastInputTokens: number | undefined;
  /** How far the control channel's directives were consumed. */
  directiveCursor = 0;
  /** What replay found, when this state came from a trace. */
  replay: ReplayReport | undefined;
  /** Tool calls that wait for a person's answer (`approval_requested` without its answer), by call id. */
  readonly pendingApprovals = new Map<string, PendingApproval>();
  /** Remembered "always" answers (`approval_answered` with scope `call` or `tool`). */
  readonly approvalGrants: ApprovalGrants = { tools: new Set(), calls: new Set() };
  /**
   * The calls of the last response that a resumed run carries out before anything else: set by
   * {@link fromJsonl} when the trace ends while a call waited for approval (the session was
   * parked, then stopped or killed): that call and the ones after it, never started.
   */
  parkedToolCalls: ChatToolCall[] = [];

  private sink: TraceSink | undefined;
  private redactor: SecretRedactor | undefined;
  private readonly observers = new Set<StateObserver>();

  constructor(options: { sink?: TraceSink; redactor?: SecretRedactor } = {}) {
    this.sink = options.sink;
    if (options.redactor !== undefined) this.setRedactor(options.redactor);
  }

  /** Sets (or replaces) where records are persisted. */
  setSink(sink: TraceSink | undefined): void {
    this.sink = sink;
  }

  /**
   * Sets the redactor every record passes before anything sees it (the history sent to the model,
   * the trace sink, observers); the messages already in history (a replayed trace's) are redacted
   * now, so a resumed session never sends the model a secret an older trace kept.
   */
  setRedactor(redactor: SecretRedactor | undefined): void {
    this.redactor = redactor;
    if (redactor === undefined) return;
    for (let index = 0; index < this.messages.length; index += 1) {
      const message = this.messages[index]!;
      const redacted = redactor(message);
      if (redacted !== message) this.messages[index] = redacted;
    }
  }

  /** The redactor of this state's records, if it has one. */
  get secretRedactor(): SecretRedactor | undefined {
    return this.redactor;
  }

  /** Registers an observer; returns a function that removes it. */
  addObserver(observer: StateObserver): () => void {
    this.observers.add(observer);
    return () => this.removeObserver(observer);
  }

  /** Removes an observer. */
  removeObserver(observer: StateObserver): void {
    this.observers.delete(observer);
  }

  /**
   * Applies a record, persists it, and notifies observers. `ts` is added when missing. With a
   * redactor (see {@link setRedactor}), known secrets are replaced first: the history, the trace
   * and every observer get the redacted record. Returns the record as persisted.
   */
  append<R extends DistributiveOmit<TraceRecord, 'ts'>>(record: R & { ts?: string }): R & { ts: string } {
    const stamped = (record.ts === undefined ? { ...record, ts: timestamp() } : record) as R & { ts: string };
    const full = this.redactor === undefined ? stamped : this.redactor(stamped);
    // Persisted first: a record that cannot be written (a full disk) changes nothing, so the
    // state never holds what the trace lacks.
    this.sink?.append(full as unknown as TraceRecord);
    this.apply(full as unknown as TraceRecord);
    for (const observer of this.observers) {
      try {
        observer(full as unknown as TraceRecord);
      } catch {
        // An observer's failure must not break the run or the trace.
      }
    }
    return full;
  }

  /** Adds a message to history (and to the trace). */
  addMessage(message: ChatMessage, extra: { directive?: boolean } = {}): void {
    this.append({ type: 'message', ...message, ...extra } as DistributiveOmit<TraceRecord, 'ts'>);
  }

  /** Rough size of the context in tokens (characters / 4), for when no real count is known yet. */
  estimateTokens(systemPrompt = ''): number {
    let characters = systemPrompt.length;
    for (const message of this.messages) {
      if (typeof message.content === 'string') characters += message.content.length;
      if (message.role === 'assistant' && message.tool_calls !== undefined) {
        for (const call of message.tool_calls)
          characters += call.function.name.length + call.function.arguments.length + 40;
      }
    }
    return Math.floor(characters / 4);
  }

  private apply(record: TraceRecord): void {
    switch (record.type) {
      case 'message': {
        const message = messageFromRecord(record as unknown as Record<string, unknown>);
        if (message !== undefined) this.messages.push(message);
        if (message?.role === 'tool' && this.pendingApprovals.size > 0)
          this.pendingApprovals.delete(message.tool_call_id);
        break;
      }
      case 'llm_end':
        addRecordUsage(this.usage, record);
        // Only a turn of this conversation tells its context size (not a child's or a summary's).
        // A provider that reported no usage tells nothing: the estimate takes over again.
        if (record.purpose === undefined)
          this.lastInputTokens =
            record.usage_reported !== false && typeof record.input_tokens === 'number' && record.input_tokens > 0
              ? record.input_tokens
              : undefined;
        break;
      case 'compact':
        // Records written by the Python original carry no summary: their history stays as it was.
        if (typeof record.summary === 'string') {
          const kept = Array.isArray(record.kept)
            ? record.kept.flatMap((item) => messageFromRecord(item as unknown as Record<string, unknown>) ?? [])
            : [];
          this.messages = [...kept, { role: 'user', content: record.summary }];
          this.lastInputTokens = undefined;
        }
        break;
      case 'usage':
        addRecordUsage(this.usage, record);
        if (typeof record.status === 'string') this.status = record.status;
        if (typeof record.run_count === 'number') this.runCount = record.run_count;
        break;
      case 'run_start':
        this.runCount += 1;
        this.status = 'running';
        break;
      case 'run_end':
        this.status = KNOWN_RUN_STATUSES.has(record.status) ? record.status : 'completed';
        break;
      case 'status':
        this.status = record.status;
        break;
      case 'directive':
        if (typeof record.cursor === 'number') this.directiveCursor = record.cursor;
        break;
      case 'approval_requested':
        this.pendingApprovals.set(record.tool_call_id, {
          toolCallId: record.tool_call_id,
          toolName: record.tool_name,
          arguments: record.tool_args,
          requestedAt: record.ts,
          ...(record.reason === undefined ? {} : { reason: record.reason }),
          ...(record.dangerous === undefined ? {} : { dangerous: record.dangerous }),
          ...(record.expires_at === undefined ? {} : { expiresAt: record.expires_at }),
          ...(record.on_timeout === undefined ? {} : { onTimeout: record.on_timeout }),
        });
        break;
      case 'approval_answered': {
        const pending = this.pendingApprovals.get(record.tool_call_id);
        this.pendingApprovals.delete(record.tool_call_id);
        if (record.decision === 'approve' && record.scope === 'tool') this.approvalGrants.tools.add(record.tool_name);
        if (record.decision === 'approve' && record.scope === 'call')
          this.approvalGrants.calls.add(approvalCallKey(record.tool_name, record.tool_args ?? pending?.arguments));
        break;
      }
      case 'hook':
        break;
      case 'llm_start':
      case 'tool_start':
      case 'tool_end':
      case 'tool_blocked':
      case 'error':
      case 'retry':
      case 'refusal':
        break;
      default: {
        // Unknown record types are ignored: newer writers may add types.
        const unknown: never = record;
        void unknown;
      }
    }
  }

  /**
   * Serialises the state as JSONL: one `message` record per message and a final `usage` record
   * with status and run count, the format `fromJsonl` reads back.
   */
  toJsonl(): string {
    const lines = this.messages.map((message) => JSON.stringify({ type: 'message', ...message }));
    lines.push(JSON.stringify({ type: 'usage', ...this.usage, status: this.status, run_count: this.runCount }));
    return `${lines.join('\n')}\n`;
  }

  /**
   * Rebuilds a state from a trace: messages (with compactions applied), cumulative usage, status
   * and run count, reading it with {@link TraceReader}. A torn last line (a crash mid-write) is
   * ignored, unknown record types are skipped, records of the wrong shape are skipped and listed
   * in {@link ReplayReport.invalidRecords}, and tool calls that never got a result are answered with a synthetic result so the
   * history is valid for the model. Reads traces written by rho and by the Python rho-agent.
   */
  static fromJsonl(source: string | Uint8Array, options: { sink?: TraceSink } = {}): State {
    const state = new State();
    const report: ReplayReport = {
      skippedLines: [],
      tornLastLine: false,
      interruptedToolCalls: [],
      invalidRecords: [],
      recoveredDirectives: 0,
    };
    // A directive record whose message has not followed yet.
    let pendingDirective: string | undefined;
    const flushDirective = () => {
      if (pendingDirective === undefined) return;
      state.messages.push({ role: 'user', content: `${DIRECTIVE_PREFIX}${pendingDirective}` });
      report.recoveredDirectives += 1;
      pendingDirective = undefined;
    };
    const { tornLastLine } = TraceReader.read(
      source,
      {
        record(raw) {
          const record = raw as unknown as TraceRecord;
          const isDirectiveMessage = record.type === 'message' && record.directive === true;
          // The directive's record is written before its message: a crash in between would lose
          // the directive (its cursor is already past it), so its record stands for the message.
          if (!isDirectiveMessage) flushDirective();
          pendingDirective = undefined;
          state.apply(record);
          if (record.type === 'directive' && typeof record.text === 'string') pendingDirective = record.text;
        },
        skipped(note) {
          if (note.kind === 'invalid_record')
            report.invalidRecords.push({ line: note.line, type: note.type ?? '', reason: note.reason });
          else report.skippedLines.push(note.line);
        },
      },
      REPLAY_READER,
    );
    flushDirective();
    report.tornLastLine = tornLastLine;
    state.parkedToolCalls = parkedToolCalls(state.messages, state.pendingApprovals);
    // Waits recorded in an older response, never answered (a trace cut short): not waiting any more.
    for (const id of state.pendingApprovals.keys())
      if (!state.parkedToolCalls.some((call) => call.id === id)) state.pendingApprovals.delete(id);
    // Every other call without a result was interrupted (a parked response's earlier calls have
    // theirs: they are recorded before the wait); the parked calls stay open for the resumed run.
    const parked = new Set(state.parkedToolCalls.map((call) => call.id));
    report.interruptedToolCalls = answerDanglingToolCalls(state.messages, parked);
    state.replay = report;
    state.sink = options.sink;
    return state;
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

// Record types that do not change the state: replay passes over their lines without parsing them.
const REPLAY_READER = {
  ignoreTypes: ['llm_start', 'tool_start', 'tool_end', 'tool_blocked', 'error', 'retry', 'text'],
} as const;

function messageFromRecord(record: Record<string, unknown>): ChatMessage | undefined {
  const role = record.role;
  const content = record.content;
  switch (role) {
    case 'system':
    case 'user':
      return { role, content: typeof content === 'string' ? content : content == null ? '' : JSON.stringify(content) };
    case 'assistant': {
      const message: ChatMessage = { role: 'assistant', content: typeof content === 'string' ? content : null };
      if (Array.isArray(record.tool_calls) && record.tool_calls.length > 0) {
        message.tool_calls = (record.tool_calls as ChatToolCall[]).map((call) => ({
          id: String(call.id),
          type: 'function',
          function: {
            name: String(call.function?.name ?? ''),
            arguments:
              typeof call.function?.arguments === 'string'
                ? call.function.arguments
                : JSON.stringify(call.function?.arguments ?? {}),
          },
          // Provider data sent back with the call (Gemini's thought signature) survives a resume.
          ...(call.extra_content !== null &&
          typeof call.extra_content === 'object' &&
          !Array.isArray(call.extra_content)
            ? { extra_content: call.extra_content }
            : {}),
        }));
      }
      return message;
    }
    case 'tool':
      return {
        role: 'tool',
        tool_call_id: String(record.tool_call_id ?? ''),
        content: typeof content === 'string' ? content : JSON.stringify(content ?? ''),
      };
    default:
      return undefined;
  }
}

export type { RunStatus };
