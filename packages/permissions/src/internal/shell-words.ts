import { homedir } from 'node:os';
import type { Node } from 'web-tree-sitter';

/** A refusal found while reading the command line. */
export class ShellRefusal extends Error {
  constructor(
    readonly rule: string,
    readonly reason: string,
  ) {
    super(reason);
  }
}

const GLOB_CHARACTERS = new Set(['*', '?', '[', '{']);
const NEVER_IN_WORD = new Set(['$', '`', '(', ')', '<', '>', '|', '&', ';']);

/** A word as bash reads it: its literal value, and, for unquoted glob characters, a pattern in which every quoted character is escaped. */
export interface WordText {
  value: string;
  /** The glob pattern: unquoted `*`, `?`, `[` kept special, every other glob-special character escaped with `\\`. */
  pattern: string;
  /** Whether an unquoted `*`, `?` or `[` occurs (bash would expand the word as a pathname pattern). */
  glob: boolean;
}

function escapeForPattern(text: string): string {
  return text.replace(/[*?[\]\\]/g, (character) => `\\${character}`);
}

function unquotedWord(text: string, first: boolean, allowGlob: boolean): WordText {
  let value = '';
  let pattern = '';
  let glob = false;
  let index = 0;
  if (first && text.startsWith('~')) {
    const end = text.indexOf('/');
    const user = end === -1 ? text.slice(1) : text.slice(1, end);
    if (user.length > 0) {
      throw new ShellRefusal(
        'shell.expansion',
        `~${user} (another user's home) is not expanded in restricted mode; write the path out`,
      );
    }
    value = homedir();
    pattern = escapeForPattern(value);
    index = 1;
  }
  for (; index < text.length; index += 1) {
    const character = text[index] as string;
    if (character === '\\') {
      const next = text[index + 1];
      if (next === undefined) break;
      value += next;
      pattern += escapeForPattern(next);
      index += 1;
      continue;
    }
    // `{}` is no brace expansion (bash expands only a list or a sequence): find -exec's placeholder.
    if (character === '{' && text[index + 1] === '}') {
      value += '{}';
      pattern += escapeForPattern('{}');
      index += 1;
      continue;
    }
    if (GLOB_CHARACTERS.has(character)) {
      if (allowGlob && character !== '{') {
        value += character;
        pattern += character;
        glob = true;
        continue;
      }
      throw new ShellRefusal(
        'shell.glob',
        character === '{'
          ? `unquoted { in ${JSON.stringify(text)}: brace expansion is not done in restricted mode; write the words out, or quote the brace`
          : `unquoted ${character} in ${JSON.stringify(text)}: restricted mode expands file name patterns only in command arguments and only when it knows the working directory. Quote the pattern for programs that take one (find -name '*.ts', grep --include='*.ts'), or name the files`,
      );
    }
    if (NEVER_IN_WORD.has(character)) {
      throw new ShellRefusal('shell.construct', `unexpected ${character} in ${JSON.stringify(text)}`);
    }
    value += character;
    // An unquoted `]` closes a bracket expression opened by an unquoted `[` (alone it is literal anyway).
    pattern += character === ']' ? ']' : escapeForPattern(character);
  }
  return { value, pattern, glob };
}

function doubleQuoted(inner: string): string {
  let value = '';
  for (let index = 0; index < inner.length; index += 1) {
    const character = inner[index] as string;
    if (character === '\\') {
      const next = inner[index + 1];
      if (next !== undefined && '$`"\\'.includes(next)) {
        value += next;
        index += 1;
        continue;
      }
      value += character;
      continue;
    }
    if (character === '$' || character === '`') {
      throw new ShellRefusal(
        'shell.expansion',
        `${character} inside double quotes is not expanded in restricted mode; use single quotes for literal text`,
      );
    }
    value += character;
  }
  return value;
}

const C_ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

