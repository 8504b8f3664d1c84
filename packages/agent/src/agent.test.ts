import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApprovalRequest } from '@rho/core';
import { Agent as CoreAgent, ConfigError, defineTool } from '@rho/core';
import { createScriptedModelClient } from '@rho/core/testing';
import { describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import { createToolset } from './create-toolset.js';
import { createShopDatabase, orderCount } from './test-support/shop-database.js';

async function project(): Promise<string> {
  const directory = mkdtempSync(join(tmpdir(), 'rho-agent-'));
  await createShopDatabase(directory);
  writeFileSync(join(directory, 'Makefile'), 'clean:\n\trm -rf dist\n');
  return directory;
}

describe('Agent from a profile', () => {
  it('runs developer with a SQLite database: plain calls run, calls with dangerous patterns ask the approver', async () => {
    const workingDir = await project();
    const client = createScriptedModelClient({
      steps: [
        {
          toolCalls: [
            {
              id: 'q',
              name: 'sqlite',
              arguments: { operation: 'query', sql: 'SELECT customer, total FROM orders ORDER BY id' },
            },
          ],
        },
        {
          toolCalls: [
            { id: 'd', name: 'sqlite', arguments: { operation: 'query', sql: 'DELETE FROM orders WHERE id = 1' } },
          ],
        },
        {
          toolCalls: [
            {
              id: 'e',
              name: 'edit',
              arguments: { path: 'Makefile', old_string: 'rm -rf dist', new_string: 'rm -rf dist build' },
            },
          ],
        },
        {
          toolCalls: [
            { id: 'w', name: 'write', arguments: { path: 'report.md', content: '2 orders, 42.5 in total\n' } },
          ],
        },
        { text: 'Two orders, 42.5 in total.' },
      ],
    });
    const agent = new Agent({
      profile: 'developer',
      workingDir,
      databases: { shop: { type: 'sqlite', path: 'shop.sqlite' } },
      client,
    });
    expect(agent).toBeInstanceOf(CoreAgent);
    expect(agent.profile.name).toBe('developer');
    expect(agent.registry.names()).toContain('sqlite');
    const asked: ApprovalRequest[] = [];
    const session = agent.createSession({ approver: (request) => (asked.push(request), true) });
    try {
      const result = await session.run('Summarise the orders into report.md and clean up the Makefile.');
      expect(result.status).toBe('completed');
    } finally {
      await agent.close();
    }
    // Asked exactly for the two calls with a dangerous pattern, with the profile's reason.
    expect(asked.map((request) => [request.toolName, request.reason])).toEqual([
      [
        'sqlite',
        'the arguments contain the dangerous pattern "DELETE FROM" (approval.dangerous_patterns of profile developer)',
      ],
      [
        'edit',
        'the arguments contain the dangerous pattern "rm -rf" (approval.dangerous_patterns of profile developer)',
      ],
    ]);
    const toolMessages = session.state.messages
      .filter((message) => message.role === 'tool')
      .map((message) => String(message.content));
    expect(toolMessages[0]).toContain('grace');
    // Approved, yet the database stays read-only under developer (database: readonly).
    expect(toolMessages[1]).toMatch(/read-only|not allowed|refused/i);
    expect(await orderCount(workingDir)).toBe(2);
    expect(readFileSync(join(workingDir, 'Makefile'), 'utf8')).toBe('clean:\n\trm -rf dist build\n');
    expect(readFileSync(join(workingDir, 'report.md'), 'utf8')).toBe('2 orders, 42.5 in total\n');
  });

  it('refuses what needs approval when the session has no approver, and a readonly agent never writes', async () => {
    const workingDir = await project();
    const client = createScriptedModelClient({
      steps: [
        { toolCalls: [{ id: 'b', name: 'bash', arguments: { command: 'ls' } }] },
        { text: 'I could not run it.' },
      ],
    });
    const agent = new Agent({ workingDir, client });
    expect(agent.profile.name).toBe('readonly');
    expect(agent.registry.names()).not.toContain('write');
    const session = agent.createSession();
    await session.run('list files');
    expect(String(session.state.messages[2]!.content)).toMatch(
      /^Not run: 'bash' needs approval \(bash is a dangerous tool and profile readonly requires approval/,
    );
  });

  it("offers the application's own tools under the profile's rules", async () => {
    const lookup = defineTool({
      name: 'lookup',
      description: 'Looks up a word.',
      parameters: { type: 'object', properties: {} },
      annotations: { readOnly: true },
      handle: async () => ({ content: 'found', success: true }),
    });
    const publish = defineTool({
      name: 'publish',
      description: 'Publishes.',
      parameters: { type: 'object', properties: {} },
      handle: async () => ({ content: 'published', success: true }),
    });
    const warnings: string[] = [];
    const readonly = new Agent({
      workingDir: await project(),
      tools: [lookup, publish],
      onWarning: (message) => warnings.push(message),
      client: createScriptedModelClient({ steps: [] }),
    });
    expect(readonly.registry.names()).toContain('lookup');
    expect(readonly.registry.names()).not.toContain('publish');
    expect(warnings).toContain(
      'tool publish (from the tools option) is not offered: it is not declared read-only (annotations.readOnly) and profile readonly allows no writes.',
    );
    const developer = new Agent({
      profile: 'developer',
      workingDir: await project(),
      tools: [lookup, publish],
      client: createScriptedModelClient({ steps: [] }),
    });
    expect(developer.approvalFor(developer.registry.get('publish')!, {})).toEqual({
      required: true,
      reason:
        'publish (from the tools option) is not declared read-only (annotations.readOnly), so profile developer asks before it runs',
    });
    expect(developer.approvalFor(developer.registry.get('lookup')!, {}).required).toBe(false);
  });

  it("keeps the policy in derived agents (delegate's child) and withholds what nobody could approve", async () => {
    const agent = new Agent({ workingDir: await project(), client: createScriptedModelClient({ steps: [] }) });
    const child = agent.derive();
    expect(child.approvalFor(child.registry.get('bash')!, { command: 'ls' }).required).toBe(true);
    const headless = new Agent({
      workingDir: await project(),
      approvals: 'none',
      client: createScriptedModelClient({ steps: [] }),
    });
    expect(headless.registry.names()).not.toContain('delegate');
    expect(headless.toolset.withheld.map((tool) => tool.name)).toEqual(['bash', 'delegate']);
  });

  it("gives delegate's child the same tools and approval policy, asking the parent's approver", async () => {
    const client = createScriptedModelClient({
      steps: [
        { toolCalls: [{ id: 'd', name: 'delegate', arguments: { instruction: 'List the files.' } }] },
        { toolCalls: [{ id: 'b', name: 'bash', arguments: { command: 'ls' } }] },
        { text: 'Makefile and shop.sqlite.' },
        { text: 'The child found two files.' },
      ],
    });
    const agent = new Agent({ workingDir: await project(), client });
    const asked: string[] = [];
    const session = agent.createSession({
      approver: (request) => (
        asked.push(`${request.toolName}:${request.sessionId === session.id ? 'parent' : 'child'}`),
        true
      ),
    });
    const result = await session.run('What is here?');
    expect(result.status).toBe('completed');
    // readonly asks before delegate (in the parent) and before bash (in the child, by the same policy).
    expect(asked).toEqual(['delegate:parent', 'bash:child']);
  });

  it('says what to do with a profile name it cannot resolve without reading files, and reads them in Agent.create', async () => {
    expect(() => new Agent({ profile: 'careful', client: createScriptedModelClient({ steps: [] }) })).toThrow(
      ConfigError,
    );
    expect(() => new Agent({ profile: 'careful', client: createScriptedModelClient({ steps: [] }) })).toThrow(
      /use `await Agent.create\(\{ profile: "careful" \}\)`/,
    );
    expect(() => new Agent({ databaseConfig: 'databases.yaml' } as never)).toThrow(
      'Agent: databaseConfig is read from files; use `await Agent.create({ databaseConfig, ... })` instead of new Agent().',
    );
    const workingDir = await project();
    writeFileSync(join(workingDir, 'careful.yaml'), 'profile: careful\nfile_write: create-only\n');
    writeFileSync(
      join(workingDir, 'databases.yaml'),
      'databases:\n  shop:\n    type: sqlite\n    path: ./shop.sqlite\n',
    );
    const agent = await Agent.create({
      profile: join(workingDir, 'careful.yaml'),
      workingDir,
      databaseConfig: join(workingDir, 'databases.yaml'),
      client: createScriptedModelClient({ steps: [] }),
    });
    expect(agent.profile.name).toBe('careful');
    expect(agent.registry.names()).toEqual(expect.arrayContaining(['write', 'sqlite']));
    expect(agent.workingDir).toBe(workingDir);
    await agent.close();
  });

  it('takes a ready toolset, and refuses toolset options next to it', async () => {
    const workingDir = await project();
    const toolset = await createToolset({ profile: 'developer', workingDir });
    const agent = new Agent({ toolset, client: createScriptedModelClient({ steps: [] }) });
    expect(agent.registry.names()).toEqual(toolset.tools.map((tool) => tool.name).sort());
    expect(agent.workingDir).toBe(workingDir);
    expect(() => new Agent({ toolset, profile: 'readonly' })).toThrow(
      'Agent: pass either toolset or profile, not both; the toolset already decided them.',
    );
  });
});
