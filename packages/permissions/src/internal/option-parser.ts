import { ShellRefusal } from './shell-words.js';

/**
 * Which options a program accepts in restricted mode. Long option names must be written in full:
 * GNU getopt accepts any unambiguous abbreviation (`sort --o=F` is `--output=F`), so an exact match
 * against known-safe names is the only check that abbreviations cannot slip through.
 */
export interface OptionSpec {
  /** Short options without a value. */
  flags?: string;
  /** Short options that take a value (attached, `-n5`, or the next word). */
  valued?: string;
  /** Long options: `name` (no value), `name=` (value required), `name?` (optional, `=value` only), `name:2` (two values). */
  long?: readonly string[];
  /** Accepts `-NUM` (head -20, grep -3, nice -10). */
  numeric?: boolean;
  /** Options end at the first operand (POSIX), instead of GNU permutation. */
  stopAtOperand?: boolean;
}

/** One option as the program will see it. */
export interface ParsedOption {
  /** `-n` or `--lines`. */
  name: string;
  /** Its value, if it takes one. */
  value?: string;
  /** Second value, for options that take two (`--arg NAME VALUE`). */
  second?: string;
}

/** Options and operands of one argv. */
export interface ParsedArguments {
  options: ParsedOption[];
  operands: string[];
  /** Index in `args` of the first operand when options stop there (stopAtOperand). */
  firstOperandIndex: number;
}

function longTable(spec: OptionSpec): Map<string, 'flag' | 'value' | 'optional' | 'two'> {
  const table = new Map<string, 'flag' | 'value' | 'optional' | 'two'>();
  for (const entry of spec.long ?? []) {
    if (entry.endsWith('=')) table.set(entry.slice(0, -1), 'value');
    else if (entry.endsWith('?')) table.set(entry.slice(0, -1), 'optional');
    else if (entry.endsWith(':2')) table.set(entry.slice(0, -2), 'two');
    else table.set(entry, 'flag');
  }
  return table;
}

function allowedList(spec: OptionSpec): string {
  const parts: string[] = [];
  for (const character of spec.flags ?? '') parts.push(`-${character}`);
  for (const character of spec.valued ?? '') parts.push(`-${character} VALUE`);
  for (const entry of spec.long ?? [])
    parts.push(`--${entry.replace(/[?=]$|:2$/, '')}${entry.endsWith('=') ? '=VALUE' : ''}`);
  return parts.join(', ') || 'none';
}

/** Split `args` (without the program name) into options and operands, refusing anything not in `spec`. */
export function parseOptions(program: string, args: readonly string[], spec: OptionSpec): ParsedArguments {
  const rule = `program.${program}`;
  const table = longTable(spec);
  const options: ParsedOption[] = [];
  const operands: string[] = [];
  let firstOperandIndex = args.length;
  let onlyOperands = false;
  for (let index = 0; index < args.length; index += 1) {
    const argument = args[index] as string;
    if (onlyOperands || argument === '-' || !argument.startsWith('-')) {
      if (firstOperandIndex === args.length) firstOperandIndex = index;
      operands.push(argument);
      if (spec.stopAtOperand) onlyOperands = true;
      continue;
    }
    if (argument === '--') {
      onlyOperands = true;
      if (spec.stopAtOperand) firstOperandIndex = Math.min(firstOperandIndex, index + 1);
      continue;
    }
    if (argument.startsWith('--')) {
      const equals = argument.indexOf('=');
      const name = equals === -1 ? argument.slice(2) : argument.slice(2, equals);
      const kind = table.get(name);
      if (kind === undefined) {
        const abbreviates = [...table.keys()].filter((known) => known.startsWith(name));
        throw new ShellRefusal(
          rule,
          abbreviates.length > 0
            ? `${program} option --${name} must be written in full (GNU programs accept abbreviations, so restricted mode only accepts exact names such as --${abbreviates[0]})`
            : `${program} option --${name} is not allowed in restricted mode (allowed: ${allowedList(spec)})`,
        );
      }
      if (kind === 'flag') {
        if (equals !== -1) throw new ShellRefusal(rule, `${program} option --${name} takes no value`);
        options.push({ name: `--${name}` });
      } else if (kind === 'optional') {
        options.push(equals === -1 ? { name: `--${name}` } : { name: `--${name}`, value: argument.slice(equals + 1) });
      } else if (kind === 'value') {
        if (equals !== -1) options.push({ name: `--${name}`, value: argument.slice(equals + 1) });
        else {
          const value = args[index + 1];
          if (value === undefined) throw new ShellRefusal(rule, `${program} option --${name} needs a value`);
          options.push({ name: `--${name}`, value });
          index += 1;
        }
      } else {
        const first = args[index + 1];
        const second = args[index + 2];
        if (equals !== -1 || first === undefined || second === undefined)
          throw new ShellRefusal(rule, `${program} option --${name} needs two values`);
        options.push({ name: `--${name}`, value: first, second });
        index += 2;
      }
      continue;
    }
    if (spec.numeric && /^-\d+$/.test(argument)) {
      options.push({ name: '-NUM', value: argument.slice(1) });
      continue;
    }
    for (let position = 1; position < argument.length; position += 1) {
      const character = argument[position] as string;
      if ((spec.flags ?? '').includes(character)) {
        options.push({ name: `-${character}` });
        continue;
      }
      if ((spec.valued ?? '').includes(character)) {
        const attached = argument.slice(position + 1);
        if (attached.length > 0) options.push({ name: `-${character}`, value: attached });
        else {
          const value = args[index + 1];
          if (value === undefined) throw new ShellRefusal(rule, `${program} option -${character} needs a value`);
          options.push({ name: `-${character}`, value });
          index += 1;
        }
        break;
      }
      throw new ShellRefusal(
        rule,
        `${program} option -${character}${argument.length > 2 ? ` (in ${argument})` : ''} is not allowed in restricted mode (allowed: ${allowedList(spec)})`,
      );
    }
  }
  return { options, operands, firstOperandIndex };
}

/** Whether a long option (without dashes) is, or abbreviates, one of `names`. */
export function abbreviatesAny(name: string, names: readonly string[]): string | undefined {
  if (name.length === 0) return undefined;
  return names.find((denied) => denied.startsWith(name));
}
