import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnyTool, ToolAnnotations } from '@rho/core';
import { Agent as CoreAgent, ConfigError, defineTool } from '@rho/core';
import { createScriptedModelClient } from '@rho/core/testing';
import { builtinProfile } from '@rho/permissions';
import { describe, expect, it } from 'vitest';
import { createToolset } from './create-toolset.js';
import { createShopDatabase } from './test-support/shop-database.js';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'rho-toolset-'));
}

function extra(name: string, annotations?: ToolAnnotations, more: Record<string, unknown> = {}): AnyTool {
  return {
    ...defineTool({
      name,
      description: `The ${name} tool.`,
      parameters: { type: 'object', properties: { text: { type: 'string' } } },
      ...(annotations === undefined ? {} : { annotations }),
      async handle() {
        return { content: name, success: true };
      },
    }),
    ...more,
  } as AnyTool;
}

const names = (tools: readonly AnyTool[]): string[] => tools.map((tool) => tool.name);
const byName = (tools: readonly AnyTool[], name: string): AnyTool => {
  const found = tools.find((tool) => tool.name === name);
  if (found === undefined) throw new Error(`no tool ${name} in ${names(tools).join(', ')}`);
  return found;
};

describe('createToolset', () => {
  it('gives readonly the restricted shell, the readers and delegate, and approval as the original readonly had it', async () => {
    const workingDir = tempDir();
    const toolset = await createToolset({ workingDir });
    expect(toolset.profile.name).toBe('readonly');
    expect(toolset.workingDir).toBe(workingDir);
    expect(names(toolset.tools)).toEqual(['read', 'grep', 'glob', 'list', 'read_excel', 'bash', 'delegate']);
    const decide = (name: string, args: Record<string, unknown> = {}) =>
      toolset.approvalPolicy(byName(toolset.tools, name), args);
    expect(decide('bash', { command: 'ls' })).toMatchObject({
      required: true,
      reason: expect.stringContaining('bash is a dangerous tool'),
    });
    expect(decide('delegate', { instruction: 'x' }).required).toBe(true);
    expect(decide('read', { path: 'a' })).toEqual({ required: false });
    expect(toolset.withheld).toEqual([]);
    await toolset.close();
  });

  it('gives developer write, edit and the database tools; dangerous patterns ask, plain calls do not', async () => {
    const workingDir = tempDir();
    await createShopDatabase(workingDir);
    const toolset = await createToolset({
      profile: 'developer',
      workingDir,
      databases: { shop: { type: 'sqlite', path: 'shop.sqlite' } },
    });
    expect(names(toolset.tools)).toEqual([
      'read',
      'grep',
      'glob',
      'list',
      'read_excel',
      'bash',
      'write',
      'edit',
      'delegate',
      'sqlite',
    ]);
    expect(toolset.databases).toEqual([
      expect.objectContaining({ alias: 'shop', type: 'sqlite', path: join(workingDir, 'shop.sqlite') }),
    ]);
    const decide = (name: string, args: Record<string, unknown>) =>
      toolset.approvalPolicy(byName(toolset.tools, name), args).required;
    expect(decide('bash', { command: 'make test' })).toBe(false);
    expect(decide('bash', { command: 'rm -rf dist' })).toBe(true);
    expect(decide('sqlite', { operation: 'query', sql: 'SELECT * FROM orders' })).toBe(false);
    expect(decide('sqlite', { operation: 'query', sql: 'DROP TABLE orders' })).toBe(true);
    expect(decide('write', { path: 'a.txt', content: 'x' })).toBe(false);
    // The database tool really serves the alias (its driver loaded on this first call).
    const sqlite = byName(toolset.tools, 'sqlite');
    const controller = new AbortController();
    const result = await sqlite.handle(
      {
        callId: 'c',
        toolName: 'sqlite',
        arguments: { operation: 'query', sql: 'SELECT customer FROM orders ORDER BY id' },
      },
      { signal: controller.signal, sessionId: 's', workingDir, backend: undefined as never },
    );
    expect(result.success).toBe(true);
    expect(result.content).toContain('grace');
    await toolset.close();
    await toolset.close();
  });

  it('reads a databases.yaml, and a profile from a YAML file', async () => {
    const workingDir = tempDir();
    const path = await createShopDatabase(workingDir);
    writeFileSync(join(workingDir, 'databases.yaml'), `databases:\n  shop:\n    type: sqlite\n    path: \${SHOP_DB}\n`);
    writeFileSync(
      join(workingDir, 'careful.yaml'),
      'profile: careful\nfile_write: create-only\napproval:\n  mode: granular\n  required_tools: [write]\n',
    );
    const toolset = await createToolset({
      profile: join(workingDir, 'careful.yaml'),
      workingDir,
      databaseConfig: join(workingDir, 'databases.yaml'),
      env: { SHOP_DB: path },
    });
    expect(toolset.profile.name).toBe('careful');
    expect(names(toolset.tools)).toContain('sqlite');
    expect(names(toolset.tools)).toContain('write');
    expect(names(toolset.tools)).not.toContain('edit');
    expect(toolset.approvalPolicy(byName(toolset.tools, 'write'), {})).toEqual({
      required: true,
      reason: 'profile careful requires approval for write (approval.required_tools)',
    });
    await toolset.close();
    await expect(
      createToolset({ workingDir, databases: { shop: { type: 'sqlite', path: 'missing.sqlite' } } }),
    ).rejects.toThrow(/path does not exist/);
    await expect(createToolset({ profile: 'no-such-profile', workingDir, rhoHome: workingDir })).rejects.toSatisfy(
      ConfigError.isInstance,
    );
  });

  it('leaves out delegate when asked to', async () => {
    const toolset = await createToolset({ workingDir: tempDir(), delegate: false });
    expect(names(toolset.tools)).not.toContain('delegate');
  });
});

