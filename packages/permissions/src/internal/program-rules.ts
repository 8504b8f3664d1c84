import { awkProgramProblem } from './awk-program.js';
import { gitOptionProblem } from './git-options.js';
import { abbreviatesAny, parseOptions, type OptionSpec, type ParsedOption } from './option-parser.js';
import { PRINTABLE_VARIABLES, READER_SPECS } from './reader-specs.js';
import { sedScriptProblem } from './sed-script.js';
import { ShellRefusal } from './shell-words.js';

/** Result of validating one command's argv. */
export interface CheckedArgv {
  /** The argv to run (wrappers that are shell builtins, like `command`, removed). */
  argv: string[];
  /** Index in `argv` of the program that does the work, past wrappers (`env`, `timeout`, `nice`, `xargs`). */
  programIndex: number;
  /** Every argv that was judged, outermost first, for display. */
  checked: string[][];
}

/**
 * Programs that print their arguments or ignore them: every word is text, none is an option that
 * could write, run or read anything (`echo -e`, `printf FORMAT`, `true --anything`).
 */
const TEXT_PROGRAMS: ReadonlySet<string> = new Set(['echo', 'printf', 'true', 'false']);

/**
 * Programs none of whose options writes a file, runs a program, reads the environment or changes
 * the system, so `xargs` may run them with words it reads from its input (which are never
 * checked). Run directly, each still has its exact option grammar checked (READER_SPECS).
 */
export const READER_PROGRAMS: ReadonlySet<string> = new Set([...Object.keys(READER_SPECS), ...TEXT_PROGRAMS]);

type Validator = (argv: string[]) => CheckedArgv;

const ENVIRONMENT_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Variables a command may set: locale, time zone and display width. Anything else can change what runs. */
export function assignmentAllowed(name: string): boolean {
  return (
    name === 'LANG' ||
    name === 'LANGUAGE' ||
    name === 'TZ' ||
    name === 'COLUMNS' ||
    name === 'LINES' ||
    name === 'NO_COLOR' ||
    name.startsWith('LC_')
  );
}

function refuse(program: string, reason: string): never {
  throw new ShellRefusal(`program.${program}`, reason);
}

function simple(
  program: string,
  spec: OptionSpec,
  check?: (options: ParsedOption[], operands: string[]) => void,
): Validator {
  return (argv) => {
    const { options, operands } = parseOptions(program, argv.slice(1), spec);
    check?.(options, operands);
    return { argv, programIndex: 0, checked: [argv] };
  };
}

function httpUrl(program: string, value: string): void {
  if (!/^https?:\/\//i.test(value)) {
    refuse(
      program,
      `${program} may only fetch http:// or https:// URLs in restricted mode (got ${JSON.stringify(value)}); write the scheme explicitly`,
    );
  }
}

/** Whether a curl URL holds a `[...-...]` range (scanned once: a regular expression is quadratic on `[[[[...`). */
/** Most requests one curl command may make. */
const CURL_MAX_REQUESTS = 10;

/**
 * How many URLs curl's globbing makes of `url`: the product of its `{a,b,c}` lists and `[N-M]`
 * ranges (a bracket that is no range, such as an IPv6 address, counts once).
 */
function curlGlobCount(url: string): number {
  let count = 1;
  for (let index = 0; index < url.length && count <= 1e9; index += 1) {
    const character = url[index];
    if (character === '\\') {
      index += 1;
      continue;
    }
    if (character !== '{' && character !== '[') continue;
    const close = url.indexOf(character === '{' ? '}' : ']', index + 1);
    if (close === -1) break;
    const inner = url.slice(index + 1, close);
    if (character === '{') count *= inner.split(',').length;
    else {
      const range = /^(?:(\d+)-(\d+)|([a-zA-Z])-([a-zA-Z]))(?::(\d+))?$/.exec(inner);
      if (range !== null) {
        const from = range[1] !== undefined ? Number(range[1]) : (range[3] as string).charCodeAt(0);
        const to = range[2] !== undefined ? Number(range[2]) : (range[4] as string).charCodeAt(0);
        const step = Math.max(1, Number(range[5] ?? 1));
        count *= to >= from ? Math.floor((to - from) / step) + 1 : 1;
      }
    }
    index = close;
  }
  return count;
}

function hasUrlRange(url: string): boolean {
  let open = url.indexOf('[');
  while (open !== -1) {
    const close = url.indexOf(']', open + 1);
    if (close === -1) return false;
    if (url.slice(open + 1, close).includes('-')) return true;
    open = url.indexOf('[', close + 1);
  }
  return false;
}

// ---------- sed ----------
const sedSpec: OptionSpec = {
  flags: 'nErsuz',
  valued: 'el',
  long: [
    'quiet',
    'silent',
    'expression=',
    'regexp-extended',
    'separate',
    'unbuffered',
    'null-data',
    'zero-terminated',
    'line-length=',
    'posix',
    'debug',
    'sandbox',
    'help',
    'version',
  ],
};
const sed: Validator = (argv) => {
  const { options, operands } = parseOptions('sed', argv.slice(1), sedSpec);
  const scripts = options
    .filter((option) => option.name === '-e' || option.name === '--expression')
    .map((option) => option.value ?? '');
  if (scripts.length === 0) {
    const script = operands[0];
    if (script === undefined && !options.some((option) => option.name === '--help' || option.name === '--version'))
      refuse('sed', 'sed needs a script');
    if (script !== undefined) scripts.push(script);
  }
  for (const script of scripts) {
    const problem = sedScriptProblem(script);
    if (problem) refuse('sed', `sed script ${JSON.stringify(script)} refused: ${problem}`);
  }
  return { argv, programIndex: 0, checked: [argv] };
};

// ---------- awk ----------
const awkSpec: OptionSpec = {
  flags: 'bcCMnNOPrsStV',
  valued: 'Fve',
  long: [
    'field-separator=',
    'assign=',
    'source=',
    'characters-as-bytes',
    'traditional',
    'compat',
    'posix',
    're-interval',
    'sandbox',
    'use-lc-numeric',
    'bignum',
    'non-decimal-data',
    'optimize',
    'no-optimize',
    'lint?',
    'version',
    'help',
    'copyright',
    'csv',
  ],
  stopAtOperand: true,
};
const awk: Validator = (argv) => {
  const program = argv[0] as string;
  const { options, operands } = parseOptions(program, argv.slice(1), awkSpec);
  const sources = options
    .filter((option) => option.name === '-e' || option.name === '--source')
    .map((option) => option.value ?? '');
  if (sources.length === 0) {
    const text = operands[0];
    if (text === undefined) {
      if (options.some((option) => ['--version', '--help', '-V', '--copyright'].includes(option.name)))
        return { argv, programIndex: 0, checked: [argv] };
      refuse(program, `${program} needs a program (files of awk code, -f, are not accepted: they cannot be checked)`);
    }
    sources.push(text);
  }
  for (const source of sources) {
    const problem = awkProgramProblem(source);
    if (problem) refuse(program, `${program} program refused: ${problem}`);
  }
  return { argv, programIndex: 0, checked: [argv] };
};

