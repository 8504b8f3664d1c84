import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { ConfigError } from '@rho/core';
import { configLocation, parseConfigText, validateConfig, type ConfigSource } from '@rho/core/internal';
import * as v from 'valibot';
import { UsageError } from './exit-codes.js';

/** A declared template variable of a prompt file. */
export interface PromptVariable {
  required: boolean;
  /** Default value, if any (stringified). */
  default?: string;
}

/** A Markdown prompt file with YAML frontmatter. */
export interface PromptFile {
  path: string;
  description?: string;
  variables: Record<string, PromptVariable>;
  /** Template of the first user message, if the file has one. */
  initialPrompt?: string;
  /** Template of the system prompt. */
  body: string;
}

/** A problem with a prompt file or its variables; reported as "Prompt configuration error: ...". */
export class PromptError extends UsageError {
  constructor(
    message: string,
    at: { file?: string | undefined; field?: string | undefined; line?: number | undefined } = {},
  ) {
    super({
      message: `Prompt configuration error: ${message}`,
      code: 'prompt_error',
      ...(at.file === undefined ? {} : { file: at.file }),
      ...(at.field === undefined ? {} : { field: at.field }),
      ...(at.line === undefined ? {} : { line: at.line }),
    });
  }

  /** A ConfigError of the config reader (`FILE:LINE: 'KEY' must be ...`) as a prompt error. */
  static from(error: unknown): unknown {
    return ConfigError.isInstance(error) && !(error instanceof PromptError)
      ? new PromptError(error.message, error)
      : error;
  }
}

/** A variable's value as written: text, a number or true/false (rendered as text), or nothing. */
const scalar = v.nullable(
  v.union([v.string(), v.number(), v.boolean()], 'must be a string, a number, or true or false'),
);

const variableSpec = v.lazy((input) =>
  typeof input === 'object' && input !== null && !Array.isArray(input)
    ? v.strictObject(
        { required: v.optional(v.boolean('must be true or false')), default: v.optional(scalar) },
        'is an unknown key; allowed keys: required, default',
      )
    : v.nullable(
        v.union(
          [v.string(), v.number(), v.boolean()],
          'must be a default value or a mapping with required and default',
        ),
      ),
);

/**
 * Frontmatter: `description`, `variables` (name → default, or `{required, default}`),
 * `initial_prompt`. Other keys are left alone (Markdown frontmatter often carries more), and a
 * list of variable names, not the documented form, declares nothing, as in the original.
 */
const frontmatterSchema = v.looseObject({
  description: v.optional(v.nullable(v.string('must be a string'))),
  initial_prompt: v.optional(v.nullable(v.string('must be a string'))),
  variables: v.optional(
    v.nullable(
      v.pipe(
        v.unknown(),
        v.transform((value) => (Array.isArray(value) ? {} : value)),
        v.record(v.string(), variableSpec, 'must be a mapping of variable names to a default or {required, default}'),
      ),
    ),
  ),
});

const varsFileSchema = v.pipe(
  v.unknown(),
  v.check(
    (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
    'must be a YAML mapping of variable names to values',
  ),
  v.record(v.string(), scalar),
);

/**
 * Splits `---` YAML frontmatter from the body. Text that does not start with `---`, or whose
 * frontmatter is never closed, is all body. `file` names the file in messages, whose lines are
 * the file's (the frontmatter starts on the line after `---`).
 *
 * @throws PromptError `FILE:LINE: 'KEY' must be ...` for frontmatter that is not valid YAML or
 * not what a prompt file holds.
 */
export function parseFrontmatter(
  content: string,
  file = 'prompt file',
): { frontmatter: v.InferOutput<typeof frontmatterSchema>; body: string } {
  const text = content.trim();
  if (!text.startsWith('---')) return { frontmatter: {}, body: text };
  const lines = text.split('\n');
  const close = lines.findIndex((line, index) => index > 0 && line.trim() === '---');
  if (close === -1) return { frontmatter: {}, body: text };
  // Blank lines in place of what precedes the frontmatter (the stripped start and the `---`
  // line), so the lines the reader names are the file's.
  const before = content.slice(0, content.length - content.trimStart().length).split('\n').length;
  let source: ConfigSource;
  try {
    source = parseConfigText(`${'\n'.repeat(before)}${lines.slice(1, close).join('\n')}`, file);
  } catch (error) {
    throw PromptError.from(error);
  }
  let value = source.value;
  if (value === null || value === undefined) value = {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new PromptError(`${configLocation(source, [])}: the frontmatter must be a YAML mapping`, {
      file,
      line: source.lineOf([]),
    });
  let frontmatter: v.InferOutput<typeof frontmatterSchema>;
  try {
    frontmatter = validateConfig(frontmatterSchema, value, source);
  } catch (error) {
    throw PromptError.from(error);
  }
  return {
    frontmatter,
    body: lines
      .slice(close + 1)
      .join('\n')
      .trim(),
  };
}

/** Reads a prompt file: frontmatter (`description`, `variables`, `initial_prompt`) and body. */
export function loadPromptFile(path: string): PromptFile {
  let content: string;
  try {
    content = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new PromptError(`Prompt file not found: ${path}`);
    throw new PromptError(`Failed to read prompt file: ${(error as Error).message}`);
  }
  const { frontmatter, body } = parseFrontmatter(content, path);
  if (body === '') throw new PromptError(`Prompt file has no content (system prompt): ${path}`);
  const variables: Record<string, PromptVariable> = {};
  for (const [name, spec] of Object.entries(frontmatter.variables ?? {})) {
    const fallback = spec !== null && typeof spec === 'object' ? spec.default : spec;
    variables[name] = {
      required: spec !== null && typeof spec === 'object' && spec.required === true,
      ...(fallback === undefined || fallback === null ? {} : { default: String(fallback) }),
    };
  }
  return {
    path,
    body,
    variables,
    ...(typeof frontmatter.description === 'string' ? { description: frontmatter.description } : {}),
    ...(typeof frontmatter.initial_prompt === 'string' ? { initialPrompt: frontmatter.initial_prompt } : {}),
  };
}

/** Parses `--var key=value` arguments; later ones win. */
export function parseVars(items: readonly string[]): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const item of items) {
    const index = item.indexOf('=');
    if (index === -1) throw new PromptError(`Invalid variable format (expected key=value): ${item}`);
    const key = item.slice(0, index).trim();
    if (key === '') throw new PromptError(`Empty variable name in: ${item}`);
    vars[key] = item.slice(index + 1).trim();
  }
  return vars;
}