describe('createToolset: extra tools', () => {
  it('admits a read-only tool under readonly and refuses the others with a warning, deny by default', async () => {
    const warnings: string[] = [];
    const toolset = await createToolset({
      workingDir: tempDir(),
      extraTools: [
        {
          source: 'tool package ./mixed.mjs',
          tools: [
            extra('count', { readOnly: true }),
            extra('stamp'),
            extra('sneaky', { readOnly: true, destructive: true }),
          ],
        },
      ],
      onWarning: (message) => warnings.push(message),
    });
    expect(names(toolset.tools)).toContain('count');
    expect(names(toolset.tools)).not.toContain('stamp');
    expect(names(toolset.tools)).not.toContain('sneaky');
    expect(warnings).toContain(
      'tool stamp (from tool package ./mixed.mjs) is not offered: it is not declared read-only (annotations.readOnly) and profile readonly allows no writes.',
    );
    expect(toolset.approvalPolicy(byName(toolset.tools, 'count'), { text: 'x' })).toEqual({ required: false });
  });

  it('asks before an extra tool that is not declared read-only, naming where it came from', async () => {
    const toolset = await createToolset({
      profile: 'developer',
      workingDir: tempDir(),
      extraTools: [
        {
          source: 'tool package ./stamp.mjs',
          tools: [extra('stamp'), extra('fetch_url', { readOnly: true, openWorld: true })],
        },
      ],
    });
    expect(toolset.approvalPolicy(byName(toolset.tools, 'stamp'), {})).toEqual({
      required: true,
      reason:
        'stamp (from tool package ./stamp.mjs) is not declared read-only (annotations.readOnly), so profile developer asks before it runs',
    });
    expect(toolset.approvalPolicy(byName(toolset.tools, 'fetch_url'), {}).required).toBe(true);
    const unrestricted = await createToolset({
      profile: 'unrestricted',
      workingDir: tempDir(),
      extraTools: [{ source: 'tool package ./stamp.mjs', tools: [extra('stamp')] }],
    });
    expect(unrestricted.approvalPolicy(byName(unrestricted.tools, 'stamp'), {})).toEqual({ required: false });
  });

  it("judges rho's own tools by identity: a copy of bash from elsewhere is judged by its annotations", async () => {
    const toolset = await createToolset({ profile: 'developer', workingDir: tempDir() });
    const bash = byName(toolset.tools, 'bash');
    expect(toolset.approvalPolicy(bash, { command: 'make' }).required).toBe(false);
    expect(toolset.approvalPolicy({ ...bash }, { command: 'make' }).required).toBe(true);
  });

  it('refuses a taken or invalid name, or something that is not a tool, with a ConfigError naming the source', async () => {
    const workingDir = tempDir();
    await expect(
      createToolset({
        workingDir,
        extraTools: [{ source: 'tool package ./clash.mjs', tools: [extra('read', { readOnly: true })] }],
      }),
    ).rejects.toThrow(
      'Tool package ./clash.mjs has a tool named read, which is already a built-in tool. Remove or rename one of them.',
    );
    await expect(
      createToolset({
        workingDir,
        extraTools: [
          { source: 'package a', tools: [extra('twin', { readOnly: true })] },
          { source: 'package b', tools: [extra('twin', { readOnly: true })] },
        ],
      }),
    ).rejects.toThrow('Package b has a tool named twin, which is already the tool of package a.');
    const badName = { ...extra('ok', { readOnly: true }), name: 'has space' } as AnyTool;
    await expect(
      createToolset({ workingDir, extraTools: [{ source: 'package c', tools: [badName] }] }),
    ).rejects.toThrow('Package c has a tool named "has space": tool names are 1-64 letters, digits, "_" or "-".');
    await expect(
      createToolset({ workingDir, extraTools: [{ source: 'package d', tools: [{ name: 'half' } as AnyTool] }] }),
    ).rejects.toSatisfy(ConfigError.isInstance);
  });
});

