// bench/tools: the file and shell tools of @rho/tools-fs against their baselines.
//   grep   through the tool vs raw `rg` with the same flags, on a generated tree of 50,000 files
//          (median of several runs; target <= 1.15x)
//   bash   `yes | head -c 1000000000` through the tool: resident memory growth (target <= 50 MB),
//          and the head and tail of the output must come back
//   read   the last 100 lines of a generated 2 GB file: resident memory growth (target <= 50 MB)
//   backends  the per-call cost of the `sandbox` backend (a bubblewrap container with its server)
//          against `local`, per operation (read, write, grep, bash `true`): median ms per call and
//          the ratio sandbox/local; the throughput of a command's output; the container's start
// Run standalone after a build: `node bench/tools.mjs` (or `pnpm bench tools`); `--stage grep`,
// `--stage bash`, `--stage read` or `--stage backends` runs one part.
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createLocalBackend } from '@rho/core';
import { createSandboxBackend } from '@rho/backend-sandbox';
import { sandboxWrapper } from '@rho/permissions';
import { createBashTool, createGrepTool, createReadTool, createWriteTool } from '@rho/tools-fs';

const FILES = 50_000;
const DIRECTORIES = 500;
const GREP_RUNS = 7;
const BIG_FILE_BYTES = 2 * 1024 ** 3;
const MB = 1024 * 1024;

const requireFromToolsFs = createRequire(new URL('../packages/tools-fs/package.json', import.meta.url));
const { rgPath } = await import(pathToFileURL(requireFromToolsFs.resolve('@vscode/ripgrep')).href);

const root = await mkdtemp(join(tmpdir(), 'rho-bench-tools-'));
const context = (workingDir, backend = createLocalBackend()) => ({
  signal: new AbortController().signal,
  sessionId: 'bench',
  workingDir,
  backend,
});
const call = (tool, args, workingDir, backend) =>
  tool.handle({ callId: 'bench', toolName: tool.name, arguments: args }, context(workingDir, backend));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const gc = () => globalThis.gc?.();

/** Runs `action` while sampling resident memory; resolves the result and the peak growth in bytes. */
async function withPeakRss(action) {
  gc();
  const before = process.memoryUsage.rss();
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 20);
  try {
    const result = await action();
    peak = Math.max(peak, process.memoryUsage.rss());
    return { result, growth: peak - before };
  } finally {
    clearInterval(sampler);
  }
}

function runRaw(argv) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let bytes = 0;
    child.stdout.on('data', (chunk) => {
      bytes += chunk.length;
    });
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: performance.now() - started, code, bytes }));
  });
}

async function generateTree(dir) {
  const body = Array.from(
    { length: 20 },
    (_, line) => `const value${line} = compute(${line}); // ordinary source line`,
  ).join('\n');
  for (let directory = 0; directory < DIRECTORIES; directory += 1) {
    const path = join(dir, `d${directory}`);
    await mkdir(path);
    const perDirectory = FILES / DIRECTORIES;
    await Promise.all(
      Array.from({ length: perDirectory }, (_, index) => {
        const number = directory * perDirectory + index;
        // One file in a thousand holds the needle.
        const text = number % 1000 === 7 ? `${body}\nneedle_token found in ${number}\n` : `${body}\n`;
        return writeFile(join(path, `f${index}.ts`), text);
      }),
    );
  }
}

async function benchGrep() {
  const dir = join(root, 'tree');
  await mkdir(dir);
  await generateTree(dir);
  const grep = createGrepTool();
  const args = { pattern: 'needle_token', path: dir, max_matches: 1000 };
  const rawArgv = [
    rgPath,
    '--json',
    '--glob',
    '!.git/',
    '--glob',
    '!node_modules/',
    '--glob',
    '!__pycache__/',
    '--glob',
    '!.venv/',
    '--glob',
    '!venv/',
    '--regexp',
    'needle_token',
    '--',
    dir,
  ];
  // Warm the page cache and both paths once.
  await call(grep, args, dir);
  await runRaw(rawArgv);
  const toolTimes = [];
  const rawTimes = [];
  let matches = 0;
  for (let run = 0; run < GREP_RUNS; run += 1) {
    const started = performance.now();
    const result = await call(grep, args, dir);
    toolTimes.push(performance.now() - started);
    matches = result.metadata?.matches ?? 0;
    rawTimes.push((await runRaw(rawArgv)).ms);
  }
  const tool = median(toolTimes);
  const raw = median(rawTimes);
  console.log(
    `grep_50k_files: ${tool.toFixed(1)} ms (ratio ${(tool / raw).toFixed(2)}x vs baseline raw rg ${raw.toFixed(1)} ms, target <= 1.15x; ${matches} matches, median of ${GREP_RUNS})`,
  );
  await rm(dir, { recursive: true, force: true });
}