function ansiC(inner: string): string {
  let value = '';
  for (let index = 0; index < inner.length; index += 1) {
    const character = inner[index] as string;
    if (character !== '\\') {
      value += character;
      continue;
    }
    const next = inner[index + 1];
    if (next === undefined) throw new ShellRefusal('shell.parse', "unterminated escape in $'...'");
    const simple = C_ESCAPES[next];
    if (simple !== undefined) {
      value += simple;
      index += 1;
      continue;
    }
    const hex = /^x([0-9a-fA-F]{1,2})/.exec(inner.slice(index + 1));
    if (hex?.[1]) {
      value += String.fromCharCode(Number.parseInt(hex[1], 16));
      index += hex[0].length;
      continue;
    }
    const octal = /^[0-7]{1,3}/.exec(inner.slice(index + 1));
    if (octal) {
      value += String.fromCharCode(Number.parseInt(octal[0], 8));
      index += octal[0].length;
      continue;
    }
    throw new ShellRefusal('shell.parse', `escape \\${next} in $'...' is not supported in restricted mode`);
  }
  return value;
}

const EXPANSION_TYPES: Record<string, string> = {
  command_substitution: 'command substitution runs another command, which restricted mode does not allow',
  process_substitution: 'process substitution runs another command, which restricted mode does not allow',
  simple_expansion:
    'variables are not expanded in restricted mode (parameter expansion can run code and hides what runs); write the value',
  expansion:
    'parameter expansion is not allowed in restricted mode (it can run code and hides what runs); write the value',
  arithmetic_expansion:
    'arithmetic expansion is not allowed in restricted mode (it can run code through array subscripts)',
  brace_expression: 'brace expansion is not expanded in restricted mode; write the words out',
  translated_string: '$"..." strings are not allowed in restricted mode',
};

/** The literal value of one word node, fully unquoted, or a refusal (unquoted glob characters are refused). */
export function wordValue(node: Node, first = true): string {
  return wordText(node, first, false).value;
}

function quoted(value: string): WordText {
  return { value, pattern: escapeForPattern(value), glob: false };
}

/** One word node read as bash reads it; with `allowGlob`, unquoted `*`, `?`, `[` make it a pattern instead of a refusal. */
export function wordText(node: Node, first = true, allowGlob = false): WordText {
  switch (node.type) {
    case 'word':
      return unquotedWord(node.text, first, allowGlob);
    case 'number':
      return unquotedWord(node.text, first, allowGlob);
    case 'raw_string':
      return quoted(node.text.slice(1, -1));
    case 'string': {
      for (const child of node.namedChildren) {
        if (child.type !== 'string_content') {
          throw new ShellRefusal(
            'shell.expansion',
            EXPANSION_TYPES[child.type] ?? `${child.type} inside double quotes is not allowed in restricted mode`,
          );
        }
      }
      return quoted(doubleQuoted(node.text.slice(1, -1)));
    }
    case 'ansi_c_string':
      return quoted(ansiC(node.text.slice(2, -1)));
    case 'concatenation': {
      const result: WordText = { value: '', pattern: '', glob: false };
      let position = node.startIndex;
      node.children.forEach((child, index) => {
        if (child.startIndex !== position)
          throw new ShellRefusal('shell.parse', `could not read the word ${JSON.stringify(node.text)}`);
        const next = node.children[index + 1];
        // `{}` (tree-sitter reads `{` and `}`): no brace expansion in bash, find -exec's placeholder.
        const part =
          child.type === 'word' && child.text === '{' && next?.type === 'word' && next.text.startsWith('}')
            ? quoted('{')
            : wordText(child, first && index === 0, allowGlob);
        result.value += part.value;
        result.pattern += part.pattern;
        result.glob ||= part.glob;
        position = child.endIndex;
      });
      if (position !== node.endIndex)
        throw new ShellRefusal('shell.parse', `could not read the word ${JSON.stringify(node.text)}`);
      return result;
    }
    default:
      throw new ShellRefusal(
        EXPANSION_TYPES[node.type] ? 'shell.expansion' : 'shell.construct',
        EXPANSION_TYPES[node.type] ??
          `${node.type.replace(/_/g, ' ')} (${JSON.stringify(node.text)}) is not allowed in restricted mode`,
      );
  }
}
