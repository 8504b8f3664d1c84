import type { OptionSpec } from './option-parser.js';

/**
 * The option grammar of every program that only reads, taken from each program's manual (GNU
 * coreutils 9, grep 3, procps-ng 4, util-linux 2.38, binutils 2.40, ripgrep 13/14 and their
 * BSD-style peers where noted). An option not listed here is refused: restricted mode never runs
 * an option it does not know. Long options must be written in full (see option-parser.ts).
 *
 * None of these options writes a file, runs a program or changes the system; the programs whose
 * options can are validated in program-rules.ts.
 */
const CHECKSUM: OptionSpec = {
  flags: 'bctzw',
  long: ['binary', 'check', 'help', 'ignore-missing', 'quiet', 'status', 'strict', 'tag', 'text', 'version', 'warn', 'zero'],
};
const GREP: OptionSpec = {
  flags: 'EFGPiywxzsvVbnHhoqaIrRLlcTZU',
  valued: 'efmdDBAC',
  numeric: true,
  long: [
    'after-context=', 'basic-regexp', 'before-context=', 'binary', 'binary-files=', 'byte-offset', 'color?', 'colour?', 'context=', 'count',
    'dereference-recursive', 'devices=', 'directories=', 'exclude-dir=', 'exclude-from=', 'exclude=', 'extended-regexp', 'file=',
    'files-with-matches', 'files-without-match', 'fixed-strings', 'group-separator=', 'help', 'ignore-case', 'include=', 'initial-tab',
    'invert-match', 'label=', 'line-buffered', 'line-number', 'line-regexp', 'max-count=', 'no-filename', 'no-group-separator',
    'no-ignore-case', 'no-messages', 'null', 'null-data', 'only-matching', 'perl-regexp', 'quiet', 'recursive', 'regexp=', 'silent', 'text',
    'version', 'with-filename', 'word-regexp',
  ],
};
const NO_OPTIONS: OptionSpec = { long: ['help', 'version'] };

