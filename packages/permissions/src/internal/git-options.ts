/**
 * The options git 2.39+ accepts for each read subcommand restricted mode allows, written out so
 * that an option nobody reviewed is refused. The parse-options lists come from each subcommand's
 * `git X -h`; the revision and diff lists from git's rev-list-options and diff-options manuals.
 * Options that write files or run programs are not listed (`--output`, `--ext-diff`, `--textconv`,
 * `--show-signature`, `--open-files-in-pager`, `--filters`, `--dirty`, `--broken`, ...); the
 * denylist in program-rules.ts refuses them with a specific reason first.
 */
export interface GitOptionGrammar {
  /** Long option names (a `--no-NAME` form is accepted for each, as parse-options does). */
  long: readonly string[];
  /** Short options without a value. */
  flags: string;
  /** Short options whose value is the rest of the word (`-U5`, `-Sfoo`, `-M50%`). */
  valued: string;
  /** Accepts `-NUM` (`git log -3`). */
  numeric?: boolean;
}

const DIFF_LONG = [
  'patch', 'no-patch', 'unified', 'output-indicator-new', 'output-indicator-old', 'output-indicator-context', 'raw', 'patch-with-raw',
  'indent-heuristic', 'minimal', 'patience', 'histogram', 'anchored', 'diff-algorithm', 'stat', 'stat-width', 'stat-name-width',
  'stat-graph-width', 'stat-count', 'compact-summary', 'numstat', 'shortstat', 'dirstat', 'cumulative', 'dirstat-by-file', 'summary',
  'patch-with-stat', 'name-only', 'name-status', 'submodule', 'color', 'color-moved', 'color-moved-ws', 'word-diff', 'word-diff-regex',
  'color-words', 'renames', 'rename-empty', 'check', 'ws-error-highlight', 'full-index', 'binary', 'abbrev', 'break-rewrites', 'find-renames',
  'find-copies', 'find-copies-harder', 'irreversible-delete', 'diff-filter', 'find-object', 'pickaxe-all', 'pickaxe-regex', 'skip-to',
  'rotate-to', 'relative', 'text', 'ignore-cr-at-eol', 'ignore-space-at-eol', 'ignore-space-change', 'ignore-all-space', 'ignore-blank-lines',
  'ignore-matching-lines', 'inter-hunk-context', 'function-context', 'exit-code', 'quiet', 'ext-diff', 'textconv', 'ignore-submodules',
  'src-prefix', 'dst-prefix', 'prefix', 'default-prefix', 'line-prefix', 'ita-invisible-in-index', 'ita-visible-in-index', 'cached', 'staged',
  'merge-base', 'no-index', 'base', 'ours', 'theirs', 'root', 'always', 'commit-id', 'stdin', 'combined-all-paths', 'cc', 'remerge-diff',
  'diff-merges', 'full-diff', 'dd', 'pretty', 'format', 'oneline', 'encoding', 'expand-tabs', 'notes', 'show-notes', 'standard-notes',
  'abbrev-commit', 'relative-date', 'date', 'follow', 'mailmap', 'use-mailmap', 'decorate', 'decorate-refs', 'decorate-refs-exclude',
  'clear-decorations', 'source', 'log-size',
];
const REVISION_LONG = [
  'max-count', 'skip', 'since', 'after', 'until', 'before', 'since-as-filter', 'max-age', 'min-age', 'author', 'committer', 'grep-reflog', 'grep',
  'all-match', 'invert-grep', 'regexp-ignore-case', 'basic-regexp', 'extended-regexp', 'fixed-strings', 'perl-regexp', 'remove-empty', 'merges',
  'min-parents', 'max-parents', 'first-parent', 'exclude-first-parent-only', 'not', 'all', 'branches', 'tags', 'remotes', 'glob', 'exclude',
  'exclude-hidden', 'reflog', 'alternate-refs', 'single-worktree', 'ignore-missing', 'bisect', 'cherry-mark', 'cherry-pick', 'left-only',
  'right-only', 'cherry', 'walk-reflogs', 'merge', 'boundary', 'simplify-by-decoration', 'show-pulls', 'full-history', 'dense', 'sparse',
  'simplify-merges', 'ancestry-path', 'date-order', 'author-date-order', 'topo-order', 'reverse', 'walk', 'do-walk', 'objects', 'objects-edge',
  'objects-edge-aggressive', 'unpacked', 'object-names', 'timestamp', 'count', 'left-right', 'graph', 'show-linear-break', 'parents', 'children',
  'header', 'in-commit-order', 'filter', 'filter-print-omitted', 'missing', 'exclude-promisor-objects', 'indexed-objects', 'disk-usage',
  'bisect-all', 'bisect-vars', 'indexed-objects', 'show-linear-break', 'no-walk', 'abbrev-commit',
];
const DIFF_FLAGS = 'psuzRaNwbWtr123c';
const DIFF_VALUED = 'UMCBDSGOlIX';

