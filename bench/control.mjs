// bench/control: how fast a running `rho` stops after its `cancel` file appears, while streaming
// and while bash runs `sleep 60`. Baseline, same run: how fast the same process stops on SIGINT,
// delivered directly (no polling). Target: under 1 s.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLoopbackServer } from '@rho/core/testing';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'apps', 'cli', 'dist', 'bin.js');
const RUNS = 7;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function stopLatency(step, args, trigger, how) {
  const server = await startLoopbackServer({ steps: [step] });
  const home = mkdtempSync(join(tmpdir(), 'rho-bench-control-'));
  const child = spawn(process.execPath, [bin, '--json', '--base-url', server.url, ...args], {
    cwd: home,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, RHO_HOME: home },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let stoppedAt = 0;
  let buffer = '';
  child.stdout.on('data', (chunk) => {
    buffer += chunk.toString();
    const lines = buffer.split('\n');
    buffer = lines.pop();
    for (const line of lines) {
      if (stoppedAt === 0 && trigger(JSON.parse(line))) {
        stoppedAt = performance.now();
        if (how === 'file') {
          const [id] = readdirSync(join(home, 'sessions'));
          writeFileSync(join(home, 'sessions', id, 'cancel'), '');
        } else {
          child.kill('SIGINT');
        }
      }
    }
  });
  await new Promise((resolve) => child.on('close', resolve));
  const latency = performance.now() - stoppedAt;
  await server.close();
  rmSync(home, { recursive: true, force: true });
  return latency;
}

const cases = {
  streaming: [
    { type: 'response', text: 'word '.repeat(5000), chunkSize: 5, delayMs: 20 },
    ['Write an essay.'],
    (event) => event.type === 'text',
  ],
  'bash sleep 60': [
    { type: 'response', toolCalls: [{ name: 'bash', arguments: '{"command": "sleep 60"}' }] },
    ['--profile', 'developer', '-y', 'Sleep.'],
    (event) => event.type === 'tool_start',
  ],
};
for (const [name, [step, args, trigger]] of Object.entries(cases)) {
  const viaFile = [];
  const viaSignal = [];
  for (let run = 0; run < RUNS; run += 1) {
    viaFile.push(await stopLatency(step, args, trigger, 'file'));
    viaSignal.push(await stopLatency(step, args, trigger, 'signal'));
  }
  console.log(
    `control: cancel file while ${name}: median ${median(viaFile).toFixed(0)} ms to exit (target < 1000 ms); SIGINT ${median(viaSignal).toFixed(0)} ms: ratio ${(median(viaFile) / median(viaSignal)).toFixed(2)}x`,
  );
}
