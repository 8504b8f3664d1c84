import { describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import { createDelegateTool } from './delegate-tool.js';
import type { SessionEvent } from './events.js';
import type { ObservedChildSession, SessionObserver } from './session-observer.js';
import { createScriptedModelClient } from './testing/scripted-model-client.js';
import { defineTool } from './tool.js';

const slow = defineTool({
  name: 'slow',
  description: 'Takes a while.',
  parameters: { type: 'object', properties: { ms: { type: 'number' } }, required: ['ms'] },
  annotations: { readOnly: true },
  async handle({ arguments: { ms } }, context) {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { content: `slept ${ms} (call ${context.toolCallId})`, success: true };
  },
});

function recorder(
  children: ObservedChildSession[],
  childEvents: SessionEvent[][],
): SessionObserver & { events: SessionEvent[] } {
  const events: SessionEvent[] = [];
  return {
    events,
    onEvent: (event) => events.push(event),
    onChildSession(child) {
      children.push(child);
      const own: SessionEvent[] = [];
      childEvents.push(own);
      return { onEvent: (event) => own.push(event) };
    },
  };
}

describe('session observers', () => {
  it('see every event of a run, and are asked for an observer of each child, with the tool call that started it', async () => {
    const client = createScriptedModelClient({
      model: 'm',
      steps: [
        { toolCalls: [{ id: 'd1', name: 'delegate', arguments: { instruction: 'Sleep a bit.' } }] },
        { toolCalls: [{ id: 's1', name: 'slow', arguments: { ms: 1 } }] },
        { text: 'Slept.' },
        { text: 'Done.' },
      ],
    });
    const agent = new Agent({ tools: [slow, createDelegateTool()], client });
    const session = agent.createSession();
    const children: ObservedChildSession[] = [];
    const childEvents: SessionEvent[][] = [];
    const observer = recorder(children, childEvents);
    const detach = session.observe(observer);
    // An observer that throws breaks nothing.
    session.observe({
      onEvent: () => {
        throw new Error('observer bug');
      },
      onChildSession: () => {
        throw new Error('observer bug');
      },
    });
    expect(session.observers).toHaveLength(2);
    const viaOnEvent: SessionEvent[] = [];
    const result = await session.run('Delegate a nap.', { onEvent: (event) => viaOnEvent.push(event) });
    expect(result.status).toBe('completed');
    client.assertDone();

    // Observers get exactly what a run's onEvent gets, from run_start to run_end.
    expect(observer.events).toEqual(viaOnEvent);
    expect(observer.events[0]?.type).toBe('run_start');
    expect(observer.events.at(-1)?.type).toBe('run_end');
    expect(children).toHaveLength(1);
    expect(children[0]).toMatchObject({ parentSessionId: session.id, toolCallId: 'd1', toolName: 'delegate' });
    const childTypes = childEvents[0]!.map((event) => event.type);
    expect(childTypes[0]).toBe('run_start');
    expect(childTypes.at(-1)).toBe('run_end');
    const childToolStart = childEvents[0]!.find((event) => event.type === 'tool_start');
    expect(childToolStart).toMatchObject({ tool_call_id: 's1', tool_name: 'slow' });
    const childToolResult = childEvents[0]!.find((event) => event.type === 'message' && event.role === 'tool');
    expect(childToolResult).toMatchObject({ content: 'slept 1 (call s1)' });

    // Detached, it sees nothing more.
    detach();
    expect(session.observers).toHaveLength(1);
    const seen = observer.events.length;
    client.push({ text: 'Again.' });
    await session.run('Once more.');
    expect(observer.events).toHaveLength(seen);
  });

  it('each concurrent tool call is timed on its own (tool_end is written when all are done)', async () => {
    const client = createScriptedModelClient({
      model: 'm',
      steps: [
        {
          toolCalls: [
            { id: 'fast', name: 'slow', arguments: { ms: 1 } },
            { id: 'long', name: 'slow', arguments: { ms: 300 } },
          ],
        },
        { text: 'Done.' },
      ],
    });
    const session = new Agent({ tools: [slow], client }).createSession();
    const events: SessionEvent[] = [];
    session.observe({ onEvent: (event) => events.push(event) });
    await session.run('Two naps.');
    const ends = events.filter((event) => event.type === 'tool_end');
    const fast = ends.find((event) => event.tool_call_id === 'fast')!;
    const long = ends.find((event) => event.tool_call_id === 'long')!;
    // Both records are written after the long call; the fast one's duration is still its own.
    expect(long.duration_ms).toBeGreaterThanOrEqual(290);
    expect(fast.duration_ms).toBeLessThan(long.duration_ms);
  });
});
