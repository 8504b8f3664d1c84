import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { judgeLiveness, PARKED_REASON, parkedOrDead, processExists } from './live-status.js';
import { exitedPid } from './test-support/session-fixtures.js';

const now = Date.parse('2026-11-21T12:00:00Z');
const ago = (seconds: number) => new Date(now - seconds * 1000).toISOString();
const noTrace = () => undefined;

describe('judgeLiveness', () => {
  it('passes final statuses through without looking at the process', () => {
    for (const status of ['completed', 'error', 'cancelled', 'limit'] as const) {
      expect(judgeLiveness({ status, pid: exitedPid(), hostname: hostname() }, noTrace, { now })).toEqual({ status });
    }
  });

  it('reads a missing status as completed, like the original', () => {
    expect(judgeLiveness({}, noTrace, { now }).status).toBe('completed');
  });

  it('keeps an active session on this host alive while its pid exists', () => {
    for (const status of ['running', 'paused', 'waiting_approval'] as const) {
      expect(
        judgeLiveness({ status, pid: process.pid, hostname: hostname(), heartbeat_at: ago(2) }, noTrace, { now }),
      ).toEqual({ status });
    }
  });

  it('calls an active session on this host dead when its pid is gone, whatever the heartbeat says', () => {
    const verdict = judgeLiveness(
      { status: 'running', pid: exitedPid(), hostname: hostname(), heartbeat_at: ago(1) },
      noTrace,
      { now },
    );
    expect(verdict.status).toBe('dead');
    expect(verdict.reason).toMatch(/process \d+ is gone/);
  });

  it('takes a live pid with a very old heartbeat for a reused pid', () => {
    expect(
      judgeLiveness({ status: 'running', pid: process.pid, hostname: hostname(), heartbeat_at: ago(3600) }, noTrace, {
        now,
      }).status,
    ).toBe('dead');
  });

  it('judges sessions on other hosts by their heartbeat only', () => {
    const probe = () => {
      throw new Error('must not probe a pid of another host');
    };
    expect(
      judgeLiveness({ status: 'running', pid: 1, hostname: 'elsewhere', heartbeat_at: ago(10) }, noTrace, {
        now,
        isProcessAlive: probe,
      }).status,
    ).toBe('running');
    const stale = judgeLiveness({ status: 'running', pid: 1, hostname: 'elsewhere', heartbeat_at: ago(31) }, noTrace, {
      now,
      isProcessAlive: probe,
    });
    expect(stale.status).toBe('dead');
    expect(stale.reason).toContain('elsewhere');
    expect(
      judgeLiveness({ status: 'paused', heartbeat_at: ago(31) }, noTrace, { now, heartbeatStaleMs: 60_000 }).status,
    ).toBe('paused');
  });

  it('judges Python sessions (no pid, no heartbeat) by the age of their trace', () => {
    expect(judgeLiveness({ status: 'running', started_at: ago(7200) }, () => now - 10_000, { now }).status).toBe(
      'running',
    );
    expect(judgeLiveness({ status: 'running', started_at: ago(7200) }, () => now - 400_000, { now }).status).toBe(
      'dead',
    );
    // No trace yet: the start time stands in for it.
    expect(judgeLiveness({ status: 'running', started_at: ago(5) }, noTrace, { now }).status).toBe('running');
    expect(judgeLiveness({ status: 'running', started_at: ago(3600) }, noTrace, { now }).status).toBe('dead');
  });

  it('does not stat the trace when the pid or the heartbeat decides', () => {
    let stats = 0;
    const trace = () => {
      stats += 1;
      return now;
    };
    judgeLiveness({ status: 'running', pid: process.pid, hostname: hostname() }, trace, { now });
    judgeLiveness({ status: 'running', heartbeat_at: ago(1) }, trace, { now });
    judgeLiveness({ status: 'completed' }, trace, { now });
    expect(stats).toBe(0);
  });
});

describe('processExists', () => {
  it('tells a running process from an exited one', () => {
    expect(processExists(process.pid)).toBe(true);
    expect(processExists(exitedPid())).toBe(false);
    expect(processExists(0)).toBe(false);
    expect(processExists(-5)).toBe(false);
  });
});

describe('parkedOrDead', () => {
  it("says parked, and how to go on, for a waiting session whose process is gone, and keeps a fleet's parked", () => {
    expect(parkedOrDead('waiting_approval', { status: 'dead', reason: 'process 42 is gone' })).toEqual({
      status: 'parked',
      reason: PARKED_REASON,
    });
    expect(parkedOrDead('waiting_approval', { status: 'parked' })).toEqual({ status: 'parked', reason: PARKED_REASON });
    expect(
      judgeLiveness({ status: 'waiting_approval', pid: exitedPid(), hostname: hostname() }, noTrace, { now }),
    ).toEqual({
      status: 'parked',
      reason: PARKED_REASON,
    });
  });

  it('leaves every other verdict as it is', () => {
    expect(parkedOrDead('running', { status: 'dead', reason: 'process 42 is gone' })).toEqual({
      status: 'dead',
      reason: 'process 42 is gone',
    });
    expect(parkedOrDead('waiting_approval', { status: 'waiting_approval' })).toEqual({ status: 'waiting_approval' });
  });
});
