import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  loadPromptFile,
  loadVarsFile,
  parseFrontmatter,
  parseVars,
  preparePrompt,
  PromptError,
  renderTemplate,
} from './prompt-files.js';

function file(content: string, name = 'prompt.md'): string {
  const path = join(mkdtempSync(join(tmpdir(), 'rho-prompt-')), name);
  writeFileSync(path, content);
  return path;
}

describe('frontmatter', () => {
  it('splits YAML frontmatter from the stripped body', () => {
    expect(parseFrontmatter('\n---\ndescription: d\n---\n\n  Body text  \n')).toEqual({
      frontmatter: { description: 'd' },
      body: 'Body text',
    });
  });

  it('treats text without frontmatter, or with an unclosed one, as body', () => {
    expect(parseFrontmatter('Just a prompt')).toEqual({ frontmatter: {}, body: 'Just a prompt' });
    expect(parseFrontmatter('---\ndescription: d\nno closer')).toEqual({
      frontmatter: {},
      body: '---\ndescription: d\nno closer',
    });
  });

  it('accepts an empty frontmatter and a closer with spaces', () => {
    expect(parseFrontmatter('---\n  ---  \nBody')).toEqual({ frontmatter: {}, body: 'Body' });
  });

  it('reports invalid YAML and non-mapping frontmatter', () => {
    expect(() => parseFrontmatter('---\nkey: [unclosed\n---\nBody')).toThrow(
      /^Prompt configuration error: prompt file:\d+: not valid YAML: /,
    );
    expect(() => parseFrontmatter('---\n- a\n- b\n---\nBody')).toThrow(
      'Prompt configuration error: prompt file:2: the frontmatter must be a YAML mapping',
    );
  });
});

describe('prompt files', () => {
  it('reads description, variables in both forms, and the initial prompt', () => {
    const path = file(
      '---\ndescription: Debug logs\nvariables:\n  env: {required: true}\n  level: {default: warn}\n  count: 3\n  empty: null\ninitial_prompt: Check {{ env }}\n---\nYou debug {{ env }} at {{ level }}.',
    );
    expect(loadPromptFile(path)).toEqual({
      path,
      description: 'Debug logs',
      variables: {
        env: { required: true },
        level: { required: false, default: 'warn' },
        count: { required: false, default: '3' },
        empty: { required: false },
      },
      initialPrompt: 'Check {{ env }}',
      body: 'You debug {{ env }} at {{ level }}.',
    });
  });

  it('ignores a list of variables', () => {
    expect(loadPromptFile(file('---\nvariables: [a, b]\n---\nBody')).variables).toEqual({});
  });

  it('says when the file is missing or has no body', () => {
    expect(() => loadPromptFile('/nonexistent/prompt.md')).toThrow(
      'Prompt configuration error: Prompt file not found: /nonexistent/prompt.md',
    );
    const empty = file('---\ndescription: nothing\n---\n   \n');
    expect(() => loadPromptFile(empty)).toThrow(
      `Prompt configuration error: Prompt file has no content (system prompt): ${empty}`,
    );
  });

  it('fills provided values, then defaults, refuses a missing required one, and adds extra vars', () => {
    const prompt = loadPromptFile(
      file(
        '---\nvariables:\n  env: {required: true}\n  level: {default: warn}\n  optional: {}\ninitial_prompt: Look at {{ env }}\n---\n{{ env }}/{{ level }}/{{ optional }}/{{ extra }}',
      ),
    );
    expect(preparePrompt(prompt, { env: 'prod', extra: 'x' })).toEqual({
      systemPrompt: 'prod/warn//x',
      initialPrompt: 'Look at prod',
    });
    expect(preparePrompt(prompt, { env: 'dev', level: 'debug' }).systemPrompt).toBe('dev/debug//');
    expect(() => preparePrompt(prompt, {})).toThrow('Prompt configuration error: Missing required variable: env');
  });
});

