import { isAbsolute, relative, resolve } from 'node:path';
import type { Node } from 'web-tree-sitter';
import { parseBash } from './internal/bash-parser.js';
import { assignmentAllowed, checkArgv } from './internal/program-rules.js';
import { gitDriverOverrides } from './internal/git-drivers.js';
import { expandGlob } from './internal/glob-expand.js';
import { CachedFiles, LOCAL_SYNC_FILES, LookupNeeded, type FileLookup, type SyncFileView } from './file-lookup.js';
import { ShellRefusal, wordText, wordValue } from './internal/shell-words.js';
import type { PermissionProfile } from './permission-profile.js';

/** One command to spawn, exactly as it must run: no shell reads it again. */
export interface ShellCommand {
  /** Program and arguments, fully unquoted; the program is looked up on PATH. */
  argv: string[];
  /** Index in `argv` of the program doing the work, past wrappers such as `env`, `timeout`, `nice`, `xargs` (0 when none). */
  programIndex?: number;
  /** Variables the command line set for this command (`LC_ALL=C sort`): locale, TZ, COLUMNS, LINES, NO_COLOR only. */
  env?: Record<string, string>;
  /**
   * Standard input of the command, instead of the previous command's output (or nothing): a file
   * of the working directory (`< f.csv`, resolved to its real absolute path when the line was
   * checked), or literal text (`<<< word`, `<<EOF ... EOF`).
   */
  stdin?: { file: string } | { text: string };
  /** Standard output goes to /dev/null (`>/dev/null`). */
  stdoutToDevNull?: boolean;
  /** Standard error goes to /dev/null (`2>/dev/null`). */
  stderrToDevNull?: boolean;
  /**
   * Standard error goes where standard output originally went (`2>&1`): into the pipe, or into the
   * tool's output. Combined with `stdoutToDevNull` it is `2>&1 >/dev/null`.
   */
  stderrToStdout?: boolean;
}

/** Operator joining a step to the previous one: run it always (`;`, newline), on success (`&&`) or on failure (`||`). */
export type ShellOperator = 'start' | '&&' | '||' | ';';

/**
 * What a restricted command line runs: steps evaluated left to right, each a pipeline. A step
 * joined by `&&` runs when the exit status of the last step that ran is 0, one joined by `||` when
 * it is not, one joined by `;` always (bash's `&&`/`||` are left-associative with equal precedence,
 * so this flat form is exact). A pipeline's exit status is that of its last command.
 */
export interface ShellPlan {
  /** Steps in order. */
  steps: { operator: ShellOperator; pipeline: ShellCommand[] }[];
}

/** The decision on one command line. */
export type ShellDecision =
  | {
      /** The command line may run. */
      allowed: true;
      /** The rule that decided. */
      rule: string;
      /** What to run. */
      plan: ShellPlan;
      /** Every argv checked (wrapped commands too), for display. */
      commands: string[][];
    }
  | {
      /** The command line is refused. */
      allowed: false;
      /** The rule that refused it. */
      rule: string;
      /** Why, written for the model: what to do instead. */
      reason: string;
      /** The argvs read before the refusal, for display. */
      commands: string[][];
    };

/** Options of {@link checkShellCommand}. */
export interface CheckShellCommandOptions {
  /** The profile; an unrestricted shell mode allows everything (run by bash). */
  profile?: PermissionProfile;
  /**
   * The directory the command will run in (absolute). With it, unquoted file name patterns
   * (`src/*.ts`) are expanded inside it with bash's rules and `< FILE` may read a file inside it;
   * without it both are refused.
   */
  cwd?: string;
  /**
   * The file system the command will run on, where `cwd` is and patterns and `< FILE` are looked
   * up: this machine's by default; a backend's own for one that is not local (a remote sandbox).
   */
  files?: FileLookup;
}

/** Lookups one check may make on a backend's file system before it is refused as too costly. */
const MAX_FILE_LOOKUPS = 500;

const MAX_COMMAND_LENGTH = 100_000;
/** `/proc/PID/environ` (or a thread's), any spelling bash would pass on: the environment of another process. */
const PROC_ENVIRONMENT = /(^|\/)proc\/+[^/]+\/+(task\/+[^/]+\/+)?environ\b/;

