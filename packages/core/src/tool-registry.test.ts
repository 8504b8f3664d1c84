import { describe, expect, it } from 'vitest';
import { createLocalBackend } from './local-backend.js';
import { ToolRegistry } from './tool-registry.js';
import type { ToolContext } from './tool.js';
import { defineTool } from './tool.js';

const context: ToolContext = {
  signal: new AbortController().signal,
  sessionId: 's',
  workingDir: '/',
  backend: createLocalBackend(),
};

const typed = defineTool({
  name: 'typed',
  description: 'Echoes its typed arguments.',
  parameters: {
    type: 'object',
    properties: {
      flag: { type: 'boolean' },
      count: { type: 'integer', minimum: 0 },
      ratio: { type: 'number' },
      mode: { type: 'string', enum: ['a', 'b'] },
      tags: { type: 'array', items: { type: 'string' } },
    },
    required: ['count'],
  },
  async handle({ arguments: args }) {
    return { content: JSON.stringify(args), success: true };
  },
});

describe('ToolRegistry', () => {
  const registry = new ToolRegistry([typed]);

  it('coerces the strings models send', async () => {
    const result = await registry.dispatch(
      {
        id: '1',
        name: 'typed',
        arguments: '{"flag": "true", "count": "5", "ratio": "0.5", "mode": "a", "tags": "[\\"x\\"]", "extra": 1}',
      },
      context,
    );
    expect(result.success).toBe(true);
    expect(JSON.parse(result.content)).toEqual({ flag: true, count: 5, ratio: 0.5, mode: 'a', tags: ['x'] });
  });

  it('treats null for an optional parameter as absent', async () => {
    const result = await registry.dispatch({ id: '1', name: 'typed', arguments: { count: 1, mode: null } }, context);
    expect(JSON.parse(result.content)).toEqual({ count: 1 });
  });

  it('refuses values it cannot coerce, naming each problem', async () => {
    const result = await registry.dispatch(
      { id: '1', name: 'typed', arguments: { count: '5.5', flag: 'maybe', mode: 'c' } },
      context,
    );
    expect(result.success).toBe(false);
    expect(result.content).toContain('\'count\' must be an integer (got "5.5")');
    expect(result.content).toContain("'flag' must be a boolean");
    expect(result.content).toContain('\'mode\' must be one of "a", "b"');
  });

  it('names the choices of a missing enum parameter, in the words of a wrong one', async () => {
    const pick = defineTool({
      name: 'pick',
      description: 'Picks.',
      parameters: {
        type: 'object',
        properties: { database: { type: 'string', enum: ['hr', 'sales'] }, other: { type: 'string' } },
        required: ['database', 'other'],
      },
      async handle() {
        return { content: 'ok', success: true };
      },
    });
    const picking = new ToolRegistry([pick]);
    const missing = await picking.dispatch({ id: '1', name: 'pick', arguments: {} }, context);
    expect(missing.content).toContain(`'database' is required and must be one of "hr", "sales"`);
    expect(missing.content).toContain(`'other' is required`);
    const wrong = await picking.dispatch({ id: '1', name: 'pick', arguments: { database: 'x', other: 'y' } }, context);
    expect(wrong.content).toContain(`'database' must be one of "hr", "sales" (got "x")`);
  });

  it('turns a thrown error into an unsuccessful result', async () => {
    const failing = defineTool({
      name: 'failing',
      description: typed.description,
      parameters: typed.parameters,
      async handle() {
        throw new TypeError('boom');
      },
    });
    const result = await new ToolRegistry([failing]).dispatch(
      { id: '1', name: 'failing', arguments: { count: 1 } },
      context,
    );
    expect(result).toMatchObject({
      success: false,
      content: 'Tool \'failing\' failed: TypeError: boom\nArguments: {"count":1}',
    });
  });

  it('truncates long output with head and tail', async () => {
    const noisy = defineTool({
      name: 'noisy',
      description: typed.description,
      parameters: typed.parameters,
      async handle() {
        return { content: `HEAD${'x'.repeat(50_000)}TAIL`, success: true };
      },
    });
    const result = await new ToolRegistry([noisy]).dispatch(
      { id: '1', name: 'noisy', arguments: { count: 1 } },
      context,
    );
    expect(result.content.length).toBeLessThan(20_200);
    expect(result.content).toContain('HEAD');
    expect(result.content.endsWith('TAIL')).toBe(true);
    expect(result.metadata).toMatchObject({ truncated: true });
  });

  it('sorts specs by name and rejects invalid tool names', () => {
    const other = defineTool({
      name: 'alpha',
      description: typed.description,
      parameters: typed.parameters,
      handle: typed.handle,
    });
    expect(new ToolRegistry([typed, other]).specs().map((spec) => spec.function.name)).toEqual(['alpha', 'typed']);
    expect(() =>
      defineTool({
        name: 'bad name',
        description: typed.description,
        parameters: typed.parameters,
        handle: typed.handle,
      }),
    ).toThrow(/invalid/);
  });
});