// ---------- find ----------
const FIND_NO_ARGUMENT = new Set([
  '-empty',
  '-executable',
  '-false',
  '-nogroup',
  '-nouser',
  '-readable',
  '-true',
  '-writable',
  '-prune',
  '-print',
  '-print0',
  '-ls',
  '-quit',
  '-depth',
  '-d',
  '-mount',
  '-xdev',
  '-noleaf',
  '-ignore_readdir_race',
  '-noignore_readdir_race',
  '-daystart',
  '-follow',
  '-help',
  '--help',
  '-version',
  '--version',
  '-not',
  '!',
  '-a',
  '-and',
  '-o',
  '-or',
  '(',
  ')',
  ',',
]);
const FIND_ONE_ARGUMENT = new Set([
  '-amin',
  '-anewer',
  '-atime',
  '-cmin',
  '-cnewer',
  '-ctime',
  '-fstype',
  '-gid',
  '-group',
  '-ilname',
  '-iname',
  '-inum',
  '-ipath',
  '-iregex',
  '-iwholename',
  '-links',
  '-lname',
  '-maxdepth',
  '-mindepth',
  '-mmin',
  '-mtime',
  '-name',
  '-newer',
  '-path',
  '-perm',
  '-regex',
  '-regextype',
  '-samefile',
  '-size',
  '-type',
  '-uid',
  '-used',
  '-user',
  '-wholename',
  '-xtype',
  '-context',
  '-printf',
]);
const FIND_REFUSED: Record<string, string> = {
  '-ok': 'runs a command for each file',
  '-okdir': 'runs a command for each file',
  '-delete': 'deletes files',
  '-fprint': 'writes to a file',
  '-fprint0': 'writes to a file',
  '-fprintf': 'writes to a file',
  '-fls': 'writes to a file',
};
/**
 * `find -exec CMD ... {} +` (or `;`): like xargs, find appends words nobody checked (file names),
 * so CMD must be a program with no harmful option at all (grep, wc, cat, head ...), its own
 * words checked as they are. Returns the index past the terminator.
 */
function findExec(argv: string[], index: number): number {
  const action = argv[index] as string;
  let end = index + 1;
  while (end < argv.length && argv[end] !== ';' && !(argv[end] === '+' && argv[end - 1] === '{}')) end += 1;
  if (end >= argv.length) refuse('find', `find ${action} needs a command ended by \\; or {} +`);
  const command = argv.slice(index + 1, end);
  const program = command[0];
  if (program === undefined || program === '{}') refuse('find', `find ${action} needs a command`);
  if (!READER_PROGRAMS.has(program) || VALIDATORS[program] !== undefined) {
    refuse(
      'find',
      `find ${action} runs its command with file names nobody checked; restricted mode only lets it run programs that have no harmful option at all (such as grep, cat, wc, head), not ${program}`,
    );
  }
  checkArgv(command.filter((word) => word !== '{}'));
  return end + 1;
}

const find: Validator = (argv) => {
  let index = 1;
  while (index < argv.length) {
    const argument = argv[index] as string;
    if (argument === '-H' || argument === '-L' || argument === '-P' || /^-O\d$/.test(argument)) index += 1;
    else if (argument === '-D') index += 2;
    else break;
  }
  while (index < argv.length && !(argv[index] as string).startsWith('-') && argv[index] !== '(' && argv[index] !== '!')
    index += 1;
  while (index < argv.length) {
    const argument = argv[index] as string;
    if (argument === '-exec' || argument === '-execdir') {
      index = findExec(argv, index);
      continue;
    }
    const refused = FIND_REFUSED[argument];
    if (refused)
      refuse(
        'find',
        `find ${argument} ${refused}; restricted mode allows find tests and -print/-printf/-ls only (pipe the list to a reader instead)`,
      );
    if (FIND_NO_ARGUMENT.has(argument)) index += 1;
    else if (FIND_ONE_ARGUMENT.has(argument) || /^-newer[aBcmt][aBcmt]$/.test(argument)) {
      if (argv[index + 1] === undefined) refuse('find', `find ${argument} needs an argument`);
      index += 2;
    } else
      refuse(
        'find',
        `find ${argument} is not an expression restricted mode knows; allowed are tests such as -name, -type, -mtime, -size and the actions -print, -print0, -printf, -ls, -prune, -quit`,
      );
  }
  return { argv, programIndex: 0, checked: [argv] };
};

// ---------- git ----------
const GIT_DENIED_LONG = [
  'output',
  'ext-diff',
  'textconv',
  'exec',
  'upload-pack',
  'receive-pack',
  'open-files-in-pager',
  'show-signature',
  'filters',
  'config',
  'config-env',
  'exec-path',
  'git-dir',
  'work-tree',
  'namespace',
  'paginate',
  'output-directory',
  'edit',
  'run',
];
const GIT_EXACT_SAFE = new Set(['text', 'ex', 'no-ext-diff', 'no-textconv']);
const GIT_READ_COMMANDS = new Set([
  'status',
  'log',
  'show',
  'diff',
  'blame',
  'annotate',
  'shortlog',
  'describe',
  'rev-parse',
  'rev-list',
  'ls-files',
  'ls-tree',
  'cat-file',
  'show-ref',
  'for-each-ref',
  'merge-base',
  'name-rev',
  'count-objects',
  'diff-tree',
  'diff-files',
  'diff-index',
  'whatchanged',
  'grep',
  'check-ignore',
  'check-attr',
  'var',
  'version',
  'branch',
  'tag',
  'remote',
  'config',
  'stash',
  'reflog',
  'worktree',
  'help',
]);
const GIT_GLOBAL: OptionSpec = {
  flags: 'P',
  valued: 'C',
  long: [
    'no-pager',
    'version',
    'no-replace-objects',
    'literal-pathspecs',
    'glob-pathspecs',
    'noglob-pathspecs',
    'icase-pathspecs',
    'no-optional-locks',
    'no-advice',
  ],
  stopAtOperand: true,
};

function gitGenericOptions(subcommand: string, args: readonly string[]): void {
  for (const argument of args) {
    if (argument === '--') break;
    if (argument.startsWith('--')) {
      const name = argument.slice(2).split('=')[0] ?? '';
      if (name.length > 0 && ('help'.startsWith(name) || name.startsWith('help'))) {
        refuse(
          'git',
          `git ${subcommand} --${name} opens the manual through the configured viewer (help.format, man.viewer, man.<tool>.cmd), which runs a program; use git ${subcommand} -h`,
        );
      }
      if (GIT_EXACT_SAFE.has(name)) continue;
      const denied = abbreviatesAny(name, GIT_DENIED_LONG);
      if (denied)
        refuse(
          'git',
          `git ${subcommand} --${name}${name === denied ? '' : ` (abbreviates --${denied})`} is not allowed in restricted mode: it writes files or runs external programs`,
        );
    } else if (subcommand === 'grep' && /^-[^-]*O/.test(argument)) {
      refuse('git', 'git grep -O opens files in a pager, which runs a program');
    }
  }
}

function gitListOnly(subcommand: string, args: readonly string[], spec: OptionSpec): void {
  const { options, operands } = parseOptions(`git-${subcommand}`, args, spec);
  const listing = options.some((option) => option.name === '-l' || option.name === '--list');
  if (operands.length > 0 && !listing) {
    refuse(
      'git',
      `git ${subcommand} with a name creates or changes a ${subcommand}; only listing (${subcommand} --list PATTERN) is allowed in restricted mode`,
    );
  }
}

const LIST_FILTERS = [
  'contains=',
  'no-contains=',
  'merged=',
  'no-merged=',
  'points-at=',
  'sort=',
  'format=',
  'color?',
  'no-color',
  'column?',
  'no-column',
  'ignore-case',
  'list',
  'omit-empty',
];

