// The trace viewer's tree of spans, built record by record from a session's trace (so a running
// session's tree grows as its records arrive). Pure: no Node APIs.
import type { Raw, SpanKind, SpanStatus, TraceSpan } from './span-types.js';
import { answerSummary, argumentsLine, hookStatus, hookSummary, number, oneLine, text } from './span-types.js';

export type { SpanKind, SpanStatus, TraceSpan } from './span-types.js';

/**
 * Builds the span tree of one session's trace, incrementally: {@link add} each record in order,
 * {@link takeChanged} the spans made or changed since the last call. Spans of a run: its turns
 * (a model call and the tool calls it asked for), compactions, directives and errors; under a
 * tool call, its approval, hooks and the child session it started.
 */
export class SpanTreeBuilder {
  private readonly all: TraceSpan[] = [];
  private readonly changed = new Set<TraceSpan>();
  private count = 0;
  private turns = 0;
  private runs = 0;
  private run: TraceSpan | undefined;
  private turn: TraceSpan | undefined;
  /** The spans directly under the current turn. */
  private parts: TraceSpan[] = [];
  private llm: TraceSpan | undefined;
  private compaction: TraceSpan | undefined;
  /** Messages since the last model call: the next call's new input. */
  private input: number[] = [];
  private readonly tools = new Map<string, TraceSpan>();
  private readonly approvals = new Map<string, TraceSpan>();
  private readonly children = new Map<string, TraceSpan>();
  private lastDirective: TraceSpan | undefined;

  /** Every span so far, in the order they began. */
  get spans(): readonly TraceSpan[] {
    return this.all;
  }

  /** Records added so far. */ get records(): number {
    return this.count;
  }

  /** The spans made or changed since the last call (each once), in the order they began. */
  takeChanged(): TraceSpan[] {
    const list = [...this.changed];
    this.changed.clear();
    return list;
  }

  add(record: Raw): void {
    const index = this.count;
    this.count += 1;
    const at =
      typeof record.ts === 'string' && !Number.isNaN(Date.parse(record.ts)) ? Date.parse(record.ts) : Date.now();
    switch (record.type) {
      case 'run_start': {
        this.closeRun(at, 'interrupted');
        this.runs += 1;
        this.run = this.open('run', index, at, undefined, `Run ${this.runs}`, oneLine(text(record, 'prompt')));
        return;
      }
      case 'message':
        this.message(record, index, at);
        return;
      case 'llm_start': {
        const purpose = text(record, 'purpose');
        const model = text(record, 'model');
        if (purpose === 'compaction') {
          this.compaction = this.open('compaction', index, at, this.runSpan(index, at).id, 'Compaction', 'summarising');
          this.llm = this.open('llm', index, at, this.compaction.id, model, `${model} (compaction)`);
        } else {
          this.closeTurn();
          this.turns += 1;
          this.turn = this.open('turn', index, at, this.runSpan(index, at).id, `Turn ${this.turns}`, '');
          this.llm = this.open('llm', index, at, this.turn.id, model, '');
          this.llm.records.push(...this.input);
        }
        this.llm.context = number(record, 'context_size');
        this.input = [];
        return;
      }
      case 'retry':
        if (this.llm !== undefined) this.attach(this.llm, index);
        return;
      case 'llm_end':
        this.llmEnd(record, index, at);
        return;
      case 'refusal':
        if (this.llm !== undefined) {
          this.attach(this.llm, index);
          this.llm.summary = oneLine(`refused: ${text(record, 'content')}`);
        }
        return;
      case 'error': {
        const open = this.llm !== undefined && this.llm.end === undefined ? this.llm : undefined;
        if (open !== undefined) {
          this.attach(open, index);
          this.finish(open, at, 'failed');
          open.summary = oneLine(text(record, 'content'));
          this.llm = undefined;
        } else {
          const parent = this.turn ?? this.runSpan(index, at);
          const span = this.open('error', index, at, parent.id, 'Error', oneLine(text(record, 'content')));
          this.finish(span, at, 'failed');
        }
        return;
      }
      case 'approval_requested': {
        const tool = this.toolSpan(record, index, at);
        tool.status = 'waiting';
        const reason = text(record, 'reason');
        const approval = this.open(
          'approval',
          index,
          at,
          tool.id,
          'Approval',
          reason === '' ? 'waiting' : oneLine(reason),
        );
        approval.status = 'waiting';
        this.approvals.set(text(record, 'tool_call_id'), approval);
        this.touch(tool);
        return;
      }
      case 'approval_answered': {
        const id = text(record, 'tool_call_id');
        const tool = this.toolSpan(record, index, at);
        let approval = this.approvals.get(id);
        if (approval === undefined) approval = this.open('approval', index, at, tool.id, 'Approval', '');
        else this.attach(approval, index);
        const approved = record.decision === 'approve';
        approval.summary = answerSummary(record);
        this.finish(approval, at, approved ? 'ok' : 'refused');
        if (approved) {
          tool.status = 'open';
          this.touch(tool);
        }
        this.approvals.delete(id);
        return;
      }
      case 'tool_blocked': {
        const tool = this.toolSpan(record, index, at);
        tool.summary = oneLine(`refused: ${text(record, 'reason')}`);
        this.finish(tool, at, 'refused');
        return;
      }
      case 'tool_start': {
        const tool = this.toolSpan(record, index, at);
        if (tool.status === 'waiting') tool.status = 'open';
        this.touch(tool);
        return;
      }
      case 'tool_end': {
        const tool = this.toolSpan(record, index, at);
        this.finish(tool, at, record.success === false ? 'failed' : 'ok');
        const metadata = record.metadata as Record<string, unknown> | undefined;
        const child = metadata?.['child_session_id'];
        if (typeof child === 'string') this.childSpan(child, tool, index, tool.start, at);
        return;
      }
      case 'hook': {
        const call = text(record, 'tool_call_id');
        const parent = call !== '' ? this.toolSpan(record, index, at) : (this.turn ?? this.runSpan(index, at));
        const start = at - number(record, 'duration_ms');
        const span = this.open('hook', index, start, parent.id, `Hook ${text(record, 'event')}`, hookSummary(record));
        this.finish(span, at, hookStatus(record));
        return;
      }
      case 'compact': {
        const span =
          this.compaction ?? this.open('compaction', index, at, this.runSpan(index, at).id, 'Compaction', '');
        if (span.records[0] !== index) this.attach(span, index);
        span.summary = `${text(record, 'trigger') || 'auto'}: ${number(record, 'tokens_before')} → ${number(record, 'tokens_after')} tokens`;
        this.finish(span, at, 'ok');
        this.compaction = undefined;
        return;
      }
      case 'directive':
        this.lastDirective = this.instant('directive', index, at, 'Directive', oneLine(text(record, 'text')));
        return;
      case 'status': {
        const run = this.runSpan(index, at);
        this.attach(run, index);
        return;
      }
      case 'run_end': {
        const status = text(record, 'status') || 'ended';
        const run = this.runSpan(index, at);
        this.attach(run, index);
        this.closeRun(at, status);
        return;
      }
      default:
        return;
    }
  }

