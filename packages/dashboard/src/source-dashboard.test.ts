import { SessionNotFoundError } from '@rho/core';
import type { ControlOutcome, OperatorChannel, RawTraceRecord } from '@rho/core';
import type { ContentSearchOptions, ListedSession, SessionSource } from '@rho/monitor';
import { afterEach, describe, expect, it } from 'vitest';
import type { CostStats, SessionPage, ToolStats } from './dashboard-source.js';
import { startDashboard } from './dashboard-server.js';
import type { DashboardServer } from './dashboard-server.js';
import { createDashboardSource } from './source-dashboard.js';

// The adapter over a SessionSource kept in memory, with the telemetry views a fleet has, through
// the real server (a fleet's own source is tested in @rho/fleet and by the CLI's dashboard test).
function memorySource(sessions: ListedSession[], records: RawTraceRecord[]) {
  const requests: string[] = [];
  const operator = (sessionId: string): OperatorChannel => {
    const record = async (action: string): Promise<ControlOutcome> => {
      requests.push(`${action} ${sessionId}`);
      return 'requested';
    };
    return {
      requestCancel: () => record('cancel'),
      requestPause: () => record('pause'),
      requestResume: () => record('resume'),
      sendDirective: async (text) => {
        requests.push(`directive ${sessionId} ${text}`);
      },
    };
  };
  const unused = async (): Promise<never> => {
    throw new Error('not used by the dashboard');
  };
  const source: SessionSource = {
    kind: 'fleet',
    description: 'fleet: test',
    async list() {
      return { sessions };
    },
    async get(id) {
      return sessions.find((session) => session.id === id);
    },
    async resolve(prefix) {
      const found = sessions.filter((session) => session.id.startsWith(prefix));
      if (found.length !== 1) throw new SessionNotFoundError({ message: `no session ${prefix}` });
      return found[0]!;
    },
    async *follow(_id, options) {
      for (const record of records) yield { record };
      await new Promise<void>((resolve) => options?.signal?.addEventListener('abort', () => resolve()));
    },
    readTrace: unused,
    control: unused,
    sendDirective: unused,
    async operator(id) {
      if (!sessions.some((session) => session.id === id)) throw new SessionNotFoundError({ message: `no ${id}` });
      return operator(id);
    },
    async stats(view) {
      if (view === 'tool_calls')
        return [{ tool: 'bash', calls: 4, failures: 1, failure_rate: 0.25, blocked: 2, p50_ms: 12.5 }];
      if (view === 'cost_by_day')
        return [
          { day: '2026-11-26', sessions: 1, calls: 2, input_tokens: 30, output_tokens: 3, cost_usd: 0.2 },
          { day: '2026-11-25', sessions: 1, calls: 1, input_tokens: 10, output_tokens: 1, cost_usd: 0.1 },
        ];
      const key = view === 'cost_by_model' ? 'model' : 'profile';
      return [{ [key]: 'x', calls: 3, input_tokens: 40, output_tokens: 4, cost_usd: '0.3' }];
    },
    async close() {},
  };
  return { source, requests };
}

const session = (id: string, extra: Partial<ListedSession> = {}): ListedSession => ({
  id,
  hostname: 'node-2',
  status: 'running',
  recordedStatus: 'running',
  startedAt: '2026-11-26T10:00:00.000Z',
  updatedAt: '2026-11-26T10:00:01.000Z',
  inputTokens: 120,
  outputTokens: 8,
  costUsd: 0.01,
  model: 'gpt-5-mini',
  ...extra,
});

let server: DashboardServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('createDashboardSource', () => {
  it('lists, follows, steers and sums a session source through the dashboard server', async () => {
    const { source, requests } = memorySource(
      [session('aa11'), session('bb22', { parentId: 'aa11', status: 'completed' })],
      [{ type: 'run_start', ts: '2026-11-26T10:00:00.000Z', prompt: 'hi' }],
    );
    server = await startDashboard({ source: createDashboardSource(source) });
    const headers = { Authorization: `Bearer ${server.token}` };
    const get = async <T>(path: string) => (await (await fetch(`${server!.origin}${path}`, { headers })).json()) as T;
    const page = await get<SessionPage>('/api/sessions');
    expect(page.rows.map((row) => [row.id, row.depth, row.hostname, row.inputTokens])).toEqual([
      ['aa11', 0, 'node-2', 120],
      ['bb22', 1, 'node-2', 120],
    ]);
    expect((await fetch(`${server.origin}/api/sessions/aa1`, { headers })).status).toBe(404);
    const controller = new AbortController();
    const stream = await fetch(`${server.origin}/api/sessions/aa11/events`, { headers, signal: controller.signal });
    const reader = stream.body!.getReader();
    let text = '';
    while (!text.includes('"type":"run_start"')) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const control = await fetch(`${server.origin}/api/sessions/aa11/control`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json', 'X-Rho-Token': server.token },
      body: JSON.stringify({ action: 'pause' }),
    });
    expect(control.status).toBe(200);
    expect(requests).toEqual(['pause aa11']);
    const costs = await get<CostStats>('/api/stats/costs');
    expect(costs.byModel).toEqual([
      { key: 'x', calls: 3, inputTokens: 40, outputTokens: 4, costUsd: 0.3, unpricedCalls: 0 },
    ]);
    expect(costs.byDay.map((bucket) => bucket.key)).toEqual(['2026-11-25', '2026-11-26']);
    const tools = await get<ToolStats>('/api/stats/tools');
    expect(tools.tools).toEqual([{ name: 'bash', calls: 4, failures: 1, blocked: 2, p50Ms: 12.5 }]);
  });

  it("passes on its SessionSource's content search, and answers 501 for a source without one", async () => {
    const { source } = memorySource([session('aa11')], []);
    server = await startDashboard({ source: createDashboardSource(source) });
    const headers = { Authorization: `Bearer ${server.token}` };
    const refused = await fetch(`${server.origin}/api/search?q=build`, { headers });
    expect(refused.status).toBe(501);
    expect(((await refused.json()) as { error: string }).error).toBe(
      "fleet: test cannot search sessions' content: the sessions page's search looks at ids, prompts, models, profiles and hosts.",
    );
    await server.close();

    const asked: Omit<ContentSearchOptions, 'signal'>[] = [];
    const hit = {
      sessionId: 'aa11',
      record: 3,
      type: 'tool_start',
      field: 'tool_args.command',
      snippet: 'rm -rf build',
    };
    const searching: SessionSource = {
      ...source,
      async searchContent({ query, limit, signal }) {
        asked.push({ query, limit });
        expect(signal).toBeInstanceOf(AbortSignal);
        return { hits: [hit], sessionsSearched: 1, complete: true };
      },
    };
    server = await startDashboard({ source: createDashboardSource(searching) });
    const answer = await fetch(`${server.origin}/api/search?q=%20Build%20&limit=5`, {
      headers: { Authorization: `Bearer ${server.token}` },
    });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ hits: [hit], sessionsSearched: 1, complete: true });
    expect(asked).toEqual([{ query: 'Build', limit: 5 }]);
  });
});
