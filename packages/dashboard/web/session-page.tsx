import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import type { Session, TraceRecord } from './api.js';
import { sendControl } from './api.js';
import { SessionApprovals } from './approvals.js';
import { ChangesSection } from './changes.js';
import { axes, bars, Chart, fromZero, integerAxis, integerScale, markers } from './chart.js';
import { Confirm } from './confirm.js';
import { age, compact, duration, usd } from './format.js';
import type { TraceSpan } from '../src/internal/span-tree.js';
import type { Marker, Span, Turn } from './session-model.js';
import { SessionModel } from './session-model.js';
import { ACTIVE_STATUSES } from './statuses.js';
import { TraceView } from './trace-view.js';

const WATERFALL_ROWS = 400;
const CONVERSATION_ENTRIES = 300;

/** Which part of the session page shows: the trace viewer (the default) or the conversation and its timeline. */
export type SessionView = 'trace' | 'conversation';

export interface SessionPageProps {
  id: string;
  view?: SessionView;
  /** A span a deep link names (`#/session/:id/span/:span`). */
  span?: string | undefined;
  /** A record a search hit names (`#/session/:id/record/:n`). */
  record?: number | undefined;
}

/** One session: status and controls, then its trace as a tree of spans, or its conversation; live over server-sent events. */
export function SessionPage({ id, view = 'trace', span, record }: SessionPageProps) {
  const [session, setSession] = useState<Session | undefined>(undefined);
  const [connection, setConnection] = useState('connecting');
  const [approvals, setApprovals] = useState(0);
  const [spans, setSpans] = useState<{ list: TraceSpan[]; version: number }>({ list: [], version: 0 });
  const base = `#/session/${encodeURIComponent(id)}`;
  return (
    <section class="session">
      <div class="session-head">
        <h1 class="mono">{id}</h1>
        <span
          class={`status status-${session?.status ?? 'unknown'}`}
          data-testid="session-status"
          title={session?.statusReason}
        >
          {session?.status ?? '…'}
        </span>
        {/* "live" only while the page follows a running session; a finished one is just shown. */}
        {session !== undefined && ACTIVE_STATUSES.has(session.status) && (
          <span class={`connection connection-${connection}`} data-testid="connection">
            {connection}
          </span>
        )}
      </div>
      {session !== undefined && (
        <dl class="facts">
          {fact('Model', session.model ?? '-')}
          {fact('Profile', session.profile ?? '-')}
          {fact('Host', session.hostname ?? '-')}
          {fact('Started', `${age(session.startedAt)} ago`)}
          {fact('Tokens', `${compact(session.inputTokens)} in, ${compact(session.outputTokens)} out`)}
          {fact('Cost', usd(session.costUsd))}
          {session.parentId !== undefined &&
            fact('Parent', <a href={`#/session/${encodeURIComponent(session.parentId)}`}>{session.parentId}</a>)}
        </dl>
      )}
      <SessionApprovals id={id} status={session?.status} changes={approvals} />
      <Controls id={id} status={session?.status} />
      <ChangesSection id={id} status={session?.status} />
      <nav class="tabs" aria-label="Session views">
        <a href={base} class={view === 'trace' ? 'active' : ''} aria-current={view === 'trace' ? 'page' : undefined}>
          Trace
        </a>
        <a
          href={`${base}/conversation`}
          class={view === 'conversation' ? 'active' : ''}
          aria-current={view === 'conversation' ? 'page' : undefined}
        >
          Conversation
        </a>
      </nav>
      {view === 'trace' ? (
        <>
          <TraceView
            id={id}
            selected={span}
            record={record}
            onSession={setSession}
            onConnection={setConnection}
            onSpans={(list, version) => {
              setSpans({ list, version });
              setApprovals(approvalChanges(list));
            }}
          />
          <div class="charts">
            <TokenCharts {...chartsFromSpans(spans.list)} version={spans.version} />
          </div>
        </>
      ) : (
        <ConversationView id={id} onSession={setSession} onConnection={setConnection} onApprovals={setApprovals} />
      )}
    </section>
  );
}

