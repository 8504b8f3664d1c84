import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLocalBackend, type ExecutionBackend } from '@rho/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBashTool, type ShellGate } from './bash-tool.js';
import type { Plan } from './internal/plan-runner.js';
import { call, contextFor, temporaryDirectory } from './test-support/harness.js';

const bash = createBashTool({ mode: 'unrestricted', killGraceSeconds: 0.5 });
let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory());
});
afterEach(async () => {
  await cleanup();
});

const parse = (content: string): { output: string; metadata: { exit_code: number; duration_seconds: number } } =>
  JSON.parse(content) as { output: string; metadata: { exit_code: number; duration_seconds: number } };

/** Alive and not a zombie (PID 1 here does not reap orphans). */
async function isRunning(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('bash (unrestricted)', () => {
  it('shows what the model sees', () => {
    expect({ name: bash.name, description: bash.description, parameters: bash.parameters }).toMatchSnapshot();
    // Declared effects: without a profile, the agent's default policy asks before destructive tools.
    expect(bash.annotations).toEqual({ destructive: true, openWorld: true });
    expect(bash).not.toHaveProperty('requiresApproval');
  });

  it('returns the original JSON shape, with stdout and stderr joined', async () => {
    const result = await call(bash, { command: 'echo out; echo err >&2' }, contextFor(dir));
    expect(result.success).toBe(true);
    const parsed = parse(result.content);
    expect(parsed.output).toBe('out\n\nerr\n');
    expect(parsed.metadata.exit_code).toBe(0);
    expect(typeof parsed.metadata.duration_seconds).toBe('number');
    expect(Object.keys(JSON.parse(result.content) as object)).toEqual(['output', 'metadata']);
    expect(result.content).toContain('\n  "output"');
    expect(result.metadata).toMatchObject({ exit_code: 0, command: 'echo out; echo err >&2', working_dir: dir });
  });

  it('runs bash, not sh, in the working directory or the override', async () => {
    const result = await call(bash, { command: 'echo ${BASH_VERSION:+bash} $(pwd)' }, contextFor(dir));
    expect(parse(result.content).output).toBe(`bash ${dir}\n`);
    const sub = await call(bash, { command: 'mkdir -p sub && cd sub && pwd' }, contextFor(dir));
    expect(parse(sub.content).output).toBe(`${join(dir, 'sub')}\n`);
    expect(parse((await call(bash, { command: 'pwd', working_dir: 'sub' }, contextFor(dir))).content).output).toBe(
      `${join(dir, 'sub')}\n`,
    );
  });

  it('fails on a non-zero exit, an empty command and a missing working directory', async () => {
    const result = await call(bash, { command: 'exit 3' }, contextFor(dir));
    expect(result.success).toBe(false);
    expect(parse(result.content).metadata.exit_code).toBe(3);
    expect(await call(bash, { command: '  ' }, contextFor(dir))).toEqual({
      content: 'No command provided',
      success: false,
    });
    expect(await call(bash, { command: 'ls', working_dir: 'nope' }, contextFor(dir))).toEqual({
      content: `Working directory not found: ${join(dir, 'nope')}`,
      success: false,
    });
  });

  it('kills the whole process group on timeout, even a child that ignores SIGTERM', async () => {
    const pidFile = join(dir, 'pid');
    const started = Date.now();
    const result = await call(
      bash,
      { command: `trap '' TERM; (trap '' TERM; sleep 60) & echo $! > ${pidFile}; echo started; wait`, timeout: 1 },
      contextFor(dir),
    );
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(result.success).toBe(false);
    const parsed = parse(result.content);
    expect(parsed.output).toBe('started\n\n\n[Command timed out after 1s and was killed]');
    expect(parsed.metadata.exit_code).toBe(-1);
    expect(result.metadata).toMatchObject({ timed_out: true });
    const pid = Number(await readFile(pidFile, 'utf8'));
    expect(await isRunning(pid)).toBe(false);
  });

  it('kills the command when the run is cancelled', async () => {
    const controller = new AbortController();
    const pidFile = join(dir, 'pid');
    const running = call(
      bash,
      { command: `sleep 60 & echo $! > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile}; wait` },
      contextFor(dir, controller.signal),
    );
    // Cancel once the background sleep has started and its pid is written whole.
    const deadline = Date.now() + 20_000;
    while (!existsSync(pidFile)) {
      if (Date.now() > deadline) throw new Error(`The command did not write ${pidFile}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    controller.abort();
    const result = await running;
    expect(result.success).toBe(false);
    expect(parse(result.content).output).toBe('\n\n[Command was cancelled and killed]');
    expect(result.metadata).toMatchObject({ cancelled: true, exit_code: -1 });
    expect(await isRunning(Number(await readFile(pidFile, 'utf8')))).toBe(false);
  });

  it('keeps the head and tail of huge output and counts every byte', async () => {
    const result = await call(bash, { command: 'seq 1 3000000' }, contextFor(dir));
    const output = parse(result.content).output;
    expect(output.startsWith('1\n2\n3\n')).toBe(true);
    expect(output.endsWith('2999999\n3000000\n')).toBe(true);
    expect(output).toMatch(/\[\.\.\. \d+ bytes of output omitted \.\.\.\]/);
    expect(Buffer.byteLength(result.content)).toBeLessThan(20_000);
    expect(result.metadata).toMatchObject({ stdout_bytes: 22_888_896 });
  });

  it('reports a shell that cannot be started', async () => {
    const local = createLocalBackend();
    const noBash: ExecutionBackend = {
      ...local,
      spawn: (options) => local.spawn({ ...options, env: { PATH: join(dir, 'empty') } }),
    };
    const result = await call(
      createBashTool({ mode: 'unrestricted', backend: noBash }),
      { command: 'ls' },
      contextFor(dir),
    );
    expect(result).toEqual({ content: 'Error executing command: spawn bash ENOENT', success: false });
  });

  it('does not wait forever for background children that keep the pipe open', async () => {
    const result = await call(bash, { command: 'sleep 30 & echo done' }, contextFor(dir));
    expect(parse(result.content).output).toBe('done\n');
  });
});

/** A gate standing in for the shell policy: allows exactly the plans it was given. */
function gateFor(plans: Record<string, Plan>): ShellGate {
  return async (command) => {
    const plan = plans[command];
    if (plan === undefined) return { allowed: false, reason: `Command '${command}' is not in the allowlist` };
    return { allowed: true, plan, env: { PATH: process.env['PATH'], LC_ALL: 'C' } };
  };
}

describe('bash (restricted plan execution, no shell)', () => {
  const single = (argv: string[]): Plan => ({ steps: [{ operator: 'start', pipeline: [{ argv }] }] });
  const plans: Record<string, Plan> = {
    'printf "a\\nb\\nc\\n" | grep b': {
      steps: [{ operator: 'start', pipeline: [{ argv: ['printf', 'a\\nb\\nc\\n'] }, { argv: ['grep', 'b'] }] }],
    },
    'false && echo no || echo yes; echo end': {
      steps: [
        { operator: 'start', pipeline: [{ argv: ['false'] }] },
        { operator: '&&', pipeline: [{ argv: ['echo', 'no'] }] },
        { operator: '||', pipeline: [{ argv: ['echo', 'yes'] }] },
        { operator: ';', pipeline: [{ argv: ['echo', 'end'] }] },
      ],
    },
    'yes | head -n 3': { steps: [{ operator: 'start', pipeline: [{ argv: ['yes'] }, { argv: ['head', '-n', '3'] }] }] },
    'ls missing 2>&1 | wc -l': {
      steps: [
        { operator: 'start', pipeline: [{ argv: ['ls', 'missing'], stderrToStdout: true }, { argv: ['wc', '-l'] }] },
      ],
    },
    'ls missing 2>/dev/null': {
      steps: [{ operator: 'start', pipeline: [{ argv: ['ls', 'missing'], stderrToDevNull: true }] }],
    },
    'echo hidden >/dev/null': {
      steps: [{ operator: 'start', pipeline: [{ argv: ['echo', 'hidden'], stdoutToDevNull: true }] }],
    },
    'no-such-program-rho': single(['no-such-program-rho']),
    'echo $HOME': single(['echo', '$HOME']),
    'sleep 30': single(['sleep', '30']),
  };
  const restricted = createBashTool({ mode: 'restricted', gate: gateFor(plans), killGraceSeconds: 0.5 });

  it('shows what the model sees', () => {
    expect({
      name: restricted.name,
      description: restricted.description,
      parameters: restricted.parameters,
    }).toMatchSnapshot();
    expect(restricted.annotations).toEqual({ destructive: false });
  });

  it('refuses what the gate refuses, with its reason', async () => {
    expect(await call(restricted, { command: 'rm -rf /' }, contextFor(dir))).toEqual({
      content: "Command blocked: Command 'rm -rf /' is not in the allowlist",
      success: false,
      metadata: { command: 'rm -rf /', working_dir: dir },
    });
  });

  it('wires pipelines and applies && || ; by exit status', async () => {
    expect(
      parse((await call(restricted, { command: 'printf "a\\nb\\nc\\n" | grep b' }, contextFor(dir))).content).output,
    ).toBe('b\n');
    const list = await call(restricted, { command: 'false && echo no || echo yes; echo end' }, contextFor(dir));
    expect(parse(list.content)).toMatchObject({ output: 'yes\nend\n', metadata: { exit_code: 0 } });
    expect(parse((await call(restricted, { command: 'yes | head -n 3' }, contextFor(dir))).content).output).toBe(
      'y\ny\ny\n',
    );
  });

  it('applies the allowed redirections', async () => {
    expect(
      parse((await call(restricted, { command: 'ls missing 2>&1 | wc -l' }, contextFor(dir))).content).output.trim(),
    ).toBe('1');
    const quiet = parse((await call(restricted, { command: 'ls missing 2>/dev/null' }, contextFor(dir))).content);
    expect(quiet.output).toBe('');
    expect(quiet.metadata.exit_code).toBe(2);
    expect(parse((await call(restricted, { command: 'echo hidden >/dev/null' }, contextFor(dir))).content).output).toBe(
      '',
    );
  });

  it('never expands anything: the argv runs exactly as checked', async () => {
    expect(parse((await call(restricted, { command: 'echo $HOME' }, contextFor(dir))).content).output).toBe('$HOME\n');
  });

  it('reports a missing program like bash does', async () => {
    const result = parse((await call(restricted, { command: 'no-such-program-rho' }, contextFor(dir))).content);
    expect(result).toMatchObject({ output: 'no-such-program-rho: command not found\n', metadata: { exit_code: 127 } });
  });

  it('times out and is cancelled like unrestricted commands', async () => {
    const timedOut = await call(restricted, { command: 'sleep 30', timeout: 1 }, contextFor(dir));
    expect(timedOut.metadata).toMatchObject({ timed_out: true, exit_code: -1 });
    const controller = new AbortController();
    // Not a race: cancelled before or after the command starts, the result says cancelled.
    setTimeout(() => controller.abort(), 300);
    const cancelled = await call(restricted, { command: 'sleep 30' }, contextFor(dir, controller.signal));
    expect(cancelled.metadata).toMatchObject({ cancelled: true });
  });
});