/** Reads `--vars-file`: a YAML mapping whose values (text, numbers, true/false) are stringified. */
export function loadVarsFile(path: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new PromptError(`Vars file not found: ${path}`);
  }
  let vars: Record<string, string | number | boolean | null>;
  try {
    const source = parseConfigText(text, path);
    if (source.value === null || source.value === undefined) return {};
    vars = validateConfig(varsFileSchema, source.value, source);
  } catch (error) {
    throw PromptError.from(error);
  }
  return Object.fromEntries(Object.entries(vars).map(([key, item]) => [key, item === null ? '' : String(item)]));
}

interface NunjucksEnvironment {
  renderString(template: string, context: Record<string, unknown>): string;
}

let environment: NunjucksEnvironment | undefined;

/** The template engine, loaded the first time a prompt file is rendered. */
function templates(): NunjucksEnvironment {
  if (environment === undefined) {
    const require = createRequire(import.meta.url);
    const nunjucks = require('nunjucks') as {
      Environment: new (loader: null, options: Record<string, unknown>) => NunjucksEnvironment;
    };
    // Jinja2 semantics of the original: trim_blocks, lstrip_blocks, undefined renders as ''.
    environment = new nunjucks.Environment(null, {
      autoescape: false,
      trimBlocks: true,
      lstripBlocks: true,
      throwOnUndefined: false,
    });
  }
  return environment;
}

/** Renders a Jinja-compatible template. */
export function renderTemplate(template: string, vars: Record<string, unknown>): string {
  try {
    return templates().renderString(template, vars);
  } catch (error) {
    const message = (error as Error).message;
    const line = /\[Line (\d+), Column \d+\]/.exec(message);
    const detail = message
      .split('\n')
      .map((part) => part.trim())
      .filter((part) => part !== '' && !part.startsWith('Template render error'))
      .join(' ');
    const reason = detail.replace(/^\(unknown path\)\s*(\[Line \d+, Column \d+\])?\s*/, '');
    if (line !== null) throw new PromptError(`Template syntax error at line ${line[1]}: ${reason}`);
    throw new PromptError(`Template syntax error: ${reason}`);
  }
}

/**
 * Fills the declared variables (provided value, else default, else an error when required),
 * adds every other provided variable, and renders the body and the initial prompt.
 */
export function preparePrompt(
  prompt: PromptFile,
  provided: Record<string, string>,
): { systemPrompt: string; initialPrompt?: string } {
  const vars: Record<string, string> = {};
  for (const [name, spec] of Object.entries(prompt.variables)) {
    const value = provided[name] ?? spec.default;
    if (value === undefined) {
      if (spec.required) throw new PromptError(`Missing required variable: ${name}`);
      continue;
    }
    vars[name] = value;
  }
  for (const [name, value] of Object.entries(provided)) if (!(name in vars)) vars[name] = value;
  const systemPrompt = renderTemplate(prompt.body, vars);
  return prompt.initialPrompt === undefined
    ? { systemPrompt }
    : { systemPrompt, initialPrompt: renderTemplate(prompt.initialPrompt, vars).trim() };
}