const LOG: GitOptionGrammar = { long: [...REVISION_LONG, ...DIFF_LONG], flags: `${DIFF_FLAGS}qimgv`, valued: `${DIFF_VALUED}nL`, numeric: true };
const DIFF: GitOptionGrammar = { long: [...DIFF_LONG, ...REVISION_LONG], flags: DIFF_FLAGS, valued: DIFF_VALUED, numeric: false };

export const GIT_OPTIONS: Readonly<Record<string, GitOptionGrammar>> = {
  log: LOG,
  show: LOG,
  whatchanged: LOG,
  'rev-list': LOG,
  shortlog: { ...LOG, long: [...LOG.long, 'committer', 'email', 'group', 'numbered', 'summary', 'format'], flags: `${LOG.flags}cens` },
  reflog: LOG,
  stash: LOG,
  diff: DIFF,
  'diff-tree': DIFF,
  'diff-files': DIFF,
  'diff-index': DIFF,
  status: {
    long: ['ahead-behind', 'branch', 'column', 'find-renames', 'ignore-submodules', 'ignored', 'long', 'renames', 'null', 'porcelain', 'short', 'show-stash', 'untracked-files', 'verbose'],
    flags: 'bsvz',
    valued: 'uM',
  },
  blame: {
    long: ['abbrev', 'color-by-age', 'color-lines', 'contents', 'ignore-rev', 'ignore-revs-file', 'incremental', 'line-porcelain', 'minimal', 'porcelain', 'progress', 'root', 'score-debug', 'show-email', 'show-name', 'show-number', 'show-stats', 'date', 'reverse', 'first-parent', 'encoding', 'since', 'textconv'],
    flags: 'bceflnpstw',
    valued: 'CLMS',
  },
  annotate: {
    long: ['abbrev', 'color-by-age', 'color-lines', 'contents', 'ignore-rev', 'ignore-revs-file', 'incremental', 'line-porcelain', 'minimal', 'porcelain', 'progress', 'root', 'score-debug', 'show-email', 'show-name', 'show-number', 'show-stats', 'date', 'reverse', 'first-parent', 'encoding', 'since', 'textconv'],
    flags: 'bceflnpstw',
    valued: 'CLMS',
  },
  describe: { long: ['abbrev', 'all', 'always', 'candidates', 'contains', 'debug', 'exact-match', 'exclude', 'first-parent', 'long', 'match', 'tags'], flags: '', valued: '' },
  'ls-files': {
    long: [
      'abbrev', 'cached', 'debug', 'deduplicate', 'deleted', 'directory', 'empty-directory', 'eol', 'error-unmatch', 'exclude', 'exclude-from',
      'exclude-per-directory', 'exclude-standard', 'format', 'full-name', 'ignored', 'killed', 'modified', 'others', 'recurse-submodules',
      'resolve-undo', 'sparse', 'stage', 'unmerged', 'with-tree',
    ],
    flags: 'cdfikmostuvz',
    valued: 'Xx',
  },
  'ls-tree': { long: ['abbrev', 'format', 'full-name', 'full-tree', 'long', 'name-only', 'name-status', 'object-only'], flags: 'dlrtz', valued: '' },
  'cat-file': {
    long: ['allow-unknown-type', 'batch', 'batch-all-objects', 'batch-check', 'batch-command', 'buffer', 'follow-symlinks', 'mailmap', 'path', 'unordered', 'use-mailmap'],
    flags: 'epstz',
    valued: '',
  },
  'show-ref': { long: ['abbrev', 'dereference', 'exclude-existing', 'hash', 'head', 'heads', 'quiet', 'tags', 'verify'], flags: 'dqs', valued: '' },
  'for-each-ref': { long: ['color', 'contains', 'count', 'format', 'ignore-case', 'merged', 'contains', 'merged', 'perl', 'points-at', 'python', 'shell', 'sort', 'tcl'], flags: 'ps', valued: '' },
  'merge-base': { long: ['all', 'fork-point', 'independent', 'is-ancestor', 'octopus'], flags: 'a', valued: '' },
  'name-rev': { long: ['all', 'always', 'exclude', 'name-only', 'refs', 'tags', 'undefined'], flags: '', valued: '' },
  'count-objects': { long: ['human-readable', 'verbose'], flags: 'Hv', valued: '' },
  grep: {
    long: [
      'after-context', 'all-match', 'and', 'basic-regexp', 'before-context', 'break', 'cached', 'color', 'column', 'context', 'count', 'exclude-standard',
      'extended-regexp', 'files-with-matches', 'files-without-match', 'fixed-strings', 'full-name', 'function-context', 'heading', 'ignore-case',
      'invert-match', 'line-number', 'max-count', 'max-depth', 'name-only', 'no-index', 'not', 'null', 'only-matching', 'or', 'perl-regexp', 'quiet',
      'recurse-submodules', 'recursive', 'show-function', 'text', 'threads', 'untracked', 'word-regexp', 'index',
    ],
    flags: 'EFGHILNPWacfhilnopqrvwz',
    valued: 'ABCem',
    numeric: true,
  },
  'check-ignore': { long: ['no-index', 'non-matching', 'quiet', 'stdin', 'verbose'], flags: 'nqvz', valued: '' },
  'check-attr': { long: ['all', 'cached', 'stdin'], flags: 'az', valued: '' },
  var: { long: [], flags: 'l', valued: '' },
  version: { long: ['build-options'], flags: '', valued: '' },
  'rev-parse': {
    long: [
      'abbrev-ref', 'absolute-git-dir', 'all', 'branches', 'default', 'disambiguate', 'end-of-options', 'exclude', 'exclude-hidden', 'flags', 'git-common-dir',
      'git-dir', 'git-path', 'glob', 'is-bare-repository', 'is-inside-git-dir', 'is-inside-work-tree', 'is-shallow-repository', 'keep-dashdash',
      'local-env-vars', 'not', 'path-format', 'prefix', 'quiet', 'remotes', 'resolve-git-dir', 'revs', 'revs-only', 'shared-index-path', 'short',
      'show-cdup', 'show-object-format', 'show-prefix', 'show-superproject-working-tree', 'show-toplevel', 'since', 'after', 'until', 'before', 'sq',
      'sq-quote', 'stop-at-non-option', 'stuck-long', 'symbolic', 'symbolic-full-name', 'tags', 'verify', 'show-ref-format',
    ],
    flags: 'q',
    valued: '',
  },
  worktree: { long: ['porcelain', 'verbose', 'expire'], flags: 'vz', valued: '' },
};

/** Why `argument` is not an option of `git SUBCOMMAND` that restricted mode knows, or undefined. */
export function gitOptionProblem(subcommand: string, argument: string): string | undefined {
  const grammar = GIT_OPTIONS[subcommand];
  if (grammar === undefined) return `git ${subcommand} has no option grammar in restricted mode`;
  // `-h` prints the subcommand's usage (never the manual).
  if (argument === '-h') return undefined;
  if (argument.startsWith('--')) {
    const name = argument.slice(2).split('=')[0] ?? '';
    if (grammar.long.includes(name)) return undefined;
    if (name.startsWith('no-') && grammar.long.includes(name.slice(3))) return undefined;
    return `git ${subcommand} --${name} is not an option restricted mode knows (write long options in full; git accepts abbreviations)`;
  }
  if (grammar.numeric && /^-\d+$/.test(argument)) return undefined;
  for (const letter of argument.slice(1)) {
    if (grammar.valued.includes(letter)) return undefined;
    if (!grammar.flags.includes(letter)) return `git ${subcommand} -${letter}${argument.length > 2 ? ` (in ${argument})` : ''} is not an option restricted mode knows`;
  }
  return undefined;
}
