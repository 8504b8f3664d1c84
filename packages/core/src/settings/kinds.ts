import type { GenericSchema } from 'valibot';
import * as v from 'valibot';
import { suggestKey } from './suggest.js';

/**
 * Schemas and text readers for the kinds of value settings have, with messages that say what is
 * expected. Sections spread them into their settings:
 * `{ key: 'idle_timeout', ...seconds(), env: ['RHO_IDLE_TIMEOUT'], ... }`.
 */
export interface SettingKind {
  readonly schema: GenericSchema;
  readonly text?: (text: string) => unknown;
  readonly hint?: string;
  readonly emptyFlag?: 'error' | 'unset' | 'value';
}

/** A plain mapping (not a list, not null). */
export function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A number from a variable or flag (`1_000` reads as 1000 where `underscores`). */
function numberText(underscores = false): (text: string) => unknown {
  return (text) => {
    const trimmed = (underscores ? text.replace(/_/g, '') : text).trim();
    return trimmed === '' ? text : Number(trimmed);
  };
}

/** A timeout in seconds: a positive number (`90`, `2.5`). */
export function seconds(): SettingKind {
  const message = 'a positive number of seconds';
  return {
    schema: v.pipe(v.number(message), v.finite(message), v.gtValue(0, message)),
    text: numberText(),
    hint: 'for example 300',
    emptyFlag: 'error',
  };
}

/** A count of retries: a whole number, 0 or more. */
export function retries(): SettingKind {
  const message = 'a whole number of retries, 0 or more';
  return {
    schema: v.pipe(v.number(message), v.integer(message), v.minValue(0, message)),
    text: numberText(),
    emptyFlag: 'error',
  };
}

/** A whole number of tokens (or characters) above 0. */
export function wholeAmount(unit: 'tokens' | 'characters', example: string): SettingKind {
  const message = `a whole number of ${unit}, for example ${example}`;
  return {
    schema: v.pipe(v.number(message), v.integer(message), v.gtValue(0, message)),
    text: numberText(true),
    emptyFlag: 'error',
  };
}

/** A whole number of at least 1 (a turn or token budget); `example` is how its flag is typed. */
export function countOfAtLeastOne(example?: string): SettingKind {
  const message = 'a whole number of at least 1';
  return {
    schema: v.pipe(v.number(message), v.integer(message), v.minValue(1, message)),
    text: numberText(),
    ...(example === undefined ? {} : { hint: `for example ${example}` }),
  };
}

/** A number above 0 (a cost in USD, a duration); `example` is how its flag is typed. */
export function aboveZero(example?: string): SettingKind {
  const message = 'a number above 0';
  return {
    schema: v.pipe(v.number(message), v.finite(message), v.gtValue(0, message)),
    text: numberText(),
    ...(example === undefined ? {} : { hint: `for example ${example}` }),
  };
}

/** A string; `nonEmpty` refuses an empty one. */
export function text(message = 'a string', nonEmpty = false): SettingKind {
  return {
    schema: nonEmpty
      ? v.pipe(
          v.string(message),
          v.transform((value) => value.trim()),
          v.check((value) => value !== '', message),
        )
      : v.string(message),
  };
}

/** true or false; a variable also takes 1/0, yes/no, on/off. */
export function flagOrSwitch(): SettingKind {
  return {
    schema: v.boolean('true or false'),
    text: (value) => {
      const normal = value.trim().toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(normal)) return true;
      if (['0', 'false', 'no', 'off', ''].includes(normal)) return false;
      return value;
    },
  };
}

/** A mapping, validated further by the section (`message` says what it holds). */
export function mapping(message = 'a mapping'): SettingKind {
  return { schema: v.custom<Record<string, unknown>>(isMapping, message) };
}

/** A list of non-empty strings (a repeatable flag; in a file, a YAML list). */
export function listOfText(message: string): SettingKind {
  return {
    schema: v.pipe(
      v.array(
        v.pipe(
          v.string(message),
          v.transform((item) => item.trim()),
          v.check((item) => item !== '', message),
        ),
        message,
      ),
    ),
    text: (value) => [value],
  };
}

/** One of `choices` (case and spaces aside), with "did you mean" for a near miss. */
export function choice<const T extends string>(choices: readonly T[]): SettingKind {
  return {
    schema: v.pipe(
      v.string(`one of ${choices.join(', ')}`),
      v.transform((value) => value.trim().toLowerCase()),
      v.picklist(choices, (issue) => {
        const got = String(issue.input);
        const { suggestion } = suggestKey(got, choices);
        return `must be one of ${choices.join(', ')} (got ${JSON.stringify(got)}${suggestion === undefined ? '' : `; did you mean ${suggestion}?`})`;
      }),
    ),
  };
}

/**
 * A schema that checks with a function returning the problem (a message starting with `must`,
 * `is`, `has`...) or undefined, and transforms with `output`.
 */
export function checkedText(problem: (value: string) => string | undefined, output: (value: string) => unknown) {
  return v.pipe(
    v.string('a string'),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const found = problem(dataset.value);
      if (found === undefined) return output(dataset.value);
      addIssue({ message: found });
      return NEVER;
    }),
  );
}

/**
 * `NAME` or `{name: NAME, ...options}` (a backend), as `{ name, options }`; `names` says what
 * the names are (`local, sandbox, daytona`), `noun` what they name (`backend`).
 */
export function nameOrMapping(noun: string, names: string): SettingKind {
  const withOptions = `a ${noun} name, or a mapping with \`name\` (${names}) and its options`;
  return {
    schema: v.union(
      [
        v.pipe(
          v.string(),
          v.transform((name) => name.trim()),
          v.check((name) => name !== '', `a ${noun} name (${names})`),
          v.transform((name) => ({ name, options: {} as Record<string, unknown> })),
        ),
        v.pipe(
          v.custom<Record<string, unknown>>(isMapping),
          v.check((value) => typeof value.name === 'string' && value.name.trim() !== '', withOptions),
          v.transform(({ name, ...options }) => ({ name: String(name).trim(), options })),
        ),
      ],
      (issue) => (isMapping(issue.input) ? withOptions : `a ${noun} name or a mapping with \`name\``),
    ),
  };
}

/** A mapping whose values are all strings (headers). */
export function mappingOfText(message: string): SettingKind {
  return {
    schema: v.custom<Record<string, string>>(
      (value) => isMapping(value) && Object.values(value).every((item) => typeof item === 'string'),
      message,
    ),
  };
}

/** Units of a {@link duration}, in milliseconds. */
const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds of a duration written `90s`, `10m`, `2h`, `1d`, `1h30m`, or a number of seconds; undefined when it is not one. */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? value * 1000 : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim().toLowerCase();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) > 0 ? Number(text) * 1000 : undefined;
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)/g)];
  if (parts.length === 0 || parts.map((part) => part[0]).join('') !== text.replace(/\s+/g, '')) return undefined;
  const total = parts.reduce((sum, part) => sum + Number(part[1]) * DURATION_UNITS[part[2]!]!, 0);
  return total > 0 ? total : undefined;
}

/** A duration (`30s`, `10m`, `2h`, `1d`, or seconds as a number), built into milliseconds. */
export function duration(example = '10m'): SettingKind {
  const message = `a duration such as ${example}, 90s, 2h or 1d (or a number of seconds)`;
  return {
    schema: v.pipe(
      v.union([v.number(message), v.string(message)], message),
      v.check((value) => parseDuration(value) !== undefined, `must be ${message}`),
      v.transform((value) => parseDuration(value)!),
    ),
    hint: `for example ${example}`,
    emptyFlag: 'error',
  };
}
