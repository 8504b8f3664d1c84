/** How one dialect spells literals, identifiers and comments. */
export interface SqlLexicalRules {
  /** `\'` escapes a quote inside a string (MySQL default, without NO_BACKSLASH_ESCAPES). */
  backslashEscapes: boolean;
  /** `"..."` is a string (MySQL without ANSI_QUOTES) rather than a quoted identifier. */
  doubleQuoteIsString: boolean;
  /** `` `name` `` is a quoted identifier (MySQL, SQLite). */
  backtickIdentifiers: boolean;
  /** `[name]` is a quoted identifier (SQLite). */
  bracketIdentifiers: boolean;
  /** `# ...` is a line comment (MySQL). */
  hashComments: boolean;
  /** `--` starts a comment only when followed by whitespace or the end (MySQL). */
  dashCommentNeedsSpace: boolean;
  /** Oracle's alternative quoting `q'[...]'`, `nq'{...}'`. */
  oracleQuoting: boolean;
}

/** One token of SQL text; comments and whitespace produce none. */
export interface SqlToken {
  /** `word`: unquoted identifier or keyword; `quoted`: quoted identifier; `punct`: anything else. */
  kind: 'word' | 'quoted' | 'string' | 'number' | 'punct';
  /** The word or punctuation as written; for `quoted` the name without its quotes; for `string` the raw literal. */
  text: string;
  /** Offset in the input. */
  start: number;
}

/** The input cannot be split into tokens (an unterminated string, identifier or comment). */
export class SqlLexError extends Error {
  override name = 'SqlLexError';
}

/** MySQL/MariaDB with the default sql_mode (backslash escapes on, ANSI_QUOTES off). */
export const MYSQL_LEXICAL_RULES: SqlLexicalRules = {
  backslashEscapes: true,
  doubleQuoteIsString: true,
  backtickIdentifiers: true,
  bracketIdentifiers: false,
  hashComments: true,
  dashCommentNeedsSpace: true,
  oracleQuoting: false,
};

/** SQLite: `"…"`, `` `…` `` and `[…]` name identifiers; no backslash escapes. */
export const SQLITE_LEXICAL_RULES: SqlLexicalRules = {
  backslashEscapes: false,
  doubleQuoteIsString: false,
  backtickIdentifiers: true,
  bracketIdentifiers: true,
  hashComments: false,
  dashCommentNeedsSpace: false,
  oracleQuoting: false,
};

/** Oracle: `"…"` identifiers and `q'…'` alternative quoting. */
export const ORACLE_LEXICAL_RULES: SqlLexicalRules = {
  backslashEscapes: false,
  doubleQuoteIsString: false,
  backtickIdentifiers: false,
  bracketIdentifiers: false,
  hashComments: false,
  dashCommentNeedsSpace: false,
  oracleQuoting: true,
};

