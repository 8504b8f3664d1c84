// The detail pane of the trace viewer: what one span's records say, for its kind.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { TraceSpan } from '../src/internal/span-tree.js';
import type { TraceRecord } from './api.js';
import { getJson } from './api.js';
import { compact, contentText, duration, usd } from './format.js';
import { ToolOutput } from './tool-output.js';

/** The records of a span, by index, as `GET /api/sessions/:id/records` sends them. */
type Records = { index: number; record: TraceRecord }[];

/** The detail of `span`, a span of session `session` (its own, or a child's shown inside its parent). */
export function SpanDetail({ session, span, own }: { session: string; span: TraceSpan; own: boolean }) {
  const [records, setRecords] = useState<Records | undefined>(undefined);
  const [error, setError] = useState('');
  const key = span.records.join(',');
  useEffect(() => {
    let current = true;
    setRecords(undefined);
    setError('');
    getJson<{ records: Records }>(`/api/sessions/${encodeURIComponent(session)}/records?at=${key}`).then(
      (body) => current && setRecords(body.records),
      (failure: unknown) => current && setError(failure instanceof Error ? failure.message : String(failure)),
    );
    return () => {
      current = false;
    };
    // The records of an open span grow: fetched again when they change.
  }, [session, key]);
  return (
    <section class="span-detail" data-testid="span-detail" data-span={span.id} data-kind={span.kind}>
      <header>
        <h3>
          {span.kind === 'child' ? 'Child session' : span.name}
          <span class={`span-status status-${span.status}`}>{span.status}</span>
        </h3>
        <p class="detail-facts">
          {span.end === undefined ? 'running' : duration(span.end - span.start)}
          {span.inputTokens !== undefined && ` · ${compact(span.inputTokens)} in, ${compact(span.outputTokens)} out`}
          {span.costUsd !== undefined && ` · ${span.costUsd === null ? 'unpriced' : usd(span.costUsd)}`}
          {` · ${new Date(span.start).toISOString().replace('T', ' ').slice(0, 19)} UTC`}
        </p>
        {own ? (
          <a class="span-link" href={`#/session/${encodeURIComponent(session)}/span/${span.id}`}>
            link to this span
          </a>
        ) : (
          <a class="span-link" href={`#/session/${encodeURIComponent(session)}/span/${span.id}`}>
            open in session {session}
          </a>
        )}
      </header>
      {error !== '' && <p class="error">{error}</p>}
      {records === undefined && error === '' && <p class="empty">Loading…</p>}
      {records !== undefined && <Body span={span} records={records.map((entry) => entry.record)} />}
    </section>
  );
}

