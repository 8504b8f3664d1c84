/**
 * `@rho/tools-db/settings`: the database aliases' settings section. Light: it reads
 * `databases.yaml` when it is built and loads no driver.
 */
import type { WorkingDirSettings } from '@rho/core/settings';
import { defineSettingsSection, mapping, text } from '@rho/core/settings';
import type { DatabaseConfig } from './database-config.js';
import { parseDatabaseConfig, resolveDatabaseConfig } from './database-config.js';

/** The database aliases of a run, resolved (`${ENV}` references replaced, SQLite paths absolute). */
export interface DatabaseSettings {
  readonly aliases: readonly DatabaseConfig[];
  /** The file they were read from (none for the agent config's `databases`). */
  readonly file?: string;
}

/**
 * Database aliases: the agent config's `databases` mapping, else the file `--db-config` or
 * `RHO_DB_CONFIG` names, else `$RHO_HOME/databases.yaml`, else rho-agent's (`RHO_AGENT_DB_CONFIG`,
 * `~/.config/rho-agent/databases.yaml`, with a notice). Their passwords are secrets.
 */
export const databaseSettingsSection = defineSettingsSection({
  name: 'databases',
  owner: '@rho/tools-db',
  description:
    'Database aliases the database tools serve: the agent config’s databases, else --db-config, RHO_DB_CONFIG, $RHO_HOME/databases.yaml, then rho-agent’s RHO_AGENT_DB_CONFIG and ~/.config/rho-agent/databases.yaml.',
  aliases: { database: 'databases' },
  settings: [
    {
      key: 'databases',
      description: 'Database aliases, in the format of databases.yaml (wins over --db-config)',
      ...mapping('a mapping'),
    },
    {
      key: 'db_config',
      description: 'A databases.yaml file of aliases',
      files: [],
      ...text('a path'),
      env: ['RHO_DB_CONFIG'],
      flag: 'db-config',
      emptyFlag: 'unset',
    },
  ],
  async build(context): Promise<DatabaseSettings> {
    const inline = context.value<Record<string, unknown>>('databases');
    const env = context.env as Record<string, string | undefined>;
    let aliases: readonly DatabaseConfig[];
    let file: string | undefined;
    if (inline !== undefined) {
      // SQLite paths of the agent config resolve against the working directory.
      aliases = parseDatabaseConfig(inline, {
        baseDir: context.section<WorkingDirSettings>('workingDir').workingDir,
        env,
      });
    } else {
      const flag = context.winner('db_config');
      // RHO_DB_CONFIG and rho-agent's fallbacks are the loader's (it says which file it read and why).
      const resolved = await resolveDatabaseConfig({
        env,
        rhoHome: context.home,
        ...(flag?.kind === 'flag' ? { path: flag.value as string } : {}),
      });
      if (resolved.notice !== undefined) context.warn(resolved.notice);
      aliases = resolved.databases;
      file = resolved.file;
    }
    for (const alias of aliases)
      if (typeof alias.password === 'string') context.secret(`databases.${alias.alias}.password`, alias.password, 1);
    return { aliases, ...(file === undefined ? {} : { file }) };
  },
});