const WORD_START = /[\p{L}_]/u;
const WORD_PART = /[\p{L}\p{N}_$#]/u;
const DIGIT = /[0-9]/;
const ORACLE_CLOSERS: Record<string, string> = { '[': ']', '{': '}', '(': ')', '<': '>' };

/**
 * The offset just past the quoted text that starts at `start` (its opening quote): a doubled
 * quote stays inside, and so does a backslash-escaped character when `backslash` is set.
 * `what` names the text in the error for an unterminated one.
 */
export function quotedEnd(sql: string, start: number, backslash: boolean, what: string): number {
  const quote = sql[start];
  let position = start + 1;
  while (position < sql.length) {
    const character = sql[position];
    if (backslash && character === '\\') {
      position += 2;
      continue;
    }
    if (character === quote) {
      if (sql[position + 1] === quote) {
        position += 2;
        continue;
      }
      return position + 1;
    }
    position += 1;
  }
  throw new SqlLexError(`unterminated ${what} starting at offset ${start}`);
}

/**
 * Splits SQL into tokens, skipping whitespace and comments, so that words inside literals,
 * quoted identifiers and comments are never mistaken for keywords.
 */
export function tokenizeSql(sql: string, rules: SqlLexicalRules): SqlToken[] {
  const tokens: SqlToken[] = [];
  let index = 0;
  const length = sql.length;

  const readQuoted = (start: number, quote: string, allowBackslash: boolean): number =>
    quotedEnd(sql, start, allowBackslash, quote === "'" ? 'string literal' : 'quoted name');

  while (index < length) {
    const character = sql[index] as string;
    const next = sql[index + 1];

    if (/\s/.test(character)) {
      index += 1;
      continue;
    }
    if (character === '-' && next === '-') {
      const after = sql[index + 2];
      if (!rules.dashCommentNeedsSpace || after === undefined || /\s/.test(after)) {
        const end = sql.indexOf('\n', index);
        index = end === -1 ? length : end + 1;
        continue;
      }
    }
    if (rules.hashComments && character === '#') {
      const end = sql.indexOf('\n', index);
      index = end === -1 ? length : end + 1;
      continue;
    }
    if (character === '/' && next === '*') {
      const end = sql.indexOf('*/', index + 2);
      if (end === -1) throw new SqlLexError(`unterminated comment starting at offset ${index}`);
      index = end + 2;
      continue;
    }
    if (rules.oracleQuoting && /[nNqQ]/.test(character)) {
      const prefixLength = /[nN]/.test(character) && /[qQ]/.test(next ?? '') ? 2 : /[qQ]/.test(character) ? 1 : 0;
      const opener = sql[index + prefixLength + 1];
      if (prefixLength > 0 && sql[index + prefixLength] === "'" && opener !== undefined && !/\s/.test(opener)) {
        const closer = ORACLE_CLOSERS[opener] ?? opener;
        const end = sql.indexOf(`${closer}'`, index + prefixLength + 2);
        if (end === -1) throw new SqlLexError(`unterminated q-quoted string starting at offset ${index}`);
        tokens.push({ kind: 'string', text: sql.slice(index, end + 2), start: index });
        index = end + 2;
        continue;
      }
    }
    if (character === "'" || (character === '"' && rules.doubleQuoteIsString)) {
      const end = readQuoted(index, character, rules.backslashEscapes);
      tokens.push({ kind: 'string', text: sql.slice(index, end), start: index });
      index = end;
      continue;
    }
    if (character === '"' || (character === '`' && rules.backtickIdentifiers)) {
      const end = readQuoted(index, character, false);
      const inner = sql
        .slice(index + 1, end - 1)
        .split(character + character)
        .join(character);
      tokens.push({ kind: 'quoted', text: inner, start: index });
      index = end;
      continue;
    }
    if (character === '[' && rules.bracketIdentifiers) {
      const end = sql.indexOf(']', index + 1);
      if (end === -1) throw new SqlLexError(`unterminated [quoted name] starting at offset ${index}`);
      tokens.push({ kind: 'quoted', text: sql.slice(index + 1, end), start: index });
      index = end + 1;
      continue;
    }
    if (DIGIT.test(character) || (character === '.' && DIGIT.test(next ?? ''))) {
      let end = index + 1;
      while (end < length && /[0-9a-zA-Z_.]/.test(sql[end] as string)) end += 1;
      tokens.push({ kind: 'number', text: sql.slice(index, end), start: index });
      index = end;
      continue;
    }
    if (WORD_START.test(character)) {
      let end = index + 1;
      // MySQL starts a comment at `#` even right after a word, so `#` never continues a word there.
      while (end < length && WORD_PART.test(sql[end] as string) && !(rules.hashComments && sql[end] === '#')) end += 1;
      tokens.push({ kind: 'word', text: sql.slice(index, end), start: index });
      index = end;
      continue;
    }
    tokens.push({ kind: 'punct', text: character, start: index });
    index += 1;
  }
  return tokens;
}

/** Splits a token list at `;`, dropping empty statements (so a trailing `;` is harmless). */
export function splitStatements(tokens: readonly SqlToken[]): SqlToken[][] {
  const statements: SqlToken[][] = [];
  let current: SqlToken[] = [];
  for (const token of tokens) {
    if (token.kind === 'punct' && token.text === ';') {
      if (current.length > 0) statements.push(current);
      current = [];
    } else {
      current.push(token);
    }
  }
  if (current.length > 0) statements.push(current);
  return statements;
}

/** The upper-cased text of an unquoted word, or undefined for any other token. */
export function keyword(token: SqlToken | undefined): string | undefined {
  return token?.kind === 'word' ? token.text.toUpperCase() : undefined;
}