async function benchBash() {
  const bash = createBashTool({ mode: 'unrestricted' });
  const { result, growth } = await withPeakRss(() => call(bash, { command: 'yes | head -c 1000000000' }, root));
  const output = JSON.parse(result.content).output;
  const headAndTail =
    output.startsWith('y\ny\ny\n') && output.endsWith('y\ny\ny\n') && result.metadata.stdout_bytes === 1_000_000_000;
  console.log(
    `bash_yes_1GB_rss_growth: ${(growth / MB).toFixed(1)} MB (ratio ${(growth / MB / 50).toFixed(2)}x vs target 50 MB, target <= 50 MB; ` +
      `${result.metadata.stdout_bytes} bytes streamed in ${result.metadata.duration_seconds}s, head and tail returned: ${headAndTail ? 'yes' : 'NO'})`,
  );
}

async function benchRead() {
  const path = join(root, 'big.log');
  const line = `${'x'.repeat(90)} payload line\n`;
  const chunkLines = Math.floor(MB / line.length);
  const chunk = Buffer.from(line.repeat(chunkLines));
  const chunks = Math.ceil(BIG_FILE_BYTES / chunk.length);
  await new Promise((resolve, reject) => {
    const stream = createWriteStream(path);
    let written = 0;
    const write = () => {
      while (written < chunks) {
        written += 1;
        if (!stream.write(chunk)) {
          stream.once('drain', write);
          return;
        }
      }
      stream.end(resolve);
    };
    stream.on('error', reject);
    write();
  });
  const totalLines = chunks * chunkLines;
  const read = createReadTool();
  const started = performance.now();
  const { result, growth } = await withPeakRss(() => call(read, { path, start_line: -100 }, root));
  const seconds = (performance.now() - started) / 1000;
  const shown = result.content.split('\n').filter((text) => /^\s*\d+ {2}/.test(text)).length;
  const correct = result.success && shown === 100 && result.metadata.total_lines === totalLines;
  console.log(
    `read_last_100_lines_2GB_rss_growth: ${(growth / MB).toFixed(1)} MB (ratio ${(growth / MB / 50).toFixed(2)}x vs target 50 MB, target <= 50 MB; ` +
      `${((chunks * chunk.length) / 1024 ** 3).toFixed(2)} GB scanned in ${seconds.toFixed(1)}s, last 100 of ${totalLines} lines returned: ${correct ? 'yes' : 'NO'})`,
  );
  await rm(path, { force: true });
}

const BACKEND_RUNS = 41;

