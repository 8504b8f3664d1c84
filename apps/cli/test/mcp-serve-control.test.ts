// Issue 39: the control tools of `rho mcp serve` (cancel_session, send_directive,
// answer_approval), its --profile/--dir flags and max_concurrent, through the SDK's client over
// stdio against the built CLI, the model being the loopback server.
import { spawnSync } from 'node:child_process';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startLoopbackServer, type LoopbackServer, type LoopbackStep } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServeSetup } from './support/mcp-serve.js';
import { connectServe, ps, recordedStatus, serveClients, serveSetup, until } from './support/mcp-serve.js';
import { bin } from './support/run-rho.js';

let model: LoopbackServer | undefined;
afterEach(async () => {
  await Promise.all(serveClients.splice(0).map((client) => client.close().catch(() => {})));
  await model?.close();
  model = undefined;
});

type Out = Record<string, unknown>;
const call = async (client: Client, name: string, args: Out) => {
  const reply = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
  return { error: reply.isError === true, out: reply.structuredContent as Out, text: JSON.stringify(reply.content) };
};
const start = async (client: Client, args: Out): Promise<string> => {
  const started = await call(client, 'run_task', args);
  expect(started.error, started.text).toBe(false);
  return String(started.out.session_id);
};
const statusOf = async (client: Client, id: string) => (await call(client, 'session_status', { session_id: id })).out;
const reaches = (client: Client, id: string, wanted: string) =>
  until(async () => ((await statusOf(client, id)).status === wanted ? true : undefined), 60_000);

describe('rho mcp serve: the control tools', () => {
  it('cancel_session ends a run started without wait: cancelled', async () => {
    model = await startLoopbackServer({ steps: [{ type: 'hang' }] });
    const s = serveSetup('', model.url);
    const client = await connectServe(s);
    const id = await start(client, { prompt: 'Hang.' });
    await until(() => (model!.requests.length > 0 ? true : undefined), 30_000);
    const cancelled = await call(client, 'cancel_session', { session_id: id });
    expect(cancelled.out).toMatchObject({ session_id: id, outcome: 'requested' });
    await until(() => (recordedStatus(s, id) === 'cancelled' ? true : undefined), 30_000);
    expect((await statusOf(client, id)).status).toBe('cancelled');
    // Once ended, cancelling again changes nothing.
    expect((await call(client, 'cancel_session', { session_id: id })).out.outcome).not.toBe('requested');
  }, 90_000);

  it('send_directive to a running session reaches the model in its next request', async () => {
    let sent!: () => void;
    const directiveSent = new Promise<void>((resolve) => (sent = resolve));
    model = await startLoopbackServer({
      respond: async (_request, index): Promise<LoopbackStep> => {
        if (index > 0) return { type: 'response', text: 'Focused on the tests.' };
        await directiveSent;
        return { type: 'response', toolCalls: [{ name: 'read', arguments: JSON.stringify({ path: 'notes.txt' }) }] };
      },
    });
    const s = serveSetup('', model.url);
    const client = await connectServe(s);
    const id = await start(client, { prompt: 'Read notes.txt' });
    await until(() => (model!.requests.length > 0 ? true : undefined), 30_000);
    const directive = await call(client, 'send_directive', { session_id: id, text: 'focus on the tests' });
    expect(directive.out).toMatchObject({ session_id: id, live: true });
    sent();
    await reaches(client, id, 'completed');
    const messages = (model.requests[1]!.body as { messages: { role: string; content: unknown }[] }).messages;
    expect(messages.filter((message) => message.role === 'user').map((message) => String(message.content))).toEqual(
      expect.arrayContaining([expect.stringContaining('focus on the tests')]),
    );
    expect(JSON.stringify(model.requests[0]!.body)).not.toContain('focus on the tests');
  }, 90_000);

  const listing = { type: 'response', toolCalls: [{ id: 'call_ls', name: 'bash', arguments: '{"command":"ls"}' }] };

  it('answer_approval approve: readonly asks for bash, session_status shows the call, the command runs; a second answer says the one that stands', async () => {
    model = await startLoopbackServer({
      steps: [listing as LoopbackStep, { type: 'response', text: 'Listed.' }],
    });
    const s = serveSetup('', model.url);
    writeFileSync(join(s.work, 'listed-file.txt'), 'x\n');
    const client = await connectServe(s, 'approver');
    const id = await start(client, { prompt: 'List the files' });
    await reaches(client, id, 'waiting_approval');
    expect((await statusOf(client, id)).pending_approvals).toEqual([
      expect.objectContaining({ tool_call_id: 'call_ls', tool_name: 'bash', arguments: { command: 'ls' } }),
    ]);
    const approved = await call(client, 'answer_approval', { session_id: id, decision: 'approve' });
    expect(approved.out).toEqual({
      session_id: id,
      tool_call_id: 'call_ls',
      tool_name: 'bash',
      decision: 'approve',
      outcome: 'answered',
    });
    await reaches(client, id, 'completed');
    const output = await call(client, 'session_output', { session_id: id });
    expect(output.out).toMatchObject({ answer: 'Listed.', tool_calls: [{ name: 'bash', calls: 1, failed: 0 }] });
    // The command ran: its output went back to the model.
    expect(JSON.stringify(model.requests[1]!.body.messages.at(-1))).toContain('listed-file.txt');
    const again = await call(client, 'answer_approval', {
      session_id: id,
      decision: 'deny',
      tool_call_id: 'call_ls',
    });
    expect(again.error).toBe(false);
    expect(again.out).toEqual({
      session_id: id,
      tool_call_id: 'call_ls',
      tool_name: 'bash',
      decision: 'approve',
      outcome: 'already_answered',
      by: 'mcp-client:approver',
    });
    // Without naming the call, the same.
    const unnamed = await call(client, 'answer_approval', { session_id: id, decision: 'deny' });
    expect(unnamed.out).toMatchObject({ decision: 'approve', outcome: 'already_answered' });
  }, 90_000);

  it('answer_approval deny: the call is refused, with the reason given to the model', async () => {
    model = await startLoopbackServer({
      steps: [listing as LoopbackStep, { type: 'response', text: 'Not listed.' }],
    });
    const s = serveSetup('', model.url);
    const client = await connectServe(s);
    const id = await start(client, { prompt: 'List the files' });
    await reaches(client, id, 'waiting_approval');
    const denied = await call(client, 'answer_approval', {
      session_id: id,
      decision: 'deny',
      tool_call_id: 'call_ls',
      reason: 'no listing today',
    });
    expect(denied.out).toMatchObject({ decision: 'deny', outcome: 'answered' });
    await until(() => (['refused', 'completed'].includes(recordedStatus(s, id)) ? true : undefined), 60_000);
    expect(recordedStatus(s, id)).toBe('refused');
    expect(JSON.stringify(model.requests[1]!.body)).toContain('no listing today');
    const output = await call(client, 'session_output', { session_id: id });
    expect(output.out).toMatchObject({ tool_calls: [{ name: 'bash', refused: 1 }] });
  }, 90_000);
});

