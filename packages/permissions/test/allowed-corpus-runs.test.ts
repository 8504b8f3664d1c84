/**
 * Runs every allowed line of the shell corpus the way restricted mode does: the checked plan,
 * hardened, spawned without a shell (pipes wired here), first directly and then inside the
 * bubblewrap sandbox when it is available. It proves that hardening (git -c ..., sed --sandbox,
 * gawk --sandbox, curl -q --proto, the scrubbed environment) and the read-only sandbox leave
 * legitimate inspections working. (The restricted bash tool in @rho/tools-fs has its own run.)
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { checkShellCommand, type ShellCommand, type ShellPlan } from '../src/check-shell-command.js';
import { hardenPlan } from '../src/harden-plan.js';
import { sandboxWrapper } from '../src/sandbox-wrapper.js';

interface CorpusCase {
  command: string;
  allowed: boolean;
  setup?: string;
}

const corpus = JSON.parse(readFileSync(new URL('./shell-corpus.json', import.meta.url), 'utf8')) as CorpusCase[];
const allowed = corpus.filter((entry) => entry.allowed);
let server: Server;
let port = 0;

beforeAll(async () => {
  server = createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end(request.method === 'HEAD' ? undefined : 'ok\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function runPipeline(
  pipeline: ShellCommand[],
  options: { cwd: string; env: NodeJS.ProcessEnv; wrap: (argv: string[]) => string[] },
): Promise<{ status: number; output: string }> {
  return new Promise((resolve) => {
    let output = '';
    let input: Readable | 'ignore' | number = 'ignore';
    let lastStatus = 0;
    let remaining = pipeline.length;
    const devNull = openSync('/dev/null', 'w');
    pipeline.forEach((command, index) => {
      const last = index === pipeline.length - 1;
      const argv = options.wrap(command.argv);
      const own = command.stdin;
      if (own && typeof input === 'object') input.destroy();
      const stdin = own ? ('file' in own ? openSync(own.file, 'r') : 'pipe') : input;
      const child = spawn(argv[0] as string, argv.slice(1), {
        cwd: options.cwd,
        env: { ...options.env, ...command.env },
        stdio: [stdin, command.stdoutToDevNull ? devNull : 'pipe', command.stderrToDevNull ? devNull : 'pipe'],
      });
      if (own && 'text' in own) child.stdin?.end(own.text);
      // The child holds its own copy of the pipe; the parent's end must not read from it or keep it open.
      if (typeof input === 'object' && !own) input.destroy();
      const stdout = child.stdout;
      if (command.stderrToStdout && child.stderr) {
        if (last || command.stdoutToDevNull) child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        else child.stderr.on('data', () => undefined);
      } else child.stderr?.on('data', () => undefined);
      if (last) stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      input = stdout ?? 'ignore';
      child.on('error', () => undefined);
      child.on('close', (code) => {
        if (last) lastStatus = code ?? 1;
        remaining -= 1;
        if (remaining === 0) resolve({ status: lastStatus, output });
      });
    });
  });
}

async function runPlan(plan: ShellPlan, cwd: string, env: NodeJS.ProcessEnv, wrap: (argv: string[]) => string[]) {
  let status = 0;
  let output = '';
  for (const step of plan.steps) {
    if (step.operator === '&&' && status !== 0) continue;
    if (step.operator === '||' && status === 0) continue;
    const result = await runPipeline(step.pipeline, { cwd, env, wrap });
    status = result.status;
    output += result.output;
  }
  return { status, output };
}

function setupScratch(entry: CorpusCase): Promise<string> {
  const scratch = mkdtempSync(join(tmpdir(), 'rho-allowed-'));
  mkdirSync(join(scratch, '.home'));
  if (!entry.setup) return Promise.resolve(scratch);
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', entry.setup ?? ''], { cwd: scratch, stdio: 'ignore' });
    child.on('close', (code) => (code === 0 ? resolve(scratch) : reject(new Error(`setup failed: ${entry.setup}`))));
  });
}

describe.each([false, true])('allowed corpus lines run (sandboxed: %s)', (sandboxed) => {
  test.each(allowed.map((entry) => [entry.command, entry] as const))('%s', async (_name, entry) => {
    const sandbox = await sandboxWrapper();
    if (sandboxed && !sandbox.available) return;
    const scratch = await setupScratch(entry);
    const decision = await checkShellCommand(entry.command.replaceAll('{PORT}', String(port)), { cwd: scratch });
    if (!decision.allowed) throw new Error(`refused: ${decision.reason}`);
    const hardened = hardenPlan(decision.plan);
    const env = hardened.env({ ...process.env, HOME: join(scratch, '.home') });
    const wrap = sandboxed
      ? (argv: string[]) =>
          sandbox.wrap(argv, { cwd: scratch, allowNetwork: argv.includes('curl') || argv.includes('wget') })
      : (argv: string[]) => argv;
    const result = await runPlan(hardened.plan, scratch, env, wrap);
    expect(result.status, result.output).toBe(0);
  });
});
