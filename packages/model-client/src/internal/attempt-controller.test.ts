import { describe, expect, it } from 'vitest';
import { AttemptController } from './attempt-controller.js';

const aborted = (signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('AttemptController', () => {
  it('fires the idle watchdog once chunks stop, after many re-arms, even when the first-byte limit was longer', async () => {
    // Armed first with a 60 s first-byte limit: the timer set then must not hide the 40 ms idle limit.
    const controller = new AttemptController(60_000, 40, undefined);
    controller.answered();
    for (let chunk = 0; chunk < 50; chunk += 1) controller.arm();
    await aborted(controller.signal);
    expect(controller.timedOut).toBe('idle');
    expect(controller.timeoutMs).toBe(40);
    expect(String(controller.signal.reason)).toContain('no response for 40 ms');
    controller.dispose();
  });

  it('fires the first-byte watchdog when nothing arrives', async () => {
    const controller = new AttemptController(30, 60_000, undefined);
    await aborted(controller.signal);
    expect(controller.timedOut).toBe('first_byte');
    controller.dispose();
  });

  it('never fires while paused, and fires again once re-armed', async () => {
    const controller = new AttemptController(60_000, 20, undefined);
    controller.answered();
    controller.arm();
    controller.pause();
    await sleep(100);
    expect(controller.signal.aborted).toBe(false);
    controller.arm();
    await aborted(controller.signal);
    expect(controller.timedOut).toBe('idle');
    controller.dispose();
  });

  it('follows the caller signal and fires nothing after dispose', async () => {
    const caller = new AbortController();
    const controller = new AttemptController(20, 20, caller.signal);
    controller.dispose();
    await sleep(80);
    expect(controller.signal.aborted).toBe(false);
    const second = new AttemptController(60_000, 60_000, caller.signal);
    caller.abort(new Error('stop'));
    expect(second.signal.aborted).toBe(true);
    expect(second.timedOut).toBeUndefined();
    second.dispose();
  });
});
