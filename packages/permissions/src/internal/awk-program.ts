const REGEX_MAY_FOLLOW = new Set([
  '(',
  ',',
  '{',
  '}',
  ';',
  '!',
  '&&',
  '||',
  '~',
  '!~',
  '=',
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  '+',
  '-',
  '*',
  '/',
  '%',
  '^',
  '?',
  ':',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '^=',
  'print',
  'printf',
  'return',
  'in',
  'case',
  '\n',
]);

interface Token {
  kind: 'identifier' | 'number' | 'string' | 'regex' | 'operator' | 'newline';
  text: string;
}

function tokenize(program: string): Token[] | string {
  const tokens: Token[] = [];
  let index = 0;
  const previous = (): string | undefined => {
    const last = tokens.at(-1);
    return last === undefined
      ? undefined
      : last.kind === 'identifier' || last.kind === 'operator' || last.kind === 'newline'
        ? last.text
        : last.kind;
  };
  while (index < program.length) {
    const character = program[index] as string;
    if (character === ' ' || character === '\t' || character === '\r') {
      index += 1;
      continue;
    }
    if (character === '\\' && program[index + 1] === '\n') {
      index += 2;
      continue;
    }
    if (character === '\n') {
      tokens.push({ kind: 'newline', text: '\n' });
      index += 1;
      continue;
    }
    if (character === '#') {
      while (index < program.length && program[index] !== '\n') index += 1;
      continue;
    }
    if (character === '"') {
      let end = index + 1;
      while (end < program.length && program[end] !== '"') {
        if (program[end] === '\n') return 'unterminated string';
        end += program[end] === '\\' ? 2 : 1;
      }
      if (end >= program.length) return 'unterminated string';
      tokens.push({ kind: 'string', text: program.slice(index, end + 1) });
      index = end + 1;
      continue;
    }
    if (character === '/') {
      const before = previous();
      if (before === undefined || REGEX_MAY_FOLLOW.has(before)) {
        let end = index + 1;
        let inBracket = false;
        while (end < program.length && (program[end] !== '/' || inBracket)) {
          if (program[end] === '\n') return 'unterminated regular expression';
          if (program[end] === '[') inBracket = true;
          else if (program[end] === ']') inBracket = false;
          end += program[end] === '\\' ? 2 : 1;
        }
        if (end >= program.length) return 'unterminated regular expression';
        tokens.push({ kind: 'regex', text: program.slice(index, end + 1) });
        index = end + 1;
        continue;
      }
    }
    const identifier = /^[A-Za-z_][A-Za-z0-9_]*/.exec(program.slice(index));
    if (identifier) {
      tokens.push({ kind: 'identifier', text: identifier[0] });
      index += identifier[0].length;
      continue;
    }
    const number = /^(?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)/.exec(
      program.slice(index),
    );
    if (number) {
      tokens.push({ kind: 'number', text: number[0] });
      index += number[0].length;
      continue;
    }
    const operator =
      /^(?:\|&|\|\||&&|>>|>=|<=|==|!=|!~|\+\+|--|\+=|-=|\*=|\/=|%=|\^=|\*\*=|\*\*|[{}()[\];,<>|!~?:=+\-*/%^$@&])/.exec(
        program.slice(index),
      );
    if (operator) {
      tokens.push({ kind: 'operator', text: operator[0] });
      index += operator[0].length;
      continue;
    }
    return `unexpected character ${JSON.stringify(character)}`;
  }
  return tokens;
}

/**
 * The reason an awk program is refused, or undefined. Refused: `system()`, pipes to or from
 * commands (`|`, `|&`), output redirection in `print`/`printf` (`>`/`>>` outside parentheses),
 * `getline <file`, and gawk's `@` (directives and indirect calls, which can reach built-ins).
 * `gawk --sandbox`, forced at run time, refuses the same things again.
 */
export function awkProgramProblem(program: string): string | undefined {
  const tokens = tokenize(program);
  if (typeof tokens === 'string') return `the awk program cannot be read: ${tokens}`;
  let inPrint = false;
  let depth = 0;
  for (let index = 0; index < tokens.length; index += 1) {
    const token = tokens[index] as Token;
    if (token.kind === 'identifier') {
      if (token.text === 'system') return 'awk system() runs a shell command';
      if (token.text === 'ENVIRON') return 'awk ENVIRON reads the environment, which can hold secrets';
      if (token.text === 'getline') {
        // `getline <file` and `getline var <file`: a `<` before the end of the expression.
        for (let ahead = index + 1; ahead < tokens.length; ahead += 1) {
          const text = (tokens[ahead] as Token).text;
          if (text === '<') return 'awk getline <file reads other files (refused by gawk --sandbox)';
          if ([';', '\n', '{', '}', ')', '&&', '||', ','].includes(text)) break;
        }
      }
      if (token.text === 'print' || token.text === 'printf') {
        inPrint = true;
        depth = 0;
      }
      continue;
    }
    if (token.kind !== 'operator' && token.kind !== 'newline') continue;
    switch (token.text) {
      case '|':
      case '|&':
        return 'awk pipes run shell commands';
      case '@':
        return 'gawk @ directives and indirect function calls are not allowed';
      case '(':
      case '[':
        depth += 1;
        break;
      case ')':
      case ']':
        depth -= 1;
        break;
      case '>':
      case '>>':
        if (inPrint && depth <= 0) return `awk print/printf ${token.text} writes to a file`;
        break;
      case ';':
      case '\n':
      case '{':
      case '}':
        inPrint = false;
        break;
      default:
        break;
    }
  }
  return undefined;
}