const git: Validator = (argv) => {
  const { firstOperandIndex } = parseOptions('git', argv.slice(1), GIT_GLOBAL);
  const rest = argv.slice(1 + firstOperandIndex);
  const subcommand = rest[0];
  if (subcommand === undefined) return { argv, programIndex: 0, checked: [argv] };
  if (!GIT_READ_COMMANDS.has(subcommand)) {
    refuse(
      'git',
      `git ${subcommand} is not a read-only git command; restricted mode allows ${[...GIT_READ_COMMANDS].join(', ')}`,
    );
  }
  const args = rest.slice(1);
  gitGenericOptions(subcommand, args);
  if (!['branch', 'tag', 'remote', 'config', 'help'].includes(subcommand)) {
    // Deny by default: every option of the read subcommands is in its written-out grammar.
    for (const argument of args) {
      if (argument === '--') break;
      if (!argument.startsWith('-') || argument === '-') continue;
      const problem = gitOptionProblem(subcommand, argument);
      if (problem) refuse('git', problem);
    }
  }
  switch (subcommand) {
    case 'branch':
      // --abbrev takes its value only with `=`: `git branch --abbrev NAME` creates NAME.
      gitListOnly('branch', args, {
        flags: 'arlvi',
        long: ['all', 'remotes', 'verbose', 'show-current', 'abbrev?', 'no-abbrev', ...LIST_FILTERS],
      });
      break;
    case 'tag':
      // -n<num> takes its number only attached, and implies --list (`git tag -n v1` lists).
      gitListOnly(
        'tag',
        args.map((argument) => (/^-n\d*$/.test(argument) ? '-l' : argument)),
        { flags: 'li', long: LIST_FILTERS },
      );
      break;
    case 'remote': {
      const positional = args.filter((argument) => !argument.startsWith('-'));
      const flags = args.filter((argument) => argument.startsWith('-'));
      if (flags.some((flag) => !['-v', '--verbose', '--all', '--push'].includes(flag)))
        refuse('git', 'git remote: only -v, and get-url with --all/--push, are allowed');
      if (positional.length > 0 && positional[0] !== 'get-url') {
        refuse(
          'git',
          `git remote ${positional[0] ?? ''} is not allowed in restricted mode (it changes remotes or contacts them, which can run credential helpers); use git remote -v or git remote get-url NAME`,
        );
      }
      break;
    }
    case 'config': {
      const getters = [
        '--get',
        '--get-all',
        '--get-regexp',
        '--list',
        '-l',
        '--get-urlmatch',
        '--get-color',
        '--get-colorbool',
      ];
      const newStyle = args[0] === 'get' || args[0] === 'list';
      const { options } = parseOptions('git-config', newStyle ? args.slice(1) : args, {
        flags: 'lz',
        valued: 'f',
        long: [
          'get',
          'get-all',
          'get-regexp',
          'list',
          'get-urlmatch',
          'get-color',
          'get-colorbool',
          'global',
          'system',
          'local',
          'worktree',
          'file=',
          'blob=',
          'show-origin',
          'show-scope',
          'name-only',
          'null',
          'type=',
          'bool',
          'int',
          'bool-or-int',
          'path',
          'default=',
          'includes',
          'no-includes',
          'all',
          'regexp',
          'value=',
          'fixed-value',
        ],
      });
      if (!newStyle && !options.some((option) => getters.includes(option.name))) {
        refuse('git', 'git config may only read in restricted mode: use --get, --get-all, --get-regexp or --list');
      }
      break;
    }
    case 'stash':
      if (args[0] !== 'list' && args[0] !== 'show')
        refuse('git', 'git stash: only "stash list" and "stash show" are allowed in restricted mode');
      break;
    case 'reflog':
      if (args[0] !== undefined && !args[0].startsWith('-') && args[0] !== 'show' && args[0] !== 'exists') {
        refuse('git', `git reflog ${args[0]} changes the reflog; only "reflog show" is allowed in restricted mode`);
      }
      break;
    case 'worktree':
      if (args[0] !== 'list') refuse('git', 'git worktree: only "worktree list" is allowed in restricted mode');
      break;
    case 'help':
      refuse(
        'git',
        'git help opens the manual through the configured viewer (man.<tool>.cmd, help.browser), which runs a program; use git COMMAND -h',
      );
      break;
    case 'describe':
      for (const argument of args) {
        if (argument === '--') break;
        const denied = argument.startsWith('--')
          ? abbreviatesAny(argument.slice(2).split('=')[0] ?? '', ['dirty', 'broken'])
          : undefined;
        if (denied)
          refuse('git', `git describe --${denied} refreshes and rewrites .git/index; describe the commit without it`);
      }
      break;
    default:
      break;
  }
  return { argv, programIndex: 0, checked: [argv] };
};

// ---------- archives and compression ----------
const tarSpec: OptionSpec = {
  flags: 'txOvzjJaZiB',
  valued: 'fCTXKNbH',
  long: [
    'list',
    'extract',
    'get',
    'to-stdout',
    'file=',
    'directory=',
    'files-from=',
    'exclude-from=',
    'starting-file=',
    'newer=',
    'after-date=',
    'blocking-factor=',
    'record-size=',
    'format=',
    'exclude=',
    'exclude-vcs',
    'exclude-caches',
    'gzip',
    'gunzip',
    'ungzip',
    'bzip2',
    'xz',
    'lzma',
    'lzip',
    'lzop',
    'zstd',
    'compress',
    'uncompress',
    'auto-compress',
    'verbose',
    'wildcards',
    'no-wildcards',
    'wildcards-match-slash',
    'no-wildcards-match-slash',
    'anchored',
    'no-anchored',
    'ignore-case',
    'no-ignore-case',
    'numeric-owner',
    'full-time',
    'utc',
    'quoting-style=',
    'occurrence?',
    'null',
    'no-null',
    'show-transformed-names',
    'transform=',
    'xform=',
    'strip-components=',
    'ignore-zeros',
    'read-full-records',
    'force-local',
    'no-recursion',
    'recursion',
    'unquote',
    'no-unquote',
    'verbatim-files-from',
    'no-verbatim-files-from',
    'block-number',
    'totals?',
    'help',
    'usage',
    'version',
  ],
};

/**
 * GNU tar's argv as its parser reads it: a first word without a dash is an old-style bundle whose
 * letters are options and whose value-taking letters take the following words in order
 * (`tar tvfI ARCHIVE PROG` is `-t -v -f ARCHIVE -I PROG`); the rest is read as usual.
 */
function tarArguments(args: readonly string[]): string[] {
  const first = args[0];
  if (first === undefined || first.startsWith('-')) return [...args];
  const normalized: string[] = [];
  let next = 1;
  for (const letter of first) {
    // Every letter of GNU tar that takes a value, known or not to restricted mode, so the words line up.
    if ('bCfFgHIKLNTVX'.includes(letter)) {
      const value = args[next];
      if (value === undefined)
        refuse(
          'tar',
          `tar ${first}: option ${letter} needs a value (old-style bundles take values from the following words in order)`,
        );
      normalized.push(`-${letter}`, value);
      next += 1;
    } else normalized.push(`-${letter}`);
  }
  return [...normalized, ...args.slice(next)];
}

const tar: Validator = (argv) => {
  const normalized = tarArguments(argv.slice(1));
  const first = argv[1];
  let options: ParsedOption[];
  try {
    ({ options } = parseOptions('tar', normalized, tarSpec));
  } catch (error) {
    if (!(error instanceof ShellRefusal) || first === undefined || first.startsWith('-')) throw error;
    // Say how the bundle was read: its value letters take the following words in order.
    throw new ShellRefusal(
      error.rule,
      `${error.reason}; the old-style bundle ${first} reads as: tar ${normalized.join(' ')}`,
    );
  }
  const names = new Set(options.map((option) => option.name));
  const listing = names.has('-t') || names.has('--list');
  const extracting = names.has('-x') || names.has('--extract') || names.has('--get');
  const toStdout = names.has('-O') || names.has('--to-stdout');
  const informational = names.has('--help') || names.has('--usage') || names.has('--version');
  if (extracting && !toStdout)
    refuse('tar', 'tar -x writes files; restricted mode allows -t (list) and -xO (print members to stdout)');
  if (listing && extracting) refuse('tar', 'tar takes one of -t and -x');
  if (!listing && !extracting && !informational) {
    refuse(
      'tar',
      'tar may only list archives (-t/--list) or print members to stdout (-xO) in restricted mode; creating or extracting writes files',
    );
  }
  for (const option of options) {
    if ((option.name === '-f' || option.name === '--file') && /^[^/]*:/.test(option.value ?? '')) {
      refuse(
        'tar',
        `tar reads an archive named HOST:PATH (${option.value ?? ''}) over rsh/ssh, which runs a program; name a local file (./${option.value ?? ''})`,
      );
    }
  }
  // What runs is the dashed form that was checked, so tar never reads an old-style bundle itself.
  return { argv: ['tar', ...normalized], programIndex: 0, checked: [argv] };
};

const UNZIP_MODES = 'lvtpcz';
/**
 * Info-ZIP unzip: options come before the archive name; after it, words are member names, except
 * `-x` (the names that follow are excluded) and `-d DIR` (extract into DIR). So `unzip A -x -l`
 * extracts A (the `-l` is a name), and the mode must be read from the words before the archive.
 */