  private message(record: Raw, index: number, at: number): void {
    const role = text(record, 'role');
    if (role === 'tool') {
      const tool = this.tools.get(text(record, 'tool_call_id'));
      if (tool !== undefined) this.attach(tool, index);
      this.input.push(index);
      return;
    }
    if (role === 'assistant') {
      const llm = this.llm;
      if (llm !== undefined) {
        this.attach(llm, index);
        const calls = Array.isArray(record.tool_calls) ? record.tool_calls.length : 0;
        const content = typeof record.content === 'string' ? record.content : '';
        if (llm.summary === '' || llm.summary.startsWith('→'))
          llm.summary = oneLine(
            calls > 0
              ? `→ ${calls} tool call${calls === 1 ? '' : 's'}${content === '' ? '' : `: ${content}`}`
              : content,
          );
      }
      return;
    }
    if (record.directive === true) {
      const directive = this.lastDirective;
      if (directive !== undefined && directive.records.length === 1) this.attach(directive, index);
      else this.instant('directive', index, at, 'Directive', oneLine(String(record.content ?? '')));
      this.input.push(index);
      return;
    }
    // The user's prompt (and the system prompt): part of the run, and the next call's input.
    this.attach(this.runSpan(index, at), index);
    this.input.push(index);
  }

  private llmEnd(record: Raw, index: number, at: number): void {
    const purpose = text(record, 'purpose');
    const duration = number(record, 'duration_ms');
    const cost = record.cost_usd === null ? null : number(record, 'cost_usd');
    if (purpose === 'child_session') {
      const id = text(record, 'child_session_id');
      const tool = [...this.tools.values()].reverse().find((span) => span.end === undefined);
      const parent = tool ?? this.turn ?? this.runSpan(index, at);
      const child = this.childSpan(id, parent, index, tool?.start ?? at - duration, at);
      child.inputTokens = number(record, 'input_tokens');
      child.outputTokens = number(record, 'output_tokens');
      child.costUsd = cost;
      this.touch(child);
      return;
    }
    let span = this.llm;
    if (span === undefined || span.end !== undefined) {
      const parent = this.turn ?? this.runSpan(index, at);
      span = this.open('llm', index, at - duration, parent.id, text(record, 'model'), '');
    } else this.attach(span, index);
    span.inputTokens = number(record, 'input_tokens');
    span.outputTokens = number(record, 'output_tokens');
    span.costUsd = cost;
    this.finish(span, span.start + duration, 'ok');
    if (purpose !== 'compaction') this.llm = span;
    else this.llm = undefined;
  }

