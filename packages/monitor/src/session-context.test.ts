import { describe, expect, it } from 'vitest';
import { buildCoordinatorPrompt } from './coordinator-prompt.js';
import { readSessionContext } from './session-context.js';
import { liveHere, makeSession, temporarySessions } from './test-support/session-fixtures.js';

const ts = '2026-11-21T10:00:00.000Z';

function agentTrace(topic: string, resultLength = 20): object[] {
  return [
    { type: 'run_start', prompt: `Investigate ${topic}`, ts },
    { type: 'message', role: 'user', content: `Investigate ${topic}`, ts },
    {
      type: 'message',
      role: 'assistant',
      content: `Looking at ${topic}.`,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'grep', arguments: `{"pattern": "${topic}"}` } }],
      ts,
    },
    {
      type: 'message',
      role: 'tool',
      tool_call_id: 'c1',
      content: `${topic} found in app.log`.padEnd(resultLength, '.'),
      ts,
    },
    { type: 'message', role: 'assistant', content: `${topic} comes from app.log line 3.`, ts },
  ];
}

describe('readSessionContext', () => {
  it('exports the conversation an agent has built, from its trace', () => {
    const base = temporarySessions();
    const directory = makeSession(
      base,
      { id: 'agent001', status: 'running', first_prompt: 'Investigate alpha', ...liveHere() },
      agentTrace('alpha'),
    );
    const context = readSessionContext(directory);
    expect(context).toMatchObject({
      id: 'agent001',
      status: 'running',
      model: 'gpt-4o-mini',
      task: 'Investigate alpha',
      messageCount: 4,
      truncated: false,
    });
    expect(context.transcript).toBe(
      'USER: Investigate alpha\n\nASSISTANT: Looking at alpha.\nASSISTANT called grep({"pattern": "alpha"})\n\nTOOL RESULT (c1):\nalpha found in app.log\n\nASSISTANT: alpha comes from app.log line 3.',
    );
  });

  it('shortens long tool results and keeps the task and the newest messages within the budget', () => {
    const base = temporarySessions();
    const trace = agentTrace('beta', 10_000);
    for (let index = 0; index < 50; index += 1)
      trace.push({ type: 'message', role: 'user', content: `follow-up ${index} ${'y'.repeat(500)}`, ts });
    const directory = makeSession(base, { id: 'agent002', status: 'completed' }, trace);
    const context = readSessionContext(directory, { maxChars: 5_000, maxToolResultChars: 100 });
    expect(context.truncated).toBe(true);
    expect(context.transcript.length).toBeLessThanOrEqual(5_000);
    expect(context.transcript.startsWith('USER: Investigate beta')).toBe(true);
    expect(context.transcript).toContain('follow-up 49');
    expect(context.transcript).not.toContain('follow-up 0 ');
    expect(context.transcript).toMatch(/older messages left out/);
    expect(readSessionContext(directory, { maxToolResultChars: 100 }).transcript).toContain(
      '[... 9900 more characters]',
    );
  });

  it('rejects a directory that is not a session', () => {
    expect(() => readSessionContext(temporarySessions())).toThrow(/not a session directory/);
  });
});

describe('buildCoordinatorPrompt', () => {
  it('puts every agent’s context and the coordinator’s job in one prompt', () => {
    const base = temporarySessions();
    const alpha = readSessionContext(
      makeSession(
        base,
        { id: 'agent00a', status: 'running', first_prompt: 'Investigate alpha', ...liveHere() },
        agentTrace('alpha'),
      ),
    );
    const beta = readSessionContext(
      makeSession(
        base,
        { id: 'agent00b', status: 'paused', first_prompt: 'Investigate beta', ...liveHere() },
        agentTrace('beta'),
      ),
    );
    const prompt = buildCoordinatorPrompt([alpha, beta]);
    expect(
      prompt.startsWith('[rho connect] You are the coordinator of 2 rho agents (sessions agent00a, agent00b).'),
    ).toBe(true);
    expect(prompt).toContain(
      '## Agent 1: session agent00a (status: running, model: gpt-4o-mini)\nTask: Investigate alpha',
    );
    expect(prompt).toContain('<context session="agent00b">\nUSER: Investigate beta');
    expect(prompt).toContain('beta comes from app.log line 3.');
    expect(prompt).toMatch(/## Your job\nCombine what these agents have learned/);
    expect(buildCoordinatorPrompt([alpha], { task: 'Which log matters?' })).toMatch(
      /## Your job\nWhich log matters\?$/,
    );
  });
});
