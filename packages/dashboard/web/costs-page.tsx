import { useEffect, useMemo, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import { getJson } from './api.js';
import { axes, bars, Chart, fromZero, integerAxis, integerScale } from './chart.js';
import { compact, usd } from './format.js';

interface Bucket {
  key: string;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  unpricedCalls: number;
}
interface Costs {
  byModel: Bucket[];
  byProfile: Bucket[];
  byDay: Bucket[];
  sessions: number;
}

/** Horizontal bars, one per bucket, longest first. */
export function BarList({
  rows,
  label,
  tone,
}: {
  rows: { key: string; value: number; text: string }[];
  label: string;
  tone?: 'danger';
}) {
  const max = Math.max(...rows.map((row) => row.value), 0);
  return (
    <div class={`barlist${tone === undefined ? '' : ` barlist-${tone}`}`} aria-label={label}>
      {rows.map((row) => (
        <div class="barlist-row" key={row.key}>
          <span class="barlist-key">{row.key}</span>
          <span class="barlist-track">
            <span class="barlist-bar" style={{ width: `${max === 0 ? 0 : (row.value / max) * 100}%` }} />
          </span>
          <span class="barlist-value">{row.text}</span>
        </div>
      ))}
    </div>
  );
}

function table(title: string, rows: Bucket[]) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th>{title}</th>
            <th class="number">Calls</th>
            <th class="number">Input</th>
            <th class="number">Output</th>
            <th class="number">Cost</th>
            <th class="number wide">Unpriced calls</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.key}>
              <td>{row.key}</td>
              <td class="number">{row.calls}</td>
              <td class="number">{compact(row.inputTokens)}</td>
              <td class="number">{compact(row.outputTokens)}</td>
              <td class="number">{usd(row.costUsd)}</td>
              <td class="number wide">{row.unpricedCalls}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Costs by model, profile and day. */
export function CostsPage() {
  const [costs, setCosts] = useState<Costs | undefined>(undefined);
  const [error, setError] = useState('');
  useEffect(() => {
    getJson<Costs>('/api/stats/costs').then(setCosts, (failure: unknown) => setError(String(failure)));
  }, []);
  // Every day from the first to the last (a day without calls is a zero bar), by its index: one
  // day or a year reads right, with a date under whole days only.
  const days = useMemo(() => everyDay(costs?.byDay ?? []), [costs]);
  const daily = useMemo<uPlot.AlignedData>(
    () => [days.map((_, index) => index), days.map((day) => day.costUsd)],
    [days],
  );
  if (error !== '') return <p class="error">{error}</p>;
  if (costs === undefined) return <p>Loading…</p>;
  const total = costs.byModel.reduce((sum, bucket) => sum + bucket.costUsd, 0);
  return (
    <section>
      <h1>Costs</h1>
      <p class="count">
        {usd(total)} over {costs.sessions} sessions
      </p>
      <figure>
        <figcaption>Cost per day (USD)</figcaption>
        {costs.byDay.length === 0 ? (
          <p class="empty">No model calls yet.</p>
        ) : (
          <Chart
            id="cost-by-day"
            data={daily}
            format={usd}
            formatX={(index) => days[index]?.key ?? ''}
            options={{
              height: 220,
              scales: { x: integerScale, y: fromZero },
              axes: axes(
                (value) => (value === 0 ? '$0' : value < 0.01 ? `$${value.toPrecision(1)}` : `$${value.toFixed(2)}`),
                integerAxis((index) => shortDay(days[index]?.key)),
              ),
              series: [
                { label: 'day' },
                { label: 'cost USD', stroke: '#2563eb', fill: '#2563eb88', paths: bars(), points: { show: false } },
              ],
            }}
          />
        )}
      </figure>
      <div class="two">
        <div>
          <h2>By model</h2>
          <BarList
            label="cost by model"
            rows={costs.byModel.map((bucket) => ({
              key: bucket.key,
              value: bucket.costUsd,
              text: usd(bucket.costUsd),
            }))}
          />
          {table('Model', costs.byModel)}
        </div>
        <div>
          <h2>By profile</h2>
          <BarList
            label="cost by profile"
            rows={costs.byProfile.map((bucket) => ({
              key: bucket.key,
              value: bucket.costUsd,
              text: usd(bucket.costUsd),
            }))}
          />
          {table('Profile', costs.byProfile)}
        </div>
      </div>
      <h2>By day</h2>
      {table('Day (UTC)', [...costs.byDay].reverse())}
    </section>
  );
}

/** The days from the first bucket to the last, each with its cost (0 for a day without calls). */
function everyDay(buckets: readonly { key: string; costUsd: number }[]): { key: string; costUsd: number }[] {
  const sorted = [...buckets].sort((a, b) => (a.key < b.key ? -1 : 1));
  const first = sorted[0];
  const last = sorted.at(-1);
  if (first === undefined || last === undefined) return [];
  const byKey = new Map(sorted.map((bucket) => [bucket.key, bucket.costUsd]));
  const out: { key: string; costUsd: number }[] = [];
  const end = Date.parse(`${last.key}T00:00:00Z`);
  // At most about ten years of days: the page's data, never an unbounded loop.
  for (let at = Date.parse(`${first.key}T00:00:00Z`); at <= end && out.length < 4000; at += 86_400_000) {
    const key = new Date(at).toISOString().slice(0, 10);
    out.push({ key, costUsd: byKey.get(key) ?? 0 });
  }
  return out;
}

/** `2026-12-03` as `Dec 3` (with the year when it is not this one). */
function shortDay(key: string | undefined): string {
  if (key === undefined) return '';
  const date = new Date(`${key}T00:00:00Z`);
  const month = date.toLocaleString('en', { month: 'short', timeZone: 'UTC' });
  const year = date.getUTCFullYear() === new Date().getUTCFullYear() ? '' : ` ${date.getUTCFullYear()}`;
  return `${month} ${date.getUTCDate()}${year}`;
}