/** A number that changes whenever an approval is asked or answered (the approvals section then asks again). */
function approvalChanges(spans: readonly TraceSpan[]): number {
  let count = 0;
  for (const span of spans) if (span.kind === 'approval') count += span.status === 'waiting' ? 1 : 2;
  return count;
}

/** The charts' turns and markers from the span tree: each turn's model call, compactions and directives between. */
export function chartsFromSpans(spans: readonly TraceSpan[]): { turns: Turn[]; markers: Marker[] } {
  const turns: Turn[] = [];
  const markers: Marker[] = [];
  const turnIds = new Set<string>();
  for (const span of spans) {
    if (span.kind === 'turn') turnIds.add(span.id);
    else if (span.kind === 'llm' && span.parent !== undefined && turnIds.has(span.parent) && span.end !== undefined)
      turns.push({ input: span.inputTokens ?? 0, output: span.outputTokens ?? 0, context: span.context ?? 0 });
    else if (span.kind === 'compaction' || span.kind === 'directive')
      markers.push({ kind: span.kind === 'compaction' ? 'compact' : 'directive', at: span.start, turn: turns.length, text: span.summary });
  }
  return { turns, markers };
}

/** The conversation and its timeline, from the trace's records (the page as it was before the trace viewer). */
function ConversationView({
  id,
  onSession,
  onConnection,
  onApprovals,
}: {
  id: string;
  onSession: (session: Session) => void;
  onConnection: (state: string) => void;
  onApprovals: (count: number) => void;
}) {
  const model = useRef(new SessionModel());
  const [version, setVersion] = useState(0);
  useEffect(() => {
    model.current = new SessionModel();
    const source = new EventSource(`/api/sessions/${encodeURIComponent(id)}/events`);
    let frame = 0;
    source.addEventListener('open', () => onConnection('live'));
    source.addEventListener('error', () => onConnection('reconnecting'));
    source.addEventListener('session', (event) => onSession(JSON.parse((event as MessageEvent<string>).data) as Session));
    source.addEventListener('records', (event) => {
      const { from, records } = JSON.parse((event as MessageEvent<string>).data) as {
        from: number;
        records: TraceRecord[];
      };
      // After a reconnect the server replays from the start: skip what is already here.
      for (let index = Math.max(0, model.current.records - from); index < records.length; index += 1)
        model.current.add(records[index]!);
      if (frame === 0)
        frame = requestAnimationFrame(() => {
          frame = 0;
          setVersion((value) => value + 1);
        });
    });
    return () => {
      source.close();
      cancelAnimationFrame(frame);
    };
  }, [id]);
  useEffect(() => {
    document.body.dataset.records = String(model.current.records);
    onApprovals(model.current.approvals);
  }, [version]);
  const state = model.current;
  return (
    <>
      <h2>Timeline</h2>
      <Waterfall spans={state.spans} markers={state.markers} version={version} />
      <div class="charts">
        <TokenCharts turns={state.turns} markers={state.markers} version={version} />
      </div>
      <h2>Conversation</h2>
      <Conversation model={state} version={version} />
    </>
  );
}

function fact(label: string, value: ComponentChildren) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{value}</dd>
    </div>
  );
}

