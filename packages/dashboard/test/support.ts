import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, defineTool, SessionStore } from '@rho/core';
import type { ApprovalPolicy, RunResult } from '@rho/core';
import { createModelClient } from '@rho/model-client';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer, LoopbackStep } from '@rho/core/testing';

/** A fresh temporary `sessions` directory. */
export function temporarySessions(): string {
  return join(mkdtempSync(join(tmpdir(), 'rho-dashboard-')), 'sessions');
}

/** A promise with its resolve exposed: a step that waits for the test. */
export function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

/** Polls until `probe` returns something truthy (generous timeout: the machine may be loaded). */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const look = defineTool({
  name: 'look',
  description: 'Looks at something.',
  parameters: { type: 'object', properties: { what: { type: 'string' } }, required: ['what'] },
  annotations: { readOnly: true },
  async handle({ arguments: { what } }) {
    return { content: `saw ${what}`, success: true };
  },
});

/** A real session: core's Session in a directory of `base`, talking to a loopback OpenAI-compatible server. */
export interface ScriptedRun {
  id: string;
  directory: string;
  server: LoopbackServer;
  /** The run's outcome. */
  done: Promise<RunResult>;
}

/**
 * Starts a real run (core's Agent and Session, the real model client over HTTP) whose model
 * answers come from `respond`, in a new session directory under `base`. The session polls its
 * file control channel every 50 ms, so pause and cancel from the dashboard reach it.
 */
export async function startScriptedRun(
  base: string,
  prompt: string,
  respond: (turn: number) => LoopbackStep | Promise<LoopbackStep>,
  options: { profile?: string } = {},
): Promise<ScriptedRun> {
  let turn = 0;
  const server = await startLoopbackServer({ respond: () => respond(turn++) });
  const { id, directory } = new SessionStore(base).create({
    model: 'gpt-4o-mini',
    ...(options.profile === undefined ? {} : { profile: options.profile }),
  });
  const agent = new Agent({
    systemPrompt: 'You are a test agent.',
    tools: [look],
    client: createModelClient({ model: 'gpt-4o-mini', baseURL: server.url, apiKey: 'test', maxRetries: 0 }),
  });
  const session = agent.createSession({ id, directory, pollIntervalMs: 50 });
  const done = session.run(prompt);
  return { id, directory, server, done };
}

/** A real session whose tool calls wait for approval, with what its tool really ran. */
export interface ApprovalRun extends ScriptedRun {
  /** The commands the `shell` tool ran, in order (a call runs only once approved). */
  ran: string[];
}

/** Every `shell` call needs approval; a command with `rm -rf` is dangerous. */
const askForShell: ApprovalPolicy = (_tool, args) =>
  String(args.command).includes('rm -rf')
    ? { required: true, reason: 'the arguments contain the dangerous pattern "rm -rf"', dangerous: 'rm -rf' }
    : { required: true, reason: 'the profile asks for approval of shell' };

/**
 * Starts a real run (core's Agent and Session, the real model client over HTTP) whose model asks
 * for one `shell` call per command, each with the call id `call_<n>` (n from 1), then answers
 * "Done."; every call needs approval and nobody is there to answer (`approvals.unattended:
 * 'wait'`), so each waits in `waiting_approval`, its `approval_requested` in the trace, until an
 * operator answers it through the session's file channel (polled every 50 ms). `signal` stops
 * the run from outside, as SIGTERM does rho: a run stopped while a call waits ends
 * `waiting_approval`, the call still waiting in its trace.
 */
export async function startApprovalRun(
  base: string,
  prompt: string,
  commands: string[],
  options: { signal?: AbortSignal } = {},
): Promise<ApprovalRun> {
  const ran: string[] = [];
  const shell = defineTool({
    name: 'shell',
    description: 'Runs a command.',
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
    async handle({ arguments: { command } }) {
      ran.push(command);
      return { content: `ran ${command}`, success: true };
    },
  });
  let turn = 0;
  const server = await startLoopbackServer({
    respond: () => {
      const index = turn++;
      const command = commands[index];
      return command === undefined
        ? { type: 'response', text: 'Done.' }
        : {
            type: 'response',
            text: `Running ${command}.`,
            toolCalls: [{ id: `call_${index + 1}`, name: 'shell', arguments: JSON.stringify({ command }) }],
          };
    },
  });
  const { id, directory } = new SessionStore(base).create({ model: 'gpt-4o-mini', profile: 'developer' });
  const agent = new Agent({
    systemPrompt: 'You are a test agent.',
    tools: [shell],
    approvalPolicy: askForShell,
    client: createModelClient({ model: 'gpt-4o-mini', baseURL: server.url, apiKey: 'test', maxRetries: 0 }),
  });
  const session = agent.createSession({ id, directory, pollIntervalMs: 50, approvals: { unattended: 'wait' } });
  const done = session.run(prompt, options.signal === undefined ? {} : { signal: options.signal });
  return { id, directory, server, done, ran };
}