const unzip: Validator = (argv) => {
  let mode = '';
  let index = 1;
  for (; index < argv.length; index += 1) {
    const word = argv[index] as string;
    if (!word.startsWith('-') || word === '-') break;
    if (word === '-Z' || (index === 1 && word.startsWith('-Z'))) {
      // zipinfo mode: the rest is zipinfo's grammar.
      checkArgv(['zipinfo', ...(word.length > 2 ? [`-${word.slice(2)}`] : []), ...argv.slice(index + 1)]);
      return { argv, programIndex: 0, checked: [argv] };
    }
    for (const letter of word.slice(1)) {
      if (UNZIP_MODES.includes(letter)) mode += letter;
      else if (letter === 'q' || letter === 'C' || letter === 'a' || letter === 'b') continue;
      else if (letter === 'T')
        refuse(
          'unzip',
          "unzip -T sets the archive's modification time to its newest member's (it writes); use unzip -t to test",
        );
      else if (letter === 'M')
        refuse('unzip', 'unzip -M pipes the output through the more pager, which runs a program');
      else
        refuse(
          'unzip',
          `unzip -${letter} is not allowed in restricted mode (allowed before the archive name: -l, -v, -t, -p, -c, -z, -Z, -q, -C, -a, -b)`,
        );
    }
  }
  if (mode === '') {
    if (index >= argv.length && argv.length > 1) return { argv, programIndex: 0, checked: [argv] };
    refuse(
      'unzip',
      'unzip may only list, test or print to stdout in restricted mode (-l, -v, -t, -p, -c, -z or -Z before the archive name); extracting writes files',
    );
  }
  let excluding = false;
  for (const word of argv.slice(index + 1)) {
    if (word === '-x') excluding = true;
    else if (word === '-d')
      refuse('unzip', 'unzip -d DIR names an extraction directory; restricted mode does not extract');
    else if (word.startsWith('-') && !excluding) {
      refuse(
        'unzip',
        `after the archive name unzip reads ${word} as a member name, not an option (only -x and -d are options there); put options before the archive name`,
      );
    }
  }
  return { argv, programIndex: 0, checked: [argv] };
};

const gzipSpec: OptionSpec = {
  flags: 'cdfhlLnNqrtvV123456789',
  valued: 'S',
  long: [
    'stdout',
    'to-stdout',
    'decompress',
    'uncompress',
    'force',
    'help',
    'list',
    'license',
    'no-name',
    'name',
    'quiet',
    'recursive',
    'suffix=',
    'test',
    'verbose',
    'version',
    'fast',
    'best',
  ],
};
const gzip: Validator = (argv) => {
  const program = argv[0] as string;
  const { options, operands } = parseOptions(program, argv.slice(1), gzipSpec);
  const toStdout = options.some((option) =>
    [
      '-c',
      '--stdout',
      '--to-stdout',
      '-l',
      '--list',
      '-t',
      '--test',
      '-h',
      '--help',
      '-V',
      '--version',
      '-L',
      '--license',
    ].includes(option.name),
  );
  if (!toStdout && operands.some((operand) => operand !== '-')) {
    refuse(program, `${program} FILE replaces the file; use ${program} -c (to stdout), -l or -t in restricted mode`);
  }
  return { argv, programIndex: 0, checked: [argv] };
};

