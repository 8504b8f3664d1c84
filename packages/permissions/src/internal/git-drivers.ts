import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

/** Config keys naming a program that a plain read runs for files whose attributes select the driver. */
const DRIVER_COMMAND = /^(filter|diff)\.(.+)\.(clean|smudge|process|textconv|command)$/i;

/**
 * `-c KEY=` options that switch off every filter and diff driver command the repository's config
 * defines (`filter.<name>.clean/smudge/process`, `diff.<name>.textconv/command`). A `.gitattributes`
 * line selects a driver by name, and `git diff` or `git status` then run its command on the
 * working-tree file; the names cannot be known in advance, so they are read from the config
 * (`git config --get-regexp`, which reads files and runs nothing) of the repository the command
 * will use (`git -C DIR ...` included). Only the repository's own config is read (`--local`,
 * with its includes): the user's global drivers (git-lfs, for example) are theirs and keep working.
 * An empty command means "no driver" to git.
 *
 * Returns `undefined` when the config cannot be read at all (the directory is not on this machine,
 * as with a remote backend, or git cannot be started): the drivers are then unknown, and the
 * caller refuses the command rather than run it with drivers it could not switch off.
 */
export function gitDriverOverrides(argv: readonly string[], programIndex: number, cwd: string): string[] | undefined {
  let directory = cwd;
  for (let index = programIndex + 1; index < argv.length; index += 1) {
    const word = argv[index] as string;
    if (word === '-C' && argv[index + 1] !== undefined) {
      directory = resolve(directory, argv[index + 1] as string);
      index += 1;
    } else if (word.startsWith('-C') && word.length > 2) directory = resolve(directory, word.slice(2));
    else if (!word.startsWith('-')) break;
  }
  const result = spawnSync(
    'git',
    ['config', '--local', '--includes', '--null', '--name-only', '--get-regexp', '^(filter|diff)\\.'],
    {
      cwd: directory,
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/', GIT_CONFIG_NOSYSTEM: '1' },
      encoding: 'utf8',
      timeout: 5000,
    },
  );
  if (result.error !== undefined || typeof result.stdout !== 'string') return undefined;
  const overrides: string[] = [];
  for (const key of new Set(result.stdout.split('\0'))) {
    if (DRIVER_COMMAND.test(key)) overrides.push('-c', `${key}=`);
  }
  return overrides;
}
