import { rhoHome } from '@rho/core';
import type { AccountCheck } from '@rho/tools-db';
import { EXIT, UsageError } from '../exit-codes.js';
import type { Terminal } from '../terminal.js';
import { styles } from '../terminal.js';

/** Arguments of `rho db check`. */
export interface DbCheckArguments {
  alias: string;
  dbConfig?: string;
  role?: string;
  json: boolean;
}

/** The report as text: the verdict, one line per finding, then the GRANT script. */
export function formatAccountCheck(check: AccountCheck, color = false): string {
  const style = styles(color);
  const lines = [
    check.findings.length === 0
      ? `${style.green('OK')}: database "${check.alias}" (${check.type}, ${check.account}): the account looks fit for read-only use.`
      : `${style.red('TOO POWERFUL')}: database "${check.alias}" (${check.type}, ${check.account}): the account can do ${check.findings.length} thing${check.findings.length === 1 ? '' : 's'} a read-only agent should not:`,
    ...check.findings.map((finding) => `  - [${finding.kind}] ${finding.message}`),
    '',
    check.findings.length === 0
      ? 'A least-privilege read account, should you set up another:'
      : 'A least-privilege read account (then use it for this alias):',
    '',
    check.grantScript.trimEnd(),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * `rho db check ALIAS`: connects with the alias's configured account and reports what it can do
 * that it should not for read-only use; exit 0 when nothing, 1 when something, 2 when the alias
 * is unknown or cannot be reached.
 */
export async function dbCheckCommand(
  argv: DbCheckArguments,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const { checkDatabaseAccount, resolveDatabaseConfig } = await import('@rho/tools-db');
  const resolved = await resolveDatabaseConfig({
    ...(argv.dbConfig === undefined ? {} : { path: argv.dbConfig }),
    rhoHome: rhoHome(env),
    env: env as Record<string, string | undefined>,
  });
  if (resolved.notice !== undefined) terminal.stderr.write(`${resolved.notice}\n`);
  const config = resolved.databases.find((database) => database.alias === argv.alias);
  if (config === undefined) {
    const known = resolved.databases.map((database) => database.alias).sort();
    throw new UsageError({
      message:
        resolved.file === undefined
          ? `No database aliases are configured (--db-config FILE, $RHO_DB_CONFIG or $RHO_HOME/databases.yaml), so there is no "${argv.alias}".`
          : `Unknown database alias "${argv.alias}" in ${resolved.file}${known.length === 0 ? '' : `: use one of ${known.join(', ')}`}.`,
    });
  }
  if (argv.role !== undefined && !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(argv.role)) {
    throw new UsageError({
      message: `--role must be a plain name (letters, digits, _; at most 63), got '${argv.role}'.`,
    });
  }
  const check = await checkDatabaseAccount(config, argv.role === undefined ? {} : { readerName: argv.role });
  if (argv.json) terminal.stdout.write(`${JSON.stringify({ ok: check.findings.length === 0, ...check }, null, 2)}\n`);
  else terminal.stdout.write(formatAccountCheck(check, terminal.color && terminal.stdout.isTTY === true));
  return check.findings.length === 0 ? EXIT.completed : EXIT.failed;
}
