// bench/watch: following a finished session's 100,000-record trace to its end (what `rho watch`
// does), as a ratio to reading the same trace with State.fromJsonl (the baseline, measured in the
// same run). Three followers: followTrace alone, watchSession (adds the end-of-run check), and
// the `rho watch --json` process end to end (adds Node's start-up and printing every record).
// Following must stay linear: before the fix 10,000 records took seconds and 100,000 never ended.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { State } from '@rho/core';
import { followTrace, watchSession } from '@rho/monitor';

const RECORDS = 100_000;
/** Following may cost at most this many times reading the trace with State.fromJsonl. */
const TARGET_RATIO = 2;
const ROUNDS = 5;
const here = dirname(fileURLToPath(import.meta.url));
const bin = join(here, '..', 'apps', 'cli', 'dist', 'bin.js');
const id = '3a1c9e0b7d2f4e6a8b5c0d1e2f3a4b5c';

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** A trace as rho writes it: tool-calling turns of six records each, then run_end. */
function buildTrace(records) {
  const ts = '2026-11-21T12:00:00.000Z';
  const lines = [
    JSON.stringify({ type: 'run_start', prompt: 'Investigate the failing job.', ts }),
    JSON.stringify({ type: 'message', role: 'user', content: 'Investigate the failing job.', ts }),
  ];
  for (let turn = 0; lines.length < records - 1; turn += 1) {
    const callId = `call_${turn}`;
    const args = { path: `src/module_${turn % 97}/file_${turn}.ts` };
    lines.push(JSON.stringify({ type: 'llm_start', model: 'gpt-5-mini', context_size: 1000 + turn, ts }));
    lines.push(
      JSON.stringify({
        type: 'llm_end',
        model: 'gpt-5-mini',
        input_tokens: 2000,
        output_tokens: 35,
        cost_usd: 0.0004,
        duration_ms: 812,
        finish_reason: 'tool_calls',
        ts,
      }),
    );
    lines.push(
      JSON.stringify({
        type: 'message',
        role: 'assistant',
        content: null,
        tool_calls: [{ id: callId, type: 'function', function: { name: 'read', arguments: JSON.stringify(args) } }],
        ts,
      }),
    );
    lines.push(JSON.stringify({ type: 'tool_start', tool_call_id: callId, tool_name: 'read', tool_args: args, ts }));
    lines.push(
      JSON.stringify({
        type: 'message',
        role: 'tool',
        tool_call_id: callId,
        content: `export function handler${turn}() { return ${turn}; }`,
        ts,
      }),
    );
    lines.push(
      JSON.stringify({ type: 'tool_end', tool_call_id: callId, tool_name: 'read', success: true, duration_ms: 3, ts }),
    );
  }
  // Exactly `records` records: the last turn may be cut short (replay reports its call as interrupted).
  lines.length = records - 1;
  lines.push(JSON.stringify({ type: 'run_end', status: 'completed', ts }));
  return `${lines.join('\n')}\n`;
}

const root = mkdtempSync(join(tmpdir(), 'rho-bench-watch-'));
try {
  const directory = join(root, 'sessions', id);
  mkdirSync(directory, { recursive: true });
  const path = join(directory, 'trace.jsonl');
  writeFileSync(path, buildTrace(RECORDS));
  const now = new Date().toISOString();
  writeFileSync(
    join(directory, 'meta.json'),
    JSON.stringify({
      id,
      status: 'completed',
      model: 'gpt-5-mini',
      profile: 'readonly',
      started_at: now,
      updated_at: now,
      first_prompt: 'Investigate the failing job.',
      parent_id: null,
    }),
  );
  const megabytes = readFileSync(path).length / 1e6;

  const readTimes = [];
  const followTimes = [];
  const watchTimes = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    globalThis.gc?.();
    let started = performance.now();
    State.fromJsonl(readFileSync(path));
    readTimes.push(performance.now() - started);

    globalThis.gc?.();
    started = performance.now();
    let followed = 0;
    for await (const record of followTrace(path, { onIdle: () => true })) if (record.type !== '') followed += 1;
    followTimes.push(performance.now() - started);
    if (followed !== RECORDS) throw new Error(`followTrace yielded ${followed} records, expected ${RECORDS}`);

    globalThis.gc?.();
    started = performance.now();
    let watched = 0;
    for await (const record of watchSession(directory)) if (record.type !== '') watched += 1;
    watchTimes.push(performance.now() - started);
    if (watched !== RECORDS) throw new Error(`watchSession yielded ${watched} records, expected ${RECORDS}`);
  }

  const cliTimes = [];
  for (let round = 0; round < 3; round += 1) {
    const started = performance.now();
    const result = spawnSync(process.execPath, [bin, 'watch', '--json', id.slice(0, 8)], {
      encoding: 'utf8',
      maxBuffer: 512 * 1024 * 1024,
      env: { ...process.env, RHO_HOME: root, NO_COLOR: '1' },
    });
    cliTimes.push(performance.now() - started);
    if (result.status !== 0) throw new Error(`rho watch exited ${result.status}: ${result.stderr}`);
    const lines = result.stdout.split('\n').filter((line) => line !== '').length;
    if (lines !== RECORDS) throw new Error(`rho watch printed ${lines} records, expected ${RECORDS}`);
    if (result.stderr.includes('MaxListenersExceededWarning'))
      throw new Error('rho watch warned: MaxListenersExceededWarning');
  }

  const read = median(readTimes);
  console.log(`watch: ${RECORDS} records, ${megabytes.toFixed(1)} MB; baseline State.fromJsonl ${read.toFixed(1)} ms`);
  console.log(
    `watch: followTrace to the end ${median(followTimes).toFixed(1)} ms, ratio ${(median(followTimes) / read).toFixed(2)}x of the baseline`,
  );
  console.log(
    `watch: watchSession to the end ${median(watchTimes).toFixed(1)} ms, ratio ${(median(watchTimes) / read).toFixed(2)}x of the baseline`,
  );
  console.log(
    `watch: rho watch --json (a process, printing every record) ${median(cliTimes).toFixed(0)} ms, ratio ${(median(cliTimes) / read).toFixed(2)}x of the baseline`,
  );
  const worst = Math.max(median(followTimes), median(watchTimes)) / read;
  console.log(`watch: target <= ${TARGET_RATIO}x in process: ${worst <= TARGET_RATIO ? 'met' : 'MISSED'}`);
  if (worst > TARGET_RATIO) process.exitCode = 1;
} finally {
  rmSync(root, { recursive: true, force: true });
}
