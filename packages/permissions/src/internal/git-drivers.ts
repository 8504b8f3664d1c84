import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Config keys naming a program that a plain read runs, switched off by an empty value:
 * `filter.<name>.clean/smudge/process` (run on working-tree files whose attributes select the
 * filter), `diff.<name>.textconv/command`, `merge.<name>.driver`, and `diff.external`.
 */
const NEUTRALISED_BY_EMPTY =
  /^(filter\.(.+)\.(clean|smudge|process)|diff\.(.+)\.(textconv|command)|merge\.(.+)\.driver|diff\.external)$/i;

/**
 * Keys naming a program that the restricted shell's fixed `-c` options already override for git
 * and every git it starts (submodules included: command-line options reach them through
 * `GIT_CONFIG_PARAMETERS`): see `hardenPlan`. Pager keys do nothing under `--no-pager`; include
 * paths are followed here (`--includes`), so what they include is judged itself.
 */
const OVERRIDDEN =
  /^(core\.(fsmonitor|pager|hookspath|sshcommand)|credential\.helper|gpg(\..+)?\.program|pager\..+|include(if\..+)?\.path|protocol\..+|help\..+)$/i;

/**
 * Keys naming a program that no `-c` value switches off safely: a repository that sets one is not
 * read by the restricted shell's git at all.
 */
const REFUSED =
  /^(core\.(editor|askpass|gitproxy|alternaterefscommand)|sequence\.editor|credential\..+\.helper|uploadpack\.packobjectshook|remote\..+\.(uploadpack|receivepack)|interactive\.difffilter|man\..+\.(cmd|path)|man\.viewer|web\.browser|browser\..+\.(cmd|path)|sendemail\.smtpserver|ssh\.variant)$/i;

/** Why git may not run in a repository, or the `-c KEY=` options that neutralise its configured programs. */
export type GitConfigRuling = { overrides: string[] } | { refused: string };

/** The environment of the `git` that reads configs: no system, no global config, nothing of rho's. */
const READER_ENV = {
  PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
};

function git(args: string[], cwd: string): string | undefined {
  const result = spawnSync('git', args, { cwd, env: READER_ENV, encoding: 'utf8', timeout: 5000 });
  if (result.error !== undefined || typeof result.stdout !== 'string') return undefined;
  return result.stdout;
}

/**
 * Every config file of the repository that git may read besides the local one: `config.worktree`
 * (read when `extensions.worktreeConfig` is set), each linked worktree's, and every submodule's
 * `config` and `config.worktree` under `modules/` (read by the git that `git status`, `git diff
 * --submodule=diff` or `git grep --recurse-submodules` starts inside a submodule).
 */
function otherConfigFiles(commonDir: string): string[] {
  const files: string[] = [];
  const add = (path: string) => {
    if (existsSync(path)) files.push(path);
  };
  add(join(commonDir, 'config.worktree'));
  const list = (directory: string): string[] => {
    try {
      return readdirSync(directory, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => join(directory, entry.name));
    } catch {
      return [];
    }
  };
  for (const worktree of list(join(commonDir, 'worktrees'))) add(join(worktree, 'config.worktree'));
  // Submodules nest (modules/a/modules/b): bounded, so a planted deep tree stays cheap.
  const queue = list(join(commonDir, 'modules'));
  let budget = 1000;
  while (queue.length > 0 && budget > 0) {
    budget -= 1;
    const directory = queue.shift()!;
    if (existsSync(join(directory, 'config')) || existsSync(join(directory, 'HEAD'))) {
      add(join(directory, 'config'));
      add(join(directory, 'config.worktree'));
      queue.push(...list(join(directory, 'modules')), ...list(join(directory, 'worktrees')));
    } else queue.push(...list(directory));
  }
  return files;
}

/**
 * The ruling on the git configuration a restricted `git` would read: every source that can name
 * a program is read here (git itself, which reads files and runs nothing: the local config with
 * its includes and the worktree config, `git config --list`, then each submodule's and each linked
 * worktree's config file); the system and global configs are not read by the restricted shell's
 * git at all (`GIT_CONFIG_NOSYSTEM=1`, `GIT_CONFIG_GLOBAL=/dev/null`). A driver found anywhere is
 * switched off with `-c KEY=` (an empty command means "no driver" to git, and command-line
 * options reach the git of a submodule); a key that no option switches off safely (an editor, a
 * proxy command, a submodule's upload-pack) makes the command refused. The restricted shell's
 * fixed options cover fsmonitor, pager, hooks, ssh, credential helpers and gpg.
 */
function ruleOnConfigs(directory: string): GitConfigRuling | undefined {
  const listed = git(['config', '--includes', '--null', '--name-only', '--list'], directory);
  if (listed === undefined) return undefined;
  const keys = new Map<string, string>();
  for (const key of listed.split(/[\0\n]/)) if (key !== '') keys.set(key, 'the repository config');
  const commonDir = git(['rev-parse', '--path-format=absolute', '--git-common-dir'], directory)?.trim();
  if (commonDir !== undefined && commonDir !== '') {
    for (const file of otherConfigFiles(resolve(directory, commonDir))) {
      const more = git(['config', '--file', file, '--includes', '--null', '--name-only', '--list'], directory);
      if (more === undefined) return undefined;
      for (const key of more.split(/[\0\n]/)) if (key !== '' && !keys.has(key)) keys.set(key, file);
    }
  }
  const overrides: string[] = [];
  for (const [key, source] of keys) {
    if (NEUTRALISED_BY_EMPTY.test(key)) overrides.push('-c', `${key}=`);
    else if (OVERRIDDEN.test(key)) continue;
    else if (REFUSED.test(key))
      return {
        refused: `git: ${source} sets ${key}, which names a program git could run and which no option switches off safely; restricted mode does not run git in this repository`,
      };
  }
  return { overrides };
}

/**
 * `-c KEY=` options that switch off every filter, diff and merge driver command any config of the
 * repository the command will use (`git -C DIR ...` included) defines, or why git may not run
 * there (see {@link ruleOnConfigs}).
 *
 * Returns `undefined` when the config cannot be read at all (the directory is not on this machine,
 * as with a remote backend, or git cannot be started): the drivers are then unknown, and the
 * caller refuses the command rather than run it with drivers it could not switch off.
 */
export function gitDriverOverrides(
  argv: readonly string[],
  programIndex: number,
  cwd: string,
): GitConfigRuling | undefined {
  let directory = cwd;
  for (let index = programIndex + 1; index < argv.length; index += 1) {
    const word = argv[index] as string;
    if (word === '-C' && argv[index + 1] !== undefined) {
      directory = resolve(directory, argv[index + 1] as string);
      index += 1;
    } else if (word.startsWith('-C') && word.length > 2) directory = resolve(directory, word.slice(2));
    else if (!word.startsWith('-')) break;
  }
  return ruleOnConfigs(directory);
}
