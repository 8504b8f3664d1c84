// The control-channel conformance suite: the contract of core's ControlChannel and
// OperatorChannel (control-channel.ts, operator-channel.ts), run against every implementation
// (the file channel of a session directory and the PostgreSQL channel of a fleet). An
// implementation over a network sees an operator's request once it is delivered (the
// PostgreSQL one: at the NOTIFY, within milliseconds), so requests are awaited with `eventually`;
// for the file channel that is immediate.
import { ConfigError } from '@rho/core';
import type { ControlChannel, OperatorChannel } from '@rho/core';
import { expect, it } from 'vitest';
import { eventually } from './postgres.js';

/** One session of an implementation under test. */
export interface ConformanceSession {
  /** The agent's side. */
  agent: ControlChannel;
  /** A new operator (each call: another operator, as another `rho` process would be). */
  operator(): OperatorChannel;
  /** Puts something that is not a directive in the queue, the way a hand-written entry would. */
  appendInvalid(raw: string): Promise<void>;
  /** Empties the queue and starts it over (a cursor past its end must then start over at 0). */
  resetQueue(): Promise<void>;
  /** A second agent side of the same session (another process after a restart). */
  reopenAgent(): Promise<ControlChannel>;
}

/** Registers the conformance tests for an implementation. `create` makes a fresh session per test. */
export function controlChannelConformance(create: () => Promise<ConformanceSession>): void {
  it('cancel: true once requested until the agent clears it; asking again is unchanged', async () => {
    const session = await create();
    expect(await session.agent.isCancelRequested()).toBe(false);
    expect(await session.operator().requestCancel()).toBe('requested');
    await eventually(() => session.agent.isCancelRequested(), 'the cancel to reach the agent');
    expect(await session.operator().requestCancel()).toBe('unchanged');
    expect(await session.agent.isCancelRequested()).toBe(true);
    await session.agent.clearCancel();
    expect(await session.agent.isCancelRequested()).toBe(false);
    // A cleared cancel stays cleared (no stale read brings it back), and a new one is a new request.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await session.agent.isCancelRequested()).toBe(false);
    expect(await session.operator().requestCancel()).toBe('requested');
    await eventually(() => session.agent.isCancelRequested(), 'the second cancel');
  });

  it('pause and resume: held while paused, going on after resume; resume without pause is unchanged', async () => {
    const session = await create();
    expect(await session.operator().requestResume()).toBe('unchanged');
    expect(await session.operator().requestPause()).toBe('requested');
    expect(await session.operator().requestPause()).toBe('unchanged');
    await eventually(() => session.agent.isPauseRequested(), 'the pause to reach the agent');
    expect(await session.agent.isCancelRequested()).toBe(false);
    expect(await session.operator().requestResume()).toBe('requested');
    await eventually(async () => !(await session.agent.isPauseRequested()), 'the resume to reach the agent');
    expect(await session.operator().requestResume()).toBe('unchanged');
    // A cancel still reaches a paused session.
    await session.operator().requestPause();
    await session.operator().requestCancel();
    await eventually(
      async () => (await session.agent.isPauseRequested()) && (await session.agent.isCancelRequested()),
      'pause and cancel together',
    );
  });

  it('concurrent requests from several operators are counted once', async () => {
    const session = await create();
    for (const request of ['requestCancel', 'requestPause'] as const) {
      const outcomes = await Promise.all(Array.from({ length: 8 }, () => session.operator()[request]()));
      expect(outcomes.filter((outcome) => outcome === 'requested')).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome === 'unchanged')).toHaveLength(7);
    }
    const resumes = await Promise.all(Array.from({ length: 8 }, () => session.operator().requestResume()));
    expect(resumes.filter((outcome) => outcome === 'requested')).toHaveLength(1);
  });

  it('directives from concurrent senders are each delivered exactly once, in each sender’s order', async () => {
    const session = await create();
    const senders = 4;
    const each = 15;
    const delivered: string[] = [];
    let cursor = 0;
    let sending = true;
    const reader = (async () => {
      while (sending || delivered.length < senders * each) {
        const taken = await session.agent.takeDirectives(cursor);
        delivered.push(...taken.texts);
        cursor = taken.cursor;
        if (delivered.length >= senders * each) break;
        await new Promise((resolve) => setTimeout(resolve, 3));
      }
    })();
    await Promise.all(
      Array.from({ length: senders }, async (_, sender) => {
        const operator = session.operator();
        for (let index = 0; index < each; index += 1) await operator.sendDirective(`sender ${sender} #${index}`);
      }),
    );
    sending = false;
    await reader;
    expect(delivered).toHaveLength(senders * each);
    expect(new Set(delivered).size).toBe(senders * each);
    for (let sender = 0; sender < senders; sender += 1) {
      const mine = delivered.filter((text) => text.startsWith(`sender ${sender} `));
      expect(mine).toEqual(Array.from({ length: each }, (_, index) => `sender ${sender} #${index}`));
    }
    // Nothing more after the last cursor.
    const after = await session.agent.takeDirectives(cursor);
    expect(after.texts).toEqual([]);
    expect(after.cursor).toBe(cursor);
  });

  it('cursors: each item carries the cursor past it; resuming from any of them neither loses nor repeats', async () => {
    const session = await create();
    const operator = session.operator();
    for (const text of ['one', 'two', 'three']) await operator.sendDirective(text);
    const first = await session.agent.takeDirectives(0);
    expect(first.texts).toEqual(['one', 'two', 'three']);
    const items = first.items ?? [];
    expect(items.map((item) => item.text)).toEqual(['one', 'two', 'three']);
    expect(items[2]!.cursor).toBe(first.cursor);
    expect(items[0]!.cursor).toBeLessThan(items[1]!.cursor);
    // A crash after recording the first directive: the next process resumes from its cursor.
    const reopened = await session.reopenAgent();
    expect((await reopened.takeDirectives(items[0]!.cursor)).texts).toEqual(['two', 'three']);
    expect((await reopened.takeDirectives(first.cursor)).texts).toEqual([]);
    await operator.sendDirective('four');
    const later = await reopened.takeDirectives(first.cursor);
    expect(later.texts).toEqual(['four']);
    expect(later.cursor).toBeGreaterThan(first.cursor);
  });

  it('a cursor past the end of the queue (the queue was reset) starts over at 0', async () => {
    const session = await create();
    const operator = session.operator();
    await operator.sendDirective('old one');
    await operator.sendDirective('old two');
    const before = await session.agent.takeDirectives(0);
    await session.resetQueue();
    await operator.sendDirective('new');
    const after = await session.agent.takeDirectives(before.cursor);
    expect(after.texts).toEqual(['new']);
  });

  it('entries that are not directives are returned refused and never delivered', async () => {
    const session = await create();
    const operator = session.operator();
    await operator.sendDirective('before');
    await session.appendInvalid('{"not": "a directive"}');
    await operator.sendDirective('after');
    const taken = await session.agent.takeDirectives(0);
    expect(taken.texts).toEqual(['before', 'after']);
    const refused = (taken.items ?? []).filter((item) => item.refused !== undefined);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.refused).toMatch(/not \{"text": string\}/);
    await expect(operator.sendDirective('   ')).rejects.toSatisfy((error) => ConfigError.isInstance(error));
  });

  it('status and heartbeat never fail the agent', async () => {
    const session = await create();
    await expect(session.agent.heartbeat()).resolves.toBeUndefined();
    await expect(session.agent.reportStatus('paused')).resolves.toBeUndefined();
    await expect(session.agent.reportStatus('running')).resolves.toBeUndefined();
  });
}
