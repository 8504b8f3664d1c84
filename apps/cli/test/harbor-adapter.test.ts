import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateAtifTrajectory } from '@rho/core';
import type { AtifTrajectory } from '@rho/core';
import type { LoopbackServer } from '@rho/core/testing';
import { startLoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { bin } from './support/run-rho.js';

// The Harbor adapter's contract, exercised the way Harbor uses it: the run command is executed
// with bash in the task's working directory, with the environment the agent class gives it,
// then the verifier's test runs and the outputs Harbor reads are checked. No Harbor and no
// Docker here: the container is a temporary directory, the model the loopback server.
const harborDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'integrations', 'harbor');
const runScript = join(harborDir, 'rho-harbor-run.sh');
const python = spawnSync('python3', ['--version'], { encoding: 'utf8' }).status === 0 ? 'python3' : undefined;
const INSTRUCTION = "Create a file named hello.txt in the current directory containing exactly the line 'Hello, world!'.";

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A Terminal-Bench-shaped task: instruction.md, tests/test.sh (the verifier), app/ (the working directory). */
function fakeTask(): { root: string; app: string; logs: string; shims: string } {
  const root = mkdtempSync(join(tmpdir(), 'rho-harbor-'));
  for (const folder of ['app', 'tests', 'logs/agent', 'logs/verifier', 'shims']) mkdirSync(join(root, folder), { recursive: true });
  writeFileSync(join(root, 'instruction.md'), `${INSTRUCTION}\n`);
  // Terminal-Bench's verifier convention: tests/test.sh writes the reward to /logs/verifier/reward.txt.
  writeFileSync(join(root, 'tests', 'test.sh'), `#!/usr/bin/env bash\nif [ "$(cat hello.txt 2>/dev/null)" = "Hello, world!" ]; then echo 1 > "$LOGS/verifier/reward.txt"; else echo 0 > "$LOGS/verifier/reward.txt"; fi\n`);
  // `rho` on PATH, as `npm install -g @rho/cli` leaves it.
  writeFileSync(join(root, 'shims', 'rho'), `#!/bin/sh\nexec "${process.execPath}" "${bin}" "$@"\n`);
  chmodSync(join(root, 'shims', 'rho'), 0o755);
  return { root, app: join(root, 'app'), logs: join(root, 'logs'), shims: join(root, 'shims') };
}

function sh(command: string, options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `set -o pipefail; ${command}`], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const quote = (text: string) => `'${text.replace(/'/g, `'"'"'`)}'`;

/** The command and environment the agent class builds (through Python when there is one). */
function runCommand(instruction: string, hostEnv: NodeJS.ProcessEnv): { command: string; env: Record<string, string> } {
  if (python === undefined) return { command: `bash ${quote(runScript)} ${quote(instruction)}`, env: { OPENAI_API_KEY: hostEnv.OPENAI_API_KEY ?? '', OPENAI_BASE_URL: hostEnv.OPENAI_BASE_URL ?? '', RHO_MODEL: 'gpt-4o-mini' } };
  const result = spawnSync(python, ['rho_harbor_contract.py', 'command', instruction, 'openai/gpt-4o-mini'], { cwd: harborDir, env: { PATH: process.env.PATH, PYTHONDONTWRITEBYTECODE: '1', ...hostEnv }, encoding: 'utf8' });
  expect(result.stderr).toBe('');
  const built = JSON.parse(result.stdout) as { command: string; env: Record<string, string> };
  // Installed in the container at /installed-agent; here it runs from the repository.
  expect(built.command.startsWith('bash /installed-agent/rho-harbor-run.sh ')).toBe(true);
  return { ...built, command: built.command.replace('/installed-agent/rho-harbor-run.sh', quote(runScript)) };
}

