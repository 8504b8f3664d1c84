/**
 * A parse of a GNU sed script, enough to find every command in it. Returns the reason the script is
 * refused, or undefined. `w`, `W`, `e`, `r`, `R` and the `s///w` and `s///e` flags are refused:
 * they write files, run commands, or read files (which `sed --sandbox`, forced at run time, also
 * refuses). Anything the parse does not understand is refused.
 */
export function sedScriptProblem(script: string): string | undefined {
  let index = 0;
  const length = script.length;
  const peek = (): string | undefined => script[index];
  const skipSpaces = (): void => {
    while (index < length && (script[index] === ' ' || script[index] === '\t')) index += 1;
  };
  const readDelimited = (delimiter: string): boolean => {
    // Reads up to the unescaped delimiter; a newline before it means the script is malformed.
    while (index < length) {
      const character = script[index] as string;
      if (character === '\\') {
        index += 2;
        continue;
      }
      if (character === delimiter) {
        index += 1;
        return true;
      }
      if (character === '\n') return false;
      index += 1;
    }
    return false;
  };
  const readAddress = (): string | undefined => {
    const character = peek();
    if (character === undefined) return undefined;
    if (/[0-9]/.test(character)) {
      while (/[0-9~]/.test(peek() ?? '')) index += 1;
      return undefined;
    }
    if (character === '$') {
      index += 1;
      return undefined;
    }
    if (character === '/' || character === '\\') {
      let delimiter = '/';
      if (character === '\\') {
        delimiter = script[index + 1] ?? '';
        if (delimiter === '' || delimiter === '\n') return 'malformed \\c address';
        index += 2;
      } else index += 1;
      if (!readDelimited(delimiter)) return 'unterminated address regex';
      while (peek() === 'I' || peek() === 'M') index += 1;
    }
    return undefined;
  };
  const endOfCommand = (): string | undefined => {
    skipSpaces();
    const character = peek();
    if (character === undefined || character === ';' || character === '\n' || character === '}' || character === '#')
      return undefined;
    return `unexpected ${JSON.stringify(character)} after a command`;
  };
  while (index < length) {
    const character = peek() as string;
    if (character === ' ' || character === '\t' || character === '\n' || character === ';') {
      index += 1;
      continue;
    }
    if (character === '#') {
      while (index < length && script[index] !== '\n') index += 1;
      continue;
    }
    const firstProblem = readAddress();
    if (firstProblem) return firstProblem;
    if (peek() === ',') {
      index += 1;
      skipSpaces();
      if (peek() === '+' || peek() === '~') {
        index += 1;
        while (/[0-9]/.test(peek() ?? '')) index += 1;
      } else {
        const secondProblem = readAddress();
        if (secondProblem) return secondProblem;
      }
    }
    skipSpaces();
    while (peek() === '!') {
      index += 1;
      skipSpaces();
    }
    const command = peek();
    if (command === undefined) return 'missing command';
    index += 1;
    switch (command) {
      case '{':
      case '}':
        continue;
      case '=':
      case 'd':
      case 'D':
      case 'g':
      case 'G':
      case 'h':
      case 'H':
      case 'n':
      case 'N':
      case 'p':
      case 'P':
      case 'x':
      case 'z':
      case 'F': {
        const problem = endOfCommand();
        if (problem) return problem;
        continue;
      }
      case 'l':
      case 'L':
      case 'q':
      case 'Q': {
        skipSpaces();
        while (/[0-9]/.test(peek() ?? '')) index += 1;
        const problem = endOfCommand();
        if (problem) return problem;
        continue;
      }
      case ':':
      case 'b':
      case 't':
      case 'T':
      case 'v':
        while (index < length && script[index] !== ';' && script[index] !== '\n') index += 1;
        continue;
      case 'a':
      case 'i':
      case 'c':
        // Text up to the end of the line; a backslash-newline continues it.
        while (index < length && script[index] !== '\n') {
          index += script[index] === '\\' ? 2 : 1;
        }
        continue;
      case 's':
      case 'y': {
        const delimiter = peek();
        if (delimiter === undefined || delimiter === '\n' || delimiter === '\\') return `malformed ${command} command`;
        index += 1;
        if (!readDelimited(delimiter) || !readDelimited(delimiter)) return `unterminated ${command} command`;
        if (command === 's') {
          while (index < length) {
            const flag = script[index] as string;
            if (flag === 'w' || flag === 'W') return 'the s///w flag writes to a file';
            if (flag === 'e') return 'the s///e flag runs the pattern space as a command';
            if (!/[gpiImM0-9]/.test(flag)) break;
            index += 1;
          }
        }
        const problem = endOfCommand();
        if (problem) return problem;
        continue;
      }
      case 'w':
      case 'W':
        return `the ${command} command writes to a file`;
      case 'e':
        return 'the e command runs a shell command';
      case 'r':
      case 'R':
        return `the ${command} command reads another file (sed --sandbox refuses it; read the file with cat)`;
      default:
        return `unknown sed command ${JSON.stringify(command)}`;
    }
  }
  return undefined;
}
