import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { TraceSpan } from '../src/internal/span-tree.js';
import type { Session } from './api.js';
import { sendControl } from './api.js';
import { SessionApprovals } from './approvals.js';
import { ChangesSection } from './changes.js';
import { Confirm } from './confirm.js';
import { ConversationView } from './conversation-view.js';
import { age, compact, usd } from './format.js';
import type { Marker, Turn } from './session-model.js';
import { ACTIVE_STATUSES } from './statuses.js';
import { TokenCharts } from './token-charts.js';
import { TraceView } from './trace-view.js';

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
      markers.push({
        kind: span.kind === 'compaction' ? 'compact' : 'directive',
        at: span.start,
        turn: turns.length,
        text: span.summary,
      });
  }
  return { turns, markers };
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
