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
