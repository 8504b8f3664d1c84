import { ConfigError } from '@rho/core';
import { styles } from '../../terminal.js';

/**
 * How a check of `rho doctor` ended: `ok`; `warn` (works, but something is worth knowing or
 * fixing); `fail` (something the configuration needs is missing or broken: exit 1); `skip` (not
 * configured, so not needed).
 */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

/** One line of `rho doctor`, and one element of its `--json` array. */
export interface CheckResult {
  /** Which check: `node`, `rho_home`, `disk`, `bubblewrap`, `ripgrep`, `config`, `model`, `database:ALIAS`, `fleet`, `mcp:NAME`. */
  check: string;
  status: CheckStatus;
  /** What was found, in one sentence (never a password or an API key). */
  detail: string;
  /** What to do about it; null when there is nothing to do. */
  fix: string | null;
}

/** A result, with `fix` null unless given. */
export function result(check: string, status: CheckStatus, detail: string, fix?: string): CheckResult {
  return { check, status, detail, fix: fix ?? null };
}

/**
 * Runs `run` with an abort signal that fires after `timeoutMs`: what it returns, or, when it takes
 * longer, a failure of `check` that says so (whatever it still holds open is left to the signal).
 * An error it throws is a failure of `check` with the error's message.
 */
export async function bounded(
  check: string,
  timeoutMs: number,
  run: (signal: AbortSignal) => Promise<CheckResult[]>,
  what = check,
): Promise<CheckResult[]> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<CheckResult[]>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`${what} took longer than ${seconds(timeoutMs)}`));
      resolve([
        result(
          check,
          'fail',
          `${what} did not finish within ${seconds(timeoutMs)}`,
          'look at what it waits for (a server that does not answer); rho doctor --timeout SECONDS waits longer',
        ),
      ]);
    }, timeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([
      run(controller.signal).catch((error: unknown) => [
        result(
          check,
          'fail',
          error instanceof Error ? error.message : String(error),
          // A setting the run would refuse (ConfigError): the message names the file, key and line.
          ConfigError.isInstance(error)
            ? 'correct what the message names (rho config show --sources shows where each setting comes from)'
            : undefined,
        ),
      ]),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** `5 s`, `0.5 s`. */
export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

const MARKS: Record<CheckStatus, string> = { ok: '✓', warn: '!', fail: '✗', skip: '-' };

/** The report for a terminal: one line per check (mark, check, detail, fix), then a summary line. */
export function formatReport(results: readonly CheckResult[], color: boolean): string {
  const style = styles(color);
  const paint: Record<CheckStatus, (text: string) => string> = {
    ok: style.green,
    warn: style.yellow,
    fail: style.red,
    skip: style.dim,
  };
  const width = Math.max(...results.map((entry) => entry.check.length));
  const lines = results.map((entry) => {
    const fix = entry.fix === null ? '' : ` ${style.bold('Fix:')} ${entry.fix}`;
    return `${paint[entry.status](MARKS[entry.status])} ${entry.check.padEnd(width)}  ${entry.detail}${fix}`;
  });
  const count = (status: CheckStatus) => results.filter((entry) => entry.status === status).length;
  const failed = count('fail');
  const parts = [
    `${count('ok')} ok`,
    `${count('warn')} warning${count('warn') === 1 ? '' : 's'}`,
    `${failed} failed`,
    `${count('skip')} skipped`,
  ];
  lines.push(
    '',
    failed === 0
      ? `${parts.join(', ')}: everything this configuration needs is there.`
      : `${parts.join(', ')}: ${failed === 1 ? 'one thing' : `${failed} things`} this configuration needs ${failed === 1 ? 'is' : 'are'} missing or broken (exit 1).`,
  );
  return `${lines.join('\n')}\n`;
}
