import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { ShellCommand, ShellPlan } from './check-shell-command.js';

/** The result of {@link hardenPlan}. */
export interface HardenedPlan {
  /** The plan with hardening options added to each command. */
  plan: ShellPlan;
  /** The environment to run every command with, built from a base (usually `process.env`). */
  env: (base: NodeJS.ProcessEnv) => NodeJS.ProcessEnv;
}

/**
 * The variables a restricted command gets from rho's environment: an allowlist, so that a secret
 * or a variable that changes what a program runs is never passed because nobody listed it.
 * `PATH` keeps its absolute directories only; everything else is dropped (API keys, cloud
 * credentials, `*_TOKEN`, `GIT_*`, `LD_*`, `PAGER`, `BASH_ENV`, proxies, `TMPDIR`, ...).
 */
export const ENVIRONMENT_ALLOWLIST: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LANGUAGE',
  'LC_*',
  'TZ',
  'NO_COLOR',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
];

/** Set for every restricted command, whatever rho's environment says. */
const ENVIRONMENT_FIXED: Readonly<Record<string, string>> = {
  TERM: 'dumb',
  PAGER: 'cat',
  GIT_PAGER: 'cat',
  GIT_TERMINAL_PROMPT: '0',
  // Neither /etc/gitconfig nor the user's ~/.gitconfig is read (either can name programs): only
  // the repository's config, whose programs are switched off by -c options, and the -c overrides.
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

function allowedVariable(name: string): boolean {
  return ENVIRONMENT_ALLOWLIST.some((entry) =>
    entry.endsWith('*') ? name.startsWith(entry.slice(0, -1)) : name === entry,
  );
}

const GIT_CONFIG_OVERRIDES = [
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.pager=cat',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.sshCommand=false',
  '-c',
  'gpg.program=gpg',
  '-c',
  'gpg.ssh.program=ssh-keygen',
  '-c',
  'gpg.x509.program=gpgsm',
  '-c',
  'credential.helper=',
  '-c',
  'protocol.allow=never',
  // The manual is never opened (the validator refuses every help path); if it were, `info` runs
  // without reading man.viewer, man.<tool>.cmd or help.browser from the repository's config.
  '-c',
  'help.format=info',
  '-c',
  'help.autocorrect=0',
  '-c',
  'log.showSignature=false',
];
const GIT_DIFF_COMMANDS = new Set([
  'diff',
  'log',
  'show',
  'whatchanged',
  'diff-tree',
  'diff-files',
  'diff-index',
  'stash',
]);
const GIT_TEXTCONV_COMMANDS = new Set(['blame', 'annotate', 'grep']);

let gawkPath: string | null | undefined;

/** Whether `gawk` is on PATH (looked up once). */
export function gawkAvailable(): boolean {
  if (gawkPath === undefined) {
    gawkPath = null;
    for (const directory of (process.env['PATH'] ?? '').split(delimiter)) {
      if (directory.length === 0) continue;
      try {
        accessSync(join(directory, 'gawk'), constants.X_OK);
        gawkPath = join(directory, 'gawk');
        break;
      } catch {
        // not in this directory
      }
    }
  }
  return gawkPath !== null;
}

function gitSubcommandIndex(argv: readonly string[], start: number): number {
  let index = start + 1;
  while (index < argv.length) {
    const argument = argv[index] as string;
    if (argument === '-C' || argument === '-c') index += 2;
    else if (argument.startsWith('-')) index += 1;
    else return index;
  }
  return -1;
}

function hardenProgram(argv: string[], index: number): string[] {
  const program = argv[index];
  const before = argv.slice(0, index);
  const rest = argv.slice(index + 1);
  switch (program) {
    case 'git': {
      // --no-optional-locks: git status and friends otherwise rewrite the index to refresh it.
      const hardened = ['git', ...GIT_CONFIG_OVERRIDES, '--no-pager', '--no-optional-locks', ...rest];
      const subcommandIndex = gitSubcommandIndex(hardened, 0);
      if (subcommandIndex !== -1) {
        const subcommand = hardened[subcommandIndex] as string;
        const extra = GIT_DIFF_COMMANDS.has(subcommand)
          ? ['--no-ext-diff', '--no-textconv']
          : GIT_TEXTCONV_COMMANDS.has(subcommand)
            ? ['--no-textconv']
            : [];
        // `stash list|show` takes log/diff options after its own verb.
        const insertAt = subcommand === 'stash' ? subcommandIndex + 2 : subcommandIndex + 1;
        if (subcommand !== 'stash' || hardened[subcommandIndex + 1] !== undefined)
          hardened.splice(insertAt, 0, ...extra);
      }
      return [...before, ...hardened];
    }
    case 'tar':
      // A HOST:PATH archive name (from -f or $TAPE) would be read over rsh/ssh.
      return [...before, 'tar', '--force-local', ...rest];
    case 'rg':
      // RIPGREP_CONFIG_PATH could add options nobody checked.
      return [...before, 'rg', '--no-config', ...rest];
    case 'sed':
      return [...before, 'sed', '--sandbox', ...rest];
    case 'awk':
    case 'mawk':
    case 'gawk':
      // mawk has no sandbox; when gawk is missing the static check of the program is all there is.
      return gawkAvailable() ? [...before, 'gawk', '--sandbox', ...rest] : argv;
    case 'curl':
      // -q must come first: it stops curl from reading ~/.curlrc, which could set an output file.
      return [...before, 'curl', '-q', '--proto', '=http,https', '--proto-redir', '=http,https', ...rest];
    case 'wget':
      return [...before, 'wget', '--no-config', '--no-hsts', ...rest];
    default:
      return argv;
  }
}

function hardenCommand(command: ShellCommand): ShellCommand {
  const index = command.programIndex ?? 0;
  const argv = hardenProgram(command.argv, index);
  if (command.argv[index] === 'git') {
    // No system or global config; the repository's own is overridden by the -c options above.
    return { ...command, argv, env: { ...command.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } };
  }
  return { ...command, argv };
}

/**
 * Build the environment of restricted commands from `base`: only the variables of
 * {@link ENVIRONMENT_ALLOWLIST} (with relative and empty `PATH` entries removed, which would
 * search the working directory), then `TERM=dumb`, `PAGER=cat`, `GIT_PAGER=cat`,
 * `GIT_TERMINAL_PROMPT=0`, `GIT_CONFIG_NOSYSTEM=1`, `GIT_CONFIG_GLOBAL=/dev/null`.
 */
export function scrubEnvironment(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined || !allowedVariable(name)) continue;
    result[name] = value;
  }
  if (result['PATH'] !== undefined) {
    result['PATH'] = result['PATH']
      .split(delimiter)
      .filter((directory) => isAbsolute(directory))
      .join(delimiter);
  }
  // Every git config that can name a program is out of play: system and global are not read,
  // the repository's is switched off by the -c options hardenPlan and the policy add.
  Object.assign(result, ENVIRONMENT_FIXED);
  return result;
}

/**
 * Add the run-time hardening to a checked plan: git gets `-c core.fsmonitor=false -c core.pager=cat
 * -c core.hooksPath=/dev/null` (and more, see README) plus `--no-ext-diff --no-textconv` where the
 * subcommand takes them, sed gets `--sandbox`, awk runs as `gawk --sandbox` when gawk exists, curl
 * ignores ~/.curlrc and speaks only http(s), wget ignores wgetrc. Wrapped commands (`env`, `timeout`,
 * `nice`, `xargs`) are hardened too. `env` keeps only the allowlisted variables (see
 * {@link scrubEnvironment}).
 */
export function hardenPlan(plan: ShellPlan): HardenedPlan {
  return {
    plan: {
      steps: plan.steps.map((step) => ({ operator: step.operator, pipeline: step.pipeline.map(hardenCommand) })),
    },
    env: scrubEnvironment,
  };
}
