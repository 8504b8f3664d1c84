import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControlChannel, SessionStatus, TakenDirectives } from '@rho/core';
import { FileOperatorChannel } from '@rho/core';
import { FileControlChannel } from '@rho/core/internal';
import { describe, expect, it } from 'vitest';
import { CompositeControlChannel, joinCursor, splitCursor } from './composite-control.js';

/** An in-memory fleet side keeping the ControlChannel contract (cursor = sequence number of the last directive). */
class MemoryChannel implements ControlChannel {
  directives: string[] = [];
  cancel = false;
  pause = false;
  failing = false;
  statuses: SessionStatus[] = [];
  heartbeats = 0;

  private check(): void {
    if (this.failing) throw new Error('the database went away');
  }
  async isCancelRequested(): Promise<boolean> {
    this.check();
    return this.cancel;
  }
  async isPauseRequested(): Promise<boolean> {
    this.check();
    return this.pause;
  }
  async takeDirectives(cursor: number): Promise<TakenDirectives> {
    this.check();
    const start = cursor > this.directives.length ? 0 : cursor;
    const items = this.directives.slice(start).map((text, index) => ({ text, cursor: start + index + 1 }));
    return { texts: items.map((item) => item.text), cursor: start + items.length, items };
  }
  async clearCancel(): Promise<void> {
    this.check();
    this.cancel = false;
  }
  async heartbeat(): Promise<void> {
    this.check();
    this.heartbeats += 1;
  }
  async reportStatus(status: SessionStatus): Promise<void> {
    this.check();
    this.statuses.push(status);
  }
}

function setup(attached = true) {
  const directory = mkdtempSync(join(tmpdir(), 'rho-composite-'));
  const fleet = new MemoryChannel();
  const state = { attached };
  const channel = new CompositeControlChannel(new FileControlChannel(directory), () =>
    state.attached ? fleet : undefined,
  );
  return { channel, fleet, state, operator: new FileOperatorChannel(directory) };
}

describe('the composite control channel (file and fleet)', () => {
  it('delivers directives from both queues, each once, under one cursor a later call continues from', async () => {
    const { channel, fleet, operator } = setup();
    await operator.sendDirective('from the file');
    fleet.directives.push('from the fleet 1', 'from the fleet 2');
    const first = await channel.takeDirectives(0);
    expect(first.texts).toEqual(['from the file', 'from the fleet 1', 'from the fleet 2']);
    // Each item's cursor is just past it in its own queue, with the other queue's position kept.
    const positions = first.items!.map((item) => splitCursor(item.cursor));
    expect(positions.map((position) => position.fleet)).toEqual([0, 1, 2]);
    expect(positions[0]!.file).toBeGreaterThan(0);
    expect(positions[1]!.file).toBe(positions[0]!.file);
    expect(splitCursor(first.cursor)).toEqual({ file: positions[0]!.file, fleet: 2 });
    expect((await channel.takeDirectives(first.cursor)).texts).toEqual([]);
    // Resuming from a cursor recorded in the middle of the batch repeats nothing before it.
    expect((await channel.takeDirectives(first.items![1]!.cursor)).texts).toEqual(['from the fleet 2']);
    await operator.sendDirective('later, from the file');
    fleet.directives.push('later, from the fleet');
    expect((await channel.takeDirectives(first.cursor)).texts).toEqual([
      'later, from the file',
      'later, from the fleet',
    ]);
  });

  it('keeps the fleet part of the cursor while the fleet is away, and catches up once it is back', async () => {
    const { channel, fleet, state, operator } = setup();
    fleet.directives.push('one');
    const taken = await channel.takeDirectives(0);
    state.attached = false;
    fleet.directives.push('two');
    await operator.sendDirective('local while away');
    const away = await channel.takeDirectives(taken.cursor);
    expect(away.texts).toEqual(['local while away']);
    expect(splitCursor(away.cursor).fleet).toBe(1);
    state.attached = true;
    fleet.failing = true;
    // A failing fleet side is "nothing", not an error of the agent's.
    expect((await channel.takeDirectives(away.cursor)).texts).toEqual([]);
    expect(await channel.isCancelRequested()).toBe(false);
    await expect(channel.heartbeat()).resolves.toBeUndefined();
    fleet.failing = false;
    expect((await channel.takeDirectives(away.cursor)).texts).toEqual(['two']);
  });

  it('is cancelled or paused when either side asks, and clears and reports to both', async () => {
    const { channel, fleet, operator } = setup();
    expect(await channel.isCancelRequested()).toBe(false);
    fleet.pause = true;
    expect(await channel.isPauseRequested()).toBe(true);
    fleet.pause = false;
    await operator.requestPause();
    expect(await channel.isPauseRequested()).toBe(true);
    await operator.requestCancel();
    fleet.cancel = true;
    expect(await channel.isCancelRequested()).toBe(true);
    await channel.clearCancel();
    expect(await channel.isCancelRequested()).toBe(false);
    await channel.reportStatus('paused');
    expect(fleet.statuses).toEqual(['paused']);
  });

  it('reads a plain file cursor (a run without a fleet) as the file part, and refuses cursors it cannot hold', () => {
    expect(splitCursor(123)).toEqual({ file: 123, fleet: 0 });
    expect(joinCursor(123, 0)).toBe(123);
    expect(splitCursor(joinCursor(77, 5))).toEqual({ file: 77, fleet: 5 });
    expect(() => joinCursor(0, 2 ** 21)).toThrow(RangeError);
  });
});
