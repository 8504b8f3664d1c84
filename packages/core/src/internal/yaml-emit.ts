import { loadYaml } from './yaml.js';

/**
 * A YAML document (block style) for plain data: maps, lists, strings, finite numbers, booleans
 * and null, as a session's `config.yaml` holds. Written here rather than by the `yaml` package so
 * that starting a session does not load it (73 modules, 20-40 ms of a CLI start and about 3 MB of
 * resident memory); anything else (a non-finite number, a value that is not plain data) is left
 * to the `yaml` package. Strings are written plain only when nothing could read them as anything
 * else, as a literal block (`|`) when they are multi-line text, and otherwise double-quoted with
 * JSON's escapes (YAML's double-quoted style is a superset of JSON's strings). `yaml.parse` of
 * the result gives the value back (a property test checks it).
 */
export function toYamlDocument(value: Record<string, unknown>): string {
  try {
    const lines: string[] = [];
    if (!emitMap(value, 0, lines)) return loadYaml().stringify(value);
    return lines.length === 0 ? '{}\n' : `${lines.join('\n')}\n`;
  } catch (error) {
    if (error instanceof NotPlain) return loadYaml().stringify(value);
    throw error;
  }
}

class NotPlain extends Error {}

const INDENT = '  ';
/** Words YAML 1.1 or 1.2 reads as booleans or null (case-insensitive). */
const RESERVED = new Set(['true', 'false', 'null', 'yes', 'no', 'on', 'off', 'y', 'n', '~']);
/**
 * A string safe as a plain scalar: starts with a letter, `_` or `/`; then letters, digits, single
 * spaces between words and punctuation that means nothing inside a plain scalar (no `:`, `#`,
 * quotes at the start, or a space at the end).
 */
const PLAIN = /^[A-Za-z_/](?:[A-Za-z0-9_./@+=,()!?;'-]| (?! |$))*$/;
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

function key(name: string): string {
  return PLAIN_KEY.test(name) && !RESERVED.has(name.toLowerCase()) ? name : JSON.stringify(name);
}

/** Appends the map's entries at `depth`; false when it has none (the caller writes `{}`). */
function emitMap(map: Record<string, unknown>, depth: number, lines: string[]): boolean {
  let any = false;
  for (const [name, value] of Object.entries(map)) {
    if (value === undefined) continue; // as the yaml package does: a map leaves undefined out
    any = true;
    emitEntry(`${INDENT.repeat(depth)}${key(name)}:`, value, depth, lines);
  }
  return any;
}

/** `head` is `key:` or `-` at its indentation; the value goes after it or under it. */
function emitEntry(head: string, value: unknown, depth: number, lines: string[]): void {
  if (Array.isArray(value)) {
    if (value.length === 0) lines.push(`${head} []`);
    else {
      lines.push(head);
      emitList(value, depth + 1, lines);
    }
  } else if (isPlainObject(value)) {
    const nested: string[] = [];
    if (emitMap(value, depth + 1, nested)) lines.push(head, ...nested);
    else lines.push(`${head} {}`);
  } else if (typeof value === 'string' && isBlockText(value)) {
    lines.push(`${head} ${blockHeader(value)}`);
    const indent = INDENT.repeat(depth + 1);
    const body = value.replace(/\n+$/, '');
    for (const line of body.split('\n')) lines.push(line === '' ? '' : `${indent}${line}`);
    // `|+` keeps every final newline: one ends the last line, the others are empty lines.
    for (let extra = value.length - body.length - 1; extra > 0; extra -= 1) lines.push('');
  } else {
    lines.push(`${head} ${scalar(value)}`);
  }
}

function emitList(list: unknown[], depth: number, lines: string[]): void {
  for (const item of list) {
    if (item === undefined) throw new NotPlain();
    emitEntry(`${INDENT.repeat(depth)}-`, item, depth, lines);
  }
}

function scalar(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new NotPlain();
    return Object.is(value, -0) ? '-0' : String(value);
  }
  if (typeof value === 'string') {
    if (PLAIN.test(value) && !RESERVED.has(value.toLowerCase())) return value;
    return JSON.stringify(value);
  }
  throw new NotPlain();
}

/**
 * Multi-line text that a literal block keeps exactly: printable characters, tabs and newlines
 * only, no line starting with a space or tab where the block's indentation is decided (the first
 * line), no carriage return, and no trailing whitespace on a line (kept by YAML, but easily lost
 * by an editor).
 */
function isBlockText(text: string): boolean {
  if (!text.includes('\n') || text.startsWith(' ') || text.startsWith('\t') || text.startsWith('\n')) return false;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\ufeff]/.test(text)) return false;
  if (/[ \t]\n|[ \t]$/.test(text)) return false;
  // A blank line of spaces only, or a lone trailing newline run, must survive: only '\n's allowed.
  return true;
}

/** `|` keeps one final newline, `|-` none, `|+` all of them. */
function blockHeader(text: string): string {
  if (!text.endsWith('\n')) return '|-';
  return text.endsWith('\n\n') ? '|+' : '|';
}