class PlanBuilder {
  readonly steps: ShellPlan['steps'] = [];
  readonly commands: string[][] = [];
  constructor(
    readonly cwd: string | undefined,
    readonly files: SyncFileView = LOCAL_SYNC_FILES,
  ) {}
}

function redirectTarget(node: Node): string {
  const destination = node.childForFieldName('destination') ?? node.namedChildren.at(-1);
  if (!destination) throw new ShellRefusal('shell.redirect', 'redirection without a target');
  return wordValue(destination);
}

type Target = 'stdout' | 'stderr' | 'null';

interface RedirectState {
  out: Target;
  error: Target;
  stdin?: { file: string } | { text: string };
}

const HEREDOC_PARTS = new Set(['heredoc_start', 'heredoc_body', 'heredoc_end']);

function heredocText(node: Node): string {
  const start = node.namedChildren.find((child) => child.type === 'heredoc_start');
  const body = node.namedChildren.find((child) => child.type === 'heredoc_body');
  const extra = node.namedChildren.find((child) => !HEREDOC_PARTS.has(child.type));
  if (extra) {
    throw new ShellRefusal(
      'shell.redirect',
      `a here-document followed by more commands on its first line (${JSON.stringify(extra.text.slice(0, 40))}) is not supported in restricted mode; end the line after <<WORD`,
    );
  }
  if (!start) throw new ShellRefusal('shell.parse', 'here-document without a delimiter');
  const quotedDelimiter = /['"\\]/.test(start.text);
  let text = body?.text ?? '';
  if (!quotedDelimiter) {
    const expansion = body?.namedChildren.find((child) => child.type !== 'heredoc_content');
    if (expansion || /[$`\\]/.test(text)) {
      throw new ShellRefusal(
        'shell.expansion',
        `the here-document's text contains $, \` or \\, which bash would expand; quote its delimiter (<<'${start.text}') for literal text`,
      );
    }
  }
  const operator = node.children.find((child) => !child.isNamed)?.type ?? '<<';
  if (operator === '<<-') text = text.replace(/^\t+/gm, '');
  return text;
}

function stdinFile(node: Node, target: string, cwd: string | undefined, files: SyncFileView): { file: string } {
  if (cwd === undefined) {
    throw new ShellRefusal(
      'shell.redirect',
      `${node.text}: reading a file as standard input needs the working directory, which this check was not given; name the file as an argument`,
    );
  }
  let real: string;
  let root: string;
  try {
    root = files.realpath(cwd);
    real = files.realpath(resolve(cwd, target));
  } catch (error) {
    if (error instanceof LookupNeeded) throw error;
    throw new ShellRefusal('shell.redirect', `${node.text}: ${target} does not exist in the working directory`);
  }
  const inside = relative(root, real);
  if (inside.startsWith('..') || isAbsolute(inside)) {
    throw new ShellRefusal(
      'shell.redirect',
      `${node.text}: standard input may only come from a file inside the working directory (${target} is ${real}); name the file as an argument of a reader such as cat`,
    );
  }
  if (files.kind(real, true) !== 'file')
    throw new ShellRefusal('shell.redirect', `${node.text}: ${target} is not a regular file`);
  return { file: real };
}

function applyRedirect(node: Node, state: RedirectState, cwd: string | undefined, files: SyncFileView): void {
  if (node.type === 'heredoc_redirect') {
    state.stdin = { text: heredocText(node) };
    return;
  }
  if (node.type === 'herestring_redirect') {
    const word = node.namedChildren.at(-1);
    if (!word) throw new ShellRefusal('shell.redirect', 'here-string without text');
    state.stdin = { text: `${wordValue(word)}\n` };
    return;
  }
  if (node.type !== 'file_redirect')
    throw new ShellRefusal('shell.redirect', `${node.type} is not allowed in restricted mode`);
  const descriptorNode = node.namedChildren.find((child) => child.type === 'file_descriptor');
  const operatorNode = node.children.find((child) => !child.isNamed);
  const operator = operatorNode?.type ?? '';
  const target = redirectTarget(node);
  const descriptor = descriptorNode ? descriptorNode.text : operator.startsWith('<') ? '0' : '1';
  const refuseThis = (): never => {
    throw new ShellRefusal(
      'shell.redirect',
      `redirection ${node.text} is not allowed in restricted mode: only >/dev/null, 2>/dev/null, &>/dev/null, 2>&1, < FILE (inside the working directory), <<< and <<EOF are (commands may not write files)`,
    );
  };
  if (operator === '<') {
    if (descriptor !== '0') refuseThis();
    state.stdin = stdinFile(node, target, cwd, files);
    return;
  }
  if (operator === '>' || operator === '>>' || operator === '>|') {
    if (target !== '/dev/null') refuseThis();
    if (descriptor === '1') state.out = 'null';
    else if (descriptor === '2') state.error = 'null';
    else refuseThis();
    return;
  }
  if (operator === '&>' || operator === '&>>') {
    if (target !== '/dev/null' || descriptorNode) refuseThis();
    state.out = 'null';
    state.error = 'null';
    return;
  }
  if (operator === '>&') {
    if (target === '/dev/null' && !descriptorNode) {
      state.out = 'null';
      state.error = 'null';
      return;
    }
    if (descriptor === '2' && target === '1') state.error = state.out;
    else if (descriptor === '1' && target === '2') {
      if (state.error !== 'null') refuseThis();
      state.out = 'null';
    } else if (descriptor === target && (descriptor === '1' || descriptor === '2')) return;
    else refuseThis();
    return;
  }
  refuseThis();
}

function buildCommand(node: Node, extraRedirects: Node[], builder: PlanBuilder): ShellCommand {
  const argv: string[] = [];
  const environment: Record<string, string> = {};
  const redirects: Node[] = [];
  for (const child of node.namedChildren) {
    switch (child.type) {
      case 'variable_assignment': {
        if (argv.length > 0)
          throw new ShellRefusal('shell.construct', `assignment ${child.text} after the command name`);
        const name = child.childForFieldName('name')?.text ?? '';
        const valueNode = child.childForFieldName('value');
        if (!assignmentAllowed(name)) {
          throw new ShellRefusal(
            'shell.assignment',
            `setting ${name} is not allowed in restricted mode: only locale (LANG, LC_*), TZ, COLUMNS, LINES and NO_COLOR may be set, since other variables (PATH, LD_PRELOAD, GIT_*, ...) change what a program runs`,
          );
        }
        environment[name] = valueNode ? wordValue(valueNode) : '';
        break;
      }
      case 'command_name': {
        const nameNode = child.namedChildren[0];
        if (!nameNode) throw new ShellRefusal('shell.parse', 'missing command name');
        argv.push(wordValue(nameNode));
        break;
      }
      case 'file_redirect':
      case 'heredoc_redirect':
      case 'herestring_redirect':
        redirects.push(child);
        break;
      case 'comment':
        break;
      default: {
        const word = wordText(child, true, builder.cwd !== undefined);
        if (word.glob && builder.cwd !== undefined)
          argv.push(...expandGlob(word.pattern, word.value, builder.cwd, builder.files));
        else argv.push(word.value);
        break;
      }
    }
  }
  if (argv.length === 0) {
    throw new ShellRefusal(
      'shell.assignment',
      'a command line that only sets variables does nothing in restricted mode (variables do not carry over)',
    );
  }
  builder.commands.push(argv);
  for (const word of argv.slice(1)) {
    const candidates = [word, ...(builder.cwd === undefined ? [] : [resolve(builder.cwd, word)])];
    if (candidates.some((candidate) => PROC_ENVIRONMENT.test(candidate))) {
      throw new ShellRefusal(
        'shell.environ',
        `${word} is the environment of a process (which holds secrets such as rho's API keys); restricted mode does not read it`,
      );
    }
  }
  const state: RedirectState = { out: 'stdout', error: 'stderr' };
  for (const redirect of [...redirects, ...extraRedirects]) applyRedirect(redirect, state, builder.cwd, builder.files);
  const checked = checkArgv(argv);
  builder.commands.pop();
  builder.commands.push(...checked.checked);
  let finalArgv = checked.argv;
  if (builder.cwd !== undefined && finalArgv[checked.programIndex] === 'git') {
    const ruling = gitDriverOverrides(finalArgv, checked.programIndex, builder.cwd);
    if (ruling === undefined)
      throw new ShellRefusal(
        'git.drivers',
        `git: the repository's config in ${builder.cwd} cannot be read on this machine (a remote backend, or a directory that does not exist), so its filter and diff drivers (programs git runs on files) cannot be switched off; restricted mode does not run git there`,
      );
    if ('refused' in ruling) throw new ShellRefusal('git.config', ruling.refused);
    const overrides = ruling.overrides;
    if (overrides.length > 0)
      finalArgv = [
        ...finalArgv.slice(0, checked.programIndex + 1),
        ...overrides,
        ...finalArgv.slice(checked.programIndex + 1),
      ];
  }
  const command: ShellCommand = { argv: finalArgv };
  if (checked.programIndex > 0) command.programIndex = checked.programIndex;
  if (state.stdin) command.stdin = state.stdin;
  if (Object.keys(environment).length > 0) command.env = environment;
  if (state.out === 'null') command.stdoutToDevNull = true;
  if (state.error === 'null') command.stderrToDevNull = true;
  if (state.error === 'stdout') command.stderrToStdout = true;
  return command;
}

function pipelineCommands(node: Node, builder: PlanBuilder, trailingRedirects: Node[] = []): ShellCommand[] {
  switch (node.type) {
    case 'command':
      return [buildCommand(node, trailingRedirects, builder)];
    case 'redirected_statement': {
      const body = node.childForFieldName('body') ?? node.namedChildren[0];
      const redirects = node.namedChildren.filter((child) => child.id !== body?.id);
      // In bash a redirection belongs to the simple command it follows: in `a | b 2>/dev/null`
      // (which the grammar attaches to the whole pipeline) it applies to b only.
      if (body && (body.type === 'command' || body.type === 'pipeline'))
        return pipelineCommands(body, builder, [...redirects, ...trailingRedirects]);
      throw new ShellRefusal(
        'shell.construct',
        `redirecting ${body?.type.replace(/_/g, ' ') ?? 'nothing'} is not allowed in restricted mode`,
      );
    }
    case 'pipeline': {
      const members: Node[] = [];
      for (const child of node.children) {
        if (!child.isNamed) {
          if (child.type === '|') continue;
          throw new ShellRefusal('shell.construct', `${child.type} is not allowed in restricted mode (use 2>&1 |)`);
        }
        if (child.type === 'comment') continue;
        if (child.type === 'pipeline' || child.type === 'command' || child.type === 'redirected_statement')
          members.push(child);
        else throw unsupported(child);
      }
      const commands: ShellCommand[] = [];
      members.forEach((member, index) => {
        commands.push(...pipelineCommands(member, builder, index === members.length - 1 ? trailingRedirects : []));
      });
      return commands;
    }
    default:
      throw unsupported(node);
  }
}

const CONSTRUCT_REASONS: Record<string, string> = {
  subshell: 'subshells ( ... ) are not allowed in restricted mode; run the commands directly',
  compound_statement: 'command groups { ...; } are not allowed in restricted mode',
  negated_command: '! (negation) is not allowed in restricted mode',
  function_definition: 'function definitions are not allowed in restricted mode',
  variable_assignment:
    'a command line that only sets variables does nothing in restricted mode (variables do not carry over)',
  declaration_command: 'declare/export/local are not allowed in restricted mode',
  test_command: '[[ ]] and [ ] tests are not allowed in restricted mode',
};

function unsupported(node: Node): ShellRefusal {
  const reason = CONSTRUCT_REASONS[node.type];
  return new ShellRefusal(
    node.type === 'variable_assignment' ? 'shell.assignment' : 'shell.construct',
    reason ??
      `${node.type.replace(/_/g, ' ')} is not allowed in restricted mode: only simple commands joined by |, &&, ||, ; and newlines are`,
  );
}

function addStatement(node: Node, operator: ShellOperator, builder: PlanBuilder): void {
  if (node.type === 'list') {
    const [left, joiner, right] = node.children;
    if (!left || !joiner || !right || node.childCount !== 3)
      throw new ShellRefusal('shell.parse', 'could not read the && / || list');
    addStatement(left, operator, builder);
    if (joiner.type !== '&&' && joiner.type !== '||')
      throw new ShellRefusal('shell.construct', `${joiner.type} is not allowed in restricted mode`);
    addStatement(right, joiner.type, builder);
    return;
  }
  builder.steps.push({ operator, pipeline: pipelineCommands(node, builder) });
}

function findError(node: Node): Node | undefined {
  if (node.type === 'ERROR' || node.isMissing) return node;
  for (const child of node.children) {
    const found = findError(child);
    if (found) return found;
  }
  return undefined;
}

async function decide(command: string, builder: PlanBuilder): Promise<ShellPlan> {
  if (command.trim().length === 0) throw new ShellRefusal('shell.parse', 'the command is empty');
  if (command.length > MAX_COMMAND_LENGTH)
    throw new ShellRefusal('shell.parse', `the command is longer than ${MAX_COMMAND_LENGTH} characters`);
  if (command.includes('\0')) throw new ShellRefusal('shell.parse', 'the command contains a NUL character');
  if (/\\\r?\n/.test(command))
    throw new ShellRefusal(
      'shell.parse',
      'line continuations (backslash-newline) are not supported in restricted mode; write the command on one line',
    );
  const tree = await parseBash(command);
  try {
    const root = tree.rootNode;
    if (root.hasError) {
      const error = findError(root);
      throw new ShellRefusal(
        'shell.parse',
        `the command could not be parsed as bash${error ? ` near ${JSON.stringify(error.text.slice(0, 40) || command.slice(error.startIndex, error.startIndex + 20))}` : ''}`,
      );
    }
    let operator: ShellOperator = 'start';
    for (const child of root.children) {
      if (child.type === 'comment') continue;
      if (child.type === ';' || child.type === '\n') {
        if (builder.steps.length > 0) operator = ';';
        continue;
      }
      if (child.type === '&')
        throw new ShellRefusal('shell.construct', 'background jobs (&) are not allowed in restricted mode');
      if (!child.isNamed) throw new ShellRefusal('shell.construct', `${child.type} is not allowed in restricted mode`);
      addStatement(child, builder.steps.length === 0 ? 'start' : operator === 'start' ? ';' : operator, builder);
      operator = ';';
    }
    if (builder.steps.length === 0) throw new ShellRefusal('shell.parse', 'the command contains no command');
    return { steps: builder.steps };
  } finally {
    tree.delete();
  }
}

/**
 * Decide whether a command line may run in restricted shell mode, and if so, return exactly what
 * runs. The line is parsed with the tree-sitter bash grammar; only simple commands joined by `|`,
 * `&&`, `||`, `;` and newlines are accepted, every command (wrapped ones too) must be allowlisted and
 * pass its program's validator, and the only redirections are to /dev/null and `2>&1`.
 * With an unrestricted profile, everything is allowed and the plan is `bash -c COMMAND`.
 */
export async function checkShellCommand(
  command: string,
  options: CheckShellCommandOptions = {},
): Promise<ShellDecision> {
  if (options.profile?.shell === 'unrestricted') {
    const argv = ['bash', '-c', command];
    return {
      allowed: true,
      rule: 'shell.unrestricted',
      plan: { steps: [{ operator: 'start', pipeline: [{ argv }] }] },
      commands: [argv],
    };
  }
  let builder = new PlanBuilder(options.cwd);
  try {
    if (options.files === undefined) {
      const plan = await decide(command, builder);
      return { allowed: true, rule: 'shell.allowlist', plan, commands: builder.commands };
    }
    // Another file system (a backend's): the synchronous check runs on what was looked up, and
    // again after each lookup it asked for, until it needs none.
    const files = new CachedFiles(options.files);
    for (let lookups = 0; ; lookups += 1) {
      builder = new PlanBuilder(options.cwd, files);
      try {
        const plan = await decide(command, builder);
        return { allowed: true, rule: 'shell.allowlist', plan, commands: builder.commands };
      } catch (error) {
        if (!(error instanceof LookupNeeded)) throw error;
        if (lookups >= MAX_FILE_LOOKUPS)
          throw new ShellRefusal(
            'shell.glob',
            `the command needs more than ${MAX_FILE_LOOKUPS} file lookups on the backend to check (its file name patterns span too many directories); name the files, or use find`,
          );
        await files.lookUp(error);
      }
    }
  } catch (error) {
    if (error instanceof ShellRefusal)
      return { allowed: false, rule: error.rule, reason: error.reason, commands: builder.commands };
    // The parse tree or the wrappers nest deeper than the checks can follow: not checked, so not run.
    if (error instanceof RangeError) {
      return {
        allowed: false,
        rule: 'shell.too-complex',
        reason: `the command is too deeply nested to check (${error.message}); split it into several calls`,
        commands: builder.commands,
      };
    }
    throw error;
  }
}
