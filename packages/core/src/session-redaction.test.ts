import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import type { SessionEvent } from './events.js';
import { createSecretRedactor } from './secret-redaction.js';
import { State } from './state.js';
import { createScriptedModelClient } from './testing/scripted-model-client.js';
import { defineTool } from './tool.js';

const KEY = 'sk-test-7f3a9c1e5b2d4f60';
const MARKER = '[REDACTED:OPENAI_API_KEY]';
const secrets = [{ name: 'OPENAI_API_KEY', value: KEY }];

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'rho-redaction-'));
}

/** Every file under `directory`, read whole (trace, meta.json, control files, children's). */
function everything(directory: string): string {
  let text = '';
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    text += statSync(path).isDirectory() ? everything(path) : readFileSync(path, 'utf8');
  }
  return text;
}

/** Prints the key in two chunks (as a process's output arrives), with the key in its metadata too. */
const leaky = defineTool({
  name: 'leaky',
  description: 'Prints the environment.',
  parameters: { type: 'object', properties: { pad: { type: 'integer' } } },
  annotations: { readOnly: true },
  async handle({ arguments: { pad } }) {
    const chunks = [`${'x'.repeat(pad ?? 0)}OPENAI_API_KEY=${KEY.slice(0, 9)}`, `${KEY.slice(9)}\nHOME=/root\n`];
    return { content: chunks.join(''), success: true, metadata: { env: { OPENAI_API_KEY: KEY }, exit_code: 0 } };
  },
});

const echo = defineTool({
  name: 'echo',
  description: 'Repeats text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  annotations: { readOnly: true },
  async handle({ arguments: { text } }) {
    return { content: text, success: true };
  },
});

