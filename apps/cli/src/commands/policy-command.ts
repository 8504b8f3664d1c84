import { resolve } from 'node:path';
import { rhoHome } from '@rho/core';
import type { PermissionProfile, PolicyExplanation, SqlDialect, WriteTool } from '@rho/permissions';
import { explainPolicy, formatPolicyExplanation, loadProfile } from '@rho/permissions';
import { EXIT, UsageError } from '../exit-codes.js';
import type { Terminal } from '../terminal.js';
import { styles } from '../terminal.js';

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
 * `PolicyExplanation` is what `--json` prints.
 */
async function explain(argv: PolicyCheckArguments, env: NodeJS.ProcessEnv): Promise<PolicyExplanation> {
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

/** `rho policy check`: prints the decision; exit 0 when allowed, 1 when refused. */
export async function policyCheckCommand(
  argv: PolicyCheckArguments,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const explanation = await explain(argv, env);
  if (argv.json) {
    terminal.stdout.write(`${JSON.stringify(explanation, null, 2)}\n`);
  } else if (terminal.color && terminal.stdout.isTTY === true) {
    terminal.stdout.write(`${colourVerdict(formatPolicyExplanation(explanation))}\n`);
  } else {
    terminal.stdout.write(`${formatPolicyExplanation(explanation)}\n`);
  }
  return explanation.allowed ? EXIT.completed : EXIT.failed;
}

function colourVerdict(text: string): string {
  const style = styles(true);
  return text
    .replace(/\b(ALLOWED|allowed)\b/, (word) => style.green(word))
    .replace(/\b(REFUSED|refused)\b/, (word) => style.red(word));
}