describe('rho mcp serve: --profile, --dir and max_concurrent', () => {
  const serve = (s: ServeSetup, flags: string[]) =>
    spawnSync(process.execPath, [bin, 'mcp', 'serve', ...flags], {
      env: s.env,
      cwd: s.work,
      input: '',
      encoding: 'utf8',
      timeout: 30_000,
    });

  it('refuses at start flags that widen the configured allowlist (exit 2)', () => {
    const s = serveSetup('mcp_serve:\n  profiles: [readonly]\n');
    const profile = serve(s, ['--profile', 'developer']);
    expect(profile.status).toBe(2);
    expect(profile.stderr).toContain('--profile developer is not in mcp_serve.profiles');
    expect(profile.stdout).toBe('');
    const dir = serve(s, ['--dir', s.root]);
    expect(dir.status).toBe(2);
    expect(dir.stderr).toContain(`--dir ${s.root} is outside mcp_serve.directories`);
    expect(ps(s)).toEqual([]);
  }, 60_000);

  it('applies flags that narrow it', async () => {
    const s = serveSetup('mcp_serve:\n  profiles: [readonly, developer]\n  directories: [WORK]\n');
    const sub = join(s.work, 'sub');
    mkdirSync(sub);
    const client = await connectServe(s, 'narrow', ['--profile', 'readonly', '--dir', sub]);
    const profile = await call(client, 'run_task', { prompt: 'x', profile: 'developer' });
    expect(profile.error).toBe(true);
    expect(profile.text).toContain('it allows: readonly');
    const outside = await call(client, 'run_task', { prompt: 'x', working_dir: s.work });
    expect(outside.error).toBe(true);
    expect(outside.text).toContain(realpathSync(sub));
    const policy = await call(client, 'policy_check', { shell: 'ls', profile: 'developer' });
    expect(policy.error).toBe(true);
    expect(ps(s)).toEqual([]);
  }, 60_000);

  it('max_concurrent refuses the extra task and starts nothing for it', async () => {
    model = await startLoopbackServer({ steps: [{ type: 'hang' }, { type: 'hang' }] });
    const s = serveSetup('mcp_serve:\n  max_concurrent: 1\n', model.url);
    const client = await connectServe(s);
    const first = await start(client, { prompt: 'Hang.' });
    const extra = await call(client, 'run_task', { prompt: 'Hang too.' });
    expect(extra.error).toBe(true);
    expect(extra.text).toContain('already runs 1 sessions (mcp_serve.max_concurrent)');
    expect(ps(s).map((session) => session.id)).toEqual([first]);
    await call(client, 'cancel_session', { session_id: first });
    await until(() => (recordedStatus(s, first) === 'cancelled' ? true : undefined), 30_000);
  }, 90_000);
});