describe('createToolset: a tool the run can never use is not offered', () => {
  it('withholds delegate and bash under readonly when nobody can approve, and says so', async () => {
    const warnings: string[] = [];
    const toolset = await createToolset({
      workingDir: tempDir(),
      approvals: 'none',
      onWarning: (message) => warnings.push(message),
    });
    expect(names(toolset.tools)).toEqual(['read', 'grep', 'glob', 'list', 'read_excel']);
    expect(toolset.withheld.map((tool) => tool.name)).toEqual(['bash', 'delegate']);
    expect(toolset.withheld[1]!.reason).toBe(
      'delegate is a dangerous tool and profile readonly requires approval for dangerous tools (approval: dangerous)',
    );
    expect(warnings).toContain(
      'bash and delegate are not offered: every call of these needs approval under profile readonly and nobody can approve in this run; give the run an approver or auto-approve it to offer them.',
    );
    for (const approvals of ['ask', 'auto'] as const) {
      expect(names((await createToolset({ workingDir: tempDir(), approvals })).tools)).toContain('delegate');
    }
    // An application that words it itself is told the list instead of the warning.
    const told: string[][] = [];
    const quiet: string[] = [];
    await createToolset({
      workingDir: tempDir(),
      approvals: 'none',
      onWarning: (message) => quiet.push(message),
      onWithheld: (withheld) => told.push(withheld.map((tool) => tool.name)),
    });
    expect(told).toEqual([['bash', 'delegate']]);
    expect(quiet.filter((message) => message.includes('not offered'))).toEqual([]);
  });

  it('keeps a tool that needs approval only for some arguments (developer bash), and withholds what always asks', async () => {
    const toolset = await createToolset({
      profile: 'developer',
      workingDir: tempDir(),
      approvals: 'none',
      databases: [
        { alias: 'crm', type: 'mysql', host: '127.0.0.1', user: 'root', database: 'crm', statementTimeoutSeconds: 30 },
      ],
      extraTools: [
        {
          source: 'tool package ./x.mjs',
          tools: [
            extra('stamp'),
            extra('count', { readOnly: true }),
            extra('legacy', { readOnly: true }, { requiresApproval: true }),
            extra('sometimes', { readOnly: true }, { requiresApproval: () => true }),
          ],
        },
      ],
    });
    expect(names(toolset.tools)).toEqual([
      'read',
      'grep',
      'glob',
      'list',
      'read_excel',
      'bash',
      'write',
      'edit',
      'delegate',
      'count',
      'sometimes',
    ]);
    expect(toolset.withheld).toEqual([
      { name: 'mysql', reason: 'profile developer requires approval for mysql (approval.required_tools)' },
      {
        name: 'stamp',
        reason:
          'stamp (from tool package ./x.mjs) is not declared read-only (annotations.readOnly), so profile developer asks before it runs',
      },
      { name: 'legacy', reason: 'legacy asks for approval of every call itself (requiresApproval)' },
    ]);
    await toolset.close();
  });

  it('under approval: all with nobody to approve, offers nothing', async () => {
    const workingDir = tempDir();
    writeFileSync(join(workingDir, 'ask.yaml'), 'profile: ask\napproval: all\n');
    const toolset = await createToolset({ profile: join(workingDir, 'ask.yaml'), workingDir, approvals: 'none' });
    expect(toolset.tools).toEqual([]);
  });
});

describe("the toolset in core's Agent", () => {
  it("is the agent's one approval decision; a third-party requiresApproval can only add to it", async () => {
    const legacy = extra('legacy', { readOnly: true }, { requiresApproval: true });
    const toolset = await createToolset({
      profile: builtinProfile('unrestricted')!,
      workingDir: tempDir(),
      extraTools: [{ source: 'tool package ./old.mjs', tools: [legacy] }],
    });
    const agent = new CoreAgent({
      tools: toolset.tools,
      approvalPolicy: toolset.approvalPolicy,
      client: createScriptedModelClient({ steps: [] }),
    });
    // unrestricted approves nothing, but the tool asked for approval itself: it is asked.
    expect(agent.approvalFor(agent.registry.get('legacy')!, {})).toEqual({
      required: true,
      reason: 'legacy asks for approval of every call itself (requiresApproval)',
    });
    expect(agent.approvalFor(agent.registry.get('bash')!, { command: 'rm -rf /tmp/x' }).required).toBe(false);
  });
});
