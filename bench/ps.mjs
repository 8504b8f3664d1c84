// bench/ps: `rho ps --json` over 10,000 session directories (target: at most 1 s), against the
// cost of starting Node at all (`node -e 0`). Each session has a meta.json as rho writes it and a
// small trace; a tenth of them claim to be running (with this machine's host name and a pid that
// is gone), so the liveness probe runs too.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SESSIONS = 10_000;
const ROUNDS = 5;
const TARGET_MS = 1000;
const here = dirname(fileURLToPath(import.meta.url));
const bin = join(here, '..', 'apps', 'cli', 'dist', 'bin.js');

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

function timeRun(args) {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    env: { ...process.env, NO_COLOR: '1' },
  });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return { elapsed, stdout: result.stdout };
}

const root = mkdtempSync(join(tmpdir(), 'rho-bench-ps-'));
try {
  const sessions = join(root, 'sessions');
  mkdirSync(sessions);
  const host = hostname();
  const gonePid = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  }).stdout;
  const base = Date.parse('2026-11-01T00:00:00Z');
  for (let index = 0; index < SESSIONS; index += 1) {
    const id = index.toString(16).padStart(8, '0');
    const directory = join(sessions, id);
    mkdirSync(directory);
    const startedAt = new Date(base + index * 60_000).toISOString();
    const running = index % 10 === 0;
    const meta = {
      id,
      status: running ? 'running' : 'completed',
      model: 'gpt-5-mini',
      profile: 'readonly',
      started_at: startedAt,
      updated_at: startedAt,
      heartbeat_at: startedAt,
      pid: Number(gonePid),
      hostname: host,
      first_prompt: `Task number ${index}: look at the logs and say what went wrong`,
      parent_id: index % 50 === 1 ? (index - 1).toString(16).padStart(8, '0') : null,
      cost_usd: 0.0123,
    };
    writeFileSync(join(directory, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`);
    writeFileSync(
      join(directory, 'trace.jsonl'),
      `${JSON.stringify({ type: 'run_start', prompt: meta.first_prompt, ts: startedAt })}\n${JSON.stringify({ type: 'run_end', status: 'completed', ts: startedAt })}\n`,
    );
  }

  const check = timeRun([bin, 'ps', '--json', sessions]);
  const listed = JSON.parse(check.stdout);
  if (listed.length !== SESSIONS) throw new Error(`rho ps listed ${listed.length} sessions, expected ${SESSIONS}`);
  const dead = listed.filter((session) => session.status === 'dead').length;
  if (dead !== SESSIONS / 10) throw new Error(`expected ${SESSIONS / 10} dead sessions, got ${dead}`);

  const psTimes = [];
  const nodeTimes = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    nodeTimes.push(timeRun(['-e', '0']).elapsed);
    psTimes.push(timeRun([bin, 'ps', '--json', sessions]).elapsed);
  }
  const ps = median(psTimes);
  const node = median(nodeTimes);
  console.log(
    `ps: ${Math.round(ps)} ms for ${SESSIONS} sessions (target <= ${TARGET_MS} ms), ratio ${(ps / node).toFixed(1)}x vs node -e 0 (${Math.round(node)} ms)`,
  );
  const table = timeRun([bin, 'ps', sessions]).elapsed;
  console.log(`ps (table of the newest 50): ${Math.round(table)} ms`);
  if (ps > TARGET_MS) process.exitCode = 1;
} finally {
  rmSync(root, { recursive: true, force: true });
}
