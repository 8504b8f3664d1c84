import { quotedEnd, SqlLexError } from './sql-lexer.js';
import type { SqlToken } from './sql-lexer.js';

// MariaDB's own lexical rules (sql/sql_lex.cc of MariaDB 10.11), so that the policy reads a
// statement exactly as the server will. node-sql-parser's grammar disagrees with the server on
// several points (it reads `--1` as a comment where MariaDB reads minus minus one), so the
// grammar never sees the original text: it parses the canonical text built here from the
// server's tokens, without comments and with `-` `-` kept apart.

/** The sql_mode flags that change how MariaDB splits text into tokens. */
export interface MysqlLexMode {
  /** Backslash escapes in strings (off under NO_BACKSLASH_ESCAPES). */
  backslashEscapes: boolean;
  /** `"..."` names an identifier (ANSI_QUOTES) instead of being a string. */
  ansiQuotes: boolean;
}

/** A token with its end offset. */
export interface MysqlToken extends SqlToken {
  /** Offset just after the token. */
  end: number;
}

/** The tokens of a statement and where its comments are. */
export interface MysqlLexResult {
  tokens: MysqlToken[];
  /** Comments, `[start, end)` offsets (a line comment ends before its newline). */
  comments: { start: number; end: number }[];
}

// my_isspace() of MariaDB's character sets: space, \t, \n, \v, \f, \r. Not Unicode spaces:
// a byte >= 0x80 belongs to an identifier.
const isSpace = (code: number): boolean => code === 0x20 || (code >= 0x09 && code <= 0x0d);
// `--` starts a comment only when followed by whitespace or a control character (or the end).
const endsDashComment = (code: number): boolean => Number.isNaN(code) || code <= 0x20 || code === 0x7f;
const isIdentChar = (code: number): boolean =>
  (code >= 0x30 && code <= 0x39) ||
  (code >= 0x41 && code <= 0x5a) ||
  (code >= 0x61 && code <= 0x7a) ||
  code === 0x5f ||
  code === 0x24 ||
  code >= 0x80;
const isDigit = (code: number): boolean => code >= 0x30 && code <= 0x39;

/** Splits MariaDB SQL into tokens as the server does under the given sql_mode flags. */
export function lexMysql(sql: string, mode: MysqlLexMode): MysqlLexResult {
  const tokens: MysqlToken[] = [];
  const comments: { start: number; end: number }[] = [];
  const length = sql.length;
  let index = 0;

  const readQuoted = (start: number, quote: string, backslash: boolean): number =>
    quotedEnd(sql, start, backslash, quote === '`' ? 'quoted name' : 'string literal');

  while (index < length) {
    const code = sql.charCodeAt(index);
    const character = sql[index] as string;
    if (isSpace(code)) {
      index += 1;
      continue;
    }
    if (character === '-' && sql[index + 1] === '-' && endsDashComment(sql.charCodeAt(index + 2))) {
      const newline = sql.indexOf('\n', index);
      const end = newline === -1 ? length : newline;
      comments.push({ start: index, end });
      index = end;
      continue;
    }
    if (character === '#') {
      const newline = sql.indexOf('\n', index);
      const end = newline === -1 ? length : newline;
      comments.push({ start: index, end });
      index = end;
      continue;
    }
    if (character === '/' && sql[index + 1] === '*') {
      if (sql[index + 2] === '!' || (sql[index + 2] === 'M' && sql[index + 3] === '!')) {
        throw new SqlLexError(`executable comment at offset ${index}`);
      }
      const close = sql.indexOf('*/', index + 2);
      if (close === -1) throw new SqlLexError(`unterminated comment starting at offset ${index}`);
      comments.push({ start: index, end: close + 2 });
      index = close + 2;
      continue;
    }
    if (character === "'" || (character === '"' && !mode.ansiQuotes)) {
      const end = readQuoted(index, character, mode.backslashEscapes);
      tokens.push({ kind: 'string', text: sql.slice(index, end), start: index, end });
      index = end;
      continue;
    }
    if (character === '`' || (character === '"' && mode.ansiQuotes)) {
      const end = readQuoted(index, character, false);
      const name = sql
        .slice(index + 1, end - 1)
        .split(character + character)
        .join(character);
      tokens.push({ kind: 'quoted', text: name, start: index, end });
      index = end;
      continue;
    }
    if (isDigit(code) || (character === '.' && isDigit(sql.charCodeAt(index + 1)) && tokens.at(-1)?.end !== index)) {
      const match = /^(?:0x[0-9a-fA-F]+|0b[01]+|\d*\.?\d+(?:[eE][+-]?\d+)?|\d+\.(?:[eE][+-]?\d+)?)/.exec(
        sql.slice(index, index + 400),
      );
      let end = index + (match?.[0].length ?? 1);
      // A digit-led run followed by identifier characters is an identifier (`1abc`, `0xZZ`).
      if (isIdentChar(sql.charCodeAt(end)) && isDigit(code)) {
        while (end < length && isIdentChar(sql.charCodeAt(end))) end += 1;
        tokens.push({ kind: 'word', text: sql.slice(index, end), start: index, end });
      } else {
        tokens.push({ kind: 'number', text: sql.slice(index, end), start: index, end });
      }
      index = end;
      continue;
    }
    if (isIdentChar(code)) {
      let end = index + 1;
      while (end < length && isIdentChar(sql.charCodeAt(end))) end += 1;
      tokens.push({ kind: 'word', text: sql.slice(index, end), start: index, end });
      index = end;
      continue;
    }
    tokens.push({ kind: 'punct', text: character, start: index, end: index + 1 });
    index += 1;
  }
  return { tokens, comments };
}

// String contents the grammar reads the same way in any mode; anything else is replaced (the
// policy never decides on what a string says).
const SAFE_STRING = /^[A-Za-z0-9_ %.,:;+\-*=<>()@!?&|^~$[\]{}/]*$/;

/**
 * The text node-sql-parser parses: the server's tokens, one space where the original had space
 * or a comment (or where two characters would otherwise form a comment), strings as plain
 * single-quoted literals.
 */
export function canonicalMysql(tokens: readonly MysqlToken[]): string {
  let text = '';
  let previous: MysqlToken | undefined;
  for (const token of tokens) {
    if (previous !== undefined) {
      const joins =
        (previous.text.endsWith('-') && token.text.startsWith('-')) ||
        (previous.text.endsWith('/') && token.text.startsWith('*')) ||
        (previous.text.endsWith('*') && token.text.startsWith('/'));
      if (previous.end !== token.start || (previous.kind === 'punct' && token.kind === 'punct' && joins)) text += ' ';
    }
    if (token.kind === 'string') {
      const open = token.text.indexOf(token.text.endsWith('"') ? '"' : "'");
      const prefix = token.text.slice(0, open);
      const body = token.text.slice(open + 1, -1);
      text += `${prefix}'${SAFE_STRING.test(body) ? body : '_'}'`;
    } else if (token.kind === 'quoted') {
      text += `\`${token.text.split('`').join('``')}\``;
    } else {
      text += token.text;
    }
    previous = token;
  }
  return text;
}