describe('the line of a wrong value', () => {
  it('is the line of the prompt file, after leading blank lines and the --- line', () => {
    const path = file(
      [
        '',
        '',
        '---',
        'description: Debug logs',
        'variables:',
        '  env: {required: true}',
        '  level:',
        '    default: warn',
        '    required: sometimes',
        'initial_prompt: Check {{ env }}',
        '---',
        'You debug {{ env }}.',
      ].join('\n'),
    );
    let error: unknown;
    try {
      loadPromptFile(path);
    } catch (caught) {
      error = caught;
    }
    expect((error as Error).message).toBe(
      `Prompt configuration error: ${path}:9: 'variables.level.required' must be true or false (got "sometimes").`,
    );
    expect(error).toBeInstanceOf(PromptError);
    expect(error).toMatchObject({ file: path, field: 'variables.level.required', line: 9 });
    expect(() => loadPromptFile(file('---\ndescription: [a, b]\n---\nBody'))).toThrow(
      /prompt\.md:2: 'description' must be a string \(got \["a","b"\]\)\.$/,
    );
    expect(() => loadPromptFile(file('---\nvariables:\n  env: {requierd: true}\n---\nBody'))).toThrow(
      /prompt\.md:3: 'variables\.env\.requierd' is an unknown key; allowed keys: required, default\.$/,
    );
    expect(() => loadPromptFile(file('---\nvariables:\n  a: 1\n  b: [x]\n---\nBody'))).toThrow(
      /prompt\.md:4: 'variables\.b' must be a default value or a mapping with required and default \(got \["x"\]\)\.$/,
    );
    expect(() => loadPromptFile(file('\n---\ndescription: d\nvariables: [unclosed\n---\nBody'))).toThrow(
      /prompt\.md:\d+: not valid YAML: /,
    );
    // Other keys of the frontmatter are left alone.
    expect(loadPromptFile(file('---\ntags: [ops]\n---\nBody')).variables).toEqual({});
  });

  it('is the line of the vars file', () => {
    const path = file('env: prod\nlevels:\n  - warn\n', 'vars.yaml');
    expect(() => loadVarsFile(path)).toThrow(
      `Prompt configuration error: ${path}:2: 'levels' must be a string, a number, or true or false (got ["warn"]).`,
    );
    expect(() => loadVarsFile(file('a: 1\nb: [unclosed\n', 'vars.yaml'))).toThrow(/vars\.yaml:\d+: not valid YAML: /);
    expect(loadVarsFile(file('', 'vars.yaml'))).toEqual({});
    expect(loadVarsFile(file('empty:\n', 'vars.yaml'))).toEqual({ empty: '' });
  });
});

describe('templates', () => {
  it('renders with trim_blocks and lstrip_blocks and undefined as empty', () => {
    expect(
      renderTemplate('Items:\n  {% for item in items %}\n- {{ item }}\n  {% endfor %}\nend {{ nothing }}.', {
        items: ['a', 'b'],
      }),
    ).toBe('Items:\n- a\n- b\nend .');
    expect(renderTemplate('{% if mode == "prod" %}careful{% else %}relaxed{% endif %}', { mode: 'prod' })).toBe(
      'careful',
    );
  });

  it('reports syntax errors with their line', () => {
    expect(() => renderTemplate('line one\nline two {{ x + }}', {})).toThrow(
      /^Prompt configuration error: Template syntax error at line 2: unexpected token/,
    );
    expect(() => renderTemplate('{% if x %}never closed', {})).toThrow(
      /^Prompt configuration error: Template syntax error: .*endif/,
    );
  });
});

describe('variables from the command line', () => {
  it('splits at the first = and strips; later values win', () => {
    expect(parseVars(['a=1', ' b = x=y ', 'a=2'])).toEqual({ a: '2', b: 'x=y' });
  });

  it('refuses items without = and empty names', () => {
    expect(() => parseVars(['novalue'])).toThrow(
      'Prompt configuration error: Invalid variable format (expected key=value): novalue',
    );
    expect(() => parseVars([' =x'])).toThrow('Prompt configuration error: Empty variable name in:  =x');
  });

  it('reads a vars file as a mapping of stringified values', () => {
    expect(loadVarsFile(file('env: prod\nreplicas: 3\nflag: true\n', 'vars.yaml'))).toEqual({
      env: 'prod',
      replicas: '3',
      flag: 'true',
    });
    expect(() => loadVarsFile('/nonexistent/vars.yaml')).toThrow(
      'Prompt configuration error: Vars file not found: /nonexistent/vars.yaml',
    );
    const list = file('- a\n', 'vars.yaml');
    expect(() => loadVarsFile(list)).toThrow(
      `Prompt configuration error: ${list}:1: the document must be a YAML mapping of variable names to values (got ["a"]).`,
    );
  });
});
