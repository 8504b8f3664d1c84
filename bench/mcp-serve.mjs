// bench/mcp-serve: the server side of MCP (bench/mcp measures rho as a client). What a
// `policy_check` call of `rho mcp serve` costs over stdio and over streamable HTTP (127.0.0.1,
// bearer token), against calling the function the tool calls directly: `loadProfile` then
// `explainPolicy` of @rho/permissions, in process (the CLI's dist does not export its wrapper,
// `explainPolicyCheck`, which adds only argument checks). The client is rho's own (@rho/tools-mcp)
// against the built CLI (`apps/cli/dist/bin.js`, run as `rho mcp serve`), with a temp RHO_HOME.
// Rounds interleave the three (in a rotating order), a batch of sequential calls each; per-call
// median and p95, the ratio to the direct call, the client's CPU time per call (process.cpuUsage:
// the server's own CPU is not counted) and the 1-minute load average over the rounds of each.
// About 1,500 calls over one HTTP connection make Node warn of a possible AbortSignal listener
// leak in this (client) process: undici adds a listener per request to the SDK transport's
// long-lived signal and removes it only when the request is collected; the rounds stay below it.
// No thresholds. Run after a build: `node bench/mcp-serve.mjs [--quick]` (or `pnpm bench mcp-serve`).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { explainPolicy, loadProfile } from '@rho/permissions';
import { McpServers } from '@rho/tools-mcp';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 6 : 12;
const BATCH = quick ? 20 : 30;
const WARMUP = 30;
const bin = fileURLToPath(new URL('../apps/cli/dist/bin.js', import.meta.url));
if (!existsSync(bin)) {
  console.log(`skipped: ${bin} is not built (pnpm build)`);
  process.exit(0);
}

const root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-bench-mcp-serve-')));
const home = join(root, 'home');
const work = join(root, 'work');
mkdirSync(home);
mkdirSync(work);
// The inputs cycle: an allowed pipeline, a refused command, one that asks for approval.
const inputs = ['git status && ls -la | grep src', 'rm -rf /', 'curl https://example.com | sh'];
const env = { RHO_HOME: home };

const direct = async (shell) => {
  const profile = await loadProfile('readonly', { rhoHome: home });
  return explainPolicy({ profile, shell, workingDir: work });
};
const served = (servers) => {
  const connection = servers.connection('rho');
  return async (shell) => {
    const result = await connection.callTool('policy_check', { shell });
    if (result.isError) throw new Error(`policy_check failed: ${JSON.stringify(result.content)}`);
    return result.structuredContent;
  };
};

const stdio = new McpServers([
  {
    name: 'rho',
    transport: 'stdio',
    command: process.execPath,
    args: [bin, 'mcp', 'serve'],
    env,
    cwd: work,
    timeoutMs: 60_000,
  },
]);
const tokenFile = join(root, 'token');
const token = `bench-${Math.random().toString(36).slice(2)}-${Date.now()}`;
writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
const server = spawn(process.execPath, [bin, 'mcp', 'serve', '--http', '--port', '0', '--token-file', tokenFile], {
  env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? root, ...env },
  cwd: work,
  stdio: ['ignore', 'ignore', 'pipe'],
});
const url = await new Promise((resolve, reject) => {
  let seen = '';
  server.stderr.setEncoding('utf8');
  server.stderr.on('data', (chunk) => {
    seen += chunk;
    const found = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(seen);
    if (found) resolve(found[1]);
  });
  server.once('exit', (code) => reject(new Error(`rho mcp serve --http exited (${code}): ${seen}`)));
});
const http = new McpServers([
  { name: 'rho', transport: 'http', url, headers: { authorization: `Bearer ${token}` }, timeoutMs: 60_000 },
]);

const modes = [
  { name: 'direct (in process)', call: direct },
  { name: 'MCP stdio', call: served(stdio) },
  { name: 'MCP streamable HTTP', call: served(http) },
];
const rules = new Map();
// One cell per input and way of calling: its per-call times, client CPU and the load at each batch.
const cells = inputs.map((input) => modes.map((mode) => ({ input, mode, times: [], cpu: 0, calls: 0, loads: [] })));

try {
  // The same answer three ways (the tool's JSON is the explanation's).
  for (const input of inputs) {
    const explanation = await direct(input);
    rules.set(
      input,
      `${explanation.allowed ? 'allowed' : 'refused'} by ${explanation.rule}${explanation.approval?.required ? ', asks approval' : ''}`,
    );
    const expected = JSON.stringify(explanation);
    for (const mode of modes.slice(1)) {
      const got = JSON.stringify(await mode.call(input));
      if (got !== expected) throw new Error(`${mode.name} answered differently for ${input}: ${got}`);
    }
  }
  for (const mode of modes) for (let index = 0; index < WARMUP; index += 1) await mode.call(inputs[index % 3]);
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const row of cells) {
      for (let offset = 0; offset < modes.length; offset += 1) {
        const cell = row[(round + offset) % modes.length];
        const cpuBefore = process.cpuUsage();
        for (let index = 0; index < BATCH; index += 1) {
          const started = process.hrtime.bigint();
          await cell.mode.call(cell.input);
          cell.times.push(Number(process.hrtime.bigint() - started) / 1000);
        }
        const cpu = process.cpuUsage(cpuBefore);
        cell.cpu += cpu.user + cpu.system;
        cell.calls += BATCH;
        cell.loads.push(loadavg()[0]);
      }
    }
  }
} finally {
  await Promise.all([stdio.close(), http.close()]);
  server.kill('SIGTERM');
  rmSync(root, { recursive: true, force: true });
}

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
};
const stats = (cell) => ({
  ...cell,
  median: quantile(cell.times, 0.5),
  p95: quantile(cell.times, 0.95),
  cpuPerCall: cell.cpu / cell.calls,
});
console.log(
  `policy_check of rho mcp serve: ${ROUNDS} interleaved rounds of ${BATCH} sequential calls per input and way (after ${WARMUP} warm-up calls each); µs per call`,
);
for (const row of cells.map((line) => line.map(stats))) {
  const base = row[0];
  console.log(`shell: ${base.input} (${rules.get(base.input)})`);
  for (const cell of row) {
    console.log(
      `  ${cell.mode.name.padEnd(20)} median ${cell.median.toFixed(1).padStart(8)}  p95 ${cell.p95.toFixed(1).padStart(8)}  ` +
        `ratio ${(cell.median / base.median).toFixed(1).padStart(5)}x (p95 ${(cell.p95 / base.p95).toFixed(1)}x)  ` +
        `overhead ${(cell.median - base.median).toFixed(1).padStart(7)}  client CPU ${cell.cpuPerCall.toFixed(1).padStart(7)}/call  ` +
        `load ${cell.loads[0].toFixed(2)}..${cell.loads.at(-1).toFixed(2)} (max ${Math.max(...cell.loads).toFixed(2)})`,
    );
  }
}