describe('the Harbor adapter (integrations/harbor)', () => {
  it('runs a task headless in its working directory and leaves an ATIF trajectory and totals', async () => {
    server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'write', arguments: JSON.stringify({ path: 'hello.txt', content: 'Hello, world!\n' }) }], usage: { prompt_tokens: 1200, completion_tokens: 30, cached_tokens: 200 } },
        { type: 'response', text: 'Created hello.txt.', usage: { prompt_tokens: 1300, completion_tokens: 6 } },
      ],
    });
    const task = fakeTask();
    const instruction = readFileSync(join(task.root, 'instruction.md'), 'utf8').trim();
    const { command, env } = runCommand(instruction, { OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: server.url });
    expect(env).toEqual({ OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: server.url, RHO_MODEL: 'gpt-4o-mini' });
    const containerEnv = { PATH: `${task.shims}:${process.env.PATH}`, HOME: task.root, RHO_HARBOR_LOGS_DIR: join(task.logs, 'agent'), ...env };
    const outcome = await sh(command, { cwd: task.app, env: containerEnv });
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain('rho exited with 0');

    // the task's work, judged by the verifier's own test
    expect(readFileSync(join(task.app, 'hello.txt'), 'utf8')).toBe('Hello, world!\n');
    expect((await sh(`LOGS=${quote(task.logs)} bash ${quote(join(task.root, 'tests', 'test.sh'))}`, { cwd: task.app, env: { PATH: process.env.PATH } })).code).toBe(0);
    expect(readFileSync(join(task.logs, 'verifier', 'reward.txt'), 'utf8').trim()).toBe('1');

    // what Harbor reads: the trajectory, the events with the totals, the exit code
    const agentLogs = join(task.logs, 'agent');
    const trajectory = JSON.parse(readFileSync(join(agentLogs, 'trajectory.json'), 'utf8')) as AtifTrajectory;
    expect(validateAtifTrajectory(trajectory)).toEqual([]);
    expect(trajectory).toMatchObject({ schema_version: 'ATIF-v1.6', agent: { name: 'rho', model_name: 'gpt-4o-mini' } });
    expect(trajectory.steps[0]).toMatchObject({ source: 'user', message: instruction });
    expect(trajectory.steps[1]).toMatchObject({ source: 'agent', tool_calls: [{ function_name: 'write', arguments: { path: 'hello.txt' } }] });
    expect(trajectory.final_metrics).toMatchObject({ total_prompt_tokens: 2500, total_completion_tokens: 36, total_cached_tokens: 200 });
    expect(readFileSync(join(agentLogs, 'rho-exit-code'), 'utf8').trim()).toBe('0');
    const events = readFileSync(join(agentLogs, 'rho-events.jsonl'), 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as { type: string; status?: string; usage?: Record<string, number> });
    const runEnd = events.at(-1)!;
    expect(runEnd).toMatchObject({ type: 'run_end', status: 'completed', usage: { input_tokens: 2500, output_tokens: 36, cached_tokens: 200 } });
    // the session's trace stays in the mounted logs folder
    expect(existsSync(join(agentLogs, 'rho-home', 'sessions'))).toBe(true);
    // the working directory was the task's
    expect(server.requests[0]!.body.messages[0].content).toContain(task.app);

    if (python === undefined) return;
    // populate_context_post_run's reading of those files
    const totals = spawnSync(python, ['rho_harbor_contract.py', 'totals', agentLogs], { cwd: harborDir, env: { PATH: process.env.PATH, PYTHONDONTWRITEBYTECODE: '1' }, encoding: 'utf8' });
    expect(JSON.parse(totals.stdout)).toEqual({ n_input_tokens: 2500, n_cache_tokens: 200, n_output_tokens: 36, cost_usd: runEnd.usage!.cost_usd, status: 'completed', exit_code: 0 });
  });

  it('fails the trial (exit 2) when rho refuses its configuration, and says why', async () => {
    const task = fakeTask();
    const { command } = runCommand(INSTRUCTION, {});
    const outcome = await sh(command, { cwd: task.app, env: { PATH: `${task.shims}:${process.env.PATH}`, HOME: task.root, RHO_HARBOR_LOGS_DIR: join(task.logs, 'agent') } });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('Missing API key');
    expect(readFileSync(join(task.logs, 'agent', 'rho-exit-code'), 'utf8').trim()).toBe('2');
  });

  it('ships shell scripts that parse, and Python modules that compile', async (context) => {
    expect(spawnSync('bash', ['-n', runScript]).status).toBe(0);
    // the install template, rendered with its variables, is valid bash too
    const template = readFileSync(join(harborDir, 'install-rho.sh.j2'), 'utf8');
    const rendered = template.replace(/\{\{ (\w+) \}\}/g, (_, name: string) => ({ package_spec: '@rho/cli@0.1.0', node_version: '22.12.0', run_script: readFileSync(runScript, 'utf8').trimEnd() })[name] ?? `<${name}?>`);
    expect(rendered).not.toContain('?>');
    const renderedPath = join(mkdtempSync(join(tmpdir(), 'rho-harbor-')), 'install-rho.sh');
    writeFileSync(renderedPath, rendered);
    expect(spawnSync('bash', ['-n', renderedPath], { encoding: 'utf8' }).stderr).toBe('');
    if (python === undefined) {
      context.skip('python3 is not installed: the Python modules were not compiled');
      return;
    }
    const cache = mkdtempSync(join(tmpdir(), 'rho-pycache-'));
    const compiled = spawnSync(python, ['-X', `pycache_prefix=${cache}`, '-m', 'py_compile', 'rho_harbor_agent.py', 'rho_harbor_contract.py'], { cwd: harborDir, encoding: 'utf8' });
    expect(compiled.stderr).toBe('');
    expect(compiled.status).toBe(0);
    // The variables the agent class renders the template with are the ones it uses.
    const variables = spawnSync(python, ['-c', 'import json, rho_harbor_contract as c; print(json.dumps(sorted(c.template_variables())))'], { cwd: harborDir, env: { PATH: process.env.PATH, PYTHONDONTWRITEBYTECODE: '1' }, encoding: 'utf8' });
    expect(JSON.parse(variables.stdout)).toEqual([...new Set([...template.matchAll(/\{\{ (\w+) \}\}/g)].map((match) => match[1]))].sort());
  });
});
