import { describe, expect, it } from 'vitest';
import {
  MYSQL_LEXICAL_RULES,
  ORACLE_LEXICAL_RULES,
  SQLITE_LEXICAL_RULES,
  SqlLexError,
  splitStatements,
  tokenizeSql,
} from './sql-lexer.js';
import type { SqlLexicalRules } from './sql-lexer.js';

const kinds = (sql: string, rules: SqlLexicalRules) =>
  tokenizeSql(sql, rules).map((token) => `${token.kind}:${token.text}`);

describe('tokenizeSql', () => {
  it('keeps literals whole and skips comments', () => {
    expect(kinds("SELECT 'a;b' -- x; DROP\n, /* ; */ 1;", SQLITE_LEXICAL_RULES)).toEqual([
      'word:SELECT',
      "string:'a;b'",
      'punct:,',
      'number:1',
      'punct:;',
    ]);
  });

  it('reads doubled quotes inside strings and identifiers', () => {
    expect(kinds(`SELECT 'it''s', "a""b" FROM t`, SQLITE_LEXICAL_RULES)).toEqual([
      'word:SELECT',
      "string:'it''s'",
      'punct:,',
      'quoted:a"b',
      'word:FROM',
      'word:t',
    ]);
  });

  it('follows MySQL rules: backslash escapes, double-quoted strings, # comments, "--" needs a space', () => {
    expect(kinds(`SELECT 'a\\'; DROP', "b;c" # ; DELETE\n`, MYSQL_LEXICAL_RULES)).toEqual([
      'word:SELECT',
      "string:'a\\'; DROP'",
      'punct:,',
      'string:"b;c"',
    ]);
    expect(kinds('SELECT 1 --1', MYSQL_LEXICAL_RULES)).toEqual([
      'word:SELECT',
      'number:1',
      'punct:-',
      'punct:-',
      'number:1',
    ]);
    expect(kinds('SELECT 1 -- c', MYSQL_LEXICAL_RULES)).toEqual(['word:SELECT', 'number:1']);
    // `#` ends a word and starts a comment on MySQL, and belongs to the name on Oracle.
    expect(kinds('SELECT a#; DROP\n', MYSQL_LEXICAL_RULES)).toEqual(['word:SELECT', 'word:a']);
    expect(kinds('SELECT a#b FROM t', ORACLE_LEXICAL_RULES)).toEqual([
      'word:SELECT',
      'word:a#b',
      'word:FROM',
      'word:t',
    ]);
  });

  it('reads SQLite bracket and backquote identifiers', () => {
    expect(kinds('SELECT [a;b], `c d`', SQLITE_LEXICAL_RULES)).toEqual([
      'word:SELECT',
      'quoted:a;b',
      'punct:,',
      'quoted:c d',
    ]);
  });

  it("reads Oracle q'…' literals with every kind of delimiter", () => {
    for (const literal of ["q'[it's; DROP]'", "Q'{a'}'", "q'(x)'", "q'<y>'", "q'!z'!'", "nq'[n]'"]) {
      expect(kinds(`SELECT ${literal} FROM dual`, ORACLE_LEXICAL_RULES), literal).toEqual([
        'word:SELECT',
        `string:${literal}`,
        'word:FROM',
        'word:dual',
      ]);
    }
    // Without q-quoting, q is an ordinary name.
    expect(kinds('SELECT q FROM t', ORACLE_LEXICAL_RULES)).toEqual(['word:SELECT', 'word:q', 'word:FROM', 'word:t']);
  });

  it('refuses unterminated strings, quoted names and comments', () => {
    expect(() => tokenizeSql("SELECT 'open", SQLITE_LEXICAL_RULES)).toThrow(SqlLexError);
    expect(() => tokenizeSql('SELECT "open', SQLITE_LEXICAL_RULES)).toThrow(/unterminated quoted name/);
    expect(() => tokenizeSql('SELECT 1 /* open', MYSQL_LEXICAL_RULES)).toThrow(/unterminated comment/);
    expect(() => tokenizeSql('SELECT [open', SQLITE_LEXICAL_RULES)).toThrow(/unterminated \[quoted name\]/);
    expect(() => tokenizeSql("SELECT 'a\\' FROM t", MYSQL_LEXICAL_RULES)).toThrow(SqlLexError);
  });
});

describe('splitStatements', () => {
  it('splits at top-level semicolons and drops empty statements', () => {
    const statements = splitStatements(tokenizeSql("SELECT ';' ;; SELECT 2; ", SQLITE_LEXICAL_RULES));
    expect(statements.map((statement) => statement.map((token) => token.text).join(' '))).toEqual([
      "SELECT ';'",
      'SELECT 2',
    ]);
    expect(splitStatements(tokenizeSql(' -- nothing\n ; ', SQLITE_LEXICAL_RULES))).toEqual([]);
  });
});
