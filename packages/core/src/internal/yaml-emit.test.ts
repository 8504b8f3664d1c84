import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { toYamlDocument } from './yaml-emit.js';

/** A small seeded generator (mulberry32), so a failure can be reproduced from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Pieces that trip YAML writers: indicators, reserved words, numbers in disguise, whitespace at
// the edges, control characters, quotes, comments, document markers, non-ASCII.
const PIECES = [
  'a',
  'gpt-4o',
  'true',
  'False',
  'null',
  '~',
  'yes',
  'NO',
  'on',
  'y',
  '1',
  '0x1F',
  '1e3',
  '.5',
  '-1',
  '+1',
  '.inf',
  '.NaN',
  ':',
  ': ',
  ' #',
  '#',
  '- ',
  '-',
  '? ',
  '|',
  '>',
  '!',
  '&a',
  '*a',
  '%',
  '@',
  '`',
  '"',
  "'",
  '\\',
  '{',
  '}',
  '[',
  ']',
  ',',
  ' ',
  '  ',
  '\t',
  '\n',
  '\n\n',
  '\r',
  '\r\n',
  '\u0000',
  '\u0007',
  '\u001b[0m',
  '\u0085',
  '\u2028',
  '\ufeff',
  'é',
  '日本',
  '😀',
  '---',
  '...',
  'http://127.0.0.1:9/v1',
  '/home/user/dir',
  'C:\\x',
  '${ENV}',
  '<<',
  '=',
  'key: value',
  '  indented',
  'line\n  more',
  'tab\tin',
];

function randomString(next: () => number): string {
  const parts = Math.floor(next() * 5);
  let text = '';
  for (let index = 0; index < parts; index += 1) text += PIECES[Math.floor(next() * PIECES.length)]!;
  return text;
}

function randomValue(next: () => number, depth: number): unknown {
  const kind = Math.floor(next() * (depth > 2 ? 5 : 7));
  switch (kind) {
    case 0:
      return null;
    case 1:
      return next() < 0.5;
    case 2:
      return [0, -1, 3.25, 1e21, 5e-7, 42, Number.MAX_SAFE_INTEGER][Math.floor(next() * 7)];
    case 3:
    case 4:
      return randomString(next);
    case 5:
      return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth + 1));
    default:
      return randomMap(next, depth + 1);
  }
}

function randomMap(next: () => number, depth: number): Record<string, unknown> {
  const map: Record<string, unknown> = {};
  const size = Math.floor(next() * 5);
  for (let index = 0; index < size; index += 1) map[randomString(next) || 'k'] = randomValue(next, depth);
  return map;
}

describe('toYamlDocument', () => {
  it('writes a session config as readable block YAML', () => {
    const document = toYamlDocument({
      model: 'gpt-5-mini',
      profile: 'readonly',
      working_dir: '/tmp/work dir',
      base_url: 'http://127.0.0.1:9/v1',
      auto_approve: false,
      max_retries: 0,
      system_prompt: 'You are careful.\n\nRules:\n- read first\n',
      vars: {},
      tool_packages: [],
      databases: { main: { driver: 'postgres', readonly: true, tables: ['a', 'b'] } },
    });
    expect(document).toBe(
      [
        'model: gpt-5-mini',
        'profile: readonly',
        'working_dir: /tmp/work dir',
        'base_url: "http://127.0.0.1:9/v1"',
        'auto_approve: false',
        'max_retries: 0',
        'system_prompt: |',
        '  You are careful.',
        '',
        '  Rules:',
        '  - read first',
        'vars: {}',
        'tool_packages: []',
        'databases:',
        '  main:',
        '    driver: postgres',
        '    readonly: true',
        '    tables:',
        '      - a',
        '      - b',
        '',
      ].join('\n'),
    );
    expect(toYamlDocument({})).toBe('{}\n');
  });

  it('gives back what it was given when the yaml package reads it (5,000 random documents)', () => {
    for (let seed = 1; seed <= 5000; seed += 1) {
      const value = randomMap(random(seed), 0);
      const document = toYamlDocument(value);
      let parsed: unknown;
      try {
        parsed = parse(document);
      } catch (error) {
        throw new Error(`seed ${seed}: ${String(error)}\n${document}`, { cause: error });
      }
      // An empty map is written `{}`; a map leaves undefined out, as the yaml package does.
      expect(parsed, `seed ${seed}:\n${document}`).toEqual(value);
    }
  });

  it('hands what is not plain data to the yaml package', () => {
    expect(parse(toYamlDocument({ limit: Number.POSITIVE_INFINITY }))).toEqual({ limit: Number.POSITIVE_INFINITY });
    expect(parse(toYamlDocument({ list: [1, undefined, 2] }))).toEqual({ list: [1, null, 2] });
  });
});
