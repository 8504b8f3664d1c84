// bench/peers: rho beside its peers on one workload, as ratios to the bare `openai` client.
//
// The same scripted 200-tool-turn loop (the model asks for a trivial tool until turn 200, then
// answers) runs against one loopback OpenAI-compatible server (real HTTP, real SSE, answering at
// once) through: the bare `openai` client with the loop written by hand (the physical limit),
// the rho library, the `rho` CLI (the tsc build, and the bundle of the published package,
// apps/cli/bundle, built here when missing or older than the build), `@openai/agents` and the AI SDK (`streamText`
// with a tool). Every run is its own process (so peak RSS is the process's own), the
// contestants are interleaved round by round, and request arrival times are taken at the server
// so every contestant is timed by the same clock.
//
// `node bench/peers.mjs [--quick] [--rounds=N] [--only=rho,rho-read,rho-cli,rho-cli-read,rho-bundle,rho-bundle-read,agents,ai-sdk] [--compare=<dir>]`;
// --quick: one round, no warm-up (a smoke test); --only: these contestants (and the bare client)
// only; --compare: also the rho library and CLI of another built checkout, to measure a change.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startLoopbackServer } from '@rho/core/testing';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const roundsFlag = args.find((arg) => arg.startsWith('--rounds='));
const ROUNDS = roundsFlag ? Number(roundsFlag.slice('--rounds='.length)) : quick ? 1 : 5;
const TURNS = 200;
const worker = join(here, 'peers', 'worker.mjs');
const rssHook = pathToFileURL(join(here, 'peers', 'rss-on-exit.mjs')).href;
const cliBin = join(here, '..', 'apps', 'cli', 'dist', 'bin.js');
const bundleBin = join(here, '..', 'apps', 'cli', 'bundle', 'bin.js');
const noopToolPackage = join(here, 'peers', 'noop-tool.mjs');
const onlyFlag = args.find((arg) => arg.startsWith('--only='));
// --compare=<dir>: another built rho checkout (for example the commit before a change); its rho
// library and CLI run too, as `rho@compare` and `rho-cli@compare`, interleaved with the rest.
const compareFlag = args.find((arg) => arg.startsWith('--compare='));
const compareDir = compareFlag ? compareFlag.slice('--compare='.length) : undefined;
const CONTESTANTS = [
  'bare',
  ...(onlyFlag
    ? onlyFlag.slice('--only='.length).split(',')
    : ['rho', 'rho-read', 'rho-cli', 'rho-cli-read', 'rho-bundle', 'rho-bundle-read', 'agents', 'ai-sdk']
  ).filter((name) => name !== 'bare'),
  ...(compareDir === undefined ? [] : ['rho@compare', 'rho-cli@compare', 'rho-cli-read@compare']),
];
const LABELS = {
  bare: 'bare openai client',
  rho: 'rho library',
  'rho-read': 'rho library, read tool',
  'rho-cli': 'rho CLI',
  'rho-cli-read': 'rho CLI, read tool',
  'rho-bundle': 'rho CLI, bundled',
  'rho-bundle-read': 'rho CLI, bundled, read tool',
  agents: '@openai/agents',
  'ai-sdk': 'AI SDK streamText',
  'rho@compare': 'rho library (--compare)',
  'rho-cli@compare': 'rho CLI (--compare)',
  'rho-cli-read@compare': 'rho CLI, read tool (--compare)',
};

// The model's side of the script: `noop` where the contestant has it (the CLI gets it from a tool
// package, bench/peers/noop-tool.mjs), otherwise `read` of a small file (the CLI's cheapest
// built-in read-only tool, the `*-read` contestants).
function respond(request) {
  arrivals.push(performance.timeOrigin + performance.now());
  const turn = request.body.messages.filter((message) => message.role === 'assistant').length + 1;
  if (turn === 1 || turn === TURNS) cpuMarks.push(cpuNanoseconds(currentPid));
  const names = (request.body.tools ?? []).map((tool) => tool.function?.name);
  const call = names.includes('noop')
    ? { name: 'noop', arguments: `{"n": ${turn}}` }
    : { name: 'read', arguments: '{"path": "notes.txt"}' };
  if (turn < TURNS)
    return {
      type: 'response',
      text: '',
      toolCalls: [call],
      usage: { prompt_tokens: 100 + turn, completion_tokens: 5 },
    };
  return { type: 'response', text: 'done', usage: { prompt_tokens: 100 + turn, completion_tokens: 1 } };
}