async function benchBackends() {
  const wrapper = await sandboxWrapper();
  if (!wrapper.available) {
    console.log(`backends: sandbox not measured, ${wrapper.unavailableReason}`);
    if (process.env.CI === 'true') process.exitCode = 1;
    return;
  }
  const dir = join(root, 'backends');
  await mkdir(join(dir, 'src'), { recursive: true });
  const text = Array.from({ length: 200 }, (_, line) => `line ${line} of an ordinary text file`).join('\n');
  await writeFile(join(dir, 'small.txt'), `${text}\n`);
  for (let index = 0; index < 100; index += 1) {
    await writeFile(join(dir, 'src', `f${index}.ts`), index === 42 ? `${text}\nneedle_token\n` : `${text}\n`);
  }
  const startTimes = [];
  for (let run = 0; run < 5; run += 1) {
    const started = performance.now();
    const sandbox = await createSandboxBackend({ workingDir: dir });
    startTimes.push(performance.now() - started);
    await sandbox.close();
  }
  const local = createLocalBackend();
  const sandbox = await createSandboxBackend({ workingDir: dir });
  const allowEveryPath = async (path) => ({ allowed: true, realPath: path });
  const operations = [
    ['read', createReadTool(), () => ({ path: 'small.txt' })],
    [
      'write',
      createWriteTool({ mode: 'full', checkPath: allowEveryPath }),
      (run) => ({ path: `out-${run % 5}.txt`, content: text }),
    ],
    ['grep', createGrepTool(), () => ({ pattern: 'needle_token', path: 'src' })],
    ['bash_true', createBashTool({ mode: 'unrestricted' }), () => ({ command: 'true' })],
  ];
  try {
    for (const [name, tool, args] of operations) {
      const times = { local: [], sandbox: [] };
      for (let run = -3; run < BACKEND_RUNS; run += 1) {
        // Alternate the backends so load on the machine falls on both alike; the first runs warm up.
        for (const [label, backend] of [
          ['local', local],
          ['sandbox', sandbox],
        ]) {
          const started = performance.now();
          const result = await call(tool, args(run), dir, backend);
          const elapsed = performance.now() - started;
          if (!result.success) throw new Error(`${name} on ${label} failed: ${result.content}`);
          if (run >= 0) times[label].push(elapsed);
        }
      }
      const localMs = median(times.local);
      const sandboxMs = median(times.sandbox);
      console.log(
        `backend_${name}: sandbox ${sandboxMs.toFixed(2)} ms per call (ratio ${(sandboxMs / localMs).toFixed(2)}x vs baseline local ${localMs.toFixed(2)} ms, median of ${BACKEND_RUNS})`,
      );
    }
    // One call of the backend itself, without a tool around it: the protocol's round trip.
    const stats = { local: [], sandbox: [] };
    for (let run = -20; run < 400; run += 1) {
      for (const [label, backend] of [
        ['local', local],
        ['sandbox', sandbox],
      ]) {
        const started = performance.now();
        await backend.stat(join(dir, 'small.txt'));
        if (run >= 0) stats[label].push(performance.now() - started);
      }
    }
    console.log(
      `backend_stat_round_trip: sandbox ${(median(stats.sandbox) * 1000).toFixed(0)} µs per call (ratio ${(median(stats.sandbox) / median(stats.local)).toFixed(1)}x vs baseline local ${(median(stats.local) * 1000).toFixed(0)} µs, median of 400)`,
    );
    // Streaming: every byte of a command's output crosses the server's protocol (base64 in JSON lines).
    const bash = createBashTool({ mode: 'unrestricted' });
    const stream = { local: [], sandbox: [] };
    for (let run = 0; run < 3; run += 1) {
      for (const [label, backend] of [
        ['local', local],
        ['sandbox', sandbox],
      ]) {
        const started = performance.now();
        const result = await call(bash, { command: 'yes | head -c 100000000' }, dir, backend);
        if (result.metadata.stdout_bytes !== 100_000_000) throw new Error(`bash output on ${label} lost bytes`);
        stream[label].push(performance.now() - started);
      }
    }
    const localRate = 100 / (median(stream.local) / 1000);
    const sandboxRate = 100 / (median(stream.sandbox) / 1000);
    console.log(
      `backend_bash_output_100MB: sandbox ${sandboxRate.toFixed(0)} MB/s (ratio ${(localRate / sandboxRate).toFixed(2)}x slower vs baseline local ${localRate.toFixed(0)} MB/s, median of 3)`,
    );
  } finally {
    await sandbox.close();
  }
  console.log(
    `backend_sandbox_start: ${median(startTimes).toFixed(0)} ms to start the container and its server (median of 5)`,
  );
}

// Each memory measurement runs in a fresh child process, so what one stage allocated cannot hide
// (or inflate) the next stage's growth.
const stage = process.argv[2] === '--stage' ? process.argv[3] : undefined;
try {
  if (stage === 'bash') {
    await benchBash();
  } else if (stage === 'read') {
    await benchRead();
  } else if (stage === 'grep') {
    await benchGrep();
  } else if (stage === 'backends') {
    await benchBackends();
  } else {
    for (const name of ['bash', 'read']) {
      const child = spawn(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--stage', name], {
        stdio: 'inherit',
      });
      const code = await new Promise((resolve) => child.on('close', resolve));
      if (code !== 0) process.exitCode = 1;
    }
    await benchGrep();
    await benchBackends();
  }
} finally {
  await rm(root, { recursive: true, force: true });
}
