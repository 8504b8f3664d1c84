// bench/sandbox-limits: the cost of the resource limits per restricted command.
//   The restricted `bash` tool runs the same lines sandboxed with the limits (the default: a pids
//   and memory cgroup made and removed per call where one can be made, prlimit inside the sandbox,
//   a sized /tmp) and sandboxed without them (the sandbox as it was before the limits), in
//   interleaved rounds of the same run: median wall ms per call, CPU ms per call (rho and its
//   children), and the ratios limited/unlimited. The load average is printed with the results:
//   on a shared machine, compare ratios, not absolute times.
// Run standalone after a build: `node bench/sandbox-limits.mjs` (or `pnpm bench sandbox-limits`);
// `--quick` runs fewer rounds.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalBackend } from '@rho/core';
import {
  builtinProfile,
  checkShellCommand,
  sandboxWrapper,
  SandboxLimitRun,
  DEFAULT_SANDBOX_LIMITS,
} from '@rho/permissions';
import { commandNeedsNetwork, hardenPlan } from '@rho/permissions/internal';
import { createBashTool, restrictedShellGate } from '@rho/tools-fs';

const ROUNDS = process.argv.includes('--quick') ? 9 : 31;
const LINES = [
  ['one program', 'wc -l data.txt'],
  ['pipeline of 3', 'grep -c row data.txt | sort | head -1'],
];

const wrapper = await sandboxWrapper();
if (!wrapper.available) {
  console.log(`sandbox-limits: not measured, ${wrapper.unavailableReason}`);
  process.exit(process.env.CI === 'true' ? 1 : 0);
}

const root = await mkdtemp(join(tmpdir(), 'rho-bench-limits-'));
await writeFile(join(root, 'data.txt'), Array.from({ length: 10_000 }, (_, index) => `row ${index}`).join('\n') + '\n');
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const context = {
  signal: new AbortController().signal,
  sessionId: 'bench',
  workingDir: root,
  backend: createLocalBackend(),
};
const profile = builtinProfile('readonly');

/** The sandbox without limits: the gate as it was, each process in its own bubblewrap, nothing more. */
const unlimitedGate = async (command, cwd) => {
  const decision = await checkShellCommand(command, { profile, cwd });
  if (!decision.allowed) return { allowed: false, reason: decision.reason };
  const hardened = hardenPlan(decision.plan);
  return {
    allowed: true,
    plan: hardened.plan,
    env: hardened.env(process.env),
    wrap: (planned, directory) =>
      wrapper.wrap(planned.argv, { cwd: directory, allowNetwork: commandNeedsNetwork(planned) }),
  };
};
const tools = {
  limited: createBashTool({ mode: 'restricted', gate: restrictedShellGate(profile) }),
  unlimited: createBashTool({ mode: 'restricted', gate: unlimitedGate }),
};

/** CPU ms of this process and of its children waited for (/proc/self/stat: utime, stime, cutime, cstime). */
function cpuMs() {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  const ticks = [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0);
  return (ticks * 1000) / 100;
}

async function timed(tool, command) {
  const cpu = cpuMs();
  const started = performance.now();
  const result = await tool.handle({ callId: 'bench', toolName: 'bash', arguments: { command } }, context);
  const wall = performance.now() - started;
  if (!result.success) throw new Error(`${command} failed: ${result.content}`);
  return { wall, cpu: cpuMs() - cpu };
}

try {
  const probe = new SandboxLimitRun(DEFAULT_SANDBOX_LIMITS, { bwrap: wrapper.program });
  await probe.release();
  console.log(
    `limits here: pids by ${probe.enforcement.pids}, memory by ${probe.enforcement.memory}, ` +
      `cpu by ${probe.enforcement.cpu}, /tmp ${probe.enforcement.tmp}`,
  );
  for (const [label, command] of LINES) {
    // Warm both paths (parser, page cache), then alternate which goes first in each round.
    await timed(tools.limited, command);
    await timed(tools.unlimited, command);
    const samples = { limited: [], unlimited: [] };
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? ['limited', 'unlimited'] : ['unlimited', 'limited'];
      for (const name of order) samples[name].push(await timed(tools[name], command));
    }
    const wall = (name) => median(samples[name].map((sample) => sample.wall));
    const cpu = (name) => samples[name].reduce((sum, sample) => sum + sample.cpu, 0) / ROUNDS;
    console.log(
      `${label.padEnd(14)} wall ${wall('limited').toFixed(1)} ms vs ${wall('unlimited').toFixed(1)} ms ` +
        `(x${(wall('limited') / wall('unlimited')).toFixed(2)}), ` +
        `cpu ${cpu('limited').toFixed(1)} ms vs ${cpu('unlimited').toFixed(1)} ms ` +
        `(x${(cpu('limited') / cpu('unlimited')).toFixed(2)}) per call, limited vs unlimited, ${ROUNDS} rounds`,
    );
  }
  console.log(
    `load average ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  );
} finally {
  await rm(root, { recursive: true, force: true });
}
