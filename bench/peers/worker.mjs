// One bench/peers contestant in its own process: `node worker.mjs <contestant> <baseURL> <turns>`.
// Runs the same scripted tool loop (the model asks for `noop` until turn <turns>, then answers)
// through one framework, and prints `{"runStart": <epoch ms>}` on stdout: when the program
// started its run, after importing its framework and before building its agent. The bare client's
// run starts before `import('openai')`: loading the SDK is part of its first turn, as it is of
// rho's (the rho library loads it when a run starts); the frameworks' import costs show in the
// parent's spawn-to-first-turn column instead.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let runStart = 0;
const now = () => performance.timeOrigin + performance.now();
const [contestant, baseURL, turnsText] = process.argv.slice(2);
const turns = Number(turnsText);
const model = 'gpt-4o-mini';
const system = 'You are a benchmark.';
const prompt = `Call noop ${turns} times.`;
const description = 'Does nothing.';

async function bare() {
  // The physical limit: the bare client, with the loop written by hand.
  runStart = now();
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({ baseURL, apiKey: 'bench', maxRetries: 0 });
  const tools = [
    {
      type: 'function',
      function: { name: 'noop', description, parameters: { type: 'object', properties: { n: { type: 'integer' } } } },
    },
  ];
  const messages = [
    { role: 'system', content: system },
    { role: 'user', content: prompt },
  ];
  for (;;) {
    const stream = await client.chat.completions.create({
      model,
      messages,
      tools,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    const calls = [];
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        text += choice.delta.content ?? '';
        for (const delta of choice.delta.tool_calls ?? []) {
          const call = (calls[delta.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
          if (delta.id) call.id = delta.id;
          if (delta.function?.name) call.function.name += delta.function.name;
          if (delta.function?.arguments) call.function.arguments += delta.function.arguments;
        }
      }
    }
    if (calls.length === 0) return;
    messages.push({ role: 'assistant', content: text || null, tool_calls: calls });
    for (const call of calls) {
      const { n } = JSON.parse(call.function.arguments);
      messages.push({ role: 'tool', tool_call_id: call.id, content: `ok ${n ?? 0}` });
    }
  }
}

async function rhoLibrary({ read = false } = {}) {
  const [{ Agent }, { default: noop }] = await Promise.all([import('@rho/core'), import('./noop-tool.mjs')]);
  const readTool = read ? (await import('@rho/tools-fs')).createReadTool() : undefined;
  runStart = now();
  const directory = mkdtempSync(join(tmpdir(), 'rho-bench-peers-'));
  try {
    const agent = new Agent({
      systemPrompt: system,
      model,
      tools: [readTool ?? noop],
      budgets: { maxTurns: turns + 5 },
      clientOptions: { baseURL, apiKey: 'bench', maxRetries: 0 },
    });
    const result = await agent.createSession({ directory }).run(prompt);
    if (result.status !== 'completed') throw new Error(`rho run ended ${result.status}: ${result.error?.message}`);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

async function openaiAgents() {
  const [{ Agent, run, tool, OpenAIChatCompletionsModel, setTracingDisabled }, { default: OpenAI }, { z }] =
    await Promise.all([import('@openai/agents'), import('openai'), import('zod')]);
  runStart = now();
  setTracingDisabled(true);
  const noop = tool({
    name: 'noop',
    description,
    parameters: z.object({ n: z.number().int() }),
    execute: async ({ n }) => `ok ${n}`,
  });
  const client = new OpenAI({ baseURL, apiKey: 'bench', maxRetries: 0 });
  const agent = new Agent({
    name: 'bench',
    instructions: system,
    model: new OpenAIChatCompletionsModel(client, model),
    tools: [noop],
  });
  const result = await run(agent, prompt, { stream: true, maxTurns: turns + 5 });
  for await (const event of result) void event;
  await result.completed;
}

async function aiSdk() {
  const [{ streamText, tool, stepCountIs }, { createOpenAICompatible }, { z }] = await Promise.all([
    import('ai'),
    import('@ai-sdk/openai-compatible'),
    import('zod'),
  ]);
  runStart = now();
  const provider = createOpenAICompatible({ name: 'bench', baseURL, apiKey: 'bench', includeUsage: true });
  const noop = tool({
    description,
    inputSchema: z.object({ n: z.number().int() }),
    execute: async ({ n }) => `ok ${n}`,
  });
  const result = streamText({
    model: provider(model),
    system,
    prompt,
    tools: { noop },
    stopWhen: stepCountIs(turns + 5),
    maxRetries: 0,
  });
  for await (const part of result.fullStream) if (part.type === 'error') throw part.error;
}

const contestants = {
  bare,
  rho: rhoLibrary,
  'rho-read': () => rhoLibrary({ read: true }),
  agents: openaiAgents,
  'ai-sdk': aiSdk,
};
if (!contestants[contestant]) throw new Error(`unknown contestant ${contestant}`);
await contestants[contestant]();
process.stdout.write(`${JSON.stringify({ runStart })}\n`);
