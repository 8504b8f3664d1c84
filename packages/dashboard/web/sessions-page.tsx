import { useEffect, useState } from 'preact/hooks';
import type { SessionPage as Page } from './api.js';
import { getJson } from './api.js';
import { WaitingForYou } from './approvals.js';
import { age, changeStats, compact, usd } from './format.js';

const PAGE_SIZE = 100;
const COLUMNS: [key: string, label: string, className?: string][] = [
  ['status', 'Status'],
  ['id', 'Session'],
  ['model', 'Model'],
  ['profile', 'Profile', 'wide'],
  ['hostname', 'Host', 'wide'],
  ['startedAt', 'Age'],
  ['tokens', 'Tokens'],
  ['costUsd', 'Cost'],
];

/** The calls waiting for a person, then every session, paged and filtered by the server, refreshed every two seconds. */
export function SessionsPage() {
  const [search, setSearch] = useState('');
  const [typed, setTyped] = useState('');
  const [status, setStatus] = useState('');
  const [model, setModel] = useState('');
  const [profile, setProfile] = useState('');
  const [sort, setSort] = useState('startedAt');
  const [order, setOrder] = useState<'asc' | 'desc'>('desc');
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<Page | undefined>(undefined);
  const [error, setError] = useState('');

  useEffect(() => {
    const timer = setTimeout(() => {
      setSearch(typed);
      setOffset(0);
    }, 200);
    return () => clearTimeout(timer);
  }, [typed]);

  useEffect(() => {
    let cancelled = false;
    const parameters = new URLSearchParams({
      search,
      status,
      model,
      profile,
      sort,
      order,
      offset: String(offset),
      limit: String(PAGE_SIZE),
    });
    const load = () =>
      getJson<Page>(`/api/sessions?${parameters}`).then(
        (loaded) => {
          if (cancelled) return;
          setPage(loaded);
          setError('');
          document.body.dataset.sessionsLoaded = String(performance.now());
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
  }, [search, status, model, profile, sort, order, offset]);

  const sortBy = (key: string) => {
    if (key === sort) setOrder(order === 'asc' ? 'desc' : 'asc');
    else {
      setSort(key);
      setOrder(key === 'startedAt' || key === 'tokens' || key === 'costUsd' ? 'desc' : 'asc');
    }
    setOffset(0);
  };
  const select = (value: string, set: (value: string) => void, options: string[], label: string) => (
    <select
      aria-label={label}
      value={value}
      onChange={(event) => {
        set((event.target as HTMLSelectElement).value);
        setOffset(0);
      }}
    >
      <option value="">{label}: all</option>
      {options.map((option) => (
        <option value={option} key={option}>
          {option}
        </option>
      ))}
    </select>
  );
  const now = Date.now();
  return (
    <section>
      <WaitingForYou />
      <div class="filters">
        <input
          type="search"
          placeholder="Search id, prompt, model, host"
          value={typed}
          onInput={(event) => setTyped((event.target as HTMLInputElement).value)}
          aria-label="Search"
        />
        {select(status, setStatus, ['active', ...(page?.facets.statuses ?? [])], 'Status')}
        {select(model, setModel, page?.facets.models ?? [], 'Model')}
        {select(profile, setProfile, page?.facets.profiles ?? [], 'Profile')}
      </div>
      {error !== '' && <p class="error">{error}</p>}
      <p class="count" data-testid="session-count">
        {page === undefined
          ? 'Loading…'
          : `${page.total} of ${page.all} sessions${page.total > PAGE_SIZE ? `, ${offset + 1}–${Math.min(offset + PAGE_SIZE, page.total)} shown` : ''}`}
      </p>
      <div class="table-wrap">
        <table class="sessions">
          <thead>
            <tr>
              {COLUMNS.map(([key, label, className]) => (
                <th
                  key={key}
                  class={className}
                  onClick={() => sortBy(key)}
                  aria-sort={sort === key ? `${order}ending` : undefined}
                >
                  {label}
                  {sort === key ? (order === 'asc' ? ' ▲' : ' ▼') : ''}
                </th>
              ))}
              <th>Changes</th>
              <th>First prompt</th>
            </tr>
          </thead>
          <tbody>
            {page?.rows.map((row) => (
              <tr key={row.id} data-session={row.id}>
                <td data-label="Status">
                  <span class={`status status-${row.status}`} title={row.statusReason}>
                    {row.status}
                  </span>
                </td>
                <td class="mono" data-label="Session">
                  <span style={{ paddingLeft: `${(row.depth ?? 0) * 1.2}em` }}>
                    {(row.depth ?? 0) > 0 ? '└ ' : ''}
                    <a href={`#/session/${encodeURIComponent(row.id)}`}>{row.id}</a>
                  </span>
                </td>
                <td data-label="Model">{row.model ?? '-'}</td>
                <td class="wide" data-label="Profile">
                  {row.profile ?? '-'}
                </td>
                <td class="wide" data-label="Host">
                  {row.hostname ?? '-'}
                </td>
                <td title={row.startedAt} data-label="Started">
                  {age(row.startedAt, now)}
                </td>
                <td class="number" data-label="Tokens">
                  {compact((row.inputTokens ?? 0) + (row.outputTokens ?? 0))}
                </td>
                <td class="number" data-label="Cost">
                  {usd(row.costUsd)}
                </td>
                <td
                  class="changes"
                  data-label="Changes"
                  title={row.changes === undefined ? undefined : changeStats(row.changes)}
                >
                  {row.changes !== undefined && row.changes.files > 0 && (
                    // One element: on a phone the cell is a line of label and value.
                    <span>
                      {row.changes.files} {row.changes.files === 1 ? 'file' : 'files'}
                      <span class="wide"> changed</span>, <span class="diff-add">+{row.changes.additions}</span>/
                      <span class="diff-del">-{row.changes.deletions}</span>
                    </span>
                  )}
                </td>
                <td class="prompt" data-label="Prompt" title={row.firstPrompt}>
                  {row.firstPrompt ?? ''}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {page !== undefined && page.total > PAGE_SIZE && (
        <div class="pager">
          <button disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}>
            ← Newer
          </button>
          <span>
            Page {Math.floor(offset / PAGE_SIZE) + 1} of {Math.ceil(page.total / PAGE_SIZE)}
          </span>
          <button disabled={offset + PAGE_SIZE >= page.total} onClick={() => setOffset(offset + PAGE_SIZE)}>
            Older →
          </button>
        </div>
      )}
    </section>
  );
}
