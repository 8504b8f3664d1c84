import type { TraceRecord } from './api.js';
import { callSignature, contentText } from './format.js';

/** A model call or a tool call on the waterfall. */
export interface Span {
  kind: 'llm' | 'tool';
  name: string;
  start: number;
  end: number | undefined;
  ok: boolean;
  detail: string;
}

/** One model call's tokens. */
export interface Turn {
  input: number;
  output: number;
  context: number;
}

/** Something that happened between turns (shown on the charts and the waterfall). */
export interface Marker {
  kind: 'compact' | 'directive' | 'error' | 'status' | 'blocked';
  at: number;
  /** The number of turns before it. */
  turn: number;
  text: string;
}

/** One entry of the conversation. */
export interface Entry {
  role: string;
  text: string;
  calls?: { name: string; args: string }[];
  tool?: string;
  directive?: boolean;
}

/** What the session page shows, built record by record as they stream in. */
export class SessionModel {
  records = 0;
  /** Approval records seen (`approval_requested`, `approval_answered`): the page asks for the waiting calls again when it changes. */
  approvals = 0;
  readonly spans: Span[] = [];
  readonly turns: Turn[] = [];
  readonly markers: Marker[] = [];
  readonly entries: Entry[] = [];
  private openLlm: Span | undefined;
  private lastContext = 0;
  private readonly openTools = new Map<string, Span>();
  private readonly toolNames = new Map<string, string>();

  add(record: TraceRecord): void {
    this.records += 1;
    const at = typeof record.ts === 'string' ? Date.parse(record.ts) : Date.now();
    const text = (key: string) => (typeof record[key] === 'string' ? (record[key] as string) : '');
    const number = (key: string) => (typeof record[key] === 'number' ? (record[key] as number) : 0);
    switch (record.type) {
      case 'run_start':
        this.entries.push({ role: 'run', text: `Run started: ${text('prompt')}` });
        return;
      case 'run_end':
        this.entries.push({ role: 'run', text: `Run ended: ${text('status')}` });
        return;
      case 'llm_start': {
        this.lastContext = number('context_size');
        const purpose = text('purpose');
        this.openLlm = {
          kind: 'llm',
          name: purpose === '' ? text('model') : `${text('model')} (${purpose})`,
          start: at,
          end: undefined,
          ok: true,
          detail: `context ${this.lastContext} tokens`,
        };
        this.spans.push(this.openLlm);
        return;
      }
      case 'llm_end': {
        if (text('purpose') === 'child_session') return;
        const duration = number('duration_ms');
        let span = this.openLlm;
        if (span === undefined) {
          span = { kind: 'llm', name: text('model'), start: at - duration, end: undefined, ok: true, detail: '' };
          this.spans.push(span);
        }
        span.end = span.start + duration;
        span.detail = `${number('input_tokens')} in, ${number('output_tokens')} out`;
        this.openLlm = undefined;
        this.turns.push({ input: number('input_tokens'), output: number('output_tokens'), context: this.lastContext });
        return;
      }
      case 'tool_start': {
        const id = text('tool_call_id');
        const span: Span = {
          kind: 'tool',
          name: text('tool_name'),
          start: at,
          end: undefined,
          ok: true,
          detail: JSON.stringify(record.tool_args ?? {}).slice(0, 200),
        };
        this.openTools.set(id, span);
        this.spans.push(span);
        return;
      }
      case 'tool_end': {
        const id = text('tool_call_id');
        const span = this.openTools.get(id);
        if (span !== undefined) {
          span.end = span.start + number('duration_ms');
          span.ok = record.success !== false;
          this.openTools.delete(id);
        }
        return;
      }
      case 'tool_blocked':
        this.markers.push({
          kind: 'blocked',
          at,
          turn: this.turns.length,
          text: `${text('tool_name')} refused: ${text('reason')}`,
        });
        return;
      case 'approval_requested': {
        this.approvals += 1;
        const reason = text('reason');
        this.entries.push({
          role: 'approval',
          text: `Waiting for approval: ${callSignature(text('tool_name'), record.tool_args, 300)} (call ${text('tool_call_id')})${reason === '' ? '' : `\nrisk: ${reason}`}`,
        });
        return;
      }
      case 'approval_answered': {
        this.approvals += 1;
        const scope = text('scope');
        const by = text('by');
        const reason = text('reason');
        this.entries.push({
          role: 'approval',
          text: `${record.decision === 'approve' ? 'Approved' : 'Denied'} ${text('tool_name')} (call ${text('tool_call_id')})${by === '' ? '' : ` by ${by}`}${scope === 'call' ? ', always this exact call' : scope === 'tool' ? ', always this tool' : ''}${reason === '' ? '' : `: ${reason}`}`,
        });
        return;
      }
      case 'compact':
        this.markers.push({
          kind: 'compact',
          at,
          turn: this.turns.length,
          text: `Compacted (${text('trigger')}): ${number('tokens_before')} → ${number('tokens_after')} tokens`,
        });
        this.entries.push({
          role: 'compact',
          text: `Context compacted: ${number('tokens_before')} → ${number('tokens_after')} tokens`,
        });
        return;
      case 'directive':
        this.markers.push({ kind: 'directive', at, turn: this.turns.length, text: `Directive: ${text('text')}` });
        return;
      case 'error':
        this.markers.push({ kind: 'error', at, turn: this.turns.length, text: text('content') });
        this.entries.push({ role: 'error', text: text('content') });
        return;
      case 'status':
        this.markers.push({ kind: 'status', at, turn: this.turns.length, text: `Status: ${text('status')}` });
        return;
      case 'message': {
        const role = text('role');
        const calls = Array.isArray(record.tool_calls)
          ? (record.tool_calls as { id?: string; function?: { name?: string; arguments?: string } }[]).map((call) => {
              if (call.id !== undefined) this.toolNames.set(call.id, call.function?.name ?? '');
              return { name: call.function?.name ?? '?', args: call.function?.arguments ?? '' };
            })
          : undefined;
        this.entries.push({
          role,
          text: contentText(record.content),
          ...(calls === undefined || calls.length === 0 ? {} : { calls }),
          ...(role === 'tool' ? { tool: this.toolNames.get(text('tool_call_id')) ?? '' } : {}),
          ...(record.directive === true ? { directive: true } : {}),
        });
        return;
      }
      default:
        return;
    }
  }
}
