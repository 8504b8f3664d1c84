import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateAtifTrajectory } from '@rho/core/atif';
import type { AtifTrajectory } from '@rho/core/atif';
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
const jinja2 = python !== undefined && spawnSync(python, ['-c', 'import jinja2'], { encoding: 'utf8' }).status === 0;
const INSTRUCTION =
  "Create a file named hello.txt in the current directory containing exactly the line 'Hello, world!'.";

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A Terminal-Bench-shaped task: instruction.md, tests/test.sh (the verifier), app/ (the working directory). */
function fakeTask(): { root: string; app: string; logs: string; shims: string } {
  const root = mkdtempSync(join(tmpdir(), 'rho-harbor-'));
  for (const folder of ['app', 'tests', 'logs/agent', 'logs/verifier', 'shims'])
    mkdirSync(join(root, folder), { recursive: true });
  writeFileSync(join(root, 'instruction.md'), `${INSTRUCTION}\n`);
  // Terminal-Bench's verifier convention: tests/test.sh writes the reward to /logs/verifier/reward.txt.
  writeFileSync(
    join(root, 'tests', 'test.sh'),
    `#!/usr/bin/env bash\nif [ "$(cat hello.txt 2>/dev/null)" = "Hello, world!" ]; then echo 1 > "$LOGS/verifier/reward.txt"; else echo 0 > "$LOGS/verifier/reward.txt"; fi\n`,
  );
  // `rho` on PATH, as `npm install -g @rho/cli` leaves it.
  writeFileSync(join(root, 'shims', 'rho'), `#!/bin/sh\nexec "${process.execPath}" "${bin}" "$@"\n`);
  chmodSync(join(root, 'shims', 'rho'), 0o755);
  return { root, app: join(root, 'app'), logs: join(root, 'logs'), shims: join(root, 'shims') };
}

function sh(
  command: string,
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `set -o pipefail; ${command}`], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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
  if (python === undefined)
    return {
      command: `bash ${quote(runScript)} ${quote(instruction)}`,
      env: {
        OPENAI_API_KEY: hostEnv.OPENAI_API_KEY ?? '',
        OPENAI_BASE_URL: hostEnv.OPENAI_BASE_URL ?? '',
        RHO_MODEL: 'gpt-4o-mini',
      },
    };
  const result = spawnSync(python, ['rho_harbor_contract.py', 'command', instruction, 'openai/gpt-4o-mini'], {
    cwd: harborDir,
    env: { PATH: process.env.PATH, PYTHONDONTWRITEBYTECODE: '1', ...hostEnv },
    encoding: 'utf8',
  });
  expect(result.stderr).toBe('');
  const built = JSON.parse(result.stdout) as { command: string; env: Record<string, string> };
  // Installed in the container at /installed-agent; here it runs from the repository.
  expect(built.command.startsWith('bash /installed-agent/rho-harbor-run.sh ')).toBe(true);
  return { ...built, command: built.command.replace('/installed-agent/rho-harbor-run.sh', quote(runScript)) };
}

/**
 * Stand-ins for the parts of Harbor RhoAgent touches, in the two shapes its
 * `harbor/agents/installed/base.py` has had: `commands` (template path, template variables,
 * create_run_agent_commands -> ExecInput) and `install-run` (abstract install() and run(), with
 * exec_as_root/exec_as_agent). Only the interface is imitated; nothing of Harbor's behaviour.
 */
const HARBOR_STANDIN = {
  commands: `
from dataclasses import dataclass
from pathlib import Path

@dataclass
class ExecInput:
    command: str
    cwd: str | None = None
    env: dict | None = None
    timeout_sec: int | None = None

class BaseInstalledAgent:
    def __init__(self, logs_dir, model_name=None, *args, **kwargs):
        self.logs_dir = Path(logs_dir)
        self.model_name = model_name

    @property
    def _template_variables(self):
        return {}

    def create_run_agent_commands(self, instruction):
        raise NotImplementedError
`,
  'install-run': `
from pathlib import Path

class BaseInstalledAgent:
    def __init__(self, logs_dir, model_name=None, prompt_template_path=None, version=None, extra_env=None, *args, **kwargs):
        self.logs_dir = Path(logs_dir)
        self.model_name = model_name
        self.calls = []

    def render_instruction(self, instruction):
        return instruction

    async def exec_as_root(self, environment, command, env=None, cwd=None, timeout_sec=None):
        self.calls.append(("root", command, env))

    async def exec_as_agent(self, environment, command, env=None, cwd=None, timeout_sec=None):
        self.calls.append(("agent", command, env))
`,
} as const;

