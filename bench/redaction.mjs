// bench/redaction: the cost of keeping known secrets from the model and the trace.
//
// 1. The redactor alone, on a 1 MB tool output and on 2,000 short strings, for 10 to 5,000
//    secrets: core's one-pass redactor (a rolling hash of a window, one table lookup per
//    character) against the redaction it replaced (one search, and split/join on a hit, per
//    secret), run here side by side on the same texts.
// 2. The agent loop: 200 turns of a trivial tool against the loopback model server, without a
//    redactor and with one of 50 secrets (an environment's worth), alternating in the same run.
// The machine's load average is printed: on a shared machine, read the ratios, not the times.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, createSecretRedactor } from '@rho/core';
import { startLoopbackServer } from '@rho/core/testing';

const { default: noop } = await import('./peers/noop-tool.mjs');
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

/** The redaction core had before: one search per secret (and its URL-encoded form). */
function oneSearchPerSecret(secrets) {
  const known = new Set();
  for (const secret of secrets) {
    known.add(secret);
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret) known.add(encoded);
  }
  const list = [...known].sort((left, right) => right.length - left.length);
  return (value) => {
    let result = value;
    for (const secret of list) if (result.includes(secret)) result = result.split(secret).join('[REDACTED]');
    return result;
  };
}

const word = (length) => randomBytes(length).toString('base64url').slice(0, length);
// Secrets of every shape: API keys, hex tokens, passwords.
const secretsOf = (count) =>
  Array.from({ length: count }, (_, index) =>
    index % 3 === 0 ? `sk-${word(32)}` : index % 3 === 1 ? randomBytes(16).toString('hex') : word(10 + (index % 20)),
  );
const big = Array.from({ length: 16_000 }, () => `drwxr-xr-x 2 root root 4096 ${word(24)} /usr/lib/x86_64\n`).join('');
const small = Array.from({ length: 2_000 }, () => `total 12 -rw-r--r-- ${word(20)} notes.txt`);

function timeOf(fn, repeat) {
  const times = [];
  for (let round = 0; round < 5; round += 1) {
    const started = performance.now();
    for (let index = 0; index < repeat; index += 1) fn();
    times.push((performance.now() - started) / repeat);
  }
  return median(times);
}

console.log(`redaction: load average ${load()} (${availableParallelism()} cores)`);
for (const count of [10, 100, 1_000, 5_000]) {
  const secrets = secretsOf(count);
  const now = createSecretRedactor(secrets).text;
  const before = oneSearchPerSecret(secrets);
  const probe = `a ${secrets[0]} b ${secrets[count - 1]} c`;
  if (now(probe).includes(secrets[0]) || before(probe).includes(secrets[0])) throw new Error('a secret was missed');
  const bigNow = timeOf(() => now(big), 3);
  const bigBefore = timeOf(() => before(big), count > 1_000 ? 1 : 3);
  const smallNow = timeOf(() => small.forEach(now), 3) / small.length;
  const smallBefore = timeOf(() => small.forEach(before), 1) / small.length;
  console.log(
    `redaction: ${String(count).padStart(5)} secrets: 1 MB ${bigNow.toFixed(2)} ms (before ${bigBefore.toFixed(2)} ms, ${(bigBefore / bigNow).toFixed(1)}x); ` +
      `short string ${(smallNow * 1000).toFixed(2)} us (before ${(smallBefore * 1000).toFixed(2)} us, ${(smallBefore / smallNow).toFixed(1)}x)`,
  );
}

// The loop, with and without a redactor, alternating rounds.
const TURNS = 200;
const ROUNDS = 5;
function respond(request) {
  const turn = request.body.messages.filter((message) => message.role === 'assistant').length + 1;
  if (turn < TURNS) return { type: 'response', text: '', toolCalls: [{ name: 'noop', arguments: `{"n": ${turn}}` }] };
  return { type: 'response', text: 'done' };
}
const server = await startLoopbackServer({ respond });
const redactor = createSecretRedactor(secretsOf(50).map((value, index) => ({ name: `SECRET_${index}`, value })));
async function round(withRedactor) {
  const directory = mkdtempSync(join(tmpdir(), 'rho-bench-redaction-'));
  const agent = new Agent({
    systemPrompt: 'You are a benchmark.',
    model: 'gpt-4o-mini',
    tools: [noop],
    clientOptions: { baseURL: server.url, apiKey: 'bench', maxRetries: 0 },
    ...(withRedactor ? { redactor } : {}),
  });
  const started = performance.now();
  const result = await agent.createSession({ directory }).run('Call noop 200 times.');
  const total = performance.now() - started;
  rmSync(directory, { recursive: true, force: true });
  if (result.status !== 'completed') throw new Error(`loop ended ${result.status}: ${result.error?.message}`);
  return total / TURNS;
}
try {
  await round(false);
  await round(true);
  const without = [];
  const withIt = [];
  for (let index = 0; index < ROUNDS; index += 1) {
    without.push(await round(false));
    withIt.push(await round(true));
  }
  console.log(
    `redaction: loop ${median(withIt).toFixed(3)} ms per turn with a redactor of 50 secrets, ${median(without).toFixed(3)} ms without: ratio ${(median(withIt) / median(without)).toFixed(3)}x (${TURNS} turns x ${ROUNDS} rounds)`,
  );
} finally {
  await server.close();
}
console.log(`redaction: load average ${load()} at the end`);
