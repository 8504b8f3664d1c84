// bench/mcp: per-call overhead of an MCP tool against the same function as a built-in tool.
//   The function is server-everything's `echo` (returns "Echo: " + message). The built-in tool runs
//   it in process; the MCP tool (@rho/tools-mcp) calls the real server over stdio and over
//   streamable HTTP (on 127.0.0.1). Sequential calls after a warm-up; the median per-call time of
//   each and the ratio MCP / built-in. The built-in call costs microseconds, so the ratio is large
//   by nature: the absolute overhead (MCP minus built-in) is the number to read.
// The server side (rho mcp serve's policy_check over stdio and HTTP) is bench/mcp-serve.mjs.
// Run standalone after a build: `node bench/mcp.mjs` (or `pnpm bench mcp`); `--calls N` (default 300).
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createLocalBackend, defineTool } from '@rho/core';
import { McpServers } from '@rho/tools-mcp';

const callsFlag = process.argv.indexOf('--calls');
const CALLS = callsFlag > 0 ? Number(process.argv[callsFlag + 1]) : 300;
const WARMUP = 20;
const script = fileURLToPath(
  new URL('./node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);

const context = {
  signal: new AbortController().signal,
  sessionId: 'bench',
  workingDir: process.cwd(),
  backend: createLocalBackend(),
};
const builtin = defineTool({
  name: 'echo',
  description: 'Echoes back the input string',
  parameters: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  annotations: { readOnly: true },
  async handle({ arguments: { message } }) {
    return { content: `Echo: ${message}`, success: true };
  },
});

async function perCall(tool) {
  const call = (index) =>
    tool.handle({ callId: `c${index}`, toolName: tool.name, arguments: { message: `hello ${index}` } }, context);
  for (let index = 0; index < WARMUP; index += 1) await call(index);
  const times = [];
  for (let index = 0; index < CALLS; index += 1) {
    const started = process.hrtime.bigint();
    const result = await call(index);
    times.push(Number(process.hrtime.bigint() - started) / 1000);
    if (result.content !== `Echo: hello ${index}`) throw new Error(`unexpected result: ${result.content}`);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)], p90: times[Math.floor(times.length * 0.9)] };
}

async function freePort() {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

const base = await perCall(builtin);
const rows = [['built-in', base]];

const stdio = new McpServers([
  {
    name: 'everything',
    transport: 'stdio',
    command: process.execPath,
    args: [script, 'stdio'],
    env: {},
    timeoutMs: 60_000,
  },
]);
try {
  const tool = (await stdio.tools()).find((candidate) => candidate.name === 'everything__echo');
  rows.push(['MCP stdio', await perCall(tool)]);
} finally {
  await stdio.close();
}

const port = await freePort();
const server = spawn(process.execPath, [script, 'streamableHttp'], {
  env: { ...process.env, PORT: String(port) },
  stdio: ['ignore', 'ignore', 'pipe'],
});
await new Promise((resolve) => {
  let seen = '';
  server.stderr.on('data', (chunk) => {
    seen += chunk;
    if (seen.includes('listening on port')) resolve();
  });
});
const http = new McpServers([
  { name: 'everything', transport: 'http', url: `http://127.0.0.1:${port}/mcp`, headers: {}, timeoutMs: 60_000 },
]);
try {
  const tool = (await http.tools()).find((candidate) => candidate.name === 'everything__echo');
  rows.push(['MCP streamable HTTP', await perCall(tool)]);
} finally {
  await http.close();
  server.kill();
}

console.log(`${CALLS} sequential calls of echo each (after ${WARMUP} warm-up calls); microseconds per call`);
for (const [name, { median, p90 }] of rows) {
  const ratio = median / base.median;
  console.log(
    `  ${name.padEnd(20)} median ${median.toFixed(1).padStart(8)} µs  p90 ${p90.toFixed(1).padStart(8)} µs  ratio ${ratio.toFixed(1)}x  overhead ${(median - base.median).toFixed(1)} µs`,
  );
}
