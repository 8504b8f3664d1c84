import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import type { ControlChannel, TakenDirectives } from './control-channel.js';
import type { SessionStatus } from './events.js';
import type { ControlOutcome, OperatorChannel } from './operator-channel.js';
import { State } from './state.js';
import { createScriptedModelClient } from './testing/scripted-model-client.js';

/**
 * Both sides of a control channel in memory, written from the interfaces' contract alone: what a
 * second implementation (a database for fleets) would be. The session must need nothing else.
 */
function memoryChannel() {
  const shared = {
    cancel: false,
    pause: false,
    queue: [] as string[],
    statuses: [] as SessionStatus[],
    clears: 0,
    takes: [] as number[],
  };
  const agent: ControlChannel & { onStatus?: (status: SessionStatus) => void } = {
    async isCancelRequested() {
      return shared.cancel;
    },
    async isPauseRequested() {
      return shared.pause;
    },
    async takeDirectives(cursor): Promise<TakenDirectives> {
      shared.takes.push(cursor);
      const start = cursor > shared.queue.length ? 0 : cursor;
      const items = shared.queue.slice(start).map((text, index) => ({
        text,
        cursor: start + index + 1,
        ...(text.startsWith('!') ? { refused: 'starts with !' } : {}),
      }));
      return {
        texts: items.filter((item) => item.refused === undefined).map((item) => item.text),
        cursor: shared.queue.length,
        items,
      };
    },
    async clearCancel() {
      shared.clears += 1;
      shared.cancel = false;
    },
    async heartbeat() {},
    async reportStatus(status) {
      shared.statuses.push(status);
      agent.onStatus?.(status);
    },
  };
  const operator: OperatorChannel = {
    async requestCancel(): Promise<ControlOutcome> {
      if (shared.cancel) return 'unchanged';
      shared.cancel = true;
      return 'requested';
    },
    async requestPause(): Promise<ControlOutcome> {
      if (shared.pause) return 'unchanged';
      shared.pause = true;
      return 'requested';
    },
    async requestResume(): Promise<ControlOutcome> {
      if (!shared.pause) return 'unchanged';
      shared.pause = false;
      return 'requested';
    },
    async sendDirective(text) {
      shared.queue.push(text);
    },
  };
  return { shared, agent, operator };
}

const userTexts = (request: { messages: { role: string; content?: unknown }[] }) =>
  request.messages.filter((message) => message.role === 'user').map((message) => String(message.content));

describe('the control channel seam (another implementation than files)', () => {
  it('holds a paused session, reports paused then running through the channel, and goes on when resumed', async () => {
    const { shared, agent, operator } = memoryChannel();
    await operator.requestPause();
    // The operator resumes once the session says it holds.
    agent.onStatus = (status) => {
      if (status === 'paused') void operator.requestResume();
    };
    const client = createScriptedModelClient({ steps: [{ text: 'done' }] });
    const session = new Agent({ client }).createSession({ control: agent, pollIntervalMs: 5 });
    const result = await session.run('work');
    expect(result.status).toBe('completed');
    expect(shared.statuses).toEqual(['paused', 'running']);
    client.assertDone();
  });

  it('ends a cancelled run before any model call and clears the request once it stopped', async () => {
    const { shared, agent, operator } = memoryChannel();
    expect(await operator.requestCancel()).toBe('requested');
    expect(await operator.requestCancel()).toBe('unchanged');
    const client = createScriptedModelClient({ steps: [] });
    const result = await new Agent({ client }).createSession({ control: agent, pollIntervalMs: 5 }).run('work');
    expect(result.status).toBe('cancelled');
    expect(client.requests).toHaveLength(0);
    expect(shared).toMatchObject({ cancel: false, clears: 1 });
  });

  it('delivers each directive exactly once by its cursor, also to a session resumed from its trace', async () => {
    const { shared, agent, operator } = memoryChannel();
    await operator.sendDirective('first');
    await operator.sendDirective('!not a directive');
    await operator.sendDirective('second');
    const tracePath = join(mkdtempSync(join(tmpdir(), 'rho-control-')), 'trace.jsonl');
    const client = createScriptedModelClient({ steps: [{ text: 'one' }, { text: 'two' }] });
    const session = new Agent({ client }).createSession({ control: agent, tracePath, pollIntervalMs: 5 });
    await session.run('start');
    expect(userTexts(client.requests[0]!)).toEqual([
      'start',
      '[Operator directive] first',
      '[Operator directive] second',
    ]);
    const refused = readFileSync(tracePath, 'utf8')
      .split('\n')
      .filter((line) => line.includes('directive_refused'));
    expect(refused).toHaveLength(1);
    await operator.sendDirective('third');
    await session.run('again');
    expect(userTexts(client.requests[1]!).slice(3)).toEqual(['again', '[Operator directive] third']);
    client.assertDone();
    expect(shared.takes).toEqual([0, 3]);

    // A new process: the cursor comes back from the trace, so nothing is delivered twice.
    const replayed = State.fromJsonl(readFileSync(tracePath));
    expect(replayed.directiveCursor).toBe(4);
    const resumedClient = createScriptedModelClient({ steps: [{ text: 'three' }] });
    await new Agent({ client: resumedClient })
      .createSession({ control: agent, state: replayed, pollIntervalMs: 5 })
      .run('later');
    expect(userTexts(resumedClient.requests[0]!).filter((text) => text.startsWith('[Operator directive]'))).toEqual([
      '[Operator directive] first',
      '[Operator directive] second',
      '[Operator directive] third',
    ]);
    expect(shared.takes.at(-1)).toBe(4);
  });
});
