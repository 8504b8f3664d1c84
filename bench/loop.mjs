// bench/loop: the cost of rho's agent loop per turn.
//
// One Session runs 200 model turns, each calling a trivial tool, against the loopback
// OpenAI-compatible server answering at once (real HTTP, real SSE). The baseline, measured in the
// same run, sends the very same 200 request bodies with the bare `openai` client and reads the
// streams. Also: `rho --version` / `rho --help` cold start against `node -e 0`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { Agent } from '@rho/core';
import { startLoopbackServer } from '@rho/core/testing';

const TURNS = 200;
const ROUNDS = 9;
const here = dirname(fileURLToPath(import.meta.url));
const { default: noop } = await import('./peers/noop-tool.mjs');

function respond(request) {
  const turn = request.body.messages.filter((message) => message.role === 'assistant').length + 1;
  if (turn < TURNS)
    return {
      type: 'response',
      text: '',
      toolCalls: [{ name: 'noop', arguments: `{"n": ${turn}}` }],
      usage: { prompt_tokens: 100 + turn, completion_tokens: 5 },
    };
  return { type: 'response', text: 'done', usage: { prompt_tokens: 100 + turn, completion_tokens: 1 } };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

async function rhoRound(server) {
  const directory = mkdtempSync(join(tmpdir(), 'rho-bench-loop-'));
  const agent = new Agent({
    systemPrompt: 'You are a benchmark.',
    model: 'gpt-4o-mini',
    tools: [noop],
    clientOptions: { baseURL: server.url, apiKey: 'bench', maxRetries: 0 },
  });
  const session = agent.createSession({ directory });
  const starts = [];
  const first = server.requests.length;
  const started = performance.now();
  const result = await session.run('Call noop 200 times.', {
    onEvent: (event) => {
      if (event.type === 'llm_start') starts.push(performance.now());
    },
  });
  const total = performance.now() - started;
  if (result.status !== 'completed' || starts.length !== TURNS)
    throw new Error(`loop bench run ended ${result.status} after ${starts.length} turns: ${result.error?.message}`);
  starts.push(started + total);
  const turnTimes = starts.slice(1).map((time, index) => time - starts[index]);
  rmSync(directory, { recursive: true, force: true });
  return { total, turnTimes, bodies: server.requests.slice(first).map((request) => request.body) };
}

async function baselineRound(server, bodies) {
  const client = new OpenAI({ baseURL: server.url, apiKey: 'bench', maxRetries: 0 });
  const times = [];
  const started = performance.now();
  for (const body of bodies) {
    const turnStart = performance.now();
    const stream = await client.chat.completions.create({
      ...body,
      stream: true,
      stream_options: { include_usage: true },
    });
    let toolArguments = '';
    for await (const chunk of stream) {
      for (const choice of chunk.choices)
        for (const call of choice.delta.tool_calls ?? []) toolArguments += call.function?.arguments ?? '';
    }
    if (toolArguments !== '') JSON.parse(toolArguments);
    times.push(performance.now() - turnStart);
  }
  return { total: performance.now() - started, turnTimes: times };
}

const server = await startLoopbackServer({ respond });
try {
  // Warm up both paths once (JIT, sockets).
  const warm = await rhoRound(server);
  await baselineRound(server, warm.bodies);
  const rho = [];
  const baseline = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const run = await rhoRound(server);
    rho.push(run);
    baseline.push(await baselineRound(server, run.bodies));
  }
  const perTurn = rho.map((run) => run.total / TURNS);
  const basePerTurn = baseline.map((run) => run.total / TURNS);
  const early = median(rho.flatMap((run) => run.turnTimes.slice(0, 20)));
  const late = median(rho.flatMap((run) => run.turnTimes.slice(TURNS - 20)));
  // Harness time of a turn: rho's turn minus the bare client's time for the very same request
  // (same round, same turn), i.e. what the loop adds on top of talking to the model.
  const harness = (from, to) =>
    median(
      rho.flatMap((run, round) =>
        run.turnTimes.slice(from, to).map((time, index) => time - baseline[round].turnTimes[from + index]),
      ),
    );
  const harnessEarly = harness(0, 20);
  const harnessLate = harness(TURNS - 20, TURNS);
  const baseEarly = median(baseline.flatMap((run) => run.turnTimes.slice(0, 20)));
  const baseLate = median(baseline.flatMap((run) => run.turnTimes.slice(TURNS - 20)));
  const ratio = median(perTurn) / median(basePerTurn);
  console.log(
    `loop: median ${median(perTurn).toFixed(3)} ms per turn over ${TURNS} turns x ${ROUNDS} rounds (target <= 2.6 ms; Python original: 26 ms)`,
  );
  console.log(`loop: bare openai client on the same requests: ${median(basePerTurn).toFixed(3)} ms per turn`);
  console.log(`loop: ratio ${ratio.toFixed(2)}x vs bare client (target <= 1.3x)`);
  console.log(
    `loop: harness ms per turn (rho minus the bare client on the same request): turns 1-20 median ${harnessEarly.toFixed(3)} ms, turns 181-200 median ${harnessLate.toFixed(3)} ms`,
  );
  console.log(
    `loop: turns 1-20 median ${early.toFixed(3)} ms, turns 181-200 median ${late.toFixed(3)} ms: ratio ${(late / early).toFixed(2)}x (target <= 1.5x; the bare client's own growth on the same requests: ${(baseLate / baseEarly).toFixed(2)}x)`,
  );
} finally {
  await server.close();
}

// Cold start of the CLI against Node itself.
function timeCommand(args, runs) {
  const times = [];
  for (let run = 0; run < runs; run += 1) {
    const started = performance.now();
    const result = spawnSync(process.execPath, args, { stdio: 'ignore' });
    if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}`);
    times.push(performance.now() - started);
  }
  return median(times);
}
const bin = join(here, '..', 'apps', 'cli', 'dist', 'bin.js');
const nodeAlone = timeCommand(['-e', '0'], 15);
const version = timeCommand([bin, '--version'], 15);
const help = timeCommand([bin, '--help'], 15);
console.log(
  `startup: node -e 0 ${nodeAlone.toFixed(1)} ms; rho --version ${version.toFixed(1)} ms: ratio ${(version / nodeAlone).toFixed(2)}x (target <= 3x)`,
);
console.log(`startup: rho --help ${help.toFixed(1)} ms: ratio ${(help / nodeAlone).toFixed(2)}x (target <= 3x)`);
