import { join } from 'node:path';
import { LOCAL_SYNC_FILES, LookupNeeded, type SyncFileView } from '../file-lookup.js';
import { ShellRefusal } from './shell-words.js';

/** More names than this from one pattern is refused: the argv would be unreadable and slow to check. */
export const MAX_GLOB_MATCHES = 5000;
/** Longest file name pattern expanded (Linux's PATH_MAX). */
export const MAX_GLOB_PATTERN = 4096;

function hasMagic(component: string): boolean {
  for (let index = 0; index < component.length; index += 1) {
    const character = component[index] as string;
    if (character === '\\') {
      index += 1;
      continue;
    }
    if (character === '*' || character === '?') return true;
    if (character === '[' && bracketEnd(component, index) !== -1) return true;
  }
  return false;
}

/** Index of the `]` closing the bracket expression opened at `start`, or -1 (then `[` is literal, as in bash). */
function bracketEnd(pattern: string, start: number): number {
  // Where the last `:]` is: a `[:` after it cannot open a class, so `[[:[[:...` is not searched again and again.
  const lastClassEnd = pattern.lastIndexOf(':]');
  let index = start + 1;
  if (pattern[index] === '!' || pattern[index] === '^') index += 1;
  if (pattern[index] === ']') index += 1;
  for (; index < pattern.length; index += 1) {
    const character = pattern[index] as string;
    if (character === '\\') {
      index += 1;
      continue;
    }
    if (character === '[' && pattern[index + 1] === ':' && index + 2 <= lastClassEnd) {
      const close = pattern.indexOf(':]', index + 2);
      if (close !== -1) {
        index = close + 1;
        continue;
      }
    }
    if (character === ']') return index;
  }
  return -1;
}

const POSIX_CLASSES: Record<string, string> = {
  alpha: 'a-zA-Z',
  digit: '0-9',
  alnum: 'a-zA-Z0-9',
  upper: 'A-Z',
  lower: 'a-z',
  space: ' \\t\\n\\r\\f\\v',
  blank: ' \\t',
  punct: '!-\\/:-@\\[-`{-~',
  xdigit: '0-9A-Fa-f',
  word: 'a-zA-Z0-9_',
  cntrl: '\\x00-\\x1f\\x7f',
  print: '\\x20-\\x7e',
  graph: '\\x21-\\x7e',
};

function escapeRegExp(character: string): string {
  return character.replace(/[\\^$.*+?()[\]{}|/-]/g, (match) => `\\${match}`);
}

/** One element of a path component's pattern: `*`, or a test of exactly one character. */
type GlobToken = { star: true } | { star: false; test: (character: string) => boolean };

/**
 * One path component's pattern as a matcher, with bash's rules (no extglob, no globstar: `**` is
 * `*`). Not a regular expression: `.*a.*a.*b` against a long name backtracks exponentially (a
 * 60-character name and 25 stars took 198 s of the event loop). Each token but `*` matches
 * exactly one character, so the classic wildcard match (go back to the last star on a mismatch)
 * is exact and takes at most length(pattern) x length(name) steps.
 */
function componentMatcher(component: string): (name: string) => boolean {
  const tokens: GlobToken[] = [];
  const literal = (expected: string): GlobToken => ({ star: false, test: (character) => character === expected });
  for (let index = 0; index < component.length; index += 1) {
    const character = component[index] as string;
    if (character === '\\') {
      const next = component[index + 1];
      if (next !== undefined) tokens.push(literal(next));
      index += 1;
    } else if (character === '*') {
      if (tokens.at(-1)?.star !== true) tokens.push({ star: true });
    } else if (character === '?') tokens.push({ star: false, test: () => true });
    else if (character === '[') {
      const end = bracketEnd(component, index);
      if (end === -1) {
        tokens.push(literal('['));
        continue;
      }
      let inner = component.slice(index + 1, end);
      let negate = false;
      if (inner.startsWith('!') || inner.startsWith('^')) {
        negate = true;
        inner = inner.slice(1);
      }
      let set = '';
      for (let position = 0; position < inner.length; position += 1) {
        const member = inner[position] as string;
        if (member === '[' && inner[position + 1] === ':') {
          const close = inner.indexOf(':]', position + 2);
          const name = close === -1 ? '' : inner.slice(position + 2, close);
          const posix = POSIX_CLASSES[name];
          if (posix === undefined)
            throw new ShellRefusal('shell.glob', `the character class [:${name}:] is not supported in restricted mode`);
          set += posix;
          position = close + 1;
        } else if (member === '\\') {
          const next = inner[position + 1];
          if (next !== undefined) set += escapeRegExp(next);
          position += 1;
        } else if (member === '-' && position > 0 && position < inner.length - 1) set += '-';
        else set += escapeRegExp(member);
      }
      // A one-character class: no quantifier, so no backtracking.
      const oneCharacter = new RegExp(`^[${negate ? '^' : ''}${set}]$`, 's');
      tokens.push({ star: false, test: (candidate) => oneCharacter.test(candidate) });
      index = end;
    } else tokens.push(literal(character));
  }
  return (name) => {
    let token = 0;
    let position = 0;
    let lastStar = -1;
    let resumeAt = 0;
    while (position < name.length) {
      const current = tokens[token];
      if (current !== undefined && !current.star && current.test(name[position] as string)) {
        token += 1;
        position += 1;
      } else if (current?.star === true) {
        lastStar = token;
        resumeAt = position;
        token += 1;
      } else if (lastStar !== -1) {
        token = lastStar + 1;
        resumeAt += 1;
        position = resumeAt;
      } else return false;
    }
    while (tokens[token]?.star === true) token += 1;
    return token === tokens.length;
  };
}

