import { useEffect, useState } from 'preact/hooks';
import { getJson } from './api.js';
import { BarList } from './costs-page.js';
import { duration } from './format.js';

const maybe = (ms: number | undefined) => (ms === undefined ? '-' : duration(ms));

interface Tool {
  name: string;
  calls: number;
  failures: number;
  blocked: number;
  p50Ms: number;
  meanMs?: number;
  p95Ms?: number;
  maxMs?: number;
}

interface Stats {
  tools: Tool[];
  models?: Tool[];
  sessions: number;
}

/** A latency table: one row per name, with what it knows (mean, p50, p95, max). */
function latencyTable(title: string, rows: Tool[], counts: boolean) {
  return (
    <div class="table-wrap">
      <table data-testid={`latency-${title.toLowerCase()}`}>
        <thead>
          <tr>
            <th>{title}</th>
            <th class="number">Calls</th>
            {counts && <th class="number">Failed</th>}
            {counts && <th class="number">Refused</th>}
            <th class="number">Mean</th>
            <th class="number">p50</th>
            <th class="number">p95</th>
            <th class="number">Max</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.name}>
              <td>{row.name}</td>
              <td class="number">{row.calls}</td>
              {counts && <td class="number">{row.failures}</td>}
              {counts && <td class="number">{row.blocked}</td>}
              <td class="number">{maybe(row.meanMs)}</td>
              <td class="number">{duration(row.p50Ms)}</td>
              <td class="number">{maybe(row.p95Ms)}</td>
              <td class="number">{maybe(row.maxMs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Tool calls, failures and latency by tool; model call latency by model. */
export function ToolsPage() {
  const [stats, setStats] = useState<Stats | undefined>(undefined);
  const [error, setError] = useState('');
  useEffect(() => {
    getJson<Stats>('/api/stats/tools').then(setStats, (failure: unknown) => setError(String(failure)));
  }, []);
  if (error !== '') return <p class="error">{error}</p>;
  if (stats === undefined) return <p>Loading…</p>;
  return (
    <section>
      <h1>Tools</h1>
      <p class="count">
        {stats.tools.reduce((sum, tool) => sum + tool.calls, 0)} calls of {stats.tools.length} tools over{' '}
        {stats.sessions} sessions
      </p>
      <div class="two">
        <div>
          <h2>Calls</h2>
          <BarList
            label="calls by tool"
            rows={stats.tools.map((tool) => ({ key: tool.name, value: tool.calls, text: String(tool.calls) }))}
          />
        </div>
        <div>
          <h2>Failure rate</h2>
          <BarList
            label="failures by tool"
            tone="danger"
            rows={stats.tools.map((tool) => ({
              key: tool.name,
              value: tool.calls === 0 ? 0 : tool.failures / tool.calls,
              text: `${tool.failures} (${tool.calls === 0 ? 0 : Math.round((tool.failures / tool.calls) * 100)}%)`,
            }))}
          />
        </div>
      </div>
      <h2>Latency</h2>
      <BarList
        label="p95 latency by tool"
        rows={stats.tools.map((tool) =>
          tool.p95Ms === undefined
            ? { key: tool.name, value: tool.p50Ms, text: `p50 ${duration(tool.p50Ms)}` }
            : { key: tool.name, value: tool.p95Ms, text: `p95 ${duration(tool.p95Ms)}` },
        )}
      />
      {latencyTable('Tool', stats.tools, true)}
      <h2>Model latency</h2>
      {stats.models === undefined ? (
        <p class="empty">This source does not record model call durations (a fleet's views).</p>
      ) : stats.models.length === 0 ? (
        <p class="empty">No model calls yet.</p>
      ) : (
        latencyTable('Model', stats.models, false)
      )}
    </section>
  );
}
