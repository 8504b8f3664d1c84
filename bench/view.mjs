// bench/view: the per-command cost of the shell sandbox built from the read view, against the
// sandbox it replaced (the host's root bound read-only: `--ro-bind / /`, a private /tmp and /run,
// the working directory bound again). Each run starts `true` in the sandbox with spawnSync; the new
// side builds a fresh view for every run (the restricted shell does so for every command line:
// the bounded scan of the working directory for secret-named files included).
// Prints wall milliseconds per command (median and mean) and CPU milliseconds per command (rho's
// own plus bubblewrap's and `true`'s, from /proc/self/stat), with the load average.
// Run after a build: `node bench/view.mjs [--runs 300] [--dir PATH]` (default: a generated tree of
// 2,000 files in 200 directories with a few secrets).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { readView, sandboxWrapper } from '@rho/permissions';

const argument = (name, fallback) => {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : process.argv[index + 1];
};
const RUNS = Number(argument('runs', '300'));
const TICK_MS = 10; // USER_HZ is 100 on Linux

let generated;
let dir = argument('dir', undefined);
if (dir === undefined) {
  generated = dir = mkdtempSync(join(tmpdir(), 'rho-bench-view-'));
  for (let d = 0; d < 200; d += 1) {
    mkdirSync(join(dir, `d${d}`));
    for (let f = 0; f < 10; f += 1) writeFileSync(join(dir, `d${d}`, `f${f}.txt`), 'x');
  }
  writeFileSync(join(dir, '.env'), 'KEY=1');
  writeFileSync(join(dir, 'd7', 'server.pem'), 'pem');
  mkdirSync(join(dir, '.git'));
  writeFileSync(join(dir, '.git', 'config'), '[core]\n\tbare = false\n');
}

const wrapper = await sandboxWrapper();
if (!wrapper.available) {
  console.log(`view: not measured, ${wrapper.unavailableReason}`);
  process.exit(0);
}

/** The argv of the sandbox before the read view: the host's root read-only. */
function rootBound(argv, cwd) {
  return [
    wrapper.program,
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
    '--tmpfs',
    '/run',
    '--ro-bind',
    cwd,
    cwd,
    '--unshare-all',
    '--hostname',
    'rho-sandbox',
    '--cap-drop',
    'ALL',
    '--die-with-parent',
    '--new-session',
    '--chdir',
    cwd,
    '--',
    ...argv,
  ];
}

function viewBound(argv, cwd) {
  return wrapper.wrap(argv, { cwd, allowNetwork: false, view: readView({ workingDir: cwd }) });
}

/** Children's CPU (user + system) in ms, of the children this process waited for. */
function childrenCpuMs() {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  // After "pid (comm) ": state is field 3; cutime and cstime are fields 16 and 17.
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS;
}

function measure(build) {
  const times = [];
  const cpuBefore = process.cpuUsage();
  const childrenBefore = childrenCpuMs();
  for (let run = 0; run < RUNS; run += 1) {
    const started = performance.now();
    const argv = build(['true'], dir);
    const result = spawnSync(argv[0], argv.slice(1), { stdio: 'ignore' });
    if (result.status !== 0) throw new Error(`sandbox failed: ${argv.join(' ')}`);
    times.push(performance.now() - started);
  }
  const own = process.cpuUsage(cpuBefore);
  const cpu = (own.user + own.system) / 1000 + (childrenCpuMs() - childrenBefore);
  times.sort((a, b) => a - b);
  return {
    median: times[Math.floor(times.length / 2)],
    mean: times.reduce((sum, time) => sum + time, 0) / times.length,
    cpu: cpu / RUNS,
  };
}

const format = (result) =>
  `wall ${result.median.toFixed(2)} ms median, ${result.mean.toFixed(2)} ms mean; CPU ${result.cpu.toFixed(2)} ms per command`;
console.log(
  `view: ${RUNS} runs of \`true\` in ${dir}; load average before ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
// Interleaved halves, so a change of load hits both sides alike.
const oldFirst = measure(rootBound);
const newFirst = measure(viewBound);
const oldSecond = measure(rootBound);
const newSecond = measure(viewBound);
const merge = (a, b) => ({ median: (a.median + b.median) / 2, mean: (a.mean + b.mean) / 2, cpu: (a.cpu + b.cpu) / 2 });
const old = merge(oldFirst, oldSecond);
const current = merge(newFirst, newSecond);
console.log(`view_sandbox_root_bound (before): ${format(old)}`);
console.log(`view_sandbox_read_view (now):     ${format(current)}`);
console.log(
  `view_sandbox_ratio: wall ${(current.median / old.median).toFixed(2)}x, CPU ${(current.cpu / old.cpu).toFixed(2)}x; load average after ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
if (generated !== undefined) rmSync(generated, { recursive: true, force: true });
