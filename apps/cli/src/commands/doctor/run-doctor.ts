import { rhoHome } from '@rho/core';
import { loadDotenv } from '../../dotenv.js';
import { EXIT, UsageError } from '../../exit-codes.js';
import type { Terminal } from '../../terminal.js';
import type { DoctorArguments } from './doctor-command.js';
import { configCheck, doctorContext } from './doctor-settings.js';
import { modelCheck } from './model-check.js';
import { bounded, formatReport, result, type CheckResult } from './report.js';
import { bubblewrapCheck, runPlace } from './sandbox-check.js';
import { databaseChecks, fleetCheck, mcpChecks } from './service-checks.js';
import { diskCheck, nodeCheck, rhoHomeCheck, ripgrepCheck } from './system-checks.js';

/** Default of `--timeout`: how long one check may take, in seconds. */
export const DEFAULT_CHECK_TIMEOUT_SECONDS = 5;

/**
 * `rho doctor`: checks what the configuration needs, each check bounded by `--timeout` and all
 * of them at once, so the command finishes in about that time even when servers hang. Exit 0
 * when nothing failed (warnings and skipped checks included), 1 otherwise.
 */
export async function doctorCommand(
  argv: DoctorArguments,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const timeout = argv.timeout ?? DEFAULT_CHECK_TIMEOUT_SECONDS;
  if (!Number.isFinite(timeout) || timeout <= 0 || timeout > 600)
    throw new UsageError({ message: `--timeout takes seconds above 0 and at most 600 (got ${String(argv.timeout)}).` });
  const timeoutMs = Math.round(timeout * 1000);
  // A run reads OPENAI_* from ./.env; so does the check of the model.
  const before = new Set(Object.keys(env).filter((key) => env[key] !== undefined && env[key] !== ''));
  loadDotenv(env);
  const fromDotenv = new Set(Object.keys(env).filter((key) => !before.has(key) && env[key] !== undefined));
  const home = rhoHome(env);
  const context = doctorContext({
    env,
    home,
    timeoutMs,
    online: argv.online,
    fromDotenv,
    argv: argv as unknown as Record<string, unknown>,
    ...(argv.config === undefined ? {} : { agentConfig: argv.config }),
  });
  // The configuration's files first: when they cannot be read, what depends on them is not checked.
  const [config] = await bounded('config', timeoutMs, async () => [await configCheck(context)]);
  const unreadable = config!.status === 'fail';
  const dependent = (check: string, run: (signal: AbortSignal) => Promise<CheckResult[]>) =>
    unreadable
      ? Promise.resolve([result(check, 'skip', 'not checked: the configuration cannot be read (see config)')])
      : bounded(check, timeoutMs + 1_000, run);
  const groups = await Promise.all([
    Promise.resolve([nodeCheck()]),
    bounded('rho_home', timeoutMs, async () => [await rhoHomeCheck(home)]),
    bounded('disk', timeoutMs, async () => [await diskCheck(home)]),
    dependent('bubblewrap', async () => [await bubblewrapCheck(context)]),
    dependent('ripgrep', async (signal) => [await ripgrepCheck((await runPlace(context)).backend, timeoutMs, signal)]),
    Promise.resolve([config!]),
    dependent('model', async (signal) => [await modelCheck(context, signal)]),
    dependent('database', () => databaseChecks(context)),
    dependent('fleet', async () => [await fleetCheck(context)]),
    dependent('mcp', () => mcpChecks(context)),
  ]);
  const results = groups.flat();
  // Notices of the sections (rho-agent's databases.yaml, ...) besides the config check's own.
  for (const warning of context.warnings)
    if (!config!.detail.includes(warning)) terminal.stderr.write(`Warning: ${warning}\n`);
  if (argv.json) terminal.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  else terminal.stdout.write(formatReport(results, terminal.color && terminal.stdout.isTTY === true));
  return results.some((entry) => entry.status === 'fail') ? EXIT.failed : EXIT.completed;
}
