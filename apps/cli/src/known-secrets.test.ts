import { describe, expect, it } from 'vitest';
import { knownSecretsRedactor } from './known-secrets.js';

describe('knownSecretsRedactor', () => {
  it('takes secret-named variables, URL passwords and secret settings, and leaves the rest', () => {
    const redactor = knownSecretsRedactor(
      {
        OPENAI_API_KEY: 'sk-env-key-123456',
        PGPASSWORD: 'pg-password-1',
        DATABASE_URL: 'postgres://app:url-pass-9@db/prod',
        PWD: '/home/someone/project',
        HOME: '/home/someone',
      },
      [
        { otel: { headers: { 'x-honeycomb-team': 'hny-team-key-1' } } },
        { databases: { main: { url: 'mysql://u:mysql-pass-2@h/db', password: 'config-pass-3' } } },
      ],
    );
    const text = redactor.text(
      'sk-env-key-123456 pg-password-1 url-pass-9 hny-team-key-1 mysql-pass-2 config-pass-3 /home/someone/project',
    );
    expect(text).toBe('[REDACTED] [REDACTED] [REDACTED] [REDACTED] [REDACTED] [REDACTED] /home/someone/project');
  });
});