function Body({ span, records }: { span: TraceSpan; records: TraceRecord[] }) {
  const of = (type: string) => records.filter((record) => record.type === type);
  const first = (type: string) => records.find((record) => record.type === type);
  switch (span.kind) {
    case 'llm':
      return <ModelCall records={records} />;
    case 'tool':
      return <ToolCall span={span} records={records} />;
    case 'approval':
      return <Approval records={records} />;
    case 'child': {
      const usage = first('llm_end');
      return (
        <>
          <Facts
            rows={[
              ['Session', <a href={`#/session/${encodeURIComponent(span.childId ?? '')}`}>{span.childId}</a>],
              [
                'Tokens',
                usage === undefined
                  ? '-'
                  : `${compact(Number(usage.input_tokens))} in, ${compact(Number(usage.output_tokens))} out`,
              ],
              ['Cost', usage === undefined ? '-' : usage.cost_usd === null ? 'unpriced' : usd(Number(usage.cost_usd))],
            ]}
          />
          <p class="empty">Open the span in the tree to see the child's own spans.</p>
        </>
      );
    }
    case 'compaction': {
      const record = first('compact');
      return (
        <>
          {record !== undefined && (
            <Facts
              rows={[
                ['Trigger', String(record.trigger)],
                ['Tokens', `${compact(Number(record.tokens_before))} → ${compact(Number(record.tokens_after))}`],
                ['Messages kept', String(Array.isArray(record.kept) ? record.kept.length : 0)],
              ]}
            />
          )}
          <h4>Summary</h4>
          <pre class="message-text">{String(record?.summary ?? '(not written yet)')}</pre>
        </>
      );
    }
    case 'directive': {
      const record = first('directive');
      return (
        <>
          <h4>Operator directive</h4>
          <pre class="message-text">{String(record?.text ?? contentText(first('message')?.content))}</pre>
        </>
      );
    }
    case 'hook':
      return (
        <Facts
          rows={Object.entries(first('hook') ?? {})
            .filter(([key]) => key !== 'type' && key !== 'ts')
            .map(([key, value]) => [key, String(value)])}
        />
      );
    case 'error':
      return <pre class="output output-error">{String(first('error')?.content ?? '')}</pre>;
    case 'run': {
      const start = first('run_start');
      const end = first('run_end');
      const usage = end?.usage as Record<string, unknown> | undefined;
      return (
        <>
          <Facts
            rows={[
              ['Status', String(end?.status ?? 'running')],
              ...(end?.limit === undefined ? [] : [['Limit', String(end.limit)] as [string, string]]),
              ...(usage === undefined
                ? []
                : [
                    [
                      'Session tokens',
                      `${compact(Number(usage.input_tokens))} in, ${compact(Number(usage.output_tokens))} out`,
                    ] as [string, string],
                    ['Session cost', usage.cost_usd === null ? 'unpriced' : usd(Number(usage.cost_usd))] as [
                      string,
                      string,
                    ],
                  ]),
              ...(start?.task_id === undefined
                ? []
                : [
                    ['Task', `${String(start.task_id)} (attempt ${String(start.task_attempt ?? 1)})`] as [
                      string,
                      string,
                    ],
                  ]),
            ]}
          />
          <h4>Prompt</h4>
          <pre class="message-text">{String(start?.prompt ?? '')}</pre>
          {of('status').length > 0 && (
            <>
              <h4>Status changes</h4>
              <ul class="plain">
                {of('status').map((record, index) => (
                  <li key={index}>
                    {String(record.ts ?? '').slice(11, 19)} {String(record.status)}
                  </li>
                ))}
              </ul>
            </>
          )}
        </>
      );
    }
    default:
      return <p class="empty">{span.summary}</p>;
  }
}

