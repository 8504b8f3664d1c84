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

/** Tool calls, failures and latency by tool. */
export function ToolsPage() {
  const [stats, setStats] = useState<{ tools: Tool[]; sessions: number } | undefined>(undefined);
  const [error, setError] = useState('');
  useEffect(() => {
    getJson<{ tools: Tool[]; sessions: number }>('/api/stats/tools').then(setStats, (failure: unknown) =>
      setError(String(failure)),
    );
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
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th>Tool</th>
              <th class="number">Calls</th>
              <th class="number">Failed</th>
              <th class="number">Refused</th>
              <th class="number">Mean</th>
              <th class="number">p50</th>
              <th class="number">p95</th>
              <th class="number">Max</th>
            </tr>
          </thead>
          <tbody>
            {stats.tools.map((tool) => (
              <tr key={tool.name}>
                <td>{tool.name}</td>
                <td class="number">{tool.calls}</td>
                <td class="number">{tool.failures}</td>
                <td class="number">{tool.blocked}</td>
                <td class="number">{maybe(tool.meanMs)}</td>
                <td class="number">{duration(tool.p50Ms)}</td>
                <td class="number">{maybe(tool.p95Ms)}</td>
                <td class="number">{maybe(tool.maxMs)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
