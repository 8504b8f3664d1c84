import { realpathSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sessionArguments } from './session-runner.js';
import { taskAllowlist, taskRefusal } from './task-allowlist.js';
import { taskApprovalWait } from './task-approvals.js';
import { attemptOutcome } from './task-outcome.js';
import { parseTaskSpec } from './task-spec.js';

const now = new Date('2026-01-01T00:00:00Z');
const start = now.getTime();
const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'rho-approvals-')));
const HOUR = 3_600_000;

describe('tasks whose calls wait for approval', () => {
  it('checks approval_timeout and on_timeout, which apply only with auto_approve false', () => {
    const task = parseTaskSpec(
      { prompt: 'x', auto_approve: false, approval_timeout: '20m', on_timeout: 'deny' },
      't:1',
      now,
    );
    expect(task).toMatchObject({ approval_timeout: '20m', on_timeout: 'deny' });
    expect(() => parseTaskSpec({ prompt: 'x', auto_approve: false, approval_timeout: 'soon' }, 't:2')).toThrow(
      "t:2: approval_timeout: 'soon' is not a duration like 90s, 30m or 2h.",
    );
    expect(() => parseTaskSpec({ prompt: 'x', auto_approve: false, on_timeout: 'maybe' }, 't:3')).toThrow(
      "t:3: on_timeout: 'maybe' is neither deny nor approve.",
    );
    expect(() => parseTaskSpec({ prompt: 'x', approval_timeout: '5m' }, 't:4')).toThrow(
      /t:4: approval_timeout: applies to a task with auto_approve: false/,
    );
  });

  it('waits the worker longest (1h by default) without a deadline, and what the task asks within it', () => {
    const allow = taskAllowlist({}, cwd);
    const plain = parseTaskSpec({ prompt: 'x', auto_approve: false }, 't');
    expect(taskApprovalWait(plain, allow, { deadline: null, startedAt: start })).toEqual({
      timeoutMs: HOUR,
      // pg-boss ends an attempt after 24 hours: a minute before that, no call waits.
      deadline: new Date(start + 24 * HOUR - 60_000).toISOString(),
      onTimeout: 'deny',
    });
    const asked = parseTaskSpec({ prompt: 'x', auto_approve: false, approval_timeout: '90s' }, 't');
    expect(taskApprovalWait(asked, allow, { deadline: null, startedAt: start })?.timeoutMs).toBe(90_000);
    // Approved tasks and eval questions never wait.
    expect(taskApprovalWait(parseTaskSpec({ prompt: 'x' }, 't'), allow, { deadline: null, startedAt: start })).toBe(
      undefined,
    );
  });

  it('never waits past a moment a little before the deadline (a tenth of the time left, 5 s to 60 s)', () => {
    const allow = taskAllowlist({ maxApprovalWaitMs: 4 * HOUR }, cwd);
    const spec = parseTaskSpec({ prompt: 'x', auto_approve: false, approval_timeout: '3h' }, 't');
    const wait = (ms: number) => taskApprovalWait(spec, allow, { deadline: new Date(start + ms), startedAt: start })!;
    expect(wait(2 * HOUR)).toMatchObject({
      timeoutMs: 2 * HOUR - 60_000,
      deadline: new Date(start + 2 * HOUR - 60_000).toISOString(),
    });
    expect(wait(200_000)).toMatchObject({ timeoutMs: 180_000 });
    expect(wait(30_000)).toMatchObject({ timeoutMs: 25_000, deadline: new Date(start + 25_000).toISOString() });
    // A deadline that has all but passed: the shortest wait the CLI takes, and a deadline now.
    expect(wait(2_000)).toMatchObject({ timeoutMs: 1000, deadline: now.toISOString() });
  });

  it('starts the session waiting, with the bounded timeout and what a timeout answers', () => {
    const spec = parseTaskSpec({ prompt: 'x', auto_approve: false, on_timeout: 'approve' }, 't');
    const args = sessionArguments(spec, { timeoutMs: 25_500, deadline: now.toISOString(), onTimeout: 'approve' });
    expect(args.slice(3)).toEqual([
      '--when-unattended',
      'wait',
      '--approval-timeout',
      '25s',
      '--on-timeout',
      'approve',
    ]);
    expect(sessionArguments(parseTaskSpec({ prompt: 'x' }, 't')).slice(3)).toEqual(['--auto-approve']);
  });

  it('refuses on_timeout approve unless the worker allows it, and a wait longer than it allows', () => {
    const narrow = taskAllowlist({}, cwd);
    const approving = parseTaskSpec({ prompt: 'x', auto_approve: false, on_timeout: 'approve' }, 't');
    expect(taskRefusal(approving, narrow)).toMatch(
      /^on_timeout approve is not allowed on this worker .*--allow-approve-on-timeout/,
    );
    expect(taskRefusal(approving, taskAllowlist({ approveOnTimeout: true }, cwd))).toBeUndefined();
    const long = parseTaskSpec({ prompt: 'x', auto_approve: false, approval_timeout: '2h' }, 't');
    expect(taskRefusal(long, narrow)).toBe(
      'approval_timeout 2h is longer than this worker lets a call wait for approval (1h; start it with --max-approval-wait 2h to allow it)',
    );
    expect(taskRefusal(long, taskAllowlist({ maxApprovalWaitMs: 2 * HOUR }, cwd))).toBeUndefined();
    expect(() => taskAllowlist({ maxApprovalWaitMs: 10 }, cwd)).toThrow(/at least 1s/);
  });

  it('reports a session parked at a waiting call as parked, with how to answer, and a refused run as failed', () => {
    const parked = attemptOutcome(
      undefined,
      {
        status: 'waiting_approval',
        exit_code: 4,
        session_id: 'abcd1234',
        pending_approval: { tool_call_id: 'call_1', tool_name: 'bash' },
      },
      'node-a',
    );
    expect(parked.state).toBe('failed');
    expect(parked.result.error).toBe(
      'the session abcd1234 stopped on node-a while call call_1 (bash) waited for approval; it is parked, not done, and the queue does not run it again: answer with rho approve abcd1234 or rho deny abcd1234 (on node-a, or any node of its fleet), then continue it on node-a with rho --resume abcd1234',
    );
    expect(attemptOutcome(undefined, { status: 'refused' }, 'h').state).toBe('failed');
    expect(attemptOutcome(undefined, { status: 'completed' }, 'h').state).toBe('done');
    expect(attemptOutcome('expired', { status: 'waiting_approval' }, 'h')).toMatchObject({
      state: 'expired',
      result: { status: 'expired' },
    });
    expect(attemptOutcome('cancelled', { status: 'cancelled' }, 'h').state).toBe('cancelled');
  });
});
