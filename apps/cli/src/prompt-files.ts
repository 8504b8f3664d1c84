import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
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
  constructor(message: string) {
    super({ message: `Prompt configuration error: ${message}`, code: 'prompt_error' });
  }
}

/**
 * Splits `---` YAML frontmatter from the body. Text that does not start with `---`, or whose
 * frontmatter is never closed, is all body.
 */
export function parseFrontmatter(content: string): { frontmatter: Record<string, unknown>; body: string } {
  const text = content.trim();
  if (!text.startsWith('---')) return { frontmatter: {}, body: text };
  const lines = text.split('\n');
  const close = lines.findIndex((line, index) => index > 0 && line.trim() === '---');
  if (close === -1) return { frontmatter: {}, body: text };
  const yamlText = lines.slice(1, close).join('\n');
  let value: unknown;
  try {
    value = yamlParse(yamlText);
  } catch (error) {
    throw new PromptError(`Invalid YAML frontmatter: ${(error as Error).message.split('\n')[0]}`);
  }
  if (value === null || value === undefined) value = {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new PromptError('Frontmatter must be a YAML mapping');
  return {
    frontmatter: value as Record<string, unknown>,
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
  const { frontmatter, body } = parseFrontmatter(content);
  if (body === '') throw new PromptError(`Prompt file has no content (system prompt): ${path}`);
  const variables: Record<string, PromptVariable> = {};
  const declared = frontmatter.variables;
  // A list of names is not the documented form; like the original, it declares nothing.
  if (declared !== null && typeof declared === 'object' && !Array.isArray(declared)) {
    for (const [name, spec] of Object.entries(declared as Record<string, unknown>)) {
      if (spec !== null && typeof spec === 'object' && !Array.isArray(spec)) {
        const { required, default: fallback } = spec as { required?: unknown; default?: unknown };
        variables[name] = {
          required: required === true,
          ...(fallback === undefined || fallback === null ? {} : { default: String(fallback) }),
        };
      } else {
        variables[name] = {
          required: false,
          ...(spec === null || spec === undefined ? {} : { default: String(spec) }),
        };
      }
    }
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

/** Reads `--vars-file`: a YAML mapping whose values are stringified. */
export function loadVarsFile(path: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new PromptError(`Vars file not found: ${path}`);
  }
  let value: unknown;
  try {
    value = yamlParse(text);
  } catch (error) {
    throw new PromptError(`Invalid YAML in vars file ${path}: ${(error as Error).message.split('\n')[0]}`);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new PromptError(`Vars file must contain a YAML mapping: ${path}`);
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, item === null ? '' : String(item)]),
  );
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

/** The `yaml` package's parse, loaded on first use: a run without a prompt file or vars file does not load it. */
function yamlParse(text: string): unknown {
  return (createRequire(import.meta.url)('yaml') as typeof import('yaml')).parse(text);
}
