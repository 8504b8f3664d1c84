// `rho --version` and `rho --help` start-up against `node -e 0`, measured in the same run with
// interleaved rounds (issue 17: within 1.3x; issue 23: fast at every terminal width). `--help` is
// timed with stdout piped and on terminals 40, 60, 80, 100 and 120 columns wide: `script` gives
// the child a pseudo-terminal and `stty` sets its width, and `node -e 0` is timed the same way, so
// the ratio compares like with like.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const bin = join(here, '..', 'apps', 'cli', 'dist', 'bin.js');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const TARGET = 1.3;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const quote = (text) => `'${text.replaceAll("'", "'\\''")}'`;

/** Runs a command once and returns its wall time in milliseconds. */
function time(command, args) {
  const started = performance.now();
  const result = spawnSync(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return elapsed;
}

const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
const inTerminal = (columns, nodeArgs) => [
  'script',
  ['-qec', `stty cols ${columns} rows 40; ${quote(process.execPath)} ${nodeArgs.map(quote).join(' ')}`, '/dev/null'],
];

const cases = [
  { name: 'node -e 0', run: () => time(process.execPath, ['-e', '0']) },
  { name: 'rho --version', base: 'node -e 0', run: () => time(process.execPath, [bin, '--version']) },
  { name: 'rho --help (piped)', base: 'node -e 0', run: () => time(process.execPath, [bin, '--help']) },
];
if (hasScript) {
  cases.push({ name: 'node -e 0 (terminal)', run: () => time(...inTerminal(80, ['-e', '0'])) });
  for (const columns of [40, 60, 80, 100, 120]) {
    cases.push({
      name: `rho --help (${columns} columns)`,
      base: 'node -e 0 (terminal)',
      run: () => time(...inTerminal(columns, [bin, '--help'])),
    });
  }
}

const samples = new Map(cases.map((entry) => [entry.name, []]));
for (const entry of cases) entry.run(); // warm the file cache
for (let round = 0; round < ROUNDS; round += 1) for (const entry of cases) samples.get(entry.name).push(entry.run());

let failed = false;
for (const entry of cases) {
  const value = median(samples.get(entry.name));
  const fastest = Math.min(...samples.get(entry.name));
  if (entry.base === undefined) {
    console.log(`startup: ${entry.name.padEnd(26)} median ${value.toFixed(1)} ms, fastest ${fastest.toFixed(1)} ms`);
    continue;
  }
  // The fastest run is the least disturbed by other load on the machine; both are printed.
  const ratio = value / median(samples.get(entry.base));
  const fastestRatio = fastest / Math.min(...samples.get(entry.base));
  if (ratio > TARGET) failed = true;
  console.log(
    `startup: ${entry.name.padEnd(26)} median ${value.toFixed(1)} ms: ${ratio.toFixed(2)}x ${entry.base}; fastest ${fastest.toFixed(1)} ms: ${fastestRatio.toFixed(2)}x (target <= ${TARGET}x)`,
  );
}
if (!hasScript) console.log('startup: `script` (util-linux) not found: --help on a terminal was not measured.');
console.log(`startup: medians of ${ROUNDS} interleaved rounds${failed ? '; ABOVE TARGET' : ''}`);
