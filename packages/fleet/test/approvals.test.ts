// Approvals over the fleet, against the shared PostgreSQL in a random schema: an agent session
// parked on a waiting call (its control channel the composite of its directory's and the fleet's)
// is answered from another node's connection and goes on; the answer lands in its trace once.
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, defineTool } from '@rho/core';
import { FileControlChannel } from '@rho/core/internal';
import { createScriptedModelClient } from '@rho/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fleet } from '../src/index.js';
import { CompositeControlChannel, connectFleet, createFleetSessionSource } from '../src/index.js';
import { dropSchema, eventually, freshConfig, sharedServer } from './support/postgres.js';

const skipped = sharedServer.available ? '' : ` (skipped: ${sharedServer.reason})`;

describe.skipIf(!sharedServer.available)(`approvals over the fleet${skipped}`, () => {
  const config = freshConfig();
  const root = mkdtempSync(join(tmpdir(), 'rho-fleet-approvals-'));
  let fleet: Fleet;
  let otherNode: Fleet;
  beforeAll(async () => {
    fleet = await connectFleet(config, { syncIntervalMs: 200 });
    await fleet.migrate();
    otherNode = await connectFleet(config);
  });
  afterAll(async () => {
    await fleet?.close();
    await otherNode?.close();
    await dropSchema(config.schema);
    rmSync(root, { recursive: true, force: true });
  });

  it('a parked call is answered from another node, exactly once, and the run goes on', async () => {
    const ran: string[] = [];
    const deploy = defineTool({
      name: 'deploy',
      description: 'Deploys.',
      parameters: { type: 'object', properties: { target: { type: 'string' } } },
      async handle({ arguments: { target } }) {
        ran.push(String(target));
        return { content: `deployed ${String(target)}`, success: true };
      },
    });
    const client = createScriptedModelClient({
      steps: [{ toolCalls: [{ id: 'call-deploy', name: 'deploy', arguments: { target: 'prod' } }] }, { text: 'done' }],
    });
    const directory = join(root, 'parked');
    mkdirSync(directory);
    const id = randomUUID();
    const attachment = await fleet.attachSession(
      { id, model: 'scripted-model' },
      { tracePath: join(directory, 'trace.jsonl') },
    );
    const session = new Agent({
      tools: [deploy],
      client,
      approvalPolicy: () => ({ required: true, reason: 'deploys need a person' }),
    }).createSession({
      id,
      directory,
      control: new CompositeControlChannel(new FileControlChannel(directory), () => attachment.control),
      traceObservers: [attachment.mirror.observe],
      approvals: { unattended: 'wait', timeoutMs: 60_000 },
      pollIntervalMs: 50,
    });
    const run = session.run('deploy it');
    const source = createFleetSessionSource(otherNode);
    const pending = await eventually(async () => {
      const calls = await source.pendingApprovals!(id);
      return calls.length === 1 ? calls : undefined;
    }, 'the waiting call in the mirrored trace');
    expect(pending[0]).toMatchObject({ toolCallId: 'call-deploy', toolName: 'deploy', arguments: { target: 'prod' } });
    expect(pending[0]!.reason).toContain('deploys need a person');
    await eventually(
      async () => (await otherNode.resolveSession(id)).status === 'waiting_approval',
      'waiting_approval',
    );
    expect(ran).toEqual([]);

    const answers = await Promise.all([
      source.answerApproval!(id, 'call-deploy', { decision: 'approve', by: 'alice@node-b' }),
      otherNode.operator(id).answerApproval!('call-deploy', { decision: 'deny', by: 'bob@node-c' }),
    ]);
    expect(answers.filter((answer) => answer.outcome === 'answered')).toHaveLength(1);
    const winner = answers.find((answer) => answer.outcome === 'answered')!;
    if (winner.outcome !== 'answered') throw new Error('unreachable');
    const result = await run;
    // A person's denial ends the run `refused`; an approval runs the call and the run completes.
    expect(result.status).toBe(winner.answer.decision === 'approve' ? 'completed' : 'refused');
    const applied = readFileSync(join(directory, 'trace.jsonl'), 'utf8')
      .split('\n')
      .filter((line) => line.includes('"approval_answered"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(applied).toHaveLength(1);
    expect(applied[0]).toMatchObject({ decision: winner.answer.decision, by: winner.answer.by });
    expect(ran).toEqual(winner.answer.decision === 'approve' ? ['prod'] : []);
    // The fleet's answer was claimed on the file channel too: both sides hold the same one.
    expect(await new FileControlChannel(directory).takeApprovalAnswer('call-deploy')).toMatchObject({
      decision: winner.answer.decision,
    });
    await attachment.mirror.flush();
    expect(await source.pendingApprovals!(id)).toEqual([]);
    expect(await source.answerApproval!(id, 'call-deploy', { decision: 'approve' })).toMatchObject({
      outcome: 'not_pending',
    });
    await attachment.close({ status: 'completed' });
  });
});
