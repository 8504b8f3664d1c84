// bench/replay: State.fromJsonl() throughput on a large trace, against bare JSON.parse of every
// line (the least any reader must do), both starting from the file's bytes.
import { readFileSync, rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { State } from '@rho/core';

const ROUNDS = 7;

function buildTrace(turns) {
  const lines = [];
  const ts = () => new Date(Date.UTC(2026, 10, 21, 12, 0, lines.length % 60)).toISOString();
  lines.push(JSON.stringify({ type: 'run_start', prompt: 'Investigate the failing job and fix it.', ts: ts() }));
  lines.push(
    JSON.stringify({ type: 'message', role: 'user', content: 'Investigate the failing job and fix it.', ts: ts() }),
  );
  for (let turn = 0; turn < turns; turn += 1) {
    const id = `call_${turn}`;
    const args = JSON.stringify({ path: `src/module_${turn % 97}/file_${turn}.ts`, offset: turn % 50, limit: 120 });
    lines.push(JSON.stringify({ type: 'llm_start', model: 'gpt-5-mini', context_size: 1000 + turn * 40, ts: ts() }));
    lines.push(
      JSON.stringify({
        type: 'llm_end',
        model: 'gpt-5-mini',
        input_tokens: 2000 + turn * 40,
        output_tokens: 35,
        cache_read_tokens: 1800,
        reasoning_tokens: 12,
        cost_usd: 0.00042,
        duration_ms: 812,
        finish_reason: 'tool_calls',
        ts: ts(),
      }),
    );
    lines.push(
      JSON.stringify({
        type: 'message',
        role: 'assistant',
        content: turn % 3 === 0 ? 'Reading the next file to follow the call chain.' : null,
        tool_calls: [{ id, type: 'function', function: { name: 'read', arguments: args } }],
        ts: ts(),
      }),
    );
    lines.push(
      JSON.stringify({
        type: 'tool_start',
        tool_call_id: id,
        tool_name: 'read',
        tool_args: JSON.parse(args),
        ts: ts(),
      }),
    );
    const content = Array.from(
      { length: 12 },
      (_, line) =>
        `${String(line + 1).padStart(6)}  export function handler${line}(request: Request): Response { return respond(request, ${turn}); }`,
    ).join('\n');
    lines.push(JSON.stringify({ type: 'message', role: 'tool', tool_call_id: id, content, ts: ts() }));
    lines.push(
      JSON.stringify({
        type: 'tool_end',
        tool_call_id: id,
        tool_name: 'read',
        success: true,
        duration_ms: 3,
        ts: ts(),
      }),
    );
  }
  lines.push(JSON.stringify({ type: 'run_end', status: 'completed', ts: ts() }));
  return `${lines.join('\n')}\n`;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const directory = mkdtempSync(join(tmpdir(), 'rho-bench-replay-'));
const path = join(directory, 'trace.jsonl');
writeFileSync(path, buildTrace(17_000));
const bytes = readFileSync(path);
const records = bytes
  .toString('utf8')
  .split('\n')
  .filter((line) => line !== '').length;
const megabytes = bytes.length / 1e6;

const rhoTimes = [];
const baseTimes = [];
let state;
for (let round = 0; round < ROUNDS; round += 1) {
  globalThis.gc?.();
  let started = performance.now();
  state = State.fromJsonl(bytes);
  rhoTimes.push(performance.now() - started);
  globalThis.gc?.();
  started = performance.now();
  const text = bytes.toString('utf8');
  let count = 0;
  for (const line of text.split('\n'))
    if (line !== '') {
      JSON.parse(line);
      count += 1;
    }
  baseTimes.push(performance.now() - started);
  if (count !== records) throw new Error('baseline miscounted');
}
if (state.messages.length !== 1 + 17_000 * 2) throw new Error(`replay rebuilt ${state.messages.length} messages`);
const rhoRate = megabytes / (median(rhoTimes) / 1000);
const baseRate = megabytes / (median(baseTimes) / 1000);
console.log(`replay: ${records} records, ${megabytes.toFixed(1)} MB`);
console.log(
  `replay: State.fromJsonl ${median(rhoTimes).toFixed(1)} ms = ${rhoRate.toFixed(0)} MB/s (target >= 200 MB/s; Python original: 80 MB/s)`,
);
console.log(
  `replay: bare JSON.parse of every line ${median(baseTimes).toFixed(1)} ms = ${baseRate.toFixed(0)} MB/s: ratio ${(rhoRate / baseRate).toFixed(2)}x of the baseline's throughput`,
);
if (process.env.KEEP_TRACE) console.log(path);
else rmSync(directory, { recursive: true, force: true });