const DRIVER = `
import asyncio, json, os, sys
from pathlib import Path
standin, harbor_dir, logs_dir = sys.argv[1:4]
sys.path[:0] = [standin, harbor_dir]
from rho_harbor_agent import RhoAgent

class Context:
    n_input_tokens = n_cache_tokens = n_output_tokens = cost_usd = metadata = None

class Environment:
    def __init__(self):
        self.uploads = {}
    async def upload_file(self, source_path, target_path):
        self.uploads[target_path] = Path(source_path).read_text()

agent = RhoAgent(Path(logs_dir), model_name="openai/gpt-4o-mini", max_turns="50", max_cost_usd="2")
out = {"name": RhoAgent.name()}
if hasattr(agent, "create_run_agent_commands") and not hasattr(agent, "calls"):
    [command] = agent.create_run_agent_commands("Do it")
    out.update(command=command.command, env=command.env)
else:
    environment = Environment()
    asyncio.run(agent.run("Do it", environment, Context()))
    [(who, command, env)] = [call for call in agent.calls if call[0] == "agent"]
    out.update(command=command, env=env)
    try:
        import jinja2
    except ImportError:
        jinja2 = None
    if jinja2 is not None:
        asyncio.run(agent.install(environment))
        out.update(installScript=environment.uploads["/installed-agent/install-rho.sh"], installCommand=[call for call in agent.calls if call[0] == "root"][0][1])
context = Context()
agent.populate_context_post_run(context)
out["context"] = {key: getattr(context, key) for key in ("n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd", "metadata")}
print(json.dumps(out))
`;

/** Runs RhoAgent against one stand-in shape of Harbor's base class; returns what it did. */
function driveAgentClass(
  shape: keyof typeof HARBOR_STANDIN,
  logsDir: string,
): {
  error?: string;
  name?: string;
  command?: string;
  env?: Record<string, string>;
  context?: Record<string, unknown>;
  installScript?: string;
  installCommand?: string;
} {
  const standin = mkdtempSync(join(tmpdir(), 'rho-harbor-standin-'));
  mkdirSync(join(standin, 'harbor', 'agents', 'installed'), { recursive: true });
  for (const folder of ['harbor', 'harbor/agents', 'harbor/agents/installed'])
    writeFileSync(join(standin, folder, '__init__.py'), '');
  writeFileSync(join(standin, 'harbor', 'agents', 'installed', 'base.py'), HARBOR_STANDIN[shape]);
  const result = spawnSync(python!, ['-c', DRIVER, standin, harborDir, logsDir], {
    env: { PATH: process.env.PATH, PYTHONDONTWRITEBYTECODE: '1', OPENAI_API_KEY: 'host-key' },
    encoding: 'utf8',
  });
  if (result.status !== 0) return { error: result.stderr };
  return JSON.parse(result.stdout) as ReturnType<typeof driveAgentClass>;
}

