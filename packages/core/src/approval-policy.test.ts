import { describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import { approvalRequestedByTool, defaultApprovalPolicy } from './approval-policy.js';
import { createScriptedModelClient } from './testing/scripted-model-client.js';
import type { AnyTool, ToolAnnotations } from './tool.js';
import { defineTool } from './tool.js';

function tool(name: string, annotations?: ToolAnnotations): AnyTool {
  return defineTool({
    name,
    description: `The ${name} tool.`,
    parameters: { type: 'object', properties: { text: { type: 'string' } } },
    ...(annotations === undefined ? {} : { annotations }),
    async handle({ arguments: { text } }) {
      return { content: `${name}: ${text ?? ''}`, success: true };
    },
  });
}

/** A tool object as an older or hand-written tool package hands it over: with `requiresApproval` of its own. */
function legacyTool(name: string, requiresApproval: unknown): AnyTool {
  return { ...tool(name, { readOnly: true }), requiresApproval } as AnyTool;
}

describe('the default approval policy (no profile)', () => {
  it('asks for tools annotated destructive and lets the others run', () => {
    expect(defaultApprovalPolicy(tool('wipe', { destructive: true }), {})).toMatchObject({
      required: true,
      reason: expect.stringContaining('wipe is annotated destructive'),
    });
    expect(defaultApprovalPolicy(tool('look', { readOnly: true }), {})).toEqual({ required: false });
    expect(defaultApprovalPolicy(tool('plain'), {})).toEqual({ required: false });
    const agent = new Agent({ client: createScriptedModelClient({ steps: [] }) });
    expect(agent.approvalFor(tool('wipe', { destructive: true }), {}).required).toBe(true);
    expect(agent.approvalFor(tool('plain'), {}).required).toBe(false);
  });

  it('refuses a destructive call in a session nobody can approve, and runs it with an approver', async () => {
    const wipe = tool('wipe', { destructive: true });
    const steps = () => [{ toolCalls: [{ id: 'w', name: 'wipe', arguments: { text: 'all' } }] }, { text: 'done' }];
    const refused = new Agent({ tools: [wipe], client: createScriptedModelClient({ steps: steps() }) }).createSession();
    await refused.run('wipe it');
    expect(refused.state.messages[2]!.content).toMatch(
      /^Not run: 'wipe' needs approval \(wipe is annotated destructive/,
    );
    const asked: string[] = [];
    const approved = new Agent({ tools: [wipe], client: createScriptedModelClient({ steps: steps() }) }).createSession({
      approver: (request) => {
        asked.push(request.toolName);
        return true;
      },
    });
    await approved.run('wipe it');
    expect(asked).toEqual(['wipe']);
    expect(approved.state.messages[2]!.content).toBe('wipe: all');
  });
});

describe('Agent.approvalFor', () => {
  const client = createScriptedModelClient({ steps: [] });

  it("is decided by the agent's policy, with its reason", () => {
    const agent = new Agent({
      client,
      approvalPolicy: (candidate, args) => ({
        required: candidate.name === 'look' && args.text === 'secret',
        reason: 'secrets need a person',
      }),
    });
    expect(agent.approvalFor(tool('look', { readOnly: true }), { text: 'secret' })).toEqual({
      required: true,
      reason: 'secrets need a person',
    });
    expect(agent.approvalFor(tool('look', { readOnly: true }), { text: 'public' }).required).toBe(false);
    // The policy decides alone: a destructive annotation does not ask when the policy says no.
    expect(
      new Agent({ client, approvalPolicy: () => false }).approvalFor(tool('wipe', { destructive: true }), {}).required,
    ).toBe(false);
  });

  it('asks when the policy throws', () => {
    const agent = new Agent({
      client,
      approvalPolicy: () => {
        throw new Error('profile store unreachable');
      },
    });
    expect(agent.approvalFor(tool('look'), {})).toEqual({
      required: true,
      reason: 'the approval policy failed for look (profile store unreachable)',
    });
  });

  it('never gives a tool that still carries requiresApproval less approval than it asked for', () => {
    const lenient = new Agent({ client, approvalPolicy: () => ({ required: false }) });
    expect(lenient.approvalFor(legacyTool('old', true), {})).toEqual({
      required: true,
      reason: 'old asks for approval of every call itself (requiresApproval)',
    });
    const perCall = legacyTool('per_call', (args: Record<string, unknown>) => args.text === 'danger');
    expect(lenient.approvalFor(perCall, { text: 'danger' })).toEqual({
      required: true,
      reason: 'per_call asks for approval of this call itself (requiresApproval)',
    });
    expect(lenient.approvalFor(perCall, { text: 'fine' })).toEqual({ required: false });
    // Deny by default: an answer rho cannot read as "no" (a promise, a string) or a failing function asks.
    expect(
      lenient.approvalFor(
        legacyTool('async_check', async () => false),
        {},
      ).required,
    ).toBe(true);
    expect(lenient.approvalFor(legacyTool('stringly', 'yes'), {}).required).toBe(true);
    expect(
      lenient.approvalFor(
        legacyTool('broken', () => {
          throw new Error('boom');
        }),
        {},
      ),
    ).toEqual({ required: true, reason: 'broken asks for approval through requiresApproval, which failed (boom)' });
    expect(lenient.approvalFor(legacyTool('declines', false), {})).toEqual({ required: false });
    // The policy's own requirement (and its reason) comes first.
    const strict = new Agent({ client, approvalPolicy: () => ({ required: true, reason: 'profile says so' }) });
    expect(strict.approvalFor(legacyTool('old', true), {})).toEqual({ required: true, reason: 'profile says so' });
  });

  it('reads the retired member only as a request: approvalRequestedByTool', () => {
    expect(approvalRequestedByTool(tool('plain'), {})).toBeUndefined();
    expect(approvalRequestedByTool(legacyTool('old', 1), {})).toMatchObject({ required: true });
  });
});
