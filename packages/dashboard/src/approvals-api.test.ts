import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import type { SessionSource } from '@rho/monitor';
import { createDirectorySource } from '@rho/monitor';
import { afterEach, describe, expect, it } from 'vitest';
import { startApprovalRun, temporarySessions, waitFor } from '../test/support.js';
import type { ApprovalRun } from '../test/support.js';
import type { DashboardSource } from './dashboard-source.js';
import { startDashboard } from './dashboard-server.js';
import type { DashboardServer } from './dashboard-server.js';
import { createFileSource } from './file-source.js';
import { createDashboardSource } from './source-dashboard.js';

// Answering tool calls that wait for approval, through the real server, in real sessions (core's
// Agent and Session against a scripted model over HTTP, approvals.unattended 'wait').

let server: DashboardServer | undefined;
const runs: ApprovalRun[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const run of runs.splice(0)) await run.server.close();
});

interface Answer {
  status: number;
  body: string;
  json: Record<string, unknown>;
}

/** A raw HTTP request (fetch would not let a test set Origin). */
function call(
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${server!.origin}${path}`,
      { method: options.method ?? 'GET', headers: { Authorization: `Bearer ${server!.token}`, ...options.headers } },
      (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => {
          let json: Record<string, unknown> = {};
          try {
            json = JSON.parse(body) as Record<string, unknown>;
          } catch {
            // Not JSON: the test looks at the status.
          }
          resolve({ status: response.statusCode!, body, json });
        });
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

/** POSTs an answer as the page does: JSON, with the token header. */
function answer(id: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return call(`/api/sessions/${id}/approvals`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Rho-Token': server!.token, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function start(source: DashboardSource): Promise<DashboardServer> {
  server = await startDashboard({ source, statusIntervalMs: 100 });
  return server;
}

async function waitingRun(base: string, commands: string[]): Promise<ApprovalRun> {
  const run = await startApprovalRun(base, 'Tidy the build', commands);
  runs.push(run);
  await waitFor('the call waiting', () => pendingIn(run.directory).length > 0);
  return run;
}

/** The call ids of the trace's approval_requested without an approval_answered. */
function pendingIn(directory: string): string[] {
  const records = traceOf(directory);
  const answered = new Set(records.filter((record) => record.type === 'approval_answered').map(idOf));
  return records.filter((record) => record.type === 'approval_requested' && !answered.has(idOf(record))).map(idOf);
}

function traceOf(directory: string): Record<string, unknown>[] {
  const path = join(directory, 'trace.jsonl');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const idOf = (record: Record<string, unknown>) => String(record.tool_call_id);
const approvals = async (path = '/api/approvals') => (await call(path)).json.approvals as Record<string, unknown>[];

describe('approvals through the dashboard', () => {
  it('lists a waiting call across sessions and in its session, and applies an approval exactly once', async () => {
    const base = temporarySessions();
    const run = await waitingRun(base, ['make clean']);
    await start(createFileSource(base, { refreshMs: 100 }));
    const listed = await waitFor('the call listed', async () => {
      const found = await approvals();
      return found.length === 1 && found;
    });
    expect(listed[0]).toEqual({
      sessionId: run.id,
      sessionStatus: 'waiting_approval',
      firstPrompt: 'Tidy the build',
      toolCallId: 'call_1',
      toolName: 'shell',
      arguments: { command: 'make clean' },
      reason: 'the profile asks for approval of shell',
      requestedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      expiresAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      onTimeout: 'deny',
    });
    expect((await call('/api/approvals')).json.answerable).toBe(true);
    const own = await call(`/api/sessions/${run.id}/approvals`);
    expect(own.json).toMatchObject({ status: 'waiting_approval', answerable: true });
    expect(own.json.approvals).toEqual([expect.objectContaining({ toolCallId: 'call_1', toolName: 'shell' })]);

    const first = await answer(run.id, { toolCallId: 'call_1', decision: 'approve' });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({
      outcome: 'answered',
      answer: { decision: 'approve', scope: 'once', by: 'dashboard', source: 'dashboard' },
      message: `Approved shell (call call_1) in ${run.id}.`,
    });
    // A second answer, at once (before the agent took the first) and after the run: refused, naming the first.
    const second = await answer(run.id, { toolCallId: 'call_1', decision: 'deny', reason: 'changed my mind' });
    expect(second.status).toBe(409);
    expect(second.json).toMatchObject({
      outcome: 'already_answered',
      answer: { decision: 'approve', by: 'dashboard' },
    });
    expect(second.json.error).toBe(
      'Call call_1 was already answered (approve by dashboard); that answer stands and yours was not recorded.',
    );
    const result = await run.done;
    expect(result.status).toBe('completed');
    expect(run.ran).toEqual(['make clean']);
    const late = await answer(run.id, { toolCallId: 'call_1', decision: 'deny' });
    expect(late.status).toBe(409);
    expect(late.json.error).toContain('already answered (approve by dashboard)');
    const answers = traceOf(run.directory).filter((record) => record.type === 'approval_answered');
    expect(answers).toEqual([
      expect.objectContaining({
        tool_call_id: 'call_1',
        decision: 'approve',
        scope: 'once',
        by: 'dashboard',
        source: 'dashboard',
      }),
    ]);
    await waitFor('no call listed', async () => (await approvals()).length === 0);
  }, 60_000);

  it('denies with a reason the model reads, and lists a dangerous call as dangerous', async () => {
    const base = temporarySessions();
    const run = await waitingRun(base, ['rm -rf build']);
    await start(createFileSource(base, { refreshMs: 100 }));
    const [listed] = await approvals(`/api/sessions/${run.id}/approvals`);
    expect(listed).toMatchObject({
      toolCallId: 'call_1',
      dangerous: 'rm -rf',
      reason: 'the arguments contain the dangerous pattern "rm -rf"',
    });
    const denied = await answer(run.id, { toolCallId: 'call_1', decision: 'deny', reason: 'use make dist-clean' });
    expect(denied.status).toBe(200);
    expect(denied.json.message).toBe(`Denied shell (call call_1) in ${run.id}.`);
    const result = await run.done;
    expect(run.ran).toEqual([]);
    expect(result.status).toBe('refused');
    expect(traceOf(run.directory).find((record) => record.type === 'approval_answered')).toMatchObject({
      decision: 'deny',
      reason: 'use make dist-clean',
      by: 'dashboard',
    });
    // The model's next request carries the denial with its reason, as the tool's result.
    const toolResults = run.server.requests
      .flatMap((request) => (request.body?.messages ?? []) as { role: string; content: unknown }[])
      .filter((message) => message.role === 'tool');
    expect(JSON.stringify(toolResults)).toContain('use make dist-clean');
  }, 60_000);

  it('refuses bad bodies (400, saying what is wrong), unknown sessions (404), calls that do not wait (409), and answers without the token header or from another origin (403), recording nothing', async () => {
    const base = temporarySessions();
    const run = await waitingRun(base, ['make clean']);
    await start(createFileSource(base, { refreshMs: 100 }));
    const good = { toolCallId: 'call_1', decision: 'approve' };

    const tokenless = await call(`/api/sessions/${run.id}/approvals`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(good),
    });
    expect(tokenless.status).toBe(403);
    expect((await answer(run.id, good, { 'X-Rho-Token': 'wrong' })).status).toBe(403);
    const foreign = await answer(run.id, good, { Origin: 'http://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.json.error).toContain('X-Rho-Token header and this origin');
    expect((await answer(run.id, good, { 'Content-Type': 'text/plain' })).status).toBe(415);

    const bad: [body: unknown, says: string][] = [
      ['{"toolCallId": ', 'not JSON'],
      [['call_1'], 'The body is an object'],
      [{ decision: 'approve' }, 'toolCallId is the id of the waiting call'],
      [{ toolCallId: 'call_1' }, 'decision is "approve" or "deny"'],
      [{ toolCallId: 'call_1', decision: 'yes' }, 'decision is "approve" or "deny", not "yes"'],
      [{ ...good, scope: 'forever' }, 'scope is "once"'],
      [{ toolCallId: 'call_1', decision: 'deny', scope: 'tool' }, 'A denial applies to this call only'],
      [{ ...good, reason: 7 }, 'reason is a string'],
      [{ ...good, by: 'mallory' }, 'Unknown field "by"'],
    ];
    for (const [body, says] of bad) {
      const refused = await answer(run.id, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.json.error, JSON.stringify(body)).toContain(says);
    }
    const huge = await answer(run.id, { ...good, reason: 'x'.repeat(70_000) });
    expect(huge.status).toBe(413);
    expect(huge.json.error).toContain('larger than 64 KiB');

    const unknown = await answer('nosuchsession', good);
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toBe('No session nosuchsession.');
    expect((await call('/api/sessions/nosuchsession/approvals')).status).toBe(404);
    const notWaiting = await answer(run.id, { toolCallId: 'call_9', decision: 'approve' });
    expect(notWaiting.status).toBe(409);
    expect(notWaiting.json.error).toBe(
      `Call call_9 does not wait for approval in session ${run.id} (waiting: call_1); nothing was recorded.`,
    );
    expect((await call('/api/approvals', { method: 'POST' })).status).toBe(405);

    // Nothing was answered: no answer file, the call still waits, the tool has not run.
    const answersDirectory = join(run.directory, 'approvals');
    expect(existsSync(answersDirectory) ? readdirSync(answersDirectory) : []).toEqual([]);
    expect(pendingIn(run.directory)).toEqual(['call_1']);
    expect(run.ran).toEqual([]);
    expect((await approvals()).map((listed) => listed.toolCallId)).toEqual(['call_1']);
    // An "always this exact call" approval lets it go on.
    const approved = await answer(run.id, { ...good, scope: 'call' });
    expect(approved.json.message).toBe(
      `Approved shell (call call_1) in ${run.id} and this exact call for the rest of the session.`,
    );
    expect((await run.done).status).toBe('completed');
    expect(run.ran).toEqual(['make clean']);
  }, 60_000);

  it('lists the call of a parked session (stopped while it waited, no process left) and takes its answer for the resume', async () => {
    const base = temporarySessions();
    const stop = new AbortController();
    const run = await startApprovalRun(base, 'Tidy the build', ['make clean'], { signal: stop.signal });
    runs.push(run);
    await waitFor('the call waiting', () => pendingIn(run.directory).length > 0);
    stop.abort();
    expect((await run.done).status).toBe('waiting_approval');
    // This test's process is the session's: the dashboard is told it is gone.
    await start(createFileSource(base, { refreshMs: 100, liveness: { isProcessAlive: () => false } }));
    expect(await approvals()).toEqual([
      expect.objectContaining({ sessionId: run.id, sessionStatus: 'parked', toolCallId: 'call_1' }),
    ]);
    const approved = await answer(run.id, { toolCallId: 'call_1', decision: 'approve' });
    expect(approved.status).toBe(200);
    expect(approved.json.message).toBe(
      `Approved shell (call call_1) in ${run.id}; the session is not running (parked): continue it with rho --resume ${run.id} to apply the answer.`,
    );
    // Recorded for the resumed run (the trace has no answer yet): it no longer waits for anyone, and
    // a second answer is told which stands.
    expect(readdirSync(join(run.directory, 'approvals'))).toHaveLength(1);
    expect(pendingIn(run.directory)).toEqual(['call_1']);
    expect(await approvals()).toEqual([]);
    expect(await approvals(`/api/sessions/${run.id}/approvals`)).toEqual([]);
    const second = await answer(run.id, { toolCallId: 'call_1', decision: 'deny' });
    expect(second.status).toBe(409);
    expect(second.json.error).toContain('already answered (approve by dashboard)');
    expect(run.ran).toEqual([]);
  }, 60_000);

  it('answers through any SessionSource that carries approvals, and says 501 for one that does not', async () => {
    const base = temporarySessions();
    const run = await waitingRun(base, ['make clean']);
    const directory = createDirectorySource(base);
    await start(createDashboardSource(directory));
    expect((await approvals()).map((listed) => [listed.sessionId, listed.toolCallId])).toEqual([[run.id, 'call_1']]);
    expect((await answer(run.id, { toolCallId: 'call_1', decision: 'approve', scope: 'tool' })).json).toMatchObject({
      outcome: 'answered',
      message: `Approved shell (call call_1) in ${run.id} and every later shell that matches no dangerous pattern.`,
    });
    expect((await run.done).status).toBe('completed');
    // The call no longer waits: the answer that stands is read from the trace.
    const again = await answer(run.id, { toolCallId: 'call_1', decision: 'deny' });
    expect(again.status).toBe(409);
    expect(again.json.error).toContain('already answered (approve (scope tool) by dashboard)');
    await server!.close();

    const { pendingApprovals: _pending, answerApproval: _answer, ...withoutApprovals } = directory;
    void _pending;
    void _answer;
    const other = await waitingRun(base, ['make dist']);
    server = await startDashboard({ source: createDashboardSource(withoutApprovals as SessionSource) });
    expect((await call('/api/approvals')).json).toEqual({ approvals: [], answerable: false });
    const refused = await answer(other.id, { toolCallId: 'call_1', decision: 'approve' });
    expect(refused.status).toBe(501);
    expect(refused.json.error).toContain('cannot answer approvals');
    expect(pendingIn(other.directory)).toEqual(['call_1']);
    // Let the run end.
    await createDirectorySource(base).answerApproval!(other.id, 'call_1', { decision: 'deny' });
    expect((await other.done).status).toBe('refused');
  }, 60_000);
});
