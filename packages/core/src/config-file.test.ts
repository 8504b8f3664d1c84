import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { configProblem, parseConfigText, readConfigFile, validateConfig } from './config-file.js';
import { ConfigError } from './errors.js';

const text = ['model: gpt-5', 'budgets:', '  max_turns: -1', 'tools:', '  - one', '  - 2', ''].join('\n');

describe('config files', () => {
  it('knows the line of each key, and of list items', () => {
    const source = parseConfigText(text, 'agent.yaml');
    expect(source.value).toEqual({ model: 'gpt-5', budgets: { max_turns: -1 }, tools: ['one', 2] });
    expect(source.lineOf(['model'])).toBe(1);
    expect(source.lineOf(['budgets', 'max_turns'])).toBe(3);
    expect(source.lineOf(['tools', 1])).toBe(6);
    // A key that does not exist: its nearest ancestor's line.
    expect(source.lineOf(['budgets', 'max_cost_usd'])).toBe(2);
    expect(source.lineOf(['nothing'])).toBeUndefined();
  });

  it('names the file, the key and the line of the first problem', () => {
    const source = parseConfigText(text, 'agent.yaml');
    const schema = v.object({
      budgets: v.object({ max_turns: v.pipe(v.number(), v.minValue(1, 'a whole number above 0')) }),
    });
    const error = (() => {
      try {
        validateConfig(schema, source.value, source);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(ConfigError.isInstance(error)).toBe(true);
    const problem = error as ConfigError;
    expect(problem.message).toBe("agent.yaml:3: 'budgets.max_turns' must be a whole number above 0 (got -1).");
    expect(problem).toMatchObject({ file: 'agent.yaml', field: 'budgets.max_turns', line: 3 });
  });

  it('validates a part of a document at its place', () => {
    const source = parseConfigText(text, 'agent.yaml');
    const tools = (source.value as { tools: unknown }).tools;
    expect(() => validateConfig(v.array(v.string('a package name')), tools, source, ['tools'])).toThrow(
      "agent.yaml:6: 'tools[1]' must be a package name (got 2).",
    );
    expect(validateConfig(v.string(), 'x', source, ['model'])).toBe('x');
  });

  it('says where YAML is broken', () => {
    expect(() => parseConfigText('a: 1\nb: [unclosed\n', 'x.yaml')).toThrow(/^x\.yaml:\d+: not valid YAML: /);
    expect(() => parseConfigText('a: 1\na: 2\n', 'x.yaml')).toThrow(/x\.yaml:\d+: not valid YAML: .*[Uu]nique/);
  });

  it('reads a file, and a missing one is undefined', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rho-config-file-'));
    expect(readConfigFile(join(dir, 'missing.yaml'))).toBeUndefined();
    expect(readConfigFile(join(dir, 'missing', 'below.yaml'))).toBeUndefined();
    writeFileSync(join(dir, 'c.yaml'), 'a: 1\n');
    expect(readConfigFile(join(dir, 'c.yaml'))?.value).toEqual({ a: 1 });
    expect(readConfigFile(join(dir, 'c.yaml'))?.lineOf(['a'])).toBe(1);
  });

  it('writes a problem without a line for documents made in code', () => {
    const error = configProblem({ file: '--config', lineOf: () => undefined }, ['profile'], 'names no profile');
    expect(error.message).toBe("--config: 'profile' names no profile.");
  });
});