  private childSpan(id: string, parent: TraceSpan, index: number, start: number, end: number): TraceSpan {
    let child = this.children.get(id);
    if (child === undefined) {
      child = this.open('child', index, start, parent.id, 'Child session', id);
      child.childId = id;
      this.children.set(id, child);
    } else if (!child.records.includes(index)) this.attach(child, index);
    this.finish(child, Math.max(end, child.start), 'ok');
    return child;
  }

  private toolSpan(record: Raw, index: number, at: number): TraceSpan {
    const id = text(record, 'tool_call_id');
    const known = this.tools.get(id);
    if (known !== undefined) {
      if (!known.records.includes(index)) this.attach(known, index);
      return known;
    }
    const parent = this.turn ?? this.runSpan(index, at);
    const span = this.open(
      'tool',
      index,
      at,
      parent.id,
      text(record, 'tool_name') || 'tool',
      argumentsLine(record.tool_args),
    );
    this.tools.set(id, span);
    return span;
  }

  /** The current run; a trace without `run_start` (an old or torn one) gets one made up. */
  private runSpan(index: number, at: number): TraceSpan {
    if (this.run === undefined) {
      this.runs += 1;
      this.run = this.open('run', index, at, undefined, `Run ${this.runs}`, '');
      this.run.records.length = 0;
    }
    return this.run;
  }

  private open(
    kind: SpanKind,
    index: number,
    at: number,
    parent: string | undefined,
    name: string,
    summary: string,
  ): TraceSpan {
    const span: TraceSpan = {
      id: `${kind}-${index}`,
      ...(parent === undefined ? {} : { parent }),
      kind,
      name,
      summary,
      start: at,
      status: 'open',
      records: [index],
    };
    this.all.push(span);
    if (parent !== undefined && parent === this.turn?.id) this.parts.push(span);
    this.changed.add(span);
    return span;
  }

  /** A span of the run that happened at one moment (a directive). */
  private instant(kind: SpanKind, index: number, at: number, name: string, summary: string): TraceSpan {
    const span = this.open(kind, index, at, this.runSpan(index, at).id, name, summary);
    this.finish(span, at, 'ok');
    return span;
  }

  private attach(span: TraceSpan, index: number): void {
    span.records.push(index);
    this.changed.add(span);
  }

  private touch(span: TraceSpan): void {
    this.changed.add(span);
  }

  private finish(span: TraceSpan, at: number, status: SpanStatus): void {
    span.end = Math.max(span.start, at);
    span.status = status;
    this.changed.add(span);
  }

  private closeTurn(): void {
    const turn = this.turn;
    if (turn === undefined) return;
    let end = turn.start;
    let status = 'ok';
    for (const span of this.parts) {
      end = Math.max(end, span.end ?? span.start);
      if (span.status === 'failed') status = 'failed';
    }
    turn.end = end;
    turn.status = status;
    const tools = this.parts.filter((span) => span.kind === 'tool').map((span) => span.name);
    turn.summary =
      tools.length === 0 ? (this.parts.find((span) => span.kind === 'llm')?.summary ?? '') : oneLine(tools.join(', '));
    this.changed.add(turn);
    this.turn = undefined;
    this.parts = [];
  }

  private closeRun(at: number, status: string): void {
    this.closeTurn();
    for (const span of [this.llm, this.compaction, ...this.tools.values(), ...this.approvals.values()]) {
      if (span !== undefined && span.end === undefined) {
        span.end = Math.max(span.start, at);
        span.status = status === 'completed' ? 'ok' : status === 'waiting_approval' ? 'waiting' : 'cancelled';
        this.changed.add(span);
      }
    }
    this.tools.clear();
    this.approvals.clear();
    this.llm = undefined;
    this.compaction = undefined;
    this.input = [];
    const run = this.run;
    if (run === undefined) return;
    run.end = Math.max(run.start, at);
    run.status = status;
    this.changed.add(run);
    this.run = undefined;
  }
}