function Controls({ id, status }: { id: string; status: string | undefined }) {
  const [pending, setPending] = useState<{ action: string; text?: string } | undefined>(undefined);
  const [directive, setDirective] = useState('');
  const [message, setMessage] = useState('');
  const live = status !== undefined && ACTIVE_STATUSES.has(status);
  const confirm = async () => {
    const request = pending!;
    setPending(undefined);
    try {
      setMessage(await sendControl(id, request.action, request.text));
      if (request.action === 'directive') setDirective('');
    } catch (error) {
      setMessage(error instanceof Error ? error.message : String(error));
    }
  };
  return (
    <div class="controls">
      <button disabled={!live || status === 'paused'} onClick={() => setPending({ action: 'pause' })}>
        Pause
      </button>
      <button disabled={status !== 'paused'} onClick={() => setPending({ action: 'resume' })}>
        Resume
      </button>
      <button class="danger" disabled={!live} onClick={() => setPending({ action: 'cancel' })}>
        Cancel
      </button>
      <form
        class="directive"
        onSubmit={(event) => {
          event.preventDefault();
          if (directive.trim() !== '') setPending({ action: 'directive', text: directive });
        }}
      >
        <input
          aria-label="Directive"
          placeholder="Send a directive to the agent"
          value={directive}
          onInput={(event) => setDirective((event.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={directive.trim() === ''}>
          Send
        </button>
      </form>
      {message !== '' && (
        <p class="notice" role="status">
          {message}
        </p>
      )}
      {pending !== undefined && (
        <Confirm action={pending.action} onConfirm={() => void confirm()} onBack={() => setPending(undefined)}>
          {pending.action === 'directive'
            ? `Send this directive to ${id}? “${pending.text}”`
            : `${pending.action[0]!.toUpperCase()}${pending.action.slice(1)} session ${id}?`}
        </Confirm>
      )}
    </div>
  );
}

function Waterfall({ spans, markers: marks, version }: { spans: Span[]; markers: Marker[]; version: number }) {
  const shown = spans.length > WATERFALL_ROWS ? spans.slice(-WATERFALL_ROWS) : spans;
  // `version` changes on every batch; open spans grow until now.
  void version;
  if (shown.length === 0) return <p class="empty">No model or tool calls yet.</p>;
  const now = Date.now();
  const axis = timeAxis(shown, now);
  const scale = (time: number) => `${(axis.position(time) * 100).toFixed(3)}%`;
  const start = shown[0]!.start;
  return (
    <div class="waterfall" data-testid="waterfall">
      {spans.length > shown.length && (
        <p class="empty">
          The last {WATERFALL_ROWS} of {spans.length} calls.
        </p>
      )}
      <div class="waterfall-markers">
        {marks
          .filter((mark) => mark.at >= start && mark.kind !== 'status')
          .map((mark, index) => (
            <span key={index} class={`mark mark-${mark.kind}`} style={{ left: scale(mark.at) }} title={mark.text} />
          ))}
      </div>
      {axis.gaps > 0 && (
        <p class="empty">
          {axis.gaps} idle {axis.gaps === 1 ? 'gap' : 'gaps'} (between runs, or waiting) shortened.
        </p>
      )}
      {shown.map((span, index) => (
        <div class={`span span-${span.kind}${span.ok ? '' : ' span-failed'}`} key={index}>
          <span class="span-label" title={span.detail}>
            {span.kind === 'tool' ? '⚙ ' : '◆ '}
            {span.name}
          </span>
          <span class="span-track">
            <span
              class={`span-bar${span.end === undefined ? ' span-open' : ''}`}
              style={{
                left: scale(span.start),
                width: `max(2px, ${((axis.position(span.end ?? now) - axis.position(span.start)) * 100).toFixed(3)}%)`,
              }}
            />
          </span>
          <span class="span-time">{span.end === undefined ? '…' : duration(span.end - span.start)}</span>
        </div>
      ))}
      <ul class="legend">
        {marks
          .filter((mark) => mark.kind === 'compact' || mark.kind === 'directive' || mark.kind === 'blocked')
          .map((mark, index) => (
            <li key={index} class={`mark-text mark-${mark.kind}`}>
              {mark.text}
            </li>
          ))}
      </ul>
    </div>
  );
}

/**
 * The waterfall's time axis: linear, except that idle stretches (no call running) longer than a
 * twentieth of the busy time, or 2 s, are shortened to that, so a session resumed an hour later
 * still shows its calls rather than two slivers.
 */
function timeAxis(spans: readonly Span[], now: number): { position: (time: number) => number; gaps: number } {
  const intervals = spans
    .map((span) => [span.start, span.end ?? now] as const)
    .sort((left, right) => left[0] - right[0]);
  let busy = 0;
  let reach = intervals[0]![0];
  const idle: [number, number][] = [];
  for (const [from, to] of intervals) {
    if (from > reach) idle.push([reach, from]);
    busy += Math.max(0, to - Math.max(from, reach));
    reach = Math.max(reach, to);
  }
  const cap = Math.max(2000, busy / 20);
  const cuts = idle.filter(([from, to]) => to - from > cap).map(([from, to]) => ({ from, to, cut: to - from - cap }));
  const origin = intervals[0]![0];
  const shifted = (time: number) => {
    let removed = 0;
    for (const { from, to, cut } of cuts) {
      if (time >= to) removed += cut;
      else if (time > from) removed += Math.max(0, time - from - cap);
    }
    return time - origin - removed;
  };
  const total = Math.max(1, shifted(reach));
  return { position: (time: number) => Math.min(1, Math.max(0, shifted(time) / total)), gaps: cuts.length };
}

function TokenCharts({ turns, markers: found, version }: { turns: Turn[]; markers: Marker[]; version: number }) {
  const tokens = useMemo<uPlot.AlignedData>(
    () => [turns.map((_, index) => index + 1), turns.map((turn) => turn.input), turns.map((turn) => turn.output)],
    [version],
  );
  const context = useMemo<uPlot.AlignedData>(
    () => [turns.map((_, index) => index + 1), turns.map((turn) => turn.context)],
    [version],
  );
  const marks = () =>
    found
      .filter((mark) => mark.kind === 'compact' || mark.kind === 'directive')
      .map((mark) => ({ x: mark.turn + 0.5, color: mark.kind === 'compact' ? '#d97706' : '#7c3aed' }));
  return (
    <>
      <figure>
        <figcaption>Tokens per turn</figcaption>
        <Chart
          id="tokens"
          data={tokens}
          format={compact}
          options={{
            height: 200,
            scales: { x: integerScale, y: fromZero },
            axes: axes(compact, integerAxis()),
            series: [
              { label: 'turn' },
              { label: 'input', stroke: '#2563eb', fill: '#2563eb88', paths: bars(), points: { show: false } },
              { label: 'output', stroke: '#16a34a', fill: '#16a34a88', paths: bars(), points: { show: false } },
            ],
            plugins: [markers(marks)],
          }}
        />
      </figure>
      <figure>
        <figcaption>Context size (compactions orange, directives purple)</figcaption>
        <Chart
          id="context"
          data={context}
          format={compact}
          options={{
            height: 200,
            scales: { x: integerScale, y: fromZero },
            axes: axes(compact, integerAxis()),
            series: [{ label: 'turn' }, { label: 'context tokens', stroke: '#dc2626', width: 2, fill: '#dc262622' }],
            plugins: [markers(marks)],
          }}
        />
      </figure>
    </>
  );
}

function Conversation({ model, version }: { model: SessionModel; version: number }) {
  const [all, setAll] = useState(false);
  void version;
  const entries = model.entries;
  const shown = all || entries.length <= CONVERSATION_ENTRIES ? entries : entries.slice(-CONVERSATION_ENTRIES);
  return (
    <div class="conversation" data-testid="conversation">
      {shown.length < entries.length && <button onClick={() => setAll(true)}>Show all {entries.length} entries</button>}
      {shown.map((entry, index) => (
        <div class={`entry entry-${entry.role}${entry.directive === true ? ' entry-directive' : ''}`} key={index}>
          <div class="entry-role">
            {entry.role === 'tool'
              ? `tool result: ${entry.tool ?? ''}`
              : entry.directive === true
                ? 'operator directive'
                : entry.role}
          </div>
          {entry.text !== '' && <pre class="entry-text">{entry.text}</pre>}
          {entry.calls?.map((call, callIndex) => (
            <pre class="entry-call" key={callIndex}>
              → {call.name}({call.args})
            </pre>
          ))}
        </div>
      ))}
    </div>
  );
}
