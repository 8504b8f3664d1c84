import { posix } from 'node:path';

/** What the file tools (`read`, `grep`, `read_excel`) may read: allowed, or refused with the rule and what to do. */
export type ReadPathDecision = { allowed: true } | { allowed: false; rule: 'read.proc'; reason: string };

/**
 * Files directly under `/proc` that describe the machine and nothing of any process: the only
 * part of `/proc` the file tools read.
 */
export const PROC_READABLE: ReadonlySet<string> = new Set(
  [
    'cpuinfo',
    'meminfo',
    'loadavg',
    'uptime',
    'version',
    'stat',
    'vmstat',
    'diskstats',
    'partitions',
    'filesystems',
    'swaps',
  ].map((name) => `/proc/${name}`),
);

/**
 * The one read decision of the file tools, on the real path (links resolved by the caller).
 * `/proc` is refused by default: the file tools run in rho's own process (or a child of it, such
 * as ripgrep), so `/proc/self/environ`, `/proc/PID/environ`, `/proc/PID/cmdline` and
 * `/proc/PID/fd/N` are rho's environment (API keys, database passwords), other programs' command
 * lines and the files rho holds open. The restricted shell keeps these out of reach with its
 * sandbox (a `/proc` of its own) and an allowlisted environment; the file tools have neither, so
 * only the machine-wide files of {@link PROC_READABLE} are read.
 */
export function checkReadPath(realPath: string): ReadPathDecision {
  const path = posix.normalize(realPath);
  if (path !== '/proc' && !path.startsWith('/proc/')) return { allowed: true };
  if (PROC_READABLE.has(path)) return { allowed: true };
  return {
    allowed: false,
    rule: 'read.proc',
    reason:
      `${realPath} is in /proc, which the file tools do not read: there it is rho's own process (its environment ` +
      'holds API keys and passwords) or another program (its command line, its open files). Only ' +
      `${[...PROC_READABLE].join(', ')} are read. To look at processes, use the bash tool (ps, or cat /proc/...): ` +
      'its sandbox has a /proc of its own.',
  };
}
