// The trace viewer: the session as a tree of spans (runs, turns, model and tool calls, approvals,
// hooks, child sessions, compactions, directives) beside a detail pane. The tree comes from the
// server (GET /api/sessions/:id/spans), live while the session runs; only the rows in view are
// drawn, so a session of 100,000 records opens as fast as a small one.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { TraceSpan } from '../src/internal/span-tree.js';
import type { Session } from './api.js';
import { getJson } from './api.js';
import { duration } from './format.js';
import { SpanDetail } from './span-detail.js';

const ROW_HEIGHT = 28;
/** Rows drawn above and below the visible ones. */
const OVERSCAN = 12;
/** Above this many spans, turns start folded (the tree shows runs and turns). */
const FOLD_ABOVE = 1500;

const ICONS: Record<string, string> = {
  run: '▶',
  turn: '↻',
  llm: '◆',
  tool: '⚙',
  approval: '✔',
  hook: '⚓',
  child: '⤷',
  compaction: '⇲',
  directive: '⚑',
  error: '✗',
};

/** The spans of one session, as they stream in. */
interface Tree {
  spans: Map<string, TraceSpan>;
  order: string[];
  ready: boolean;
  records: number;
}

/** Follows a session's span tree; `onSession` gets the session's row whenever it changes. */
function useSpanTree(
  id: string,
  onSession: (session: Session) => void,
  onConnection: (state: string) => void,
): [Tree, number] {
  const tree = useRef<Tree>({ spans: new Map(), order: [], ready: false, records: 0 });
  const [version, setVersion] = useState(0);
  useEffect(() => {
    tree.current = { spans: new Map(), order: [], ready: false, records: 0 };
    const source = new EventSource(`/api/sessions/${encodeURIComponent(id)}/spans`);
    let frame = 0;
    const redraw = () => {
      if (frame === 0)
        frame = requestAnimationFrame(() => {
          frame = 0;
          setVersion((value) => value + 1);
        });
    };
    source.addEventListener('open', () => {
      onConnection('live');
      // After a reconnect the server sends the whole tree again: it replaces what is here.
      tree.current = { spans: new Map(), order: [], ready: false, records: 0 };
    });
    source.addEventListener('error', () => onConnection('reconnecting'));
    source.addEventListener('session', (event) =>
      onSession(JSON.parse((event as MessageEvent<string>).data) as Session),
    );
    source.addEventListener('spans', (event) => {
      const { spans } = JSON.parse((event as MessageEvent<string>).data) as { spans: TraceSpan[] };
      const current = tree.current;
      for (const span of spans) {
        if (!current.spans.has(span.id)) current.order.push(span.id);
        current.spans.set(span.id, span);
      }
      redraw();
    });
    source.addEventListener('ready', (event) => {
      tree.current.ready = true;
      tree.current.records = (JSON.parse((event as MessageEvent<string>).data) as { records: number }).records;
      redraw();
    });
    return () => {
      source.close();
      cancelAnimationFrame(frame);
    };
  }, [id]);
  return [tree.current, version];
}

/** A row of the tree: a span of this session, or of a child session opened inside it. */
interface Row {
  key: string;
  span: TraceSpan;
  /** Whose records the span's are. */
  session: string;
  depth: number;
  hasChildren: boolean;
}

/** Which span of a session holds record `index` (the most specific kind first). */
export function spanOfRecord(spans: Iterable<TraceSpan>, index: number): TraceSpan | undefined {
  const rank = ['tool', 'approval', 'hook', 'child', 'directive', 'compaction', 'error', 'llm', 'turn', 'run'];
  let best: TraceSpan | undefined;
  for (const span of spans)
    if (span.records.includes(index) && (best === undefined || rank.indexOf(span.kind) < rank.indexOf(best.kind)))
      best = span;
  return best;
}

export interface TraceViewProps {
  id: string;
  /** The span a deep link names. */
  selected?: string | undefined;
  /** A record a search hit names: its span is selected once the tree has it. */
  record?: number | undefined;
  onSession: (session: Session) => void;
  onConnection: (state: string) => void;
  /** The spans so far (for the charts), whenever they change. */
  onSpans?: (spans: TraceSpan[], version: number) => void;
}

