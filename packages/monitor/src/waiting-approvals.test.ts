import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '@rho/core';
import { describe, expect, it } from 'vitest';
import { createDirectorySource } from './directory-source.js';
import type { SessionSource } from './session-source.js';
import { listWaitingApprovals } from './waiting-approvals.js';
import { exitedPid, liveHere, makeSession, temporarySessions } from './test-support/session-fixtures.js';

const requested = (id: string, ts: string, extra: Record<string, unknown> = {}) => ({
  type: 'approval_requested',
  ts,
  tool_call_id: id,
  tool_name: 'bash',
  tool_args: { command: `echo ${id}` },
  reason: 'bash needs approval (profile developer)',
  ...extra,
});

/** The model's response that asked for these bash calls (a waiting call is one of the last response's). */
const asked = (...ids: string[]) => ({
  type: 'message',
  ts: '2026-12-02T09:00:00.000Z',
  role: 'assistant',
  content: null,
  tool_calls: ids.map((id) => ({
    id,
    type: 'function',
    function: { name: 'bash', arguments: JSON.stringify({ command: `echo ${id}` }) },
  })),
});

describe('listWaitingApprovals', () => {
  it('lists every waiting call of the waiting and parked sessions, the longest-waiting first', async () => {
    const base = temporarySessions();
    makeSession(base, { id: 'live0001', status: 'waiting_approval', ...liveHere() }, [
      asked('call_late'),
      requested('call_late', '2026-12-02T10:05:00.000Z', {
        dangerous: 'rm -rf',
        expires_at: '2026-12-02T11:05:00.000Z',
        on_timeout: 'deny',
      }),
    ]);
    makeSession(base, { id: 'park0001', status: 'waiting_approval', pid: exitedPid(), hostname: liveHere().hostname }, [
      asked('call_answered', 'call_early'),
      requested('call_answered', '2026-12-02T09:00:00.000Z'),
      {
        type: 'approval_answered',
        ts: '2026-12-02T09:01:00.000Z',
        tool_call_id: 'call_answered',
        tool_name: 'bash',
        decision: 'approve',
        scope: 'once',
        source: 'operator',
      },
      { type: 'message', ts: '2026-12-02T09:01:01.000Z', role: 'tool', tool_call_id: 'call_answered', content: 'ok' },
      requested('call_early', '2026-12-02T10:00:00.000Z'),
    ]);
    // Finished and running sessions are not looked at, whatever their traces hold.
    makeSession(base, { id: 'done0001', status: 'completed' }, [
      asked('call_old'),
      requested('call_old', '2026-12-01T00:00:00.000Z'),
    ]);
    makeSession(base, { id: 'runs0001', status: 'running', ...liveHere() });

    const { calls, unreadable } = await listWaitingApprovals(createDirectorySource(base));
    expect(unreadable).toEqual([]);
    expect(calls.map((call) => [call.session.id, call.session.status, call.toolCallId])).toEqual([
      ['park0001', 'parked', 'call_early'],
      ['live0001', 'waiting_approval', 'call_late'],
    ]);
    expect(calls[1]).toMatchObject({
      toolName: 'bash',
      arguments: { command: 'echo call_late' },
      reason: 'bash needs approval (profile developer)',
      dangerous: 'rm -rf',
      requestedAt: '2026-12-02T10:05:00.000Z',
      expiresAt: '2026-12-02T11:05:00.000Z',
      onTimeout: 'deny',
    });
    expect(calls[0]!.dangerous).toBeUndefined();
    // The filter narrows the sessions looked at.
    expect((await listWaitingApprovals(createDirectorySource(base), { idPrefix: 'live' })).calls).toHaveLength(1);
  });

  it('reports a waiting session whose trace cannot be read, and lists the others', async () => {
    const base = temporarySessions();
    makeSession(base, { id: 'good0001', status: 'waiting_approval', ...liveHere() }, [
      asked('call_1'),
      requested('call_1', '2026-12-02T10:00:00.000Z'),
    ]);
    const broken = makeSession(base, { id: 'bad00001', status: 'waiting_approval', ...liveHere() });
    rmSync(join(broken, 'trace.jsonl'), { force: true });
    mkdirSync(join(broken, 'trace.jsonl'));
    const { calls, unreadable } = await listWaitingApprovals(createDirectorySource(base));
    expect(calls.map((call) => call.toolCallId)).toEqual(['call_1']);
    expect(unreadable).toEqual([{ sessionId: 'bad00001', reason: expect.stringContaining('EISDIR') }]);
  });

  it('refuses a source that cannot carry approvals', async () => {
    const { pendingApprovals: _, ...rest } = createDirectorySource(temporarySessions());
    void _;
    await expect(listWaitingApprovals(rest as SessionSource)).rejects.toSatisfy(
      (error) => ConfigError.isInstance(error) && (error as ConfigError).code === 'approval_unsupported',
    );
  });
});
