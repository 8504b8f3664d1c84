import { describe, expect, it } from 'vitest';
import { createSecretRedactor, REDACTED } from './secret-redaction.js';

describe('createSecretRedactor', () => {
  it('removes known secrets, as written and URL-encoded, from every string of a value, keys too', () => {
    const redact = createSecretRedactor(['sk-live-abc123', 'p@ss/word!', 'short', undefined]);
    const record = {
      type: 'tool_start',
      args: { command: 'curl -H "Authorization: Bearer sk-live-abc123" x', n: 3, ok: true, none: null },
      list: ['p@ss/word!', 'mysql://u:p%40ss%2Fword!@h/db'],
      'sk-live-abc123': 'as a key',
      short: 'short',
    };
    const out = redact(record);
    expect(JSON.stringify(out)).not.toContain('sk-live-abc123');
    expect(JSON.stringify(out)).not.toContain('ss/word');
    expect(JSON.stringify(out)).not.toContain('p%40ss');
    expect(out.args).toEqual({ command: `curl -H "Authorization: Bearer ${REDACTED}" x`, n: 3, ok: true, none: null });
    // Values shorter than six characters are not secrets: "short" stays.
    expect(out.short).toBe('short');
    // The input is not changed.
    expect(record.args.command).toContain('sk-live-abc123');
  });

  it('removes the password of any URL in a text, known or not', () => {
    const { text } = createSecretRedactor();
    expect(text('use postgres://app:hunter2@db.internal:5432/prod and https://u:t0k@h.example/x')).toBe(
      `use postgres://app:${REDACTED}@db.internal:5432/prod and https://u:${REDACTED}@h.example/x`,
    );
    expect(text('plain https://h.example/a:b@c and user@example.com')).toBe(
      'plain https://h.example/a:b@c and user@example.com',
    );
  });
});

describe('createSecretRedactor: named secrets, overlaps, many secrets', () => {
  it('names the secret in its marker, in every form (as written, URL-encoded, JSON-escaped)', () => {
    const redact = createSecretRedactor([
      { name: 'OPENAI_API_KEY', value: 'sk-live-abc123' },
      { name: 'databases.main.password', value: 'pa"ss/wo rd' },
    ]);
    expect(redact.text('key=sk-live-abc123;')).toBe('key=[REDACTED:OPENAI_API_KEY];');
    expect(redact.text('x pa"ss/wo rd y')).toBe('x [REDACTED:databases.main.password] y');
    expect(redact.text(`u=${encodeURIComponent('pa"ss/wo rd')}`)).toBe('u=[REDACTED:databases.main.password]');
    // In a JSON text (a tool call's arguments) the secret is escaped.
    expect(redact.text(JSON.stringify({ p: 'pa"ss/wo rd' }))).toBe('{"p":"[REDACTED:databases.main.password]"}');
    expect(redact.named.map((secret) => secret.name)).toEqual(['OPENAI_API_KEY', 'databases.main.password']);
  });

  it('replaces overlapping secrets as one stretch, so no part of either is left', () => {
    const { text } = createSecretRedactor(['abcdef12', 'ef12345678']);
    expect(text('<abcdef12345678>')).toBe('<[REDACTED]>');
    expect(text('abcdef12 and ef12345678')).toBe('[REDACTED] and [REDACTED]');
    expect(text('abcdef1')).toBe('abcdef1');
  });

  it('returns the very value when nothing changed, and a copy (input untouched) when something did', () => {
    const redact = createSecretRedactor(['sk-live-abc123']);
    const clean = { a: ['x', { b: 'y' }], n: 1 };
    expect(redact(clean)).toBe(clean);
    const dirty = { a: ['x', { b: 'sk-live-abc123' }], n: 1 };
    const out = redact(dirty);
    expect(out).not.toBe(dirty);
    expect(out.a[0]).toBe('x');
    expect(JSON.stringify(out)).toBe('{"a":["x",{"b":"[REDACTED]"}],"n":1}');
    expect(JSON.stringify(dirty)).toContain('sk-live-abc123');
  });

  it('finds every one of 3,000 secrets of all shapes, as the one-by-one replacement does', () => {
    let seed = 7;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_/+=:.';
    const word = (length: number) =>
      Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    const secrets = Array.from({ length: 3000 }, (_, index) => word(8 + (index % 40)));
    const redact = createSecretRedactor(secrets);
    const picked = [0, 1, 17, 999, 2998, 2999].map((index) => secrets[index]!);
    const text = `start ${picked.join(' middle ')} ${word(200)} end`;
    const out = redact.text(text);
    for (const secret of picked) expect(out).not.toContain(secret);
    expect(out.split(REDACTED).length - 1).toBe(picked.length);
    expect(out.startsWith('start [REDACTED] middle ')).toBe(true);
  });
});

describe('createSecretRedactor: few secrets and many give the same text', () => {
  it('replaces overlapping and repeated secrets alike whether it searches each or scans once', () => {
    const few = ['abcdef12', 'ef12345678', 'zz-token-99'];
    const filler = Array.from({ length: 200 }, (_, index) => `filler-secret-${index}-qq`);
    const text = 'x abcdef12345678 y zz-token-99zz-token-99 abcdef12 ef1234567 ef12345678';
    const searched = createSecretRedactor(few).text(text);
    const scanned = createSecretRedactor([...few, ...filler]).text(text);
    expect(scanned).toBe(searched);
    expect(searched).toBe('x [REDACTED] y [REDACTED][REDACTED] [REDACTED] ef1234567 [REDACTED]');
  });
});
