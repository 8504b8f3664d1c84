import { join } from 'node:path';
import type { NamedSecret, SecretRedactor } from '@rho/core';

/**
 * The redactor of every secret rho knows, for commands that run no agent (`rho export`,
 * `rho eval`): the environment's, and those the settings sections resolve from
 * `$RHO_HOME/config.yaml` (the MCP servers' credentials) and the database aliases of
 * `--db-config`/`RHO_DB_CONFIG`/`$RHO_HOME/databases.yaml` (their passwords). A file that cannot
 * be read adds nothing (the command reports its own errors). A run collects its secrets with its
 * settings (`resolveSettings`), once.
 */
export async function processSecretsRedactor(
  env: NodeJS.ProcessEnv,
  home: string,
  options: { dbConfigPath?: string } = {},
): Promise<SecretRedactor> {
  const [
    { collectKnownSecrets, resolveSettings },
    { createSecretRedactor },
    { mcpSettingsSection },
    { databaseSettingsSection },
    { allSections },
    { readConfigFile },
  ] = await Promise.all([
    import('@rho/core/settings'),
    import('@rho/core'),
    import('@rho/tools-mcp/settings'),
    import('@rho/tools-db/settings'),
    import('./settings.js'),
    import('@rho/core/internal'),
  ]);
  const secrets: NamedSecret[] = collectKnownSecrets(env, []);
  for (const section of [mcpSettingsSection, databaseSettingsSection]) {
    try {
      const resolved = await resolveSettings({
        sections: [section],
        knownSections: allSections,
        home,
        env,
        overrides: options.dbConfigPath === undefined ? {} : { 'db-config': options.dbConfigPath },
      });
      secrets.push(...resolved.secrets);
    } catch {
      // An unreadable file, or a server whose ${VAR} is unset: its written settings still count.
      try {
        if (section === mcpSettingsSection)
          secrets.push(...collectKnownSecrets({}, [readConfigFile(join(home, 'config.yaml'))?.value]));
      } catch {
        // No readable config.yaml.
      }
    }
  }
  return createSecretRedactor(secrets);
}