function unescape(component: string): string {
  return component.replace(/\\(.)/gs, '$1');
}

/** A string as its UTF-8 bytes, one character per byte. */
function bytes(text: string): string {
  return Buffer.from(text).toString('latin1');
}

/** `names` sorted by their UTF-8 bytes (each encoded once). */
function sortedByBytes(names: readonly string[]): string[] {
  // Comparing the one-character-per-byte strings with < is comparing the bytes.
  return names
    .map((name) => ({ name, key: bytes(name) }))
    .sort((left, right) => (left.key < right.key ? -1 : left.key > right.key ? 1 : 0))
    .map((entry) => entry.name);
}

/**
 * Expand one pathname pattern the way `bash -c` does by default: `*`, `?` and `[...]` match within
 * one path component; a name starting with `.` matches only a pattern component starting with a
 * literal `.` (dotglob off), and `.`/`..` never match a wildcard (globskipdots); `**` is the same as
 * `*` (globstar off); a pattern matching nothing stays as the literal word (nullglob and failglob
 * off); matches are sorted by byte value (bash's order under LC_COLLATE=C). The pattern must stay
 * inside the working directory: absolute patterns, `~` and `..` components are refused.
 *
 * `pattern` escapes quoted characters with a backslash (see `wordText`); `literal` is the word's
 * value, returned when nothing matches. `files` is the file system the pattern is expanded on
 * (this machine's, or the backend's the command runs on).
 */
export function expandGlob(
  pattern: string,
  literal: string,
  cwd: string,
  files: SyncFileView = LOCAL_SYNC_FILES,
): string[] {
  // Scanning a bracket expression from each `[` is quadratic on `[[[[...`: 99,000 of them held the
  // event loop for 30 s. No path is longer than PATH_MAX, so no longer pattern is needed.
  if (pattern.length > MAX_GLOB_PATTERN) {
    throw new ShellRefusal(
      'shell.glob',
      `a file name pattern longer than ${MAX_GLOB_PATTERN} characters is not expanded in restricted mode; quote the word if it is not a pattern`,
    );
  }
  if (pattern.startsWith('/')) {
    throw new ShellRefusal(
      'shell.glob',
      `the pattern ${JSON.stringify(literal)} is absolute: restricted mode expands file name patterns only inside the working directory (name the files, or use find PATH -name 'PATTERN')`,
    );
  }
  const components = pattern.split('/');
  if (components.some((component) => unescape(component) === '..')) {
    throw new ShellRefusal(
      'shell.glob',
      `the pattern ${JSON.stringify(literal)} leaves the working directory (..): restricted mode expands file name patterns only inside it`,
    );
  }
  let candidates: string[] = [''];
  let magic = false;
  // A literal component after a wildcard one names paths nobody listed: they must be checked.
  let literalAfterMagic = false;
  for (const [position, component] of components.entries()) {
    const last = position === components.length - 1;
    // A trailing or doubled slash: the candidates already end with `/` (directories only).
    if (component === '') continue;
    if (!hasMagic(component)) {
      const name = unescape(component);
      if (magic) literalAfterMagic = true;
      candidates = candidates.map((candidate) => `${candidate}${name}`);
      if (!last) candidates = candidates.map((candidate) => `${candidate}/`);
      continue;
    }
    magic = true;
    // Matched byte by byte, as bash does under LC_ALL=C (the order the matches are sorted in).
    const matcher = componentMatcher(bytes(component));
    const dotAllowed = component.startsWith('.') || component.startsWith('\\.');
    const next: string[] = [];
    for (const candidate of candidates) {
      const directory = join(cwd, candidate === '' ? '.' : candidate);
      let names: string[];
      try {
        names = files.readdir(directory);
      } catch (error) {
        // A lookup still to be made (a backend's file system) is the caller's to make.
        if (error instanceof LookupNeeded) throw error;
        continue;
      }
      for (const name of sortedByBytes(names)) {
        if (name === '.' || name === '..') continue;
        if (name.startsWith('.') && !dotAllowed) continue;
        if (!matcher(bytes(name))) continue;
        const path = `${candidate}${name}`;
        if (!last) {
          if (files.kind(join(cwd, path), true) === 'directory') next.push(`${path}/`);
        } else next.push(path);
        if (next.length > MAX_GLOB_MATCHES) {
          throw new ShellRefusal(
            'shell.glob',
            `the pattern ${JSON.stringify(literal)} matches more than ${MAX_GLOB_MATCHES} names; narrow it or use find`,
          );
        }
      }
    }
    candidates = next;
  }
  // Literal components after a wildcard name paths that must exist, as in bash.
  const matches = magic
    ? candidates.filter(
        (candidate) =>
          candidate !== '' && (!literalAfterMagic || files.kind(join(cwd, candidate), false) !== undefined),
      )
    : [];
  if (matches.length === 0) return [literal];
  // Bash sorts the complete expansion once.
  return sortedByBytes(matches);
}
