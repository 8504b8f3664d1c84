// bench/sandbox: the cost of the bubblewrap sandbox per restricted command.
//   tool   the restricted `bash` tool running the same lines sandboxed (the default) and with
//          `sandbox: off`, in the same run: median ms per call and the ratio sandboxed/unsandboxed
//   spawn  one process spawned inside bubblewrap vs the same process spawned directly (the
//          sandbox alone, without the policy check and the tool around it)
// Each process of a line gets its own sandbox, so a pipeline of N programs pays N sandboxes.
// Run standalone after a build: `node bench/sandbox.mjs` (or `pnpm bench sandbox`).
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalBackend } from '@rho/core';
import { builtinProfile, sandboxWrapper } from '@rho/permissions';
import { scrubEnvironment } from '@rho/permissions/internal';
import { createBashTool, restrictedShellGate } from '@rho/tools-fs';

const RUNS = 41;
const LINES = [
  ['one program', 'wc -l data.txt'],
  ['pipeline of 3', 'grep -c row data.txt | sort | head -1'],
];

const wrapper = await sandboxWrapper();
if (!wrapper.available) {
  console.log(`sandbox: not measured, ${wrapper.unavailableReason}`);
  process.exit(process.env.CI === 'true' ? 1 : 0);
}

const root = await mkdtemp(join(tmpdir(), 'rho-bench-sandbox-'));
await writeFile(join(root, 'data.txt'), Array.from({ length: 10_000 }, (_, index) => `row ${index}`).join('\n') + '\n');
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const context = {
  signal: new AbortController().signal,
  sessionId: 'bench',
  workingDir: root,
  backend: createLocalBackend(),
};
const call = (tool, command) => tool.handle({ callId: 'bench', toolName: 'bash', arguments: { command } }, context);

function spawnOnce(argv) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(argv[0], argv.slice(1), {
      cwd: root,
      env: scrubEnvironment(process.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.resume();
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`${argv.join(' ')} exited ${code}`)),
    );
  });
}

try {
  const profile = builtinProfile('readonly');
  const sandboxed = createBashTool({ mode: 'restricted', gate: restrictedShellGate(profile) });
  const unsandboxed = createBashTool({ mode: 'restricted', gate: restrictedShellGate(profile, { sandbox: 'off' }) });
  for (const [name, line] of LINES) {
    // Warm both paths (the policy's parser, the sandbox probe, the page cache).
    for (const tool of [sandboxed, unsandboxed]) {
      const result = await call(tool, line);
      if (!result.success) throw new Error(`${line}: ${result.content}`);
    }
    const inside = [];
    const outside = [];
    // Interleaved, so that load on the machine falls on both alike.
    for (let run = 0; run < RUNS; run += 1) {
      let started = performance.now();
      await call(sandboxed, line);
      inside.push(performance.now() - started);
      started = performance.now();
      await call(unsandboxed, line);
      outside.push(performance.now() - started);
    }
    const a = median(inside);
    const b = median(outside);
    console.log(
      `sandbox_tool_${name.replaceAll(' ', '_')}: ${a.toFixed(1)} ms (ratio ${(a / b).toFixed(2)}x vs baseline sandbox: off ${b.toFixed(1)} ms, ` +
        `+${(a - b).toFixed(1)} ms per call; \`${line}\`, median of ${RUNS})`,
    );
  }
  const argv = ['wc', '-l', 'data.txt'];
  const wrapped = wrapper.wrap(argv, { cwd: root, allowNetwork: false });
  await spawnOnce(argv);
  await spawnOnce(wrapped);
  const inside = [];
  const outside = [];
  for (let run = 0; run < RUNS; run += 1) {
    inside.push(await spawnOnce(wrapped));
    outside.push(await spawnOnce(argv));
  }
  const a = median(inside);
  const b = median(outside);
  console.log(
    `sandbox_spawn_per_process: ${a.toFixed(1)} ms (ratio ${(a / b).toFixed(2)}x vs baseline direct spawn ${b.toFixed(1)} ms, ` +
      `+${(a - b).toFixed(1)} ms per process; ${wrapper.description}, median of ${RUNS})`,
  );
} finally {
  await rm(root, { recursive: true, force: true });
}