export function TraceView({ id, selected, record, onSession, onConnection, onSpans }: TraceViewProps) {
  const [tree, version] = useSpanTree(id, onSession, onConnection);
  const [open, setOpen] = useState(new Map<string, boolean>());
  const [children, setChildren] = useState(new Map<string, TraceSpan[] | 'loading' | string>());
  const [choice, setChoice] = useState<{ key: string; span: TraceSpan; session: string } | undefined>(undefined);
  const [scrollTop, setScrollTop] = useState(0);
  const scroller = useRef<HTMLDivElement>(null);
  const list = useMemo(() => tree.order.map((key) => tree.spans.get(key)!), [version]);
  // The charts and the approvals section get the spans at most twice a second while a long trace
  // streams in (each is a pass over every span), then on every change.
  const told = useRef(0);
  useEffect(() => {
    if (onSpans === undefined) return;
    const wait = tree.ready ? 0 : told.current + 500 - Date.now();
    if (wait <= 0) {
      told.current = Date.now();
      onSpans(list, version);
      return;
    }
    const timer = setTimeout(() => {
      told.current = Date.now();
      onSpans(list, version);
    }, wait);
    return () => clearTimeout(timer);
  }, [version]);
  const fold = list.length > FOLD_ABOVE;
  const isOpen = (key: string, span: TraceSpan) =>
    open.get(key) ?? (span.kind === 'child' ? false : span.kind === 'turn' ? !fold : span.kind !== 'tool' || !fold);

  const rows = useMemo(() => {
    const out: Row[] = [];
    const walk = (spans: TraceSpan[], session: string, prefix: string, baseDepth: number) => {
      const kids = new Map<string | undefined, TraceSpan[]>();
      for (const span of spans) {
        const list = kids.get(span.parent);
        if (list === undefined) kids.set(span.parent, [span]);
        else list.push(span);
      }
      const visit = (parent: string | undefined, depth: number) => {
        for (const span of kids.get(parent) ?? []) {
          const key = `${prefix}${span.id}`;
          const nested = span.kind === 'child' ? children.get(span.childId ?? '') : undefined;
          const hasChildren = kids.has(span.id) || span.kind === 'child';
          out.push({ key, span, session, depth, hasChildren });
          if (!hasChildren || !isOpen(key, span)) continue;
          visit(span.id, depth + 1);
          if (span.kind === 'child' && Array.isArray(nested)) walk(nested, span.childId!, `${key}/`, depth + 1);
        }
      };
      visit(undefined, baseDepth);
    };
    walk(list, id, '', 0);
    return out;
  }, [version, open, children]);

  // The session's time span, for each row's bar.
  const bounds = useMemo(() => {
    let from = Number.POSITIVE_INFINITY;
    let to = 0;
    for (const span of list) {
      from = Math.min(from, span.start);
      to = Math.max(to, span.end ?? Date.now());
    }
    return { from, width: Math.max(1, to - from) };
  }, [version]);

  const toggle = (row: Row) => {
    const next = new Map(open);
    const opening = !isOpen(row.key, row.span);
    next.set(row.key, opening);
    setOpen(next);
    const child = row.span.childId;
    if (opening && row.span.kind === 'child' && child !== undefined && !children.has(child)) {
      setChildren((known) => new Map(known).set(child, 'loading'));
      getJson<{ spans: TraceSpan[] }>(`/api/sessions/${encodeURIComponent(child)}/spans?snapshot=1`).then(
        (body) => setChildren((known) => new Map(known).set(child, body.spans)),
        (error: unknown) => setChildren((known) => new Map(known).set(child, String(error))),
      );
    }
  };

  const choose = (row: Row) => {
    setChoice({ key: row.key, span: row.span, session: row.session });
    // A span of this session gets a deep link; a child's span is shown here and linked in its own session.
    if (row.session === id) history.replaceState(null, '', `#/session/${encodeURIComponent(id)}/span/${row.span.id}`);
  };

  // A deep link (or a search hit's record): open its ancestors, select it and scroll to it.
  const target = selected ?? (record === undefined ? undefined : spanOfRecord(list, record)?.id);
  const reached = useRef<string | undefined>(undefined);
  useLayoutEffect(() => {
    if (target === undefined || reached.current === target) return;
    const span = tree.spans.get(target);
    if (span === undefined) return;
    const next = new Map(open);
    for (let parent = span.parent; parent !== undefined; parent = tree.spans.get(parent)?.parent)
      next.set(parent, true);
    reached.current = target;
    setOpen(next);
    setChoice({ key: span.id, span, session: id });
    if (record !== undefined && selected === undefined)
      history.replaceState(null, '', `#/session/${encodeURIComponent(id)}/span/${span.id}`);
  }, [target, version]);
  useLayoutEffect(() => {
    if (choice === undefined || reached.current !== choice.key) return;
    const at = rows.findIndex((row) => row.key === choice.key);
    const element = scroller.current;
    if (at === -1 || element === null) return;
    const top = at * ROW_HEIGHT;
    if (top < element.scrollTop || top > element.scrollTop + element.clientHeight - ROW_HEIGHT) {
      element.scrollTop = Math.max(0, top - element.clientHeight / 3);
      setScrollTop(element.scrollTop);
    }
    reached.current = `${choice.key}#scrolled`;
  }, [rows, choice]);
  // The chosen span's newest state (an open span grows).
  const shown =
    choice === undefined
      ? undefined
      : choice.session === id
        ? (tree.spans.get(choice.span.id) ?? choice.span)
        : choice.span;

  const height = scroller.current?.clientHeight ?? 600;
  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((scrollTop + height) / ROW_HEIGHT) + OVERSCAN);
  return (
    <div class="trace" data-testid="trace" data-ready={tree.ready ? 'true' : 'false'} data-spans={list.length}>
      <div
        class="trace-tree"
        ref={scroller}
        onScroll={(event) => setScrollTop((event.target as HTMLElement).scrollTop)}
        role="tree"
        aria-label="Spans"
      >
        {rows.length === 0 && (
          <p class="empty">{tree.ready ? 'No spans: the trace is empty.' : 'Loading the trace…'}</p>
        )}
        <div style={{ height: `${rows.length * ROW_HEIGHT}px`, position: 'relative' }}>
          {rows.slice(first, last).map((row, offset) => {
            const { span } = row;
            const left = ((span.start - bounds.from) / bounds.width) * 100;
            const width = (((span.end ?? Date.now()) - span.start) / bounds.width) * 100;
            return (
              <div
                key={row.key}
                class={`tree-row kind-${span.kind} row-${span.status}${choice?.key === row.key ? ' chosen' : ''}`}
                style={{ top: `${(first + offset) * ROW_HEIGHT}px`, height: `${ROW_HEIGHT}px` }}
                role="treeitem"
                aria-level={row.depth + 1}
                aria-selected={choice?.key === row.key}
                aria-expanded={row.hasChildren ? isOpen(row.key, span) : undefined}
                data-span={span.id}
                data-key={row.key}
                onClick={() => choose(row)}
              >
                <span class="tree-indent" style={{ width: `${row.depth * 16}px` }} />
                <button
                  class="tree-toggle"
                  aria-label={row.hasChildren ? (isOpen(row.key, span) ? 'Fold' : 'Unfold') : undefined}
                  disabled={!row.hasChildren}
                  onClick={(event) => {
                    event.stopPropagation();
                    toggle(row);
                  }}
                >
                  {row.hasChildren ? (isOpen(row.key, span) ? '▾' : '▸') : ''}
                </button>
                <span class="tree-icon" aria-hidden="true">
                  {ICONS[span.kind] ?? '•'}
                </span>
                <span class="tree-name">
                  {span.kind === 'child' ? `Child session ${span.childId ?? ''}` : span.name}
                </span>
                <span class="tree-summary">
                  {span.kind === 'child'
                    ? children.get(span.childId ?? '') === 'loading'
                      ? 'loading…'
                      : ''
                    : span.summary}
                </span>
                {span.status !== 'ok' && span.status !== 'completed' && (
                  <span class={`tree-status status-${span.status}`}>{span.status}</span>
                )}
                <span class="tree-time">{span.end === undefined ? '…' : duration(span.end - span.start)}</span>
                <span class="tree-bar">
                  <span
                    style={{
                      left: `${Math.min(100, left).toFixed(2)}%`,
                      width: `max(2px, ${Math.min(100, width).toFixed(2)}%)`,
                    }}
                  />
                </span>
              </div>
            );
          })}
        </div>
      </div>
      <div class="trace-detail">
        {shown === undefined ? (
          <p class="empty">Choose a span to see its detail.</p>
        ) : (
          <SpanDetail key={choice!.key} session={choice!.session} span={shown} own={choice!.session === id} />
        )}
      </div>
    </div>
  );
}