describe('a session with secrets: the model and the trace never see them', () => {
  it('redacts tool output (a key split across chunks), metadata, arguments, prompt, system prompt, answer and meta.json', async () => {
    const directory = tempDir();
    const client = createScriptedModelClient({
      steps: [
        {
          text: 'Looking.',
          toolCalls: [
            { id: 'a', name: 'leaky', arguments: {} },
            // A call whose arguments hold the key (the model read it somewhere): echoed, it is redacted too.
            { id: 'b', name: 'echo', arguments: { text: `the key is ${KEY}` } },
          ],
        },
        // The answer streams the key across two deltas.
        { text: `Your key is ${KEY}.`, chunkSize: 15 },
      ],
    });
    const agent = new Agent({ systemPrompt: `You may use ${KEY}.`, tools: [leaky, echo], client, secrets });
    const session = agent.createSession({ directory });
    const events: SessionEvent[] = [];
    const result = await session.run(`Check that ${KEY} works`, { onEvent: (event) => events.push(event) });
    expect(result.status).toBe('completed');
    client.assertDone();

    const requests = JSON.stringify(client.requests);
    expect(requests).not.toContain(KEY);
    expect(requests).toContain(`You may use ${MARKER}.`);
    expect(requests).toContain(`OPENAI_API_KEY=${MARKER}`);
    // No piece of the key is left where the two chunks met.
    expect(requests).not.toContain(KEY.slice(0, 9));
    expect(everything(directory)).not.toContain(KEY);
    expect(everything(directory)).not.toContain(KEY.slice(9));
    expect(JSON.stringify(events)).not.toContain(KEY);
    expect(result.text).toBe(`Your key is ${MARKER}.`);

    const trace = readFileSync(join(directory, 'trace.jsonl'), 'utf8');
    const records = trace
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const of = (type: string) => records.filter((record) => record.type === type);
    expect(of('run_start')[0]!.prompt).toBe(`Check that ${MARKER} works`);
    expect(of('tool_start').map((record) => record.tool_args)).toContainEqual({ text: `the key is ${MARKER}` });
    expect(of('tool_end')[0]!.metadata).toEqual({ env: { OPENAI_API_KEY: MARKER }, exit_code: 0 });
    const meta = JSON.parse(readFileSync(join(directory, 'meta.json'), 'utf8')) as { first_prompt: string };
    expect(meta.first_prompt).toBe(`Check that ${MARKER} works`);
    // The state (the history the next request is made of) holds what the trace holds.
    expect(JSON.stringify(session.state.messages)).not.toContain(KEY);
  });

  it('redacts before long output is cut: a key across the cut leaves no piece behind', async () => {
    // 20,000 bytes are kept, half from the head: the key starts a few bytes before the cut.
    const long = defineTool({
      name: 'long',
      description: 'A long output.',
      parameters: { type: 'object', properties: {} },
      async handle() {
        return { content: `${'x'.repeat(10_000 - 10)}${KEY}${'y'.repeat(30_000)}`, success: true };
      },
    });
    const client = createScriptedModelClient({
      steps: [{ toolCalls: [{ id: 'a', name: 'long', arguments: {} }] }, { text: 'ok' }],
    });
    const session = new Agent({ tools: [long], client, secrets }).createSession();
    await session.run('go');
    const toolMessage = session.state.messages.find((message) => message.role === 'tool')!;
    expect(toolMessage.content).toContain('tokens truncated');
    for (const piece of [KEY.slice(0, 6), KEY.slice(3, 9), KEY.slice(-6)])
      expect(JSON.stringify(client.requests)).not.toContain(piece);
  });

  it('redacts errors, retries, blocked calls, directives and compaction summaries', async () => {
    const directory = tempDir();
    writeFileSync(join(directory, 'directives.jsonl'), `${JSON.stringify({ text: `use ${KEY} from now on` })}\n`);
    const client = createScriptedModelClient({
      steps: [
        {
          retries: [{ attempt: 2, maxAttempts: 3, delayMs: 1, reason: `401 for key ${KEY}` }],
          toolCalls: [{ id: 'a', name: 'echo', arguments: { text: KEY } }],
        },
        { error: { message: `Incorrect API key provided: ${KEY}`, isRetryable: false } },
        { text: `Summary: the user's key is ${KEY}.` },
      ],
    });
    const agent = new Agent({ tools: [echo], client, secrets, approvalPolicy: () => true });
    const session = agent.createSession({ directory, approver: () => false });
    expect((await session.run('first')).status).toBe('refused');
    expect((await session.run('second')).status).toBe('error');
    const compacted = await session.compact();
    expect(compacted.ok).toBe(true);
    client.assertDone();

    const trace = readFileSync(join(directory, 'trace.jsonl'), 'utf8');
    expect(trace).not.toContain(KEY);
    const types = new Set(trace.split('\n').flatMap((line) => (line === '' ? [] : [JSON.parse(line).type as string])));
    for (const type of ['retry', 'tool_blocked', 'directive', 'error', 'compact']) expect(types).toContain(type);
    expect(trace).toContain(`"reason":"401 for key ${MARKER}"`);
    expect(trace).toContain(`Incorrect API key provided: ${MARKER}`);
    expect(trace).toContain(`use ${MARKER} from now on`);
    expect(JSON.stringify(client.requests)).not.toContain(KEY);
  });

  it('redacts a replayed history before it is sent again (a trace written without a redactor)', async () => {
    const directory = tempDir();
    const first = createScriptedModelClient({
      steps: [{ toolCalls: [{ id: 'a', name: 'leaky', arguments: {} }] }, { text: 'seen' }],
    });
    await new Agent({ tools: [leaky], client: first }).createSession({ directory }).run('look');
    expect(readFileSync(join(directory, 'trace.jsonl'), 'utf8')).toContain(KEY);

    const second = createScriptedModelClient({ steps: [{ text: 'again' }] });
    const state = State.fromJsonl(readFileSync(join(directory, 'trace.jsonl')));
    const resumed = new Agent({ tools: [leaky], client: second, secrets }).createSession({ state });
    await resumed.run('and now');
    expect(JSON.stringify(second.requests)).not.toContain(KEY);
    expect(JSON.stringify(second.requests)).toContain(MARKER);
  });

  it("gives child sessions the parent's redactor (a session-level one too)", async () => {
    const base = tempDir();
    const directory = join(base, 'parent');
    mkdirSync(directory);
    const childTool = defineTool({
      name: 'ask_child',
      description: 'Runs a child session.',
      parameters: { type: 'object', properties: {} },
      async handle(_call, context) {
        const child = context.children!.spawn();
        const result = await child.run(`Repeat ${KEY}`);
        return { content: result.text, success: true };
      },
    });
    const client = createScriptedModelClient({
      steps: [
        { toolCalls: [{ id: 'a', name: 'ask_child', arguments: {} }] },
        // The child's one turn.
        { text: `It is ${KEY}` },
        { text: 'done' },
      ],
    });
    const session = new Agent({ tools: [childTool], client }).createSession({
      directory,
      redactor: createSecretRedactor(secrets),
    });
    await session.run('go');
    client.assertDone();
    expect(JSON.stringify(client.requests)).not.toContain(KEY);
    // The child's directory sits beside the parent's: the whole sessions folder is clean.
    expect(readdirSync(base).length).toBe(2);
    expect(everything(base)).not.toContain(KEY);
  });
});
