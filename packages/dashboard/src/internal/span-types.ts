// The trace viewer's spans: what the server sends and the page shows (no Node APIs: the page's
// types come from here).

/** What a span stands for. */
export type SpanKind =
  'run' | 'turn' | 'llm' | 'tool' | 'approval' | 'hook' | 'child' | 'compaction' | 'directive' | 'error';

/**
 * How a span ended: `open` while it runs; `ok`; `failed` (a tool's `success: false`, a model call
 * that errored); `refused` (a call blocked by policy or denied); `waiting` (an approval not answered
 * yet); a run's own status (`completed`, `cancelled`, `error`, ...).
 */
export type SpanStatus = string;

/** One span of the tree, as the server sends it. */
export interface TraceSpan {
  /** Stable for the life of the trace: the kind and the index of the record that began it (`tool-57`). */
  id: string;
  /** The enclosing span's id; undefined for a run. */
  parent?: string;
  kind: SpanKind;
  /** `Turn 3`, `gpt-5-mini`, `bash`, `Child session 2026…`. */
  name: string;
  /** One line for the tree: a call's arguments, a decision, a summary. */
  summary: string;
  /** Epoch milliseconds. */
  start: number;
  /** Epoch milliseconds; undefined while open (an instant has `end === start`). */
  end?: number;
  status: SpanStatus;
  /** The indexes (0-based, in the trace's record order) of the records the detail pane shows. */
  records: number[];
  /** A model call's (or a child session's) tokens. */
  inputTokens?: number;
  outputTokens?: number;
  /** Known cost in USD; null when unpriced. */
  costUsd?: number | null;
  /** A model call's context size when it began, in tokens. */
  context?: number;
  /** A child session's id (kind `child`). */
  childId?: string;
}

export type Raw = { type: string; ts?: unknown } & Record<string, unknown>;

const SUMMARY_CHARS = 160;

export function text(record: Raw, key: string): string {
  const value = record[key];
  return typeof value === 'string' ? value : '';
}

export function number(record: Raw, key: string): number {
  const value = record[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

export function oneLine(value: string, max = SUMMARY_CHARS): string {
  const line = value.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A call's arguments on one line: `make test`, `path='a.txt', content='...'`. */
export function argumentsLine(args: unknown): string {
  if (typeof args !== 'object' || args === null) return args === undefined ? '' : oneLine(JSON.stringify(args));
  const entries = Object.entries(args as Record<string, unknown>);
  if (entries.length === 1 && typeof entries[0]![1] === 'string') return oneLine(entries[0]![1]);
  return oneLine(
    entries
      .map(([key, value]) => `${key}=${typeof value === 'string' ? `'${value}'` : JSON.stringify(value)}`)
      .join(', '),
  );
}

/** `approved by dana@host, always this tool`, `denied by dashboard: use make dist-clean`. */
export function answerSummary(record: Raw): string {
  const by = text(record, 'by') || text(record, 'source');
  const reason = text(record, 'reason');
  const scope = record.scope === 'call' ? ', always this call' : record.scope === 'tool' ? ', always this tool' : '';
  return oneLine(
    `${record.decision === 'approve' ? 'approved' : 'denied'}${by === '' ? '' : ` by ${by}`}${scope}${reason === '' ? '' : `: ${reason}`}`,
  );
}

/** `notify.sh: ok`, `policy-hook: ok, deny`. */
export function hookSummary(record: Raw): string {
  const decision = text(record, 'decision');
  return oneLine(`${text(record, 'hook')}: ${text(record, 'outcome')}${decision === '' ? '' : `, ${decision}`}`);
}

/** A hook that ran is `ok` (`refused` when it denied the call); one that failed or timed out, `failed`. */
export function hookStatus(record: Raw): string {
  if (text(record, 'outcome') !== 'ok') return 'failed';
  return text(record, 'decision') === 'deny' ? 'refused' : 'ok';
}
