import { resolve } from 'node:path';
import { rhoHome } from '@rho/core';
import type { PermissionProfile, PolicyExplanation, SqlDialect, WriteTool } from '@rho/permissions';
import { explainPolicy, loadProfile } from '@rho/permissions';
import { UsageError } from '../exit-codes.js';

/** Arguments of `rho policy check`. */
export interface PolicyCheckArguments {
  profile?: string;
  shell?: string;
  write?: string;
  read?: string;
  sql?: string;
  dialect?: string;
  workingDir?: string;
  via?: string;
  json: boolean;
}

const DIALECTS: readonly SqlDialect[] = ['sqlite', 'postgres', 'mysql', 'oracle', 'vertica'];
const WRITE_TOOLS: readonly WriteTool[] = ['write', 'edit', 'export_query'];

/**
 * Validates the arguments and asks `explainPolicy` of `@rho/permissions`; its
 * `PolicyExplanation` is what `rho policy check --json` prints and `rho mcp serve`'s
 * `policy_check` returns: one implementation for both.
 *
 * @throws UsageError saying which argument to fix.
 */
export async function explainPolicyCheck(
  argv: PolicyCheckArguments,
  env: NodeJS.ProcessEnv,
): Promise<PolicyExplanation> {
  const given = [argv.shell, argv.write, argv.read, argv.sql].filter((value) => value !== undefined);
  if (given.length !== 1)
    throw new UsageError({
      message: 'Give exactly one of --shell "CMD", --write PATH, --read PATH or --sql "STATEMENT" --dialect D.',
    });
  const profile: PermissionProfile = await loadProfile(argv.profile ?? env.RHO_PROFILE ?? 'readonly', {
    rhoHome: rhoHome(env),
  });
  if (argv.via !== undefined && (argv.write === undefined || !WRITE_TOOLS.includes(argv.via as WriteTool))) {
    throw new UsageError({
      message: `--via goes with --write and is one of ${WRITE_TOOLS.join(', ')}${argv.write === undefined ? '' : ` (got '${argv.via}')`}.`,
    });
  }
  if (argv.shell !== undefined)
    return explainPolicy({ profile, shell: argv.shell, workingDir: resolve(argv.workingDir ?? process.cwd()) });
  if (argv.read !== undefined)
    return explainPolicy({
      profile,
      read: argv.read,
      workingDir: resolve(argv.workingDir ?? process.cwd()),
      rhoHome: rhoHome(env),
    });
  if (argv.write !== undefined) {
    return explainPolicy({
      profile,
      write: argv.write,
      workingDir: resolve(argv.workingDir ?? process.cwd()),
      via: (argv.via ?? 'write') as WriteTool,
    });
  }
  const dialect = argv.dialect as SqlDialect | undefined;
  if (dialect === undefined || !DIALECTS.includes(dialect)) {
    throw new UsageError({
      message: `--sql needs --dialect, one of ${DIALECTS.join(', ')}${dialect === undefined ? '' : ` (got '${dialect}')`}.`,
    });
  }
  return explainPolicy({ profile, sql: argv.sql!, dialect });
}
