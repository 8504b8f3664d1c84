import { useEffect, useState } from 'preact/hooks';
import type { CallAnswer, PendingCall, WaitingCall } from './api.js';
import { getJson, sendApproval } from './api.js';
import { Confirm } from './confirm.js';
import { age, callSignature, until } from './format.js';

/** What a timeout answers: a dangerous call is denied whatever the session says. */
function timeoutText(call: PendingCall): string {
  if (call.expiresAt === undefined) return '';
  const answer = call.dangerous === undefined && call.onTimeout === 'approve' ? 'approved' : 'denied';
  return `; ${answer} ${until(call.expiresAt)} if nobody answers`;
}

/** How far an approval reaches, as the confirmation says it. */
function reach(call: PendingCall, scope: CallAnswer['scope']): string {
  if (scope === 'call') return ', and this exact call again for the rest of the session';
  if (scope === 'tool') return `, and every later ${call.toolName} call that matches no dangerous pattern`;
  return ' (this call only)';
}

/**
 * The session's tool calls that wait for approval, each with its arguments, its risk line and
 * Approve / Deny (confirmed like every control). Asked for while the session waits
 * (`waiting_approval`, `parked`): again whenever the status changes or an approval record arrives
 * (`changes`), and after each answer.
 */
export function SessionApprovals({ id, status, changes }: { id: string; status?: string; changes: number }) {
  const [calls, setCalls] = useState<PendingCall[]>([]);
  const [answerable, setAnswerable] = useState(true);
  const [pending, setPending] = useState<{ call: PendingCall; answer: CallAnswer } | undefined>(undefined);
  const [message, setMessage] = useState('');
  const [reload, setReload] = useState(0);
  // Only a session that waits has waiting calls: other pages do not make the server read their trace.
  const waits = status === 'waiting_approval' || status === 'parked';
  useEffect(() => {
    if (!waits) {
      setCalls([]);
      return;
    }
    let cancelled = false;
    getJson<{ approvals: PendingCall[]; answerable: boolean }>(
      `/api/sessions/${encodeURIComponent(id)}/approvals`,
    ).then(
      (loaded) => {
        if (cancelled) return;
        setCalls(loaded.approvals);
        setAnswerable(loaded.answerable);
      },
      (failure: unknown) => !cancelled && setMessage(String(failure)),
    );
    return () => {
      cancelled = true;
    };
  }, [id, waits, status, changes, reload]);
  const confirm = async () => {
    const { call, answer } = pending!;
    setPending(undefined);
    try {
      setMessage(await sendApproval(id, answer));
      setCalls((current) => current.filter((waiting) => waiting.toolCallId !== call.toolCallId));
    } catch (error) {
      setMessage(error instanceof Error ? error.message : String(error));
    }
    setReload((value) => value + 1);
  };
  if (calls.length === 0 && message === '') return null;
  return (
    <div class="approvals" data-testid="approvals">
      {calls.length > 0 && <h2>Waiting for approval</h2>}
      {calls.length > 0 && status === 'parked' && (
        <p class="empty">
          No process runs this session: answer, then continue it with <code>rho --resume {id}</code>.
        </p>
      )}
      {calls.length > 0 && !answerable && (
        <p class="empty">
          This dashboard's source cannot answer approvals: use <code>rho approve {id}</code> or{' '}
          <code>rho deny {id}</code>.
        </p>
      )}
      {calls.map((call) => (
        <CallCard
          key={call.toolCallId}
          call={call}
          answerable={answerable}
          onAnswer={(answer) => setPending({ call, answer })}
        />
      ))}
      {message !== '' && (
        <p class="notice" role="status" data-testid="approval-notice">
          {message}
        </p>
      )}
      {pending !== undefined && (
        <Confirm action={pending.answer.decision} onConfirm={() => void confirm()} onBack={() => setPending(undefined)}>
          {pending.answer.decision === 'approve'
            ? `Approve ${callSignature(pending.call.toolName, pending.call.arguments)} in session ${id}${reach(pending.call, pending.answer.scope)}?`
            : `Deny ${callSignature(pending.call.toolName, pending.call.arguments)} in session ${id}?${pending.answer.reason === undefined ? '' : ` The model reads: “${pending.answer.reason}”`}`}
        </Confirm>
      )}
    </div>
  );
}

