// Writes synthetic session directories (meta.json and trace.jsonl in the shapes rho writes) for
// the dashboard's benchmark and the screenshots of docs/operator-guide.md. Deterministic: the same arguments give the
// same sessions. Real runs are used by the tests; these are only for volume and pictures.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const MODELS = [
  ['gpt-5-mini', 0.25e-6, 2e-6],
  ['gpt-5', 1.25e-6, 10e-6],
  ['claude-sonnet-4', 3e-6, 15e-6],
  ['qwen3-32b', null, null],
];
const PROFILES = ['readonly', 'developer', 'unrestricted'];
const TOOLS = [
  ['read', 40, 0.01],
  ['grep', 120, 0.02],
  ['bash', 900, 0.12],
  ['write', 30, 0.05],
  ['sql', 400, 0.08],
];
const PROMPTS = [
  'Find out why the nightly build fails and propose a fix',
  'Summarise the error logs of the payment service for last week',
  'Which tables hold customer addresses? List their columns',
  'Rename the config option and update every caller',
  'Write a migration that adds an index on orders.created_at',
];

function random(seed) {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
}

/**
 * Writes `count` sessions under `base` (a `sessions` directory). Every tenth is a child of the
 * one before it; `turns` model calls each (default 3). Returns the ids.
 */
export function writeSampleSessions(
  base,
  count,
  { turns = 3, start = Date.parse('2026-11-01T08:00:00Z'), spreadMs = 60_000, hostname = 'build-01' } = {},
) {
  mkdirSync(base, { recursive: true });
  const ids = [];
  for (let index = 0; index < count; index += 1) {
    const next = random(index + 1);
    const id = `s${index.toString(16).padStart(7, '0')}`;
    const directory = join(base, id);
    mkdirSync(directory, { recursive: true });
    const [model, inPrice, outPrice] = MODELS[index % MODELS.length];
    const profile = PROFILES[index % PROFILES.length];
    const prompt = `${PROMPTS[index % PROMPTS.length]} (#${index})`;
    let time = start + index * spreadMs;
    const ts = () => new Date(time).toISOString();
    const lines = [];
    const push = (record) => lines.push(JSON.stringify({ type: record.type, ts: ts(), ...record }));
    push({ type: 'run_start', prompt });
    push({ type: 'message', role: 'user', content: prompt });
    let context = 900;
    let cost = 0;
    let inputTotal = 0;
    let outputTotal = 0;
    for (let turn = 0; turn < turns; turn += 1) {
      push({ type: 'llm_start', model, context_size: context, context_window: 128000 });
      const duration = Math.round(400 + next() * 2500);
      time += duration;
      const input = context;
      const output = Math.round(20 + next() * 300);
      const callCost = inPrice === null ? null : input * inPrice + output * outPrice;
      if (callCost !== null) cost += callCost;
      inputTotal += input;
      outputTotal += output;
      push({
        type: 'llm_end',
        model,
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: 0,
        reasoning_tokens: 0,
        cost_usd: callCost,
        duration_ms: duration,
      });
      const last = turn === turns - 1;
      if (last) {
        push({
          type: 'message',
          role: 'assistant',
          content: 'Done: the cause is a stale lock file; removing it in the build script fixes it.',
        });
        break;
      }
      const [tool, meanMs, failRate] = TOOLS[Math.floor(next() * TOOLS.length)];
      const callId = `call_${turn}`;
      push({
        type: 'message',
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [{ id: callId, type: 'function', function: { name: tool, arguments: '{"path":"."}' } }],
      });
      push({ type: 'tool_start', tool_call_id: callId, tool_name: tool, tool_args: { path: '.' } });
      const toolMs = Math.round(meanMs * (0.3 + next() * 1.4));
      time += toolMs;
      const success = next() > failRate;
      push({ type: 'tool_end', tool_call_id: callId, tool_name: tool, success, duration_ms: toolMs });
      push({
        type: 'message',
        role: 'tool',
        tool_call_id: callId,
        content: success ? 'build.log\nsrc\npackage.json' : 'Error: permission denied',
      });
      context += 400 + Math.round(next() * 1200);
      time += 50;
    }
    push({
      type: 'run_end',
      status: 'completed',
      usage: {
        input_tokens: inputTotal,
        output_tokens: outputTotal,
        cached_tokens: 0,
        reasoning_tokens: 0,
        cost_usd: inPrice === null ? null : cost,
      },
    });
    writeFileSync(join(directory, 'trace.jsonl'), `${lines.join('\n')}\n`);
    const meta = {
      id,
      status: 'completed',
      model,
      profile,
      started_at: new Date(start + index * spreadMs).toISOString(),
      updated_at: ts(),
      hostname,
      first_prompt: prompt,
      ...(inPrice === null ? {} : { cost_usd: cost }),
      parent_id: index % 10 === 9 ? ids[index - 1] : null,
    };
    writeFileSync(join(directory, 'meta.json'), JSON.stringify(meta, null, 2));
    ids.push(id);
  }
  return ids;
}