let arrivals = [];
let cpuMarks = [];
let currentPid = 0;
// CPU time (ns) the process has used so far, all its threads, from Linux's schedstat; undefined
// elsewhere. Less sensitive than wall time to other processes on a loaded machine: the time a
// contestant waits for a core is not counted.
function cpuNanoseconds(pid) {
  try {
    let total = 0;
    for (const task of readdirSync(`/proc/${pid}/task`))
      total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    return total;
  } catch {
    return undefined;
  }
}
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

async function runOnce(contestant, server) {
  const scratch = mkdtempSync(join(tmpdir(), 'rho-bench-peers-'));
  const rssFile = join(scratch, 'rss');
  writeFileSync(join(scratch, 'notes.txt'), 'alpha\nbeta\ngamma\n');
  const compared = contestant.endsWith('@compare');
  const name = compared ? contestant.slice(0, -'@compare'.length) : contestant;
  const bundled = name === 'rho-bundle' || name === 'rho-bundle-read';
  const cli = bundled || name === 'rho-cli' || name === 'rho-cli-read';
  const command = cli
    ? [
        '--import',
        rssHook,
        bundled ? bundleBin : compared ? join(compareDir, 'apps', 'cli', 'dist', 'bin.js') : cliBin,
        '--base-url',
        server.url,
        '--model',
        'gpt-4o-mini',
        '--max-turns',
        String(TURNS + 5),
        ...(name === 'rho-cli' || name === 'rho-bundle' ? ['--tool-package', noopToolPackage] : []),
        `Read notes.txt ${TURNS} times.`,
      ]
    : [
        '--import',
        rssHook,
        compared ? join(compareDir, 'bench', 'peers', 'worker.mjs') : worker,
        name,
        server.url,
        String(TURNS),
      ];
  arrivals = [];
  cpuMarks = [];
  const spawned = performance.timeOrigin + performance.now();
  const child = spawn(process.execPath, command, {
    cwd: scratch,
    env: { ...process.env, RHO_HOME: join(scratch, 'home'), RHO_BENCH_RSS_FILE: rssFile, OPENAI_API_KEY: 'bench' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  currentPid = child.pid;
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise((resolve) => child.on('close', resolve));
  const ended = performance.timeOrigin + performance.now();
  try {
    if (code !== 0 || arrivals.length !== TURNS)
      throw new Error(
        `${contestant} exited ${code} after ${arrivals.length} of ${TURNS} requests:\n${stderr.slice(-2000)}`,
      );
    // The CLI's clock starts at spawn; the workers report when their run started (worker.mjs).
    const runStart = cli ? spawned : JSON.parse(stdout.trim().split('\n').at(-1)).runStart;
    const gaps = arrivals.slice(1).map((time, index) => time - arrivals[index]);
    return {
      perTurn: (arrivals.at(-1) - arrivals[0]) / (TURNS - 1),
      cpuPerTurn:
        cpuMarks.length === 2 && cpuMarks.every((mark) => mark !== undefined)
          ? (cpuMarks[1] - cpuMarks[0]) / 1e6 / (TURNS - 1)
          : Number.NaN,
      turn10: median(gaps.slice(5, 15)),
      turn200: median(gaps.slice(TURNS - 11)),
      firstTurn: arrivals[1] - runStart,
      processToFirstTurn: arrivals[1] - spawned,
      rssMb: Number(readFileSync(rssFile, 'utf8')) / 1024,
      wall: ended - spawned,
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const version = (name) => {
  const require = createRequire(join(here, 'package.json'));
  let directory = dirname(require.resolve(name));
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8'));
      if (manifest.name === name) return manifest.version;
    } catch {
      // not the package root yet
    }
    directory = dirname(directory);
  }
};

// The bundled CLI of the published package, rebuilt when it is older than the tsc build it bundles.
if (CONTESTANTS.some((name) => name.startsWith('rho-bundle'))) {
  const built = join(here, '..', 'apps', 'cli', 'dist', 'main.js');
  if (!existsSync(bundleBin) || statSync(bundleBin).mtimeMs < statSync(built).mtimeMs) {
    const bundling = spawnSync(process.execPath, [join(here, '..', 'apps', 'cli', 'scripts', 'bundle.mjs')], {
      stdio: 'inherit',
    });
    if (bundling.status !== 0) throw new Error('building the bundled CLI (apps/cli/scripts/bundle.mjs) failed');
  }
}

const server = await startLoopbackServer({ respond });
const results = Object.fromEntries(CONTESTANTS.map((name) => [name, []]));
try {
  if (!quick) for (const contestant of CONTESTANTS) await runOnce(contestant, server); // warm the file cache
  for (let round = 0; round < ROUNDS; round += 1) {
    // Interleaved, and the order rotates, so no contestant always follows the same neighbour.
    const order = CONTESTANTS.map((_, index) => CONTESTANTS[(index + round) % CONTESTANTS.length]);
    for (const contestant of order) results[contestant].push(await runOnce(contestant, server));
  }
} finally {
  await server.close();
}

const summary = Object.fromEntries(
  CONTESTANTS.map((name) => [
    name,
    Object.fromEntries(Object.keys(results[name][0]).map((key) => [key, median(results[name].map((run) => run[key]))])),
  ]),
);
const base = summary.bare;
const cell = (value, unit, reference) =>
  `${value.toFixed(unit === 'MB' ? 0 : 2)} ${unit} (${(value / reference).toFixed(2)}x)`;
console.log(
  `peers: ${TURNS} tool turns per run, ${ROUNDS} interleaved round(s), medians; node ${process.version}; openai ${version('openai')}, @openai/agents ${version('@openai/agents')}, ai ${version('ai')}, @ai-sdk/openai-compatible ${version('@ai-sdk/openai-compatible')}`,
);
console.log('peers: ratios are to the bare openai client measured in the same run');
const rows = CONTESTANTS.map((name) => {
  const s = summary[name];
  return [
    LABELS[name],
    cell(s.perTurn, 'ms', base.perTurn),
    Number.isNaN(s.cpuPerTurn) ? 'n/a' : cell(s.cpuPerTurn, 'ms', base.cpuPerTurn),
    `${s.turn10.toFixed(2)} -> ${s.turn200.toFixed(2)} ms (${(s.turn200 / s.turn10).toFixed(2)}x)`,
    cell(s.firstTurn, 'ms', base.firstTurn),
    `${s.processToFirstTurn.toFixed(0)} ms`,
    cell(s.rssMb, 'MB', base.rssMb),
  ];
});
const header = ['', 'per turn', 'CPU per turn', 'turn 10 -> turn 200', 'first turn', 'spawn to first turn', 'peak RSS'];
const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
for (const row of [header, ...rows])
  console.log(`  ${row.map((text, column) => text.padEnd(widths[column])).join('  ')}`);
const over = (name) => (summary[name].perTurn - base.perTurn).toFixed(3);
// CPU time is what a loaded machine disturbs least (see docs/benchmarks.md): its ratio is printed too.
const cpuRatio = (name) =>
  Number.isNaN(summary[name].cpuPerTurn) ? 'n/a' : `${(summary[name].cpuPerTurn / base.cpuPerTurn).toFixed(2)}x`;
if (summary['rho-cli'])
  console.log(
    `peers: rho CLI per turn: ${over('rho-cli')} ms over the bare client, CPU ${cpuRatio('rho-cli')} (target: 1.25x); peak RSS ${(summary['rho-cli'].rssMb / base.rssMb).toFixed(2)}x (target <= 1.05x); first turn from spawn: ${(summary['rho-cli'].processToFirstTurn - base.processToFirstTurn).toFixed(1)} ms over the bare client's`,
  );
if (summary['rho-bundle'])
  console.log(
    `peers: bundled rho CLI: spawn to first request ${(summary['rho-bundle'].processToFirstTurn - base.processToFirstTurn).toFixed(1)} ms after the bare client's (issue 36 target: within 60 ms), peak RSS ${(summary['rho-bundle'].rssMb / base.rssMb).toFixed(2)}x (target <= 1.10x); per turn ${over('rho-bundle')} ms over the bare client, CPU ${cpuRatio('rho-bundle')}`,
  );
if (summary.rho)
  console.log(
    `peers: rho library per turn: ${over('rho')} ms over the bare client, CPU ${cpuRatio('rho')} (target <= 0.25 ms, 1.1x); first turn ${(summary.rho.firstTurn - base.firstTurn).toFixed(1)} ms over (target <= 20 ms); peak RSS ${(summary.rho.rssMb / base.rssMb).toFixed(2)}x (target <= 1.05x)`,
  );
