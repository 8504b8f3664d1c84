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
    expect(text).toBe(
      '[REDACTED:OPENAI_API_KEY] [REDACTED:PGPASSWORD] [REDACTED] [REDACTED:otel.headers.x-honeycomb-team] [REDACTED] [REDACTED:databases.main.password] /home/someone/project',
    );
  });

  it('takes database passwords, MCP credentials, exporter headers and command-line URLs, not plain settings', () => {
    const redactor = knownSecretsRedactor(
      {
        OTEL_EXPORTER_OTLP_HEADERS: 'x-team=team%2Dkey%2D77,authorization=Bearer otlp-token-88',
        NODE_ENV: 'production',
      },
      [{ mcpServers: { gh: { command: 'gh-mcp', env: { LOG: 'production', GH: '${GH_TOKEN}', ID: 'id4k2j9x7q' } } } }],
      {
        databases: [{ alias: 'shop', password: 'db-pw-42' }, { alias: 'local' }],
        mcpServers: [
          { name: 'gh', transport: 'stdio', env: { GH: 'ghp-resolved-1a2b3c', LOG: 'production', DIR: '/srv/data1' } },
          {
            name: 'web',
            transport: 'http',
            url: 'https://u:mcp-url-pw@h/mcp',
            headers: { Authorization: 'Bearer web-tok-55' },
          },
        ],
        urls: ['postgres://rho:fleet-pw-66@db/rho', undefined],
      },
    );
    const text = redactor.text(
      'team-key-77 otlp-token-88 db-pw-42 ghp-resolved-1a2b3c id4k2j9x7q mcp-url-pw web-tok-55 fleet-pw-66 production /srv/data1 ${GH_TOKEN}',
    );
    expect(text).toBe(
      '[REDACTED:OTEL_EXPORTER_OTLP_HEADERS.x-team] [REDACTED:OTEL_EXPORTER_OTLP_HEADERS.authorization] [REDACTED:databases.shop.password] [REDACTED:mcp_servers.gh.env.GH] [REDACTED:mcpServers.gh.env.ID] [REDACTED] [REDACTED:mcp_servers.web.headers.Authorization] [REDACTED] production /srv/data1 ${GH_TOKEN}',
    );
  });
});

describe('knownSecretsRedactor: words are not secrets', () => {
  it("does not take a default password that is a plain word (it would rename the postgres tool in the model's history)", () => {
    const redactor = knownSecretsRedactor({ PGPASSWORD: 'postgres', DB_PASSWORD: 'changeme' }, [], {
      databases: [{ alias: 'local', password: 'postgres' }],
    });
    expect(redactor.text('called postgres with changeme')).toBe('called postgres with changeme');
  });
});