describe('the Harbor adapter (integrations/harbor)', () => {
  it('runs a task headless in its working directory and leaves an ATIF trajectory and totals', async () => {
    server = await startLoopbackServer({
      steps: [
        {
          type: 'response',
          toolCalls: [{ name: 'write', arguments: JSON.stringify({ path: 'hello.txt', content: 'Hello, world!\n' }) }],
          usage: { prompt_tokens: 1200, completion_tokens: 30, cached_tokens: 200 },
        },
        { type: 'response', text: 'Created hello.txt.', usage: { prompt_tokens: 1300, completion_tokens: 6 } },
      ],
    });
    const task = fakeTask();
    const instruction = readFileSync(join(task.root, 'instruction.md'), 'utf8').trim();
    const { command, env } = runCommand(instruction, { OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: server.url });
    expect(env).toEqual({ OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: server.url, RHO_MODEL: 'gpt-4o-mini' });
    const containerEnv = {
      PATH: `${task.shims}:${process.env.PATH}`,
      HOME: task.root,
      RHO_HARBOR_LOGS_DIR: join(task.logs, 'agent'),
      ...env,
    };
    const outcome = await sh(command, { cwd: task.app, env: containerEnv });
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain('rho exited with 0');

    // the task's work, judged by the verifier's own test
    expect(readFileSync(join(task.app, 'hello.txt'), 'utf8')).toBe('Hello, world!\n');
    expect(
      (
        await sh(`LOGS=${quote(task.logs)} bash ${quote(join(task.root, 'tests', 'test.sh'))}`, {
          cwd: task.app,
          env: { PATH: process.env.PATH },
        })
      ).code,
    ).toBe(0);
    expect(readFileSync(join(task.logs, 'verifier', 'reward.txt'), 'utf8').trim()).toBe('1');

    // what Harbor reads: the trajectory, the events with the totals, the exit code
    const agentLogs = join(task.logs, 'agent');
    const trajectory = JSON.parse(readFileSync(join(agentLogs, 'trajectory.json'), 'utf8')) as AtifTrajectory;
    expect(validateAtifTrajectory(trajectory)).toEqual([]);
    expect(trajectory).toMatchObject({
      schema_version: 'ATIF-v1.6',
      agent: { name: 'rho', model_name: 'gpt-4o-mini' },
    });
    expect(trajectory.steps[0]).toMatchObject({ source: 'user', message: instruction });
    expect(trajectory.steps[1]).toMatchObject({
      source: 'agent',
      tool_calls: [{ function_name: 'write', arguments: { path: 'hello.txt' } }],
    });
    expect(trajectory.final_metrics).toMatchObject({
      total_prompt_tokens: 2500,
      total_completion_tokens: 36,
      total_cached_tokens: 200,
    });
    expect(readFileSync(join(agentLogs, 'rho-exit-code'), 'utf8').trim()).toBe('0');
    const events = readFileSync(join(agentLogs, 'rho-events.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; status?: string; usage?: Record<string, number> });
    const runEnd = events.at(-1)!;
    expect(runEnd).toMatchObject({
      type: 'run_end',
      status: 'completed',
      usage: { input_tokens: 2500, output_tokens: 36, cached_tokens: 200 },
    });
    // the session's trace stays in the mounted logs folder
    expect(existsSync(join(agentLogs, 'rho-home', 'sessions'))).toBe(true);
    // the working directory was the task's
    expect(server.requests[0]!.body.messages[0].content).toContain(task.app);

    if (python === undefined) return;
    // populate_context_post_run's reading of those files
    const totals = spawnSync(python, ['rho_harbor_contract.py', 'totals', agentLogs], {
      cwd: harborDir,
      env: { PATH: process.env.PATH, PYTHONDONTWRITEBYTECODE: '1' },
      encoding: 'utf8',
    });
    expect(JSON.parse(totals.stdout)).toEqual({
      n_input_tokens: 2500,
      n_cache_tokens: 200,
      n_output_tokens: 36,
      cost_usd: runEnd.usage!.cost_usd,
      status: 'completed',
      exit_code: 0,
    });

    // RhoAgent itself, on both shapes of Harbor's BaseInstalledAgent (stand-ins written from
    // Harbor's source, which is not installed here): the commands it gives Harbor and the context it fills
    for (const shape of ['commands', 'install-run'] as const) {
      const driven = driveAgentClass(shape, agentLogs);
      expect(driven.error, shape).toBeUndefined();
      expect(driven.command, shape).toBe("bash /installed-agent/rho-harbor-run.sh 'Do it'");
      expect(driven.env, shape).toEqual({
        OPENAI_API_KEY: 'host-key',
        RHO_MODEL: 'gpt-4o-mini',
        RHO_MAX_TURNS: '50',
        RHO_MAX_COST: '2.0',
      });
      expect(driven.context, shape).toEqual({
        n_input_tokens: 2500,
        n_cache_tokens: 200,
        n_output_tokens: 36,
        cost_usd: runEnd.usage!.cost_usd,
        metadata: { rho_status: 'completed', rho_exit_code: 0 },
      });
      expect(driven.name, shape).toBe('rho');
      if (shape === 'install-run' && jinja2) {
        // rendered by Jinja2 as Harbor would, uploaded, and run as root
        expect(driven.installCommand).toBe('bash /installed-agent/install-rho.sh');
        expect(driven.installScript).toBeDefined();
        expect(driven.installScript).toContain('npm install -g --no-fund --no-audit "@rho/cli"');
        expect(driven.installScript).toContain(readFileSync(runScript, 'utf8').trimEnd());
        const rendered = join(mkdtempSync(join(tmpdir(), 'rho-harbor-')), 'install-rho.sh');
        writeFileSync(rendered, driven.installScript!);
        expect(spawnSync('bash', ['-n', rendered], { encoding: 'utf8' }).stderr).toBe('');
      }
    }
  });

  it('passes an instruction that looks like flags through as the task', async () => {
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'Nothing to do.' }] });
    const task = fakeTask();
    const instruction = "--help -p x; echo 'not run'\n- then a list\n$HOME `id`";
    const { command, env } = runCommand(instruction, { OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: server.url });
    const outcome = await sh(command, {
      cwd: task.app,
      env: {
        PATH: `${task.shims}:${process.env.PATH}`,
        HOME: task.root,
        RHO_HARBOR_LOGS_DIR: join(task.logs, 'agent'),
        ...env,
      },
    });
    expect(outcome.code).toBe(0);
    expect(readFileSync(join(task.logs, 'agent', 'rho-exit-code'), 'utf8').trim()).toBe('0');
    expect(server.requests[0]!.body.messages.at(-1)).toEqual({ role: 'user', content: instruction });
  });

  it('fails the trial (exit 2) when rho refuses its configuration, and says why', async () => {
    const task = fakeTask();
    const { command } = runCommand(INSTRUCTION, {});
    const outcome = await sh(command, {
      cwd: task.app,
      env: {
        PATH: `${task.shims}:${process.env.PATH}`,
        HOME: task.root,
        RHO_HARBOR_LOGS_DIR: join(task.logs, 'agent'),
      },
    });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('Missing API key');
    expect(readFileSync(join(task.logs, 'agent', 'rho-exit-code'), 'utf8').trim()).toBe('2');
  });

  it('ships shell scripts that parse, and Python modules that compile', async (context) => {
    expect(spawnSync('bash', ['-n', runScript]).status).toBe(0);
    // the install template, rendered with its variables, is valid bash too
    const template = readFileSync(join(harborDir, 'install-rho.sh.j2'), 'utf8');
    const rendered = template.replace(
      /\{\{ (\w+) \}\}/g,
      (_, name: string) =>
        ({
          package_spec: '@rho/cli@0.1.0',
          node_version: '22.23.5',
          run_script: readFileSync(runScript, 'utf8').trimEnd(),
        })[name] ?? `<${name}?>`,
    );
    expect(rendered).not.toContain('?>');
    const renderedPath = join(mkdtempSync(join(tmpdir(), 'rho-harbor-')), 'install-rho.sh');
    writeFileSync(renderedPath, rendered);
    expect(spawnSync('bash', ['-n', renderedPath], { encoding: 'utf8' }).stderr).toBe('');
    if (python === undefined) {
      context.skip('python3 is not installed: the Python modules were not compiled');
      return;
    }
    const cache = mkdtempSync(join(tmpdir(), 'rho-pycache-'));
    const compiled = spawnSync(
      python,
      ['-X', `pycache_prefix=${cache}`, '-m', 'py_compile', 'rho_harbor_agent.py', 'rho_harbor_contract.py'],
      { cwd: harborDir, encoding: 'utf8' },
    );
    expect(compiled.stderr).toBe('');
    expect(compiled.status).toBe(0);
    // The variables the agent class renders the template with are the ones it uses.
    const variables = spawnSync(
      python,
      ['-c', 'import json, rho_harbor_contract as c; print(json.dumps(sorted(c.template_variables())))'],
      { cwd: harborDir, env: { PATH: process.env.PATH, PYTHONDONTWRITEBYTECODE: '1' }, encoding: 'utf8' },
    );
    expect(JSON.parse(variables.stdout)).toEqual(
      [...new Set([...template.matchAll(/\{\{ (\w+) \}\}/g)].map((match) => match[1]))].sort(),
    );
  });
});
