import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecretRedactor } from '@rho/core';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadSessionConfig, redactSessionConfig, writeSessionSecrets } from './session-secrets.js';

describe('a session config saved without its secrets', () => {
  it('keeps the secrets out of config.yaml and puts them back on resume', () => {
    const directory = mkdtempSync(join(tmpdir(), 'rho-session-secrets-'));
    const redactor = createSecretRedactor([
      { name: 'databases.shop.password', value: 'db-pw-5531' },
      { name: 'mcp_servers.gh.env.GH_TOKEN', value: 'ghp-9a8b7c6d' },
    ]);
    const document = {
      model: 'gpt-5-mini',
      base_url: 'http://user:url-pass-77@127.0.0.1:9/v1',
      databases: { shop: { type: 'postgres', password: 'db-pw-5531', user: 'app' } },
      mcp_servers: { gh: { command: 'gh-mcp', args: ['--token', 'ghp-9a8b7c6d'], env: { GH_TOKEN: 'ghp-9a8b7c6d' } } },
    };
    const saved = redactSessionConfig(document, redactor);
    writeFileSync(join(directory, 'config.yaml'), stringify(saved.document));
    writeSessionSecrets(directory, saved.secrets);
    const yaml = readFileSync(join(directory, 'config.yaml'), 'utf8');
    for (const secret of ['db-pw-5531', 'ghp-9a8b7c6d', 'url-pass-77']) expect(yaml).not.toContain(secret);
    expect(yaml).toContain('[REDACTED:databases.shop.password]');
    expect(statSync(join(directory, 'secrets.json')).mode & 0o777).toBe(0o600);

    const config = loadSessionConfig(directory);
    expect(config.baseUrl).toBe(document.base_url);
    expect(config.databases).toEqual(document.databases);
    expect(config.mcpServers).toEqual(document.mcp_servers);
  });

  it('writes no secrets.json when nothing was redacted, and reads such a session as before', () => {
    const directory = mkdtempSync(join(tmpdir(), 'rho-session-secrets-'));
    const saved = redactSessionConfig({ model: 'm1', profile: 'readonly' }, createSecretRedactor(['unrelated-1']));
    expect(saved.secrets).toEqual([]);
    writeFileSync(join(directory, 'config.yaml'), stringify(saved.document));
    writeSessionSecrets(directory, saved.secrets);
    expect(() => statSync(join(directory, 'secrets.json'))).toThrow();
    expect(loadSessionConfig(directory).model).toBe('m1');
  });
});