// ---------- network ----------
const curlSpec: OptionSpec = {
  flags: 'sSLIivfkgG46Nq#',
  valued: 'HAemurxwXbEUyYzo',
  long: [
    'output=',
    'silent',
    'show-error',
    'location',
    'head',
    'include',
    'verbose',
    'fail',
    'fail-with-body',
    'insecure',
    'globoff',
    'get',
    'ipv4',
    'ipv6',
    'no-buffer',
    'compressed',
    'http1.0',
    'http1.1',
    'http2',
    'http2-prior-knowledge',
    'http3',
    'disable',
    'header=',
    'user-agent=',
    'referer=',
    'max-time=',
    'connect-timeout=',
    'user=',
    'range=',
    'proxy=',
    'noproxy=',
    'write-out=',
    'request=',
    'retry=',
    'retry-delay=',
    'retry-max-time=',
    'retry-all-errors',
    'max-redirs=',
    'resolve=',
    'connect-to=',
    'url=',
    'cookie=',
    'cacert=',
    'capath=',
    'cert=',
    'key=',
    'max-filesize=',
    'limit-rate=',
    'raw',
    'tr-encoding',
    'path-as-is',
    'no-progress-meter',
    'progress-bar',
    'proto=',
    'proto-redir=',
    'help',
    'version',
    'no-keepalive',
    'tcp-nodelay',
    'oauth2-bearer=',
    'basic',
    'digest',
    'anyauth',
  ],
};
const curl: Validator = (argv) => {
  const { options, operands } = parseOptions('curl', argv.slice(1), curlSpec);
  for (const option of options) {
    const value = option.value ?? '';
    if (
      (option.name === '-X' || option.name === '--request') &&
      !['GET', 'HEAD', 'OPTIONS'].includes(value.toUpperCase())
    ) {
      refuse(
        'curl',
        `curl -X ${value} can change data on the server; restricted mode allows GET, HEAD and OPTIONS only`,
      );
    }
    if ((option.name === '-w' || option.name === '--write-out') && (/%output\{/.test(value) || value.startsWith('@'))) {
      refuse('curl', 'curl --write-out %output{} writes to a file (and @FILE reads a format that could)');
    }
    if (option.name === '--url') httpUrl('curl', value);
    if ((option.name === '-o' || option.name === '--output') && value !== '/dev/null') {
      refuse('curl', `curl -o ${value} writes the response to a file; only -o /dev/null (to discard it) is allowed`);
    }
    if ((option.name === '-H' || option.name === '--header') && value.startsWith('@')) {
      refuse('curl', `curl -H @FILE sends the lines of FILE as request headers (${value}); write the header itself`);
    }
    if ((option.name === '-b' || option.name === '--cookie') && !value.includes('=')) {
      refuse('curl', `curl -b ${value} reads cookies from a file and sends them; write the cookie as NAME=VALUE`);
    }
    if ((option.name === '--proto' || option.name === '--proto-redir') && !/^=?(https?)(,https?)*$/.test(value))
      refuse('curl', 'curl --proto may only name http and https');
  }
  if (operands.length === 0 && !options.some((option) => ['--url', '--help', '--version'].includes(option.name)))
    refuse('curl', 'curl needs a URL');
  for (const operand of operands) httpUrl('curl', operand);
  // One command must not become a flood of requests: curl expands [N-M] ranges in a URL into one
  // request each (`[1-100000000]`), and --retry with --retry-all-errors repeats a request.
  const globoff = options.some((option) => option.name === '-g' || option.name === '--globoff');
  const urls = [
    ...operands,
    ...options.filter((option) => option.name === '--url').map((option) => option.value ?? ''),
  ];
  for (const url of urls) {
    if (!globoff && hasUrlRange(url)) {
      refuse(
        'curl',
        `curl expands the [N-M] range in ${JSON.stringify(url)} into one request per value, which can flood a server; ` +
          'name the URLs one by one, or pass -g to send the brackets as they are',
      );
    }
  }
  const requests = globoff ? urls.length : urls.reduce((total, url) => total + curlGlobCount(url), 0);
  if (requests > CURL_MAX_REQUESTS) {
    refuse(
      'curl',
      `curl expands ${urls.map((url) => JSON.stringify(url)).join(' ')} into ${requests > 1e9 ? 'more than a billion' : requests} requests, ` +
        `more than the ${CURL_MAX_REQUESTS} one command may make; name fewer URLs, or pass -g to send braces and brackets as they are`,
    );
  }
  for (const option of options) {
    if (option.name === '--retry' && !(/^\d+$/.test(option.value ?? '') && Number(option.value) <= 10)) {
      refuse('curl', `curl --retry ${option.value ?? ''} repeats the request that many times; use --retry 10 or fewer`);
    }
  }
  return { argv, programIndex: 0, checked: [argv] };
};

const wgetSpec: OptionSpec = {
  flags: 'qvS',
  valued: 'OTtUn',
  long: [
    'quiet',
    'verbose',
    'no-verbose',
    'server-response',
    'spider',
    'output-document=',
    'timeout=',
    'tries=',
    'user-agent=',
    'header=',
    'max-redirect=',
    'no-check-certificate',
    'https-only',
    'no-config',
    'no-hsts',
    'content-on-error',
    'help',
    'version',
    'method=',
  ],
};
const wget: Validator = (argv) => {
  const { options, operands } = parseOptions('wget', argv.slice(1), wgetSpec);
  let toStdout = false;
  for (const option of options) {
    if (option.name === '-O' || option.name === '--output-document') {
      if (option.value !== '-') refuse('wget', 'wget -O FILE writes a file; use -O - (stdout) in restricted mode');
      toStdout = true;
    }
    if (option.name === '--spider' || option.name === '--help' || option.name === '--version') toStdout = true;
    if (option.name === '-n' && option.value !== 'v')
      refuse('wget', `wget -n${option.value ?? ''} is not allowed (only -nv)`);
    if (option.name === '--method' && !['GET', 'HEAD', 'OPTIONS'].includes((option.value ?? '').toUpperCase()))
      refuse('wget', 'wget --method may only be GET, HEAD or OPTIONS');
  }
  if (!toStdout)
    refuse('wget', 'wget saves files by default; use wget -O - URL (stdout) or --spider in restricted mode');
  for (const operand of operands) httpUrl('wget', operand);
  return { argv, programIndex: 0, checked: [argv] };
};

// ---------- other writers with a safe subset ----------
const sort = simple('sort', {
  flags: 'bcCdfghiMmnRrsuVz',
  valued: 'ktS',
  long: [
    'key=',
    'field-separator=',
    'ignore-leading-blanks',
    'dictionary-order',
    'ignore-case',
    'general-numeric-sort',
    'ignore-nonprinting',
    'month-sort',
    'human-numeric-sort',
    'numeric-sort',
    'random-sort',
    'reverse',
    'version-sort',
    'check?',
    'merge',
    'stable',
    'unique',
    'zero-terminated',
    'buffer-size=',
    'parallel=',
    'sort=',
    'debug',
    'files0-from=',
    'random-source=',
    'help',
    'version',
  ],
});
const uniq = simple(
  'uniq',
  {
    flags: 'cdDiuz',
    valued: 'fsw',
    numeric: true,
    long: [
      'count',
      'repeated',
      'all-repeated?',
      'group?',
      'unique',
      'ignore-case',
      'skip-fields=',
      'skip-chars=',
      'check-chars=',
      'zero-terminated',
      'help',
      'version',
    ],
  },
  (_options, operands) => {
    if (operands.length > 1) refuse('uniq', 'uniq INPUT OUTPUT writes OUTPUT; give at most one input file');
  },
);
const XXD_FLAGS = new Set([
  '-a',
  '-autoskip',
  '-b',
  '-bits',
  '-C',
  '-capitalize',
  '-e',
  '-E',
  '-EBCDIC',
  '-i',
  '-include',
  '-p',
  '-ps',
  '-postscript',
  '-plain',
  '-r',
  '-revert',
  '-u',
  '-uppercase',
  '-d',
  '-h',
  '-help',
  '-v',
  '-version',
  '-R',
]);
const XXD_VALUED = new Set([
  '-c',
  '-cols',
  '-g',
  '-groupsize',
  '-l',
  '-len',
  '-n',
  '-name',
  '-o',
  '-offset',
  '-s',
  '-seek',
]);
const xxd: Validator = (argv) => {
  const operands: string[] = [];
  for (let index = 1; index < argv.length; index += 1) {
    const argument = argv[index] as string;
    if (argument === '-' || !argument.startsWith('-')) operands.push(argument);
    else if (XXD_FLAGS.has(argument)) continue;
    else if (XXD_VALUED.has(argument)) index += 1;
    else if (/^-[cglnos][+-]?(0x)?[0-9a-fA-F]+$/.test(argument)) continue;
    else
      refuse(
        'xxd',
        `xxd option ${argument} is not allowed in restricted mode (xxd abbreviates options, so only exact names are accepted)`,
      );
  }
  if (operands.length > 1) refuse('xxd', 'xxd INFILE OUTFILE writes OUTFILE; give at most one input file');
  return { argv, programIndex: 0, checked: [argv] };
};
const file = simple('file', {
  flags: 'bcdEhiklLnNrsSvzZ0',
  valued: 'efFmP',
  long: [
    'brief',
    'mime',
    'mime-type',
    'mime-encoding',
    'dereference',
    'no-dereference',
    'uncompress',
    'uncompress-noreport',
    'keep-going',
    'extension',
    'apple',
    'raw',
    'special-files',
    'separator=',
    'files-from=',
    'exclude=',
    'exclude-quiet=',
    'magic-file=',
    'print0',
    'no-pad',
    'parameter=',
    'help',
    'version',
    'no-sandbox',
  ],
});
const date = simple(
  'date',
  {
    flags: 'uR',
    valued: 'dfrI',
    long: [
      'utc',
      'universal',
      'rfc-email',
      'rfc-2822',
      'iso-8601?',
      'rfc-3339=',
      'date=',
      'file=',
      'reference=',
      'debug',
      'resolution',
      'help',
      'version',
    ],
  },
  (_options, operands) => {
    for (const operand of operands)
      if (!operand.startsWith('+')) refuse('date', `date ${operand} sets the clock; only +FORMAT operands are allowed`);
  },
);
const hostname = simple(
  'hostname',
  {
    flags: 'aAdfiIsyV',
    long: [
      'alias',
      'all-fqdns',
      'domain',
      'fqdn',
      'long',
      'ip-address',
      'all-ip-addresses',
      'short',
      'yp',
      'nis',
      'help',
      'version',
    ],
  },
  (_options, operands) => {
    if (operands.length > 0) refuse('hostname', 'hostname NAME sets the host name; only reading it is allowed');
  },
);
const top = simple('top', { flags: 'bcHiSs1', valued: 'ndpuUwoOE', long: [] }, (options) => {
  if (!options.some((option) => option.name === '-b') || !options.some((option) => option.name === '-n')) {
    refuse('top', 'top needs a terminal; use top -b -n 1 (batch mode, one iteration)');
  }
});
const ping = simple('ping', { flags: 'nq46vDOa', valued: 'ciWwstI', long: [] }, (options) => {
  if (!options.some((option) => option.name === '-c')) refuse('ping', 'ping without -c never ends; use ping -c COUNT');
});
const yqSpec: OptionSpec = {
  flags: 'yYrcsneSjCMa',
  valued: 'w',
  long: [
    'yaml-output',
    'yaml-roundtrip',
    'indentless-lists',
    'explicit-start',
    'explicit-end',
    'width=',
    'arg:2',
    'argjson:2',
    'raw-output',
    'compact-output',
    'slurp',
    'null-input',
    'exit-status',
    'sort-keys',
    'join-output',
    'tab',
    'indent=',
    'ascii-output',
    'help',
    'version',
  ],
};

const yq: Validator = (argv) => {
  // The filter is the first operand once option values (--arg NAME VALUE, -w N) are consumed.
  const filter = parseOptions('yq', argv.slice(1), yqSpec).operands[0];
  const problem = filter === undefined ? undefined : jqFilterProblem(filter);
  if (problem) refuse('yq', `yq filter ${JSON.stringify(filter)} refused: ${problem}`);
  return { argv, programIndex: 0, checked: [argv] };
};

// ---------- processes and the environment ----------
const PS_UNIX: OptionSpec = {
  flags: 'AaedNfFlHjLTwcyMmVZ',
  valued: 'pqugUGtsCoOn',
  long: [
    'forest',
    'no-headers',
    'no-heading',
    'headers',
    'sort=',
    'pid=',
    'ppid=',
    'quick-pid=',
    'sid=',
    'tty=',
    'user=',
    'User=',
    'group=',
    'Group=',
    'format=',
    'cols=',
    'columns=',
    'width=',
    'lines=',
    'rows=',
    'cumulative',
    'deselect',
    'context',
    'signames',
    'help?',
    'info',
    'version',
  ],
};
const PS_BSD_FLAGS = 'auxfwjlrvsSTmhHcnLXZ';
const PS_BSD_VALUED = 'oOpUtkgGq';

function psFormat(value: string): void {
  if (/env/i.test(value))
    refuse('ps', `ps format ${JSON.stringify(value)} names the environment of processes, which can hold secrets`);
}

/**
 * procps ps: dashed words are UNIX options, other words BSD options (`ps aux`). BSD `e` prints the
 * environment of every process of the user (rho's own API keys included), so it is refused, as is
 * any format naming the environment. A dashed cluster with an attached user or group list
 * (`-uxe`) is refused: procps may read `-aux...` as the BSD bundle when no such user exists.
 */
const ps: Validator = (argv) => {
  const args = argv.slice(1);
  for (let index = 0; index < args.length; index += 1) {
    const word = args[index] as string;
    if (word.startsWith('--')) {
      const next = args[index + 1];
      const { options } = parseOptions('ps', next === undefined ? [word] : [word, next], PS_UNIX);
      const option = options[0];
      if (option && (option.name === '--format' || option.name === '--sort')) psFormat(option.value ?? '');
      // A value given as the next word (`--sort -rss`) was consumed with it.
      if (option?.value !== undefined && !word.includes('=')) index += 1;
      continue;
    }
    if (word.startsWith('-')) {
      for (let position = 1; position < word.length; position += 1) {
        const letter = word[position] as string;
        if ((PS_UNIX.flags ?? '').includes(letter)) continue;
        if (!(PS_UNIX.valued ?? '').includes(letter))
          refuse(
            'ps',
            `ps -${letter} (in ${word}) is not an option restricted mode knows (allowed: -${PS_UNIX.flags ?? ''}, and -${PS_UNIX.valued ?? ''} with a value)`,
          );
        const attached = word.slice(position + 1);
        if (attached !== '' && 'ugUG'.includes(letter) && !/^[0-9,]+$/.test(attached)) {
          refuse(
            'ps',
            `ps ${word}: write the user or group list as its own word (ps -${letter} NAME); procps can read a dashed bundle such as -aux as BSD options`,
          );
        }
        const value = attached || args[index + 1];
        if (value === undefined) refuse('ps', `ps -${letter} needs a value`);
        if (letter === 'o' || letter === 'O') psFormat(value);
        if (attached === '') index += 1;
        break;
      }
      continue;
    }
    for (let position = 0; position < word.length; position += 1) {
      const letter = word[position] as string;
      if (letter === 'e')
        refuse(
          'ps',
          'ps e (BSD) prints the environment of every process, which holds secrets such as API keys; leave out the e',
        );
      if (PS_BSD_FLAGS.includes(letter)) continue;
      if (PS_BSD_VALUED.includes(letter)) {
        const value = word.slice(position + 1) || args[index + 1];
        if (value === undefined) refuse('ps', `ps ${letter} needs a value`);
        if (letter === 'o' || letter === 'O' || letter === 'k') psFormat(value);
        if (word.slice(position + 1) === '') index += 1;
        break;
      }
      refuse(
        'ps',
        `ps ${letter} (in ${word}) is not an option restricted mode knows (BSD letters allowed: ${PS_BSD_FLAGS}, ${PS_BSD_VALUED} with a value)`,
      );
    }
  }
  return { argv, programIndex: 0, checked: [argv] };
};

/** printenv NAME...: only variables that never hold secrets; printing all of them is refused. */
const printenv: Validator = (argv) => {
  const { operands } = parseOptions('printenv', argv.slice(1), { flags: '0', long: ['null', 'help', 'version'] });
  if (operands.length === 0 && !argv.slice(1).some((word) => word === '--help' || word === '--version')) {
    refuse(
      'printenv',
      `printenv without a name prints the whole environment, which can hold secrets; name the variables (allowed: ${[...PRINTABLE_VARIABLES].join(', ')}, LC_*)`,
    );
  }
  for (const name of operands) {
    if (!PRINTABLE_VARIABLES.has(name) && !name.startsWith('LC_')) {
      refuse(
        'printenv',
        `printenv ${name} is not allowed in restricted mode: only variables that never hold secrets may be printed (${[...PRINTABLE_VARIABLES].join(', ')}, LC_*)`,
      );
    }
  }
  return { argv, programIndex: 0, checked: [argv] };
};

/** A jq/yq filter reading the environment (`env`, `$ENV`) or loading modules from files (`import`, `include`). */
function jqFilterProblem(filter: string): string | undefined {
  if (/\$ENV\b/.test(filter) || /(^|[^.$\w])env\b/.test(filter))
    return 'it reads the environment (env, $ENV), which can hold secrets';
  if (/(^|[^.$\w])(import|include)\b/.test(filter)) return 'it loads jq modules from files, which cannot be checked';
  return undefined;
}

const JQ_SPEC: OptionSpec = {
  flags: 'nrjascCMSReh0V',
  valued: 'L',
  long: [
    'null-input',
    'raw-input',
    'slurp',
    'raw-output',
    'raw-output0',
    'join-output',
    'ascii-output',
    'compact-output',
    'color-output',
    'monochrome-output',
    'sort-keys',
    'tab',
    'indent=',
    'unbuffered',
    'stream',
    'stream-errors',
    'seq',
    'exit-status',
    'arg:2',
    'argjson:2',
    'slurpfile:2',
    'rawfile:2',
    'args',
    'jsonargs',
    'help',
    'version',
    'build-configuration',
  ],
  stopAtOperand: false,
};
const jq: Validator = (argv) => {
  const { options, operands } = parseOptions('jq', argv.slice(1), JQ_SPEC);
  if (options.some((option) => option.name === '-L'))
    refuse('jq', 'jq -L adds a module directory; modules cannot be checked');
  const filter = operands[0];
  if (filter !== undefined) {
    const problem = jqFilterProblem(filter);
    if (problem) refuse('jq', `jq filter ${JSON.stringify(filter)} refused: ${problem}`);
  }
  return { argv, programIndex: 0, checked: [argv] };
};

// ---------- ripgrep ----------
const rgSpec: OptionSpec = {
  flags: 'abcFHhiIlLnNopqsSuUvVwx0P',
  valued: 'ABCdeEfgjmMrtT',
  numeric: false,
  long: [
    'after-context=',
    'before-context=',
    'context=',
    'binary',
    'no-binary',
    'block-buffered',
    'no-block-buffered',
    'byte-offset',
    'no-byte-offset',
    'case-sensitive',
    'color=',
    'colors=',
    'column',
    'no-column',
    'context-separator=',
    'no-context-separator',
    'count',
    'count-matches',
    'crlf',
    'no-crlf',
    'debug',
    'dfa-size-limit=',
    'encoding=',
    'no-encoding',
    'engine=',
    'field-context-separator=',
    'field-match-separator=',
    'file=',
    'files',
    'files-with-matches',
    'files-without-match',
    'fixed-strings',
    'no-fixed-strings',
    'follow',
    'no-follow',
    'glob=',
    'glob-case-insensitive',
    'no-glob-case-insensitive',
    'heading',
    'no-heading',
    'hidden',
    'no-hidden',
    'iglob=',
    'ignore-case',
    'ignore-file=',
    'ignore-file-case-insensitive',
    'no-ignore-file-case-insensitive',
    'include-zero',
    'no-include-zero',
    'invert-match',
    'no-invert-match',
    'json',
    'no-json',
    'line-buffered',
    'no-line-buffered',
    'line-number',
    'no-line-number',
    'line-regexp',
    'max-columns=',
    'max-columns-preview',
    'no-max-columns-preview',
    'max-count=',
    'max-depth=',
    'maxdepth=',
    'max-filesize=',
    'mmap',
    'no-mmap',
    'multiline',
    'no-multiline',
    'multiline-dotall',
    'no-multiline-dotall',
    'no-config',
    'no-ignore',
    'ignore',
    'no-ignore-dot',
    'ignore-dot',
    'no-ignore-exclude',
    'ignore-exclude',
    'no-ignore-files',
    'ignore-files',
    'no-ignore-global',
    'ignore-global',
    'no-ignore-messages',
    'ignore-messages',
    'no-ignore-parent',
    'ignore-parent',
    'no-ignore-vcs',
    'ignore-vcs',
    'no-messages',
    'messages',
    'no-require-git',
    'require-git',
    'no-unicode',
    'unicode',
    'null',
    'null-data',
    'one-file-system',
    'no-one-file-system',
    'only-matching',
    'passthru',
    'passthrough',
    'path-separator=',
    'pcre2',
    'no-pcre2',
    'pcre2-version',
    'pretty',
    'quiet',
    'regex-size-limit=',
    'regexp=',
    'replace=',
    'search-zip-never',
    'smart-case',
    'sort=',
    'sortr=',
    'sort-files',
    'no-sort-files',
    'stats',
    'no-stats',
    'stop-on-nonmatch',
    'text',
    'no-text',
    'threads=',
    'trim',
    'no-trim',
    'type=',
    'type-not=',
    'type-add=',
    'type-clear=',
    'type-list',
    'unrestricted',
    'vimgrep',
    'with-filename',
    'no-filename',
    'word-regexp',
    'auto-hybrid-regex',
    'no-auto-hybrid-regex',
    'help',
    'version',
    'no-search-zip',
    'hyperlink-format=',
    'generate=',
  ],
};
const RG_REFUSED: Record<string, string> = {
  pre: 'runs a program on every file searched',
  'pre-glob': 'selects the files --pre runs a program on',
  'search-zip': 'runs external decompressors (gzip, xz, zstd, ...) on compressed files',
  'hostname-bin': 'runs a program to find the host name',
};
const rg: Validator = (argv) => {
  for (const word of argv.slice(1)) {
    if (word === '--') break;
    if (word.startsWith('--')) {
      const name = word.slice(2).split('=')[0] ?? '';
      const reason = RG_REFUSED[name];
      if (reason) refuse('rg', `rg --${name} ${reason}; restricted mode does not run it`);
    }
  }
  parseOptions('rg', argv.slice(1), rgSpec);
  return { argv, programIndex: 0, checked: [argv] };
};

// ---------- nslookup, tree, ss, xmllint ----------
const NSLOOKUP_SETTINGS = new Set([
  'type',
  'querytype',
  'q',
  'class',
  'port',
  'timeout',
  'retry',
  'domain',
  'search',
  'nosearch',
  'vc',
  'novc',
  'recurse',
  'norecurse',
  'debug',
  'nodebug',
  'd2',
  'nod2',
  'fail',
  'nofail',
  'ndots',
  'all',
  'defname',
  'nodefname',
]);
/** BIND nslookup: `-set[=value]` words and a host; without a host it reads commands from its input (interactive mode), which is refused. */
const nslookup: Validator = (argv) => {
  const operands: string[] = [];
  for (const word of argv.slice(1)) {
    if (word === '-version' || word === '-help') continue;
    if (word.startsWith('-') && word !== '-') {
      const name = word.slice(1).split('=')[0] ?? '';
      if (!NSLOOKUP_SETTINGS.has(name))
        refuse(
          'nslookup',
          `nslookup ${word} is not a setting restricted mode knows (${[...NSLOOKUP_SETTINGS].join(', ')})`,
        );
      continue;
    }
    operands.push(word);
  }
  if (operands.length === 0 || operands[0] === '-')
    refuse(
      'nslookup',
      'nslookup without a host name reads commands from its input (interactive mode); give the host: nslookup NAME [SERVER]',
    );
  return { argv, programIndex: 0, checked: [argv] };
};
const tree = simple('tree', {
  flags: 'adlfxLPIAnCDFqNQpugsShrtcUvJXi',
  valued: 'LPIT',
  long: [
    'help',
    'version',
    'noreport',
    'charset=',
    'filelimit=',
    'timefmt=',
    'si',
    'du',
    'prune',
    'matchdirs',
    'ignore-case',
    'dirsfirst',
    'filesfirst',
    'sort=',
    'gitignore',
    'info',
    'metafirst',
    'inodes',
    'device',
    'nolinks',
    'fromfile',
    'fromtabfile',
    'hintro=',
    'houtro=',
  ],
});
const ss = simple('ss', {
  flags: 'hVHOnralmpTiesbEZzSuwxt04689M',
  valued: 'fAF',
  long: [
    'help',
    'version',
    'no-header',
    'oneline',
    'numeric',
    'resolve',
    'all',
    'listening',
    'options',
    'extended',
    'memory',
    'processes',
    'threads',
    'info',
    'tos',
    'cgroup',
    'summary',
    'bpf',
    'events',
    'context',
    'contexts',
    'tcp',
    'udp',
    'raw',
    'unix',
    'packet',
    'dccp',
    'sctp',
    'vsock',
    'xdp',
    'mptcp',
    'tipc',
    'inet-sockopt',
    'ipv4',
    'ipv6',
    'family=',
    'query=',
    'socket=',
    'filter=',
  ],
});
const XMLLINT_FLAGS = new Set([
  'version',
  'debug',
  'recover',
  'huge',
  'noent',
  'noenc',
  'nocdata',
  'noblanks',
  'nonet',
  'nowarning',
  'pedantic',
  'noout',
  'htmlout',
  'nowrap',
  'valid',
  'postvalid',
  'dtdattr',
  'loaddtd',
  'insert',
  'timing',
  'html',
  'xmlout',
  'nodefdtd',
  'push',
  'memory',
  'nsclean',
  'format',
  'dropdtd',
  'c14n',
  'c14n11',
  'exc-c14n',
  'xinclude',
  'noxincludenode',
  'nofixup-base-uris',
  'oldxml10',
  'stream',
  'walker',
  'sax',
  'sax1',
  'quiet',
  'auto',
  'catalogs',
  'nocatalogs',
  'load-trailing',
  'nocompact',
  'nodict',
  'testIO',
  'copy',
  'repeat',
  'compress',
]);
const XMLLINT_VALUED = new Set([
  'path',
  'dtdvalid',
  'dtdvalidfpi',
  'relaxng',
  'schema',
  'schematron',
  'pattern',
  'xpath',
  'encode',
  'maxmem',
  'pretty',
]);
/** libxml2 xmllint: long options with one or two dashes, exact names; --output and --shell (whose commands write files) are refused. */
const xmllint: Validator = (argv) => {
  for (let index = 1; index < argv.length; index += 1) {
    const word = argv[index] as string;
    if (!word.startsWith('-') || word === '-') continue;
    const name = word.replace(/^--?/, '');
    if (XMLLINT_FLAGS.has(name)) continue;
    if (XMLLINT_VALUED.has(name)) {
      index += 1;
      continue;
    }
    refuse(
      'xmllint',
      `xmllint ${word} is not allowed in restricted mode${name === 'output' || name === 'o' ? ' (it writes a file)' : name === 'shell' ? ' (its commands write files)' : ''}`,
    );
  }
  return { argv, programIndex: 0, checked: [argv] };
};

// ---------- wrappers ----------
function wrapped(outer: string[], innerIndex: number, inner: CheckedArgv, strippedPrefix = 0): CheckedArgv {
  const prefix = outer.slice(strippedPrefix, innerIndex);
  return {
    argv: [...prefix, ...inner.argv],
    programIndex: prefix.length + inner.programIndex,
    checked: [outer, ...inner.checked],
  };
}

const envSpec: OptionSpec = {
  flags: 'i0v',
  valued: 'uC',
  long: ['ignore-environment', 'null', 'unset=', 'chdir=', 'debug', 'help', 'version'],
  stopAtOperand: true,
};
const env: Validator = (argv) => {
  const { firstOperandIndex } = parseOptions('env', argv.slice(1), envSpec);
  let index = 1 + firstOperandIndex;
  while (index < argv.length && (argv[index] as string).includes('=')) {
    const assignment = argv[index] as string;
    const name = assignment.slice(0, assignment.indexOf('='));
    if (!ENVIRONMENT_NAME.test(name) || !assignmentAllowed(name)) {
      refuse(
        'env',
        `env ${name}=... is not allowed in restricted mode: only locale (LANG, LC_*), TZ, COLUMNS, LINES and NO_COLOR may be set, since other variables can change what a program runs`,
      );
    }
    index += 1;
  }
  if (index >= argv.length) {
    refuse(
      'env',
      'env without a command prints the whole environment, which can hold secrets; use printenv NAME for one of: ' +
        [...PRINTABLE_VARIABLES].join(', '),
    );
  }
  return wrapped(argv, index, checkArgv(argv.slice(index)));
};

const xargsSpec: OptionSpec = {
  flags: '0rtx',
  valued: 'adELnPs',
  long: [
    'null',
    'arg-file=',
    'delimiter=',
    'eof=',
    'max-lines=',
    'max-args=',
    'max-procs=',
    'no-run-if-empty',
    'max-chars=',
    'verbose',
    'exit',
    'show-limits',
    'help',
    'version',
  ],
  stopAtOperand: true,
};
/** Most processes `xargs -P` may run at once. */
const XARGS_MAX_PROCS = 8;

const xargs: Validator = (argv) => {
  const { firstOperandIndex, options } = parseOptions('xargs', argv.slice(1), xargsSpec);
  for (const option of options) {
    if (option.name !== '-P' && option.name !== '--max-procs') continue;
    const value = option.value ?? '';
    if (!/^\d+$/.test(value) || Number(value) === 0 || Number(value) > XARGS_MAX_PROCS) {
      refuse(
        'xargs',
        `xargs -P ${value} runs ${/^0+$/.test(value) ? 'as many processes at once as it can' : `${value} processes at once`}; use -P ${XARGS_MAX_PROCS} or fewer`,
      );
    }
  }
  const index = 1 + firstOperandIndex;
  if (index >= argv.length) return { argv, programIndex: 0, checked: [argv] };
  const program = argv[index] as string;
  if (!READER_PROGRAMS.has(program) || VALIDATORS[program] !== undefined) {
    refuse(
      'xargs',
      `xargs appends words read from its input to the command, so those words are never checked; restricted mode only lets xargs run programs that have no harmful option at all (such as grep, cat, wc, ls, head), not ${program}`,
    );
  }
  return wrapped(argv, index, checkArgv(argv.slice(index)));
};

const timeoutSpec: OptionSpec = {
  flags: 'v',
  valued: 'sk',
  long: ['signal=', 'kill-after=', 'preserve-status', 'foreground', 'verbose', 'help', 'version'],
  stopAtOperand: true,
};
const timeout: Validator = (argv) => {
  const { firstOperandIndex, options } = parseOptions('timeout', argv.slice(1), timeoutSpec);
  if (options.some((option) => option.name === '--help' || option.name === '--version'))
    return { argv, programIndex: 0, checked: [argv] };
  const duration = argv[1 + firstOperandIndex];
  if (duration === undefined || !/^\d+(\.\d+)?[smhd]?$/.test(duration))
    refuse('timeout', 'timeout needs a DURATION and a command');
  const index = 2 + firstOperandIndex;
  if (index >= argv.length) refuse('timeout', 'timeout needs a command');
  return wrapped(argv, index, checkArgv(argv.slice(index)));
};

const niceSpec: OptionSpec = {
  valued: 'n',
  numeric: true,
  long: ['adjustment=', 'help', 'version'],
  stopAtOperand: true,
};
const nice: Validator = (argv) => {
  const { firstOperandIndex } = parseOptions('nice', argv.slice(1), niceSpec);
  const index = 1 + firstOperandIndex;
  if (index >= argv.length) return { argv, programIndex: 0, checked: [argv] };
  return wrapped(argv, index, checkArgv(argv.slice(index)));
};

const command: Validator = (argv) => {
  let index = 1;
  while (argv[index] === '-p') index += 1;
  const next = argv[index];
  if (next === '-v' || next === '-V') refuse('command', 'command -v is a shell builtin; use which PROGRAM');
  if (next === '--') index += 1;
  if (index >= argv.length) refuse('command', 'command needs a program');
  // `command` is a shell builtin with no program of its own: what runs is the wrapped command.
  const inner = checkArgv(argv.slice(index));
  return { argv: inner.argv, programIndex: inner.programIndex, checked: [argv, ...inner.checked] };
};

const VALIDATORS: Record<string, Validator> = {
  sed,
  awk,
  gawk: awk,
  mawk: awk,
  find,
  git,
  tar,
  unzip,
  gzip,
  gunzip: gzip,
  curl,
  wget,
  sort,
  uniq,
  xxd,
  file,
  date,
  hostname,
  top,
  ping,
  yq,
  env,
  xargs,
  timeout,
  nice,
  command,
  tree,
  ss,
  xmllint,
  ps,
  printenv,
  jq,
  rg,
  nslookup,
};

const REFUSED_WITH_REASON: Record<string, string> = {
  less: 'pagers need a terminal; use cat, head or tail',
  more: 'pagers need a terminal; use cat, head or tail',
  zless: 'pagers need a terminal; use zcat',
  cd: 'restricted mode runs commands without a shell, so cd cannot change the directory of later commands; use the working_dir parameter or paths',
  rm: 'rm deletes files',
  mv: 'mv moves files',
  cp: 'cp writes files',
  tee: 'tee writes files',
  touch: 'touch creates files',
  mkdir: 'mkdir creates directories',
  sh: 'shells run arbitrary commands',
  bash: 'shells run arbitrary commands',
  eval: 'eval runs arbitrary commands',
  exec: 'exec replaces the shell',
  source: 'source runs a script',
  '.': 'source runs a script',
  python: 'interpreters run arbitrary code',
  python3: 'interpreters run arbitrary code',
  node: 'interpreters run arbitrary code',
  perl: 'interpreters run arbitrary code',
  ag: 'ag is not validated in restricted mode; use rg or grep -rn',
  ack: 'ack is not validated in restricted mode (its config can set a pager); use rg or grep -rn',
  zip: 'zip writes archives (and zip -T -TT CMD runs CMD); use unzip -l or zipinfo to read one',
  man: 'man runs a pager and its configured viewers; use PROGRAM --help',
  info: 'info runs an interactive viewer; use PROGRAM --help',
};

/** Every program name restricted mode runs. */
export const ALLOWED_PROGRAMS: readonly string[] = [
  ...new Set([...READER_PROGRAMS, ...Object.keys(VALIDATORS)]),
].sort();

/** Judge one argv: allowlisted program, then that program's validator (recursing into wrappers). */
export function checkArgv(argv: string[]): CheckedArgv {
  const program = argv[0];
  if (program === undefined || program.length === 0) throw new ShellRefusal('shell.construct', 'empty command');
  if (program.includes('/')) {
    throw new ShellRefusal(
      'shell.allowlist',
      `run programs by name, not by path (${program}): a path can name any file, including one written by the agent`,
    );
  }
  const validator = VALIDATORS[program];
  if (validator) return validator(argv);
  if (TEXT_PROGRAMS.has(program)) return { argv, programIndex: 0, checked: [argv] };
  const spec = READER_SPECS[program];
  if (spec) {
    const { operands } = parseOptions(program, argv.slice(1), spec);
    if (program === 'strings' && operands.some((operand) => operand.startsWith('@'))) {
      refuse(
        'strings',
        'strings @FILE reads more options from FILE, which restricted mode cannot check; name the file as ./@FILE',
      );
    }
    return { argv, programIndex: 0, checked: [argv] };
  }
  const reason = REFUSED_WITH_REASON[program];
  throw new ShellRefusal(
    'shell.allowlist',
    `${program} is not in the restricted-mode allowlist${reason ? `: ${reason}` : ''}`,
  );
}