export const READER_SPECS: Readonly<Record<string, OptionSpec>> = {
  cat: { flags: 'AbeEnstTuv', long: ['help', 'number', 'number-nonblank', 'show-all', 'show-ends', 'show-nonprinting', 'show-tabs', 'squeeze-blank', 'version'] },
  head: { flags: 'qvz', valued: 'cn', numeric: true, long: ['bytes=', 'help', 'lines=', 'quiet', 'silent', 'verbose', 'version', 'zero-terminated'] },
  tail: {
    flags: 'fFqvzr',
    valued: 'cns',
    numeric: true,
    long: ['bytes=', 'follow?', 'help', 'lines=', 'max-unchanged-stats=', 'pid=', 'quiet', 'retry', 'silent', 'sleep-interval=', 'verbose', 'version', 'zero-terminated'],
  },
  wc: { flags: 'cmlLw', long: ['bytes', 'chars', 'files0-from=', 'help', 'lines', 'max-line-length', 'total=', 'version', 'words'] },
  cut: { flags: 'nszw', valued: 'bcdf', long: ['bytes=', 'characters=', 'complement', 'delimiter=', 'fields=', 'help', 'only-delimited', 'output-delimiter=', 'version', 'zero-terminated'] },
  nl: {
    flags: 'p',
    valued: 'bdfhilnsvw',
    long: [
      'body-numbering=', 'footer-numbering=', 'header-numbering=', 'help', 'join-blank-lines=', 'line-increment=', 'no-renumber', 'number-format=',
      'number-separator=', 'number-width=', 'section-delimiter=', 'starting-line-number=', 'version',
    ],
  },
  fold: { flags: 'bs', valued: 'w', long: ['bytes', 'help', 'spaces', 'version', 'width='] },
  fmt: { flags: 'cstu', valued: 'pwg', numeric: true, long: ['crown-margin', 'goal=', 'help', 'prefix=', 'split-only', 'tagged-paragraph', 'uniform-spacing', 'version', 'width='] },
  pr: {
    flags: 'acdFfJmrtTv',
    valued: 'DehilnNoswW',
    numeric: true,
    long: [
      'across', 'columns=', 'date-format=', 'double-space', 'expand-tabs?', 'first-line-number=', 'form-feed', 'header=', 'help', 'indent=',
      'join-lines', 'length=', 'merge', 'no-file-warnings', 'number-lines?', 'omit-header', 'omit-pagination', 'output-tabs?', 'page-width=',
      'sep-string?', 'separator?', 'show-control-chars', 'show-nonprinting', 'version', 'width=',
    ],
  },
  expand: { flags: 'i', valued: 't', long: ['help', 'initial', 'tabs=', 'version'] },
  unexpand: { flags: 'a', valued: 't', long: ['all', 'first-only', 'help', 'tabs=', 'version'] },
  column: {
    flags: 'tdeLJxhV',
    valued: 'nONlEHRTWripcos',
    long: [
      'fillrows', 'help', 'json', 'keep-empty-lines', 'output-separator=', 'output-width=', 'separator=', 'table', 'table-columns=',
      'table-columns-limit=', 'table-header-repeat', 'table-hide=', 'table-name=', 'table-noextreme=', 'table-noheadings', 'table-order=',
      'table-right=', 'table-truncate=', 'table-wrap=', 'tree=', 'tree-id=', 'tree-parent=', 'version',
    ],
  },
  comm: { flags: '123z', long: ['check-order', 'help', 'nocheck-order', 'output-delimiter=', 'total', 'version', 'zero-terminated'] },
  cmp: { flags: 'blsv', valued: 'in', long: ['bytes=', 'help', 'ignore-initial=', 'print-bytes', 'quiet', 'silent', 'verbose', 'version'] },
  diff: {
    // Not -l/--paginate: they pipe the output through pr, another program.
    flags: 'qscuenyptTrNiEZbwBadv',
    valued: 'CUWFxXSID',
    long: [
      'brief', 'color?', 'context?', 'ed', 'exclude-from=', 'exclude=', 'expand-tabs', 'from-file=', 'help', 'horizon-lines=', 'ifdef=',
      'ignore-all-space', 'ignore-blank-lines', 'ignore-case', 'ignore-file-name-case', 'ignore-matching-lines=', 'ignore-space-change',
      'ignore-tab-expansion', 'ignore-trailing-space', 'initial-tab', 'label=', 'left-column', 'line-format=', 'minimal', 'new-file',
      'no-dereference', 'no-ignore-file-name-case', 'normal', 'palette=', 'rcs', 'recursive', 'report-identical-files',
      'show-c-function', 'show-function-line=', 'side-by-side', 'speed-large-files', 'starting-file=', 'strip-trailing-cr',
      'suppress-blank-empty', 'suppress-common-lines', 'tabsize=', 'text', 'to-file=', 'unidirectional-new-file', 'unified?', 'version', 'width=',
      'old-line-format=', 'new-line-format=', 'unchanged-line-format=', 'old-group-format=', 'new-group-format=', 'changed-group-format=',
      'unchanged-group-format=',
    ],
  },
  paste: { flags: 'sz', valued: 'd', long: ['delimiters=', 'help', 'serial', 'version', 'zero-terminated'] },
  join: { flags: 'iz', valued: 'aejotv12', long: ['check-order', 'header', 'help', 'ignore-case', 'nocheck-order', 'version', 'zero-terminated'] },
  tac: { flags: 'br', valued: 's', long: ['before', 'help', 'regex', 'separator=', 'version'] },
  rev: { flags: 'hV0', long: ['help', 'version', 'zero'] },
  seq: { flags: 'w', valued: 'fs', long: ['equal-width', 'format=', 'help', 'separator=', 'version'] },
  basename: { flags: 'az', valued: 's', long: ['help', 'multiple', 'suffix=', 'version', 'zero'] },
  dirname: { flags: 'z', long: ['help', 'version', 'zero'] },
  realpath: {
    flags: 'emLPqsz',
    long: ['canonicalize-existing', 'canonicalize-missing', 'help', 'logical', 'no-symlinks', 'physical', 'quiet', 'relative-base=', 'relative-to=', 'strip', 'version', 'zero'],
  },
  readlink: { flags: 'femnqsvz', long: ['canonicalize', 'canonicalize-existing', 'canonicalize-missing', 'help', 'no-newline', 'quiet', 'silent', 'verbose', 'version', 'zero'] },
  md5sum: CHECKSUM,
  sha1sum: CHECKSUM,
  sha224sum: CHECKSUM,
  sha256sum: CHECKSUM,
  sha384sum: CHECKSUM,
  sha512sum: CHECKSUM,
  b2sum: { ...CHECKSUM, valued: 'l', long: [...(CHECKSUM.long ?? []), 'length='] },
  cksum: {
    flags: 'czw',
    valued: 'al',
    long: ['algorithm=', 'base64', 'check', 'debug', 'help', 'ignore-missing', 'length=', 'quiet', 'raw', 'status', 'strict', 'tag', 'untagged', 'version', 'warn', 'zero'],
  },
  // Perl shasum; BSD md5.
  shasum: { flags: 'bctU0', valued: 'a', long: ['algorithm=', 'binary', 'check', 'text', 'UNIVERSAL', '01', 'tag', 'ignore-missing', 'status', 'quiet', 'warn', 'strict', 'help', 'version'] },
  md5: { flags: 'pqrtx', valued: 's' },
  // binutils strings (an `@FILE` word would read more options from FILE; it is refused as an unknown operand form in program-rules).
  strings: {
    flags: 'adfhovVwU',
    valued: 'nteTsU',
    numeric: true,
    long: ['all', 'data', 'print-file-name', 'bytes=', 'radix=', 'encoding=', 'target=', 'output-separator=', 'include-all-whitespace', 'unicode=', 'help', 'version'],
  },
  od: {
    flags: 'vabcdfilosxBDeFhHLOX',
    valued: 'AjNStw',
    long: ['address-radix=', 'endian=', 'format=', 'help', 'output-duplicates', 'read-bytes=', 'skip-bytes=', 'strings?', 'traditional', 'version', 'width?'],
  },
  hexdump: {
    flags: 'bcCdoxvhV',
    valued: 'enfs',
    long: ['one-byte-octal', 'one-byte-char', 'canonical', 'two-bytes-decimal', 'two-bytes-octal', 'two-bytes-hex', 'color?', 'format=', 'format-file=', 'length=', 'skip=', 'no-squeezing', 'help', 'version'],
  },
  stat: { flags: 'Lft', valued: 'c', long: ['cached=', 'dereference', 'file-system', 'format=', 'help', 'printf=', 'terse', 'version'] },
  pwd: { flags: 'LP', long: ['help', 'logical', 'physical', 'version'] },
  whoami: NO_OPTIONS,
  uname: { flags: 'asnrvmpio', long: ['all', 'hardware-platform', 'help', 'kernel-name', 'kernel-release', 'kernel-version', 'machine', 'nodename', 'operating-system', 'processor', 'version'] },
  uptime: { flags: 'phsV', long: ['help', 'pretty', 'since', 'version'] },
  free: {
    flags: 'bkmghltvwV',
    valued: 'sc',
    long: ['bytes', 'committed', 'count=', 'gibi', 'giga', 'help', 'human', 'kibi', 'kilo', 'lohi', 'mebi', 'mega', 'pebi', 'peta', 'seconds=', 'si', 'tebi', 'tera', 'total', 'version', 'wide'],
  },
  netstat: {
    flags: 'rigsMvWnNeopcalFCZtuwx46',
    long: [
      'route', 'interfaces', 'groups', 'statistics', 'masquerade', 'verbose', 'wide', 'numeric', 'numeric-hosts', 'numeric-ports', 'numeric-users',
      'symbolic', 'extend', 'programs', 'timers', 'listening', 'all', 'fib', 'cache', 'context', 'tcp', 'udp', 'raw', 'unix', 'help', 'version',
    ],
  },
  id: { flags: 'aZgGnruz', long: ['context', 'group', 'groups', 'help', 'name', 'real', 'user', 'version', 'zero'] },
  groups: NO_OPTIONS,
  nproc: { long: ['all', 'help', 'ignore=', 'version'] },
  arch: NO_OPTIONS,
  // debianutils which; util-linux whereis (-B/-M/-S take directory lists, read as operands).
  which: { flags: 'as' },
  whereis: { flags: 'bmsulBMSfgV' },
  tr: { flags: 'cCdst', long: ['complement', 'delete', 'help', 'squeeze-repeats', 'truncate-set1', 'version'] },
  grep: GREP,
  egrep: GREP,
  fgrep: GREP,
  zgrep: GREP,
  zcat: { flags: 'flqrtvhLV', valued: 'S', long: ['force', 'help', 'list', 'quiet', 'recursive', 'suffix=', 'synchronous', 'test', 'verbose', 'version', 'license'] },
  ls: {
    flags: 'aAbBcCdDfFgGhHiklLmnNoqQrRsStuUvxXZ1',
    valued: 'IpTw',
    long: [
      'all', 'almost-all', 'author', 'block-size=', 'classify?', 'color?', 'context', 'dereference', 'dereference-command-line',
      'dereference-command-line-symlink-to-dir', 'directory', 'dired', 'escape', 'file-type', 'format=', 'full-time', 'group-directories-first',
      'help', 'hide-control-chars', 'hide=', 'human-readable', 'hyperlink?', 'ignore-backups', 'ignore=', 'indicator-style=', 'inode', 'kibibytes',
      'literal', 'no-group', 'numeric-uid-gid', 'quote-name', 'quoting-style=', 'recursive', 'reverse', 'show-control-chars', 'si', 'size', 'sort=',
      'tabsize=', 'time-style=', 'time=', 'version', 'width=', 'zero',
    ],
  },
  du: {
    flags: '0abcDHhkLlmPSsx',
    valued: 'BdtX',
    long: [
      'all', 'apparent-size', 'block-size=', 'bytes', 'count-links', 'dereference', 'dereference-args', 'exclude-from=', 'exclude=', 'files0-from=',
      'help', 'human-readable', 'inodes', 'max-depth=', 'no-dereference', 'null', 'one-file-system', 'separate-dirs', 'si', 'summarize',
      'threshold=', 'time', 'time-style=', 'time=', 'total', 'version',
    ],
  },
  df: {
    flags: 'ahHiklPTv',
    valued: 'Btx',
    long: ['all', 'block-size=', 'exclude-type=', 'help', 'human-readable', 'inodes', 'local', 'no-sync', 'output?', 'portability', 'print-type', 'si', 'sync', 'total', 'type=', 'version'],
  },
  // mlocate / plocate.
  locate: {
    flags: 'AbceiLPlqrSVw0hNE',
    valued: 'dln',
    long: ['all', 'basename', 'count', 'existing', 'follow', 'ignore-case', 'limit=', 'nofollow', 'null', 'quiet', 'regexp=', 'regex', 'statistics', 'version', 'wholename', 'database=', 'help', 'literal'],
  },
  // BIND dig and host; `+option` and `@server` words are operands.
  dig: { flags: '46hmruvi', valued: 'bcfkpqtxy' },
  host: { flags: 'aACdilrsTUvVw46', valued: 'ctWRmN' },
  // Info-ZIP zipinfo (no option of it writes: it only lists).
  zipinfo: { flags: '12smMlvhtTzCZx' },
};

/** Variables `printenv NAME` may print: none of them holds a secret, and programs read them anyway. */
export const PRINTABLE_VARIABLES: ReadonlySet<string> = new Set([
  'HOME', 'USER', 'LOGNAME', 'SHELL', 'PATH', 'PWD', 'LANG', 'LANGUAGE', 'TZ', 'TERM', 'COLUMNS', 'LINES', 'NO_COLOR', 'TMPDIR', 'HOSTNAME', 'EDITOR',
  'VISUAL', 'PAGER', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME', 'XDG_RUNTIME_DIR', 'XDG_SESSION_TYPE', 'DISPLAY', 'SHLVL', 'MAIL',
]);