function Facts({ rows }: { rows: [string, ComponentChildren][] }) {
  return (
    <dl class="detail-list">
      {rows.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function Message({ record }: { record: TraceRecord }) {
  const calls = Array.isArray(record.tool_calls)
    ? (record.tool_calls as { function?: { name?: string; arguments?: string } }[])
    : [];
  const text = contentText(record.content);
  return (
    <div class={`message message-${String(record.role)}${record.directive === true ? ' message-directive' : ''}`}>
      <div class="message-role">{record.directive === true ? 'operator directive' : String(record.role)}</div>
      {text !== '' && <pre class="message-text">{text}</pre>}
      {calls.map((call, index) => (
        <pre class="message-call" key={index}>
          {`→ ${call.function?.name ?? '?'} ${pretty(call.function?.arguments ?? '')}`}
        </pre>
      ))}
    </div>
  );
}

function pretty(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}

function ModelCall({ records }: { records: TraceRecord[] }) {
  const start = records.find((record) => record.type === 'llm_start');
  const end = records.find((record) => record.type === 'llm_end');
  const input = records.filter((record) => record.type === 'message' && record.role !== 'assistant');
  const output = records.filter((record) => record.type === 'message' && record.role === 'assistant');
  const retries = records.filter((record) => record.type === 'retry');
  const failures = records.filter((record) => record.type === 'error' || record.type === 'refusal');
  return (
    <>
      <Facts
        rows={[
          ['Model', String(start?.model ?? end?.model ?? '-')],
          ...(start?.purpose === undefined ? [] : [['Purpose', String(start.purpose)] as [string, string]]),
          [
            'Context',
            start === undefined
              ? '-'
              : `${compact(Number(start.context_size))} tokens${start.context_window === undefined ? '' : ` of ${compact(Number(start.context_window))} (${String(start.context_window_source ?? '')})`}`,
          ],
          [
            'Tokens',
            end === undefined
              ? '-'
              : `${compact(Number(end.input_tokens))} in (${compact(Number(end.cache_read_tokens ?? 0))} cached), ${compact(Number(end.output_tokens))} out (${compact(Number(end.reasoning_tokens ?? 0))} reasoning)`,
          ],
          ['Cost', end === undefined ? '-' : end.cost_usd === null ? 'unpriced' : usd(Number(end.cost_usd))],
          ['Latency', end === undefined ? 'running' : duration(Number(end.duration_ms))],
          ...(end?.finish_reason == null ? [] : [['Finish reason', String(end.finish_reason)] as [string, string]]),
          ...(end?.response_id === undefined ? [] : [['Response id', String(end.response_id)] as [string, string]]),
        ]}
      />
      {retries.map((retry, index) => (
        <p class="output-note" key={index}>
          retry {String(retry.attempt)} of {String(retry.max_attempts)} after {String(retry.delay_ms)} ms:{' '}
          {String(retry.reason)}
        </p>
      ))}
      <h4>Input (new since the previous call)</h4>
      {input.length === 0 ? (
        <p class="empty">No new messages.</p>
      ) : (
        input.map((record, index) => <Message record={record} key={index} />)
      )}
      <h4>Output</h4>
      {output.map((record, index) => (
        <Message record={record} key={index} />
      ))}
      {failures.map((record, index) => (
        <pre class="output output-error" key={index}>
          {`${record.type}: ${String(record.content)}`}
        </pre>
      ))}
    </>
  );
}

function ToolCall({ span, records }: { span: TraceSpan; records: TraceRecord[] }) {
  const started = records.find(
    (record) => record.type === 'tool_start' || record.type === 'approval_requested' || record.type === 'tool_blocked',
  );
  const end = records.find((record) => record.type === 'tool_end');
  const blocked = records.find((record) => record.type === 'tool_blocked');
  const result = records.find((record) => record.type === 'message' && record.role === 'tool');
  const args = started?.tool_args;
  return (
    <>
      <h4>Arguments</h4>
      <pre class="arguments">{JSON.stringify(args, null, 2)}</pre>
      <Policy records={records} />
      <h4>Output</h4>
      {blocked !== undefined && (
        <p class="refused" data-testid="refused">
          Not run: {String(blocked.reason)}
        </p>
      )}
      {result === undefined ? (
        blocked === undefined && <p class="empty">{span.end === undefined ? 'Running…' : 'No result was recorded.'}</p>
      ) : blocked === undefined ? (
        <ToolOutput
          input={{
            name: span.name,
            args,
            content: result.content,
            ...(end?.metadata === undefined ? {} : { metadata: end.metadata as Record<string, unknown> }),
            success: end?.success !== false,
          }}
        />
      ) : null}
    </>
  );
}

/** Why the call ran or did not: the profile's question, and who answered it. */
function Policy({ records }: { records: TraceRecord[] }) {
  const asked = records.find((record) => record.type === 'approval_requested');
  const answered = records.find((record) => record.type === 'approval_answered');
  const blocked = records.find((record) => record.type === 'tool_blocked');
  const hooks = records.filter((record) => record.type === 'hook');
  if (asked === undefined && blocked === undefined && hooks.length === 0)
    return (
      <p class="policy" data-testid="policy">
        Policy: allowed by the profile without asking.
      </p>
    );
  return (
    <div class="policy" data-testid="policy">
      <h4>Policy</h4>
      {asked !== undefined && (
        <p>
          Asked: {String(asked.reason ?? 'approval required')}
          {asked.dangerous === undefined ? '' : ` (dangerous: ${String(asked.dangerous)})`}
        </p>
      )}
      {answered !== undefined && <Approval records={[answered]} />}
      {asked !== undefined && answered === undefined && blocked === undefined && <p>Waiting for an answer.</p>}
      {blocked !== undefined && answered === undefined && <p>Refused: {String(blocked.reason)}</p>}
      {hooks.map((hook, index) => (
        <p key={index}>
          Hook {String(hook.event)} ({String(hook.hook)}): {String(hook.outcome)}
          {hook.decision === undefined ? '' : `, ${String(hook.decision)}`}
          {hook.reason === undefined ? '' : `: ${String(hook.reason)}`}
        </p>
      ))}
    </div>
  );
}

function Approval({ records }: { records: TraceRecord[] }) {
  const answered = records.find((record) => record.type === 'approval_answered');
  const asked = records.find((record) => record.type === 'approval_requested');
  if (answered === undefined)
    return (
      <p data-testid="approval">Waiting for approval{asked?.reason === undefined ? '' : `: ${String(asked.reason)}`}</p>
    );
  const scope =
    answered.scope === 'call' ? ', always this exact call' : answered.scope === 'tool' ? ', always this tool' : '';
  return (
    <p data-testid="approval">
      {answered.decision === 'approve' ? 'Approved' : 'Denied'} by {String(answered.by ?? answered.source)} (
      {String(answered.source)}
      {scope}) at {String(answered.ts ?? '').slice(11, 19)} UTC
      {answered.reason === undefined ? '' : `: ${String(answered.reason)}`}
    </p>
  );
}
