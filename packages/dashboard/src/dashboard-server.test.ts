import { existsSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { SessionStore } from '@rho/core';
import { afterEach, describe, expect, it } from 'vitest';
import { writeSampleSessions } from '../scripts/sample-sessions.mjs';
import { startScriptedRun, temporarySessions, waitFor } from '../test/support.js';
import type { ScriptedRun } from '../test/support.js';
import type { SessionPage } from './dashboard-source.js';
import { startDashboard } from './dashboard-server.js';
import type { DashboardServer } from './dashboard-server.js';
import { createFileSource } from './file-source.js';

let server: DashboardServer | undefined;
const runs: ScriptedRun[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const run of runs.splice(0)) await run.server.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw HTTP request (fetch would not let a test set Host). */
function call(
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${server!.origin}${path}`,
      { method: options.method ?? 'GET', headers: options.headers },
      (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

const bearer = () => ({ Authorization: `Bearer ${server!.token}` });

async function start(base: string): Promise<DashboardServer> {
  server = await startDashboard({ source: createFileSource(base, { refreshMs: 100 }), statusIntervalMs: 100 });
  return server;
}

describe('dashboard server', () => {
  it('refuses every request without the token, and trades ?token= for an HttpOnly SameSite cookie', async () => {
    const base = temporarySessions();
    writeSampleSessions(base, 3);
    await start(base);
    for (const path of ['/', '/assets/app.js', '/api/sessions', '/api/stats/costs', '/api/sessions/s0000000/events'])
      expect((await call(path)).status, path).toBe(401);
    expect((await call('/?token=wrong')).status).toBe(401);
    expect((await call('/api/sessions', { headers: { Cookie: `rho_dashboard_${server!.port}=wrong` } })).status).toBe(
      401,
    );
    const login = await call(`/?token=${server!.token}`);
    expect(login.status).toBe(303);
    expect(login.headers.location).toBe('/');
    const setCookie = String(login.headers['set-cookie']);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    const cookie = setCookie.split(';')[0]!;
    const page = await call('/', { headers: { Cookie: cookie } });
    expect(page.status).toBe(200);
    expect(page.body).toContain(`content="${server!.token}"`);
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect((await call('/assets/app.js', { headers: { Cookie: cookie } })).body.length).toBeGreaterThan(10_000);
    expect((await call('/api/sessions', { headers: bearer() })).status).toBe(200);
  });

  it('refuses other Host names (DNS rebinding) and remote addresses unless asked', async () => {
    const base = temporarySessions();
    await start(base);
    const foreign = await call('/api/sessions', { headers: { ...bearer(), Host: `evil.example:${server!.port}` } });
    expect(foreign.status).toBe(421);
    const localhost = await call('/api/sessions', { headers: { ...bearer(), Host: `localhost:${server!.port}` } });
    expect(localhost.status).toBe(200);
    await expect(startDashboard({ source: createFileSource(base), host: '0.0.0.0' })).rejects.toThrow(/allowRemote/);
  });

  it('pages, filters, searches and sorts sessions on the server, children under their parents', async () => {
    const base = temporarySessions();
    writeSampleSessions(base, 250);
    await start(base);
    const get = async (query: string) =>
      JSON.parse((await call(`/api/sessions?${query}`, { headers: bearer() })).body) as SessionPage;
    const first = await get('limit=50');
    expect(first).toMatchObject({ total: 250, all: 250 });
    expect(first.rows).toHaveLength(50);
    // Every tenth sample session is a child of the one before it: it follows its parent, one level deeper.
    const childIndex = first.rows.findIndex((row) => row.parentId !== undefined);
    expect(first.rows[childIndex]!.depth).toBe(1);
    expect(first.rows[childIndex - 1]!.id).toBe(first.rows[childIndex]!.parentId);
    const second = await get('limit=50&offset=50');
    expect(second.rows[0]!.id).not.toBe(first.rows[0]!.id);
    const searched = await get('search=%2342%29');
    expect(searched.rows.map((row) => row.firstPrompt)).toEqual([expect.stringContaining('(#42)')]);
    const byModel = await get('model=gpt-5&tree=0');
    expect(byModel.total).toBeGreaterThan(0);
    expect(byModel.rows.every((row) => row.model === 'gpt-5')).toBe(true);
    // Token counts come from the traces, read in the background after the first listing.
    const byTokens = await waitFor('every trace read', async () => {
      const page = await get('sort=tokens&order=asc&tree=0&limit=1000');
      return page.rows.every((row) => row.inputTokens !== undefined) && page;
    });
    const totals = byTokens.rows.map((row) => row.inputTokens! + row.outputTokens!);
    expect(totals).toEqual([...totals].sort((left, right) => left - right));
    expect(first.facets.models).toEqual(['claude-sonnet-4', 'gpt-5', 'gpt-5-mini', 'qwen3-32b']);
  });

  it('shows a session created after the first listing within a second, without listing everything again', async () => {
    const base = temporarySessions();
    writeSampleSessions(base, 3);
    server = await startDashboard({
      source: createFileSource(base, { refreshMs: 100, listingRefreshMs: 3_600_000 }),
    });
    const ids = async () =>
      (JSON.parse((await call('/api/sessions', { headers: bearer() })).body) as SessionPage).rows.map((row) => row.id);
    expect(await ids()).toHaveLength(3);
    const { id } = new SessionStore(base).create({ model: 'gpt-4o-mini' });
    await waitFor('the new session listed', async () => (await ids()).includes(id));
  });

  it('sums costs by model, profile and day, and tool calls, failures and latency', async () => {
    const base = temporarySessions();
    writeSampleSessions(base, 40, { turns: 3 });
    await start(base);
    const costs = JSON.parse((await call('/api/stats/costs', { headers: bearer() })).body) as {
      byModel: { key: string; calls: number; unpricedCalls: number }[];
      byProfile: { key: string }[];
      byDay: { key: string }[];
    };
    expect(costs.byModel.reduce((sum, bucket) => sum + bucket.calls, 0)).toBe(40 * 3);
    expect(costs.byModel.find((bucket) => bucket.key === 'qwen3-32b')).toMatchObject({ calls: 30, unpricedCalls: 30 });
    expect(costs.byProfile.map((bucket) => bucket.key).sort()).toEqual(['developer', 'readonly', 'unrestricted']);
    expect(costs.byDay.map((bucket) => bucket.key)).toEqual(['2026-11-01']);
    const tools = JSON.parse((await call('/api/stats/tools', { headers: bearer() })).body) as {
      tools: { name: string; calls: number; p95Ms: number }[];
    };
    expect(tools.tools.reduce((sum, tool) => sum + tool.calls, 0)).toBe(40 * 2);
  });

  it('streams a live run over server-sent events and carries pause, resume, a directive and cancel to the agent', async () => {
    const base = temporarySessions();
    // The agent keeps calling its tool, so it passes a pause point (before each model call) often.
    const run = await startScriptedRun(base, 'Look at the logs', () => ({
      type: 'response',
      text: 'Looking.',
      toolCalls: [{ name: 'look', arguments: '{"what":"logs"}' }],
      delayMs: 5,
    }));
    runs.push(run);
    await start(base);
    const controller = new AbortController();
    const response = await fetch(`${server!.origin}/api/sessions/${run.id}/events`, {
      headers: bearer(),
      signal: controller.signal,
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = response.body!.getReader();
    let text = '';
    const decoder = new TextDecoder();
    const until = async (pattern: RegExp) =>
      waitFor(`${pattern} in the event stream`, async () => {
        if (pattern.test(text)) return true;
        const { value } = await reader.read();
        text += decoder.decode(value);
        return pattern.test(text);
      });
    await until(/"type":"tool_end"/);
    expect(text).toMatch(/event: session\ndata: \{"id":"[0-9a-f]+","status":"running"/);
    const control = (body: object, headers: Record<string, string> = {}) =>
      call(`/api/sessions/${run.id}/control`, {
        method: 'POST',
        headers: { ...bearer(), 'Content-Type': 'application/json', 'X-Rho-Token': server!.token, ...headers },
        body: JSON.stringify(body),
      });
    // Without the header, or from another origin, nothing changes.
    const noHeader = await call(`/api/sessions/${run.id}/control`, {
      method: 'POST',
      headers: { ...bearer(), 'Content-Type': 'application/json' },
      body: '{"action":"cancel"}',
    });
    expect(noHeader.status).toBe(403);
    expect((await control({ action: 'cancel' }, { Origin: 'http://evil.example' })).status).toBe(403);
    expect(existsSync(join(run.directory, 'cancel'))).toBe(false);

    expect(JSON.parse((await control({ action: 'pause' })).body)).toMatchObject({ outcome: 'requested' });
    await until(/"type":"status","status":"paused"/);
    expect(JSON.parse((await control({ action: 'resume' })).body)).toMatchObject({ outcome: 'requested' });
    await until(/"type":"status","status":"running"/);
    expect((await control({ action: 'directive', text: 'Check the disk too' })).status).toBe(200);
    expect(readFileSync(join(run.directory, 'directives.jsonl'), 'utf8')).toContain('Check the disk too');
    // The agent delivers it before its next model call, and the trace says so.
    await until(/"type":"directive","text":"Check the disk too"/);
    expect(JSON.parse((await control({ action: 'cancel' })).body)).toMatchObject({ outcome: 'requested' });
    const result = await run.done;
    expect(result.status).toBe('cancelled');
    await until(/"type":"run_end","status":"cancelled"/);
    await waitFor('the cancelled status', async () => {
      await reader.read().then(({ value }) => (text += decoder.decode(value)));
      return /event: session\ndata: \{[^\n]*"status":"cancelled"/.test(text);
    });
    // A finished session is not paused or cancelled (that would hold its next resume).
    expect((await control({ action: 'pause' })).status).toBe(409);
    controller.abort();
  });
});
