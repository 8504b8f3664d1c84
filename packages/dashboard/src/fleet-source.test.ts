import { SessionNotFoundError } from '@rho/core';
import type { ControlOutcome, OperatorChannel } from '@rho/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { CostStats, SessionPage, ToolStats } from './dashboard-source.js';
import { startDashboard } from './dashboard-server.js';
import type { DashboardServer } from './dashboard-server.js';
import { createFleetSource } from './fleet-source.js';
import type { FleetLike, FleetSessionLike } from './fleet-source.js';

// @rho/fleet is built on another branch; until it lands, the adapter is checked against a fleet
// kept in memory with the same API (listSessions, resolveSession, operator, followRecords, stats),
// through the real server.
function memoryFleet(sessions: FleetSessionLike[], records: unknown[]) {
  const requests: string[] = [];
  const fleet: FleetLike = {
    async listSessions() {
      return sessions;
    },
    async resolveSession(prefix) {
      const found = sessions.filter((session) => session.id.startsWith(prefix));
      if (found.length !== 1) throw new SessionNotFoundError({ message: `no session ${prefix}` });
      return found[0]!;
    },
    operator(sessionId): OperatorChannel {
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
    },
    async *followRecords(_sessionId, options) {
      for (const [index, record] of records.entries()) yield { seq: index + 1, record };
      await new Promise<void>((resolve) => options?.signal?.addEventListener('abort', () => resolve()));
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
  };
  return { fleet, requests };
}

const session = (id: string, extra: Partial<FleetSessionLike> = {}): FleetSessionLike => ({
  id,
  host: 'node-2',
  status: 'running',
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

describe('createFleetSource', () => {
  it('lists, follows, steers and sums a fleet through the dashboard server', async () => {
    const { fleet, requests } = memoryFleet(
      [session('aa11'), session('bb22', { parentId: 'aa11', status: 'completed' })],
      [{ type: 'run_start', ts: '2026-11-26T10:00:00.000Z', prompt: 'hi' }],
    );
    server = await startDashboard({ source: createFleetSource(fleet, 'fleet: test') });
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
});
