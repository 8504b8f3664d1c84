import { useEffect, useRef, useState } from 'preact/hooks';
import type { Session, TraceRecord } from './api.js';
import { duration } from './format.js';
import type { Marker, Span } from './session-model.js';
import { SessionModel } from './session-model.js';
import { TokenCharts } from './token-charts.js';

const WATERFALL_ROWS = 400;
const CONVERSATION_ENTRIES = 300;

/** The conversation and its timeline, from the trace's records (the page as it was before the trace viewer). */
export function ConversationView({
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
    source.addEventListener('session', (event) =>
      onSession(JSON.parse((event as MessageEvent<string>).data) as Session),
    );
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