function CallCard({
  call,
  answerable,
  onAnswer,
}: {
  call: PendingCall;
  answerable: boolean;
  onAnswer: (answer: CallAnswer) => void;
}) {
  const [scope, setScope] = useState<'once' | 'call' | 'tool'>('once');
  const [reason, setReason] = useState('');
  return (
    <div class={`approval${call.dangerous === undefined ? '' : ' approval-dangerous'}`} data-call={call.toolCallId}>
      <div class="approval-head">
        <strong class="mono">{call.toolName}</strong>
        {call.dangerous !== undefined && <span class="tag-danger">dangerous: {call.dangerous}</span>}
        <span class="approval-when">
          call {call.toolCallId}, waiting {age(call.requestedAt)}
          {timeoutText(call)}
        </span>
      </div>
      <pre class="approval-args">{JSON.stringify(call.arguments, null, 2)}</pre>
      {call.reason !== undefined && <p class="approval-risk">risk: {call.reason}</p>}
      <div class="approval-actions">
        <select
          aria-label="Approve for"
          value={scope}
          disabled={!answerable}
          onChange={(event) => setScope((event.target as HTMLSelectElement).value as typeof scope)}
        >
          <option value="once">this call only</option>
          <option value="call">always this exact call</option>
          {call.dangerous === undefined && <option value="tool">always this tool</option>}
        </select>
        <button
          disabled={!answerable}
          onClick={() =>
            onAnswer({ toolCallId: call.toolCallId, decision: 'approve', ...(scope === 'once' ? {} : { scope }) })
          }
        >
          Approve
        </button>
        <input
          aria-label="Reason for denying"
          placeholder="Reason (optional; the model reads it)"
          maxLength={2000}
          value={reason}
          disabled={!answerable}
          onInput={(event) => setReason((event.target as HTMLInputElement).value)}
        />
        <button
          class="danger"
          disabled={!answerable}
          onClick={() =>
            onAnswer({
              toolCallId: call.toolCallId,
              decision: 'deny',
              ...(reason.trim() === '' ? {} : { reason: reason.trim() }),
            })
          }
        >
          Deny
        </button>
      </div>
    </div>
  );
}

/** Every call that waits for a person, in every session, refreshed every two seconds; each links to its session. */
export function WaitingForYou() {
  const [calls, setCalls] = useState<WaitingCall[]>([]);
  const [error, setError] = useState('');
  useEffect(() => {
    let cancelled = false;
    const load = () =>
      getJson<{ approvals: WaitingCall[] }>('/api/approvals').then(
        (loaded) => {
          if (cancelled) return;
          setCalls(loaded.approvals);
          setError('');
        },
        (failure: unknown) => !cancelled && setError(String(failure)),
      );
    void load();
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void load();
    }, 2000);
    return () => {
      cancelled = true;
      clearInterval(timer);
    };
  }, []);
  if (calls.length === 0 && error === '') return null;
  const now = Date.now();
  return (
    <section class="waiting" data-testid="waiting">
      <h2>Waiting for you ({calls.length})</h2>
      {error !== '' && <p class="error">{error}</p>}
      <ul>
        {calls.map((call) => (
          <li key={`${call.sessionId}/${call.toolCallId}`} data-call={`${call.sessionId}/${call.toolCallId}`}>
            <a class="mono" href={`#/session/${encodeURIComponent(call.sessionId)}`}>
              {callSignature(call.toolName, call.arguments, 100)}
            </a>
            {call.dangerous !== undefined && <span class="tag-danger">dangerous</span>}
            <span class="waiting-where">
              in <span class="mono">{call.sessionId}</span>
              {call.sessionStatus === 'parked' ? ' (parked: resume it after answering)' : ''}
              {call.firstPrompt === undefined ? '' : `: ${call.firstPrompt}`}
            </span>
            {call.reason !== undefined && <span class="waiting-risk">{call.reason}</span>}
            <span class="waiting-age">waiting {age(call.requestedAt, now)}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
