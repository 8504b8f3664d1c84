import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join, posix, resolve } from 'node:path';
import { rhoHome as defaultRhoHome } from '@rho/core';
import { PROC_READABLE } from './check-read-path.js';
import type { PermissionProfile } from './permission-profile.js';

/**
 * The directories of the system that programs need to start and run (binaries, libraries,
 * configuration): visible read-only in every view. `/etc` is visible with the secrets of
 * {@link SYSTEM_SECRETS} masked. Nothing else of the host is: not `/home`, `/root`, `/var`, `/run`,
 * `/srv`, `/opt`, `/mnt`, the host's `/tmp` (add such a directory with the profile's `read_paths`).
 */
export const SYSTEM_READ_ROOTS: readonly string[] = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/etc',
];

/**
 * Secrets of the system directories, masked in every view (glob `*` within one name): password
 * hashes, sudo rules, ssh host keys, private TLS keys, Kerberos keytabs.
 */
export const SYSTEM_SECRETS: readonly string[] = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/ssh/ssh_host_*_key',
  '/etc/ssl/private',
  '/etc/security/opasswd',
  '/etc/krb5.keytab',
  '/etc/.pwd.lock',
];

/**
 * Names of files that hold secrets, masked wherever they are in the view (glob on the file name:
 * `*` any characters, `?` one; a pattern with a `/` is matched against the path relative to the
 * working directory). The profile adds to them (`secret_files.extra`) and lets some through
 * (`secret_files.allow`).
 */
export const DEFAULT_SECRET_FILES: readonly string[] = [
  '.env',
  '.env.*',
  '*.env',
  '.envrc',
  '.netrc',
  '_netrc',
  '.pgpass',
  '.my.cnf',
  '.mylogin.cnf',
  'id_rsa*',
  'id_dsa*',
  'id_ecdsa*',
  'id_ed25519*',
  'id_xmss*',
  '*.pem',
  '*.key',
  '*.p12',
  '*.pfx',
  '*.jks',
  '*.keystore',
  '*.keytab',
  'credentials',
  'credentials.json',
  '.credentials.json',
  '*.credentials',
  '.git-credentials',
  '.npmrc',
  '.pypirc',
  '.yarnrc.yml',
  '.htpasswd',
  '.vault-token',
  '.s3cfg',
  '.boto',
  // rho's own: database aliases with their passwords.
  'databases.yaml',
  'databases.yml',
  // Directories of credentials (masked whole: a home used as the working directory), and shell
  // and client histories (passwords typed on command lines).
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.kube',
  '.docker',
  '.password-store',
  '.config/gh',
  '.config/gcloud',
  '.*_history',
  '.history',
];

/** Secret-looking names that are examples, not secrets: readable unless the profile says otherwise. */
export const DEFAULT_SECRET_ALLOW: readonly string[] = [
  '.env.example',
  '.env.sample',
  '.env.template',
  '.env.dist',
  '*.pub',
];

/**
 * The bound of the scan of a visible directory (the working directory, each `read_paths` entry)
 * for secret-named files, which the sandbox masks one by one: entries visited breadth first, so
 * the top of a tree (where `.env` files live) is always covered and a huge tree stays cheap. A
 * secret-named file past the bound is not masked inside the shell's sandbox; the file tools, which
 * decide per path, still refuse it.
 */
export const SECRET_SCAN_MAX_ENTRIES = 10_000;

/** Inside `.git`, only these are looked at by the scan (config files); objects, refs and logs are skipped. */
const GIT_SCANNED = new Set(['config', 'config.worktree', 'modules', 'worktrees']);

/** The rules of a read decision. */
export type ReadRule =
  | 'read.working-dir'
  | 'read.system'
  | 'read.read-paths'
  | 'read.proc'
  | 'read.hidden'
  | 'read.secret'
  | 'read.git-config'
  | 'read.outside-view';

/** The read decision of one path: visible (and why), or not (the rule, and what to do). */
export type ReadDecision =
  | {
      allowed: true;
      rule: ReadRule;
      /** Visible with its credential and program-naming entries removed (a git config file). */
      sanitized?: 'git-config';
    }
  | { allowed: false; rule: ReadRule; reason: string };

/** What a view is made from. */
export interface ReadViewOptions {
  /** The profile: its `readPaths` and `secretFiles`. Absent: the defaults. */
  profile?: Pick<PermissionProfile, 'readPaths' | 'secretFiles' | 'name'>;
  /** The working directory (visible; writable where the sandbox says so). */
  workingDir: string;
  /** rho's home (`$RHO_HOME`): hidden. Default core's `rhoHome()`. */
  rhoHome?: string;
  /** The directory of the sessions (traces of every session): hidden. Default `$RHO_HOME/sessions`. */
  sessionDir?: string;
  /** The user's home: hidden unless the working directory is in it. Default `os.homedir()`. */
  home?: string;
  /** More directories to hide (a backend's own list). */
  hide?: readonly string[];
  /** Scan the working directory and the read paths for secret-named files to mask (default true; the sandbox's probe does not). */
  scan?: boolean;
}

/** One visible directory of a view. */
export interface ViewRoot {
  path: string;
  rule: 'read.working-dir' | 'read.system' | 'read.read-paths';
}

/** A file or directory of a view whose content is masked in the sandbox. */
export interface ViewMask {
  path: string;
  /** `empty`: /dev/null over a file, an empty tmpfs over a directory; `copy`: a sanitized copy at `source`. */
  kind: 'empty-file' | 'empty-dir' | 'copy';
  source?: string;
}

/** What an agent can see: built by {@link readView}, decided by {@link ReadView.decide}. */
export interface ReadView {
  /** The working directory, resolved. */
  readonly workingDir: string;
  /** The visible directories, the working directory first. */
  readonly roots: readonly ViewRoot[];
  /** Directories hidden even where they lie inside a visible one (rho's home, the sessions, the user's home). */
  readonly hidden: readonly string[];
  /** The secret-name globs in force (defaults, plus `secret_files.extra`). */
  readonly secretFiles: readonly string[];
  /** The globs let through (`secret_files.allow`, plus the defaults). */
  readonly secretAllow: readonly string[];
  /** The hidden directory `path` is in, unless a visible directory inside that one holds it. */
  hiddenBy(path: string): string | undefined;
  /** The one read decision, on a real absolute path. */
  decide(path: string): ReadDecision;
  /**
   * What the sandbox masks inside the visible directories: the system secrets, and the
   * secret-named files found by a bounded scan ({@link SECRET_SCAN_MAX_ENTRIES}) of the working
   * directory and the read paths. Computed once per view.
   */
  masks(): readonly ViewMask[];
}

function expandHome(path: string, home: string): string {
  if (path === '~') return home;
  if (path.startsWith('~/')) return join(home, path.slice(2));
  return path;
}

function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** Whether `path` is `directory` or inside it (both absolute, normalised). */
export function within(path: string, directory: string): boolean {
  if (directory === '/') return true;
  return path === directory || path.startsWith(directory.endsWith('/') ? directory : `${directory}/`);
}

function globSource(glob: string): string {
  let source = '';
  for (const character of glob) {
    if (character === '*') source += '[^/]*';
    else if (character === '?') source += '[^/]';
    else source += character.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return source;
}

function globRegExp(glob: string): RegExp {
  return new RegExp(`^${globSource(glob)}$`, 'i');
}

/** One regular expression per kind of glob (on the name, on the relative path, on the absolute path): one test per path. */
function matcher(
  globs: readonly string[],
): (name: string, relativePath: string | undefined, absolute: string) => boolean {
  const join_ = (kind: string[]) => (kind.length === 0 ? undefined : new RegExp(`^(?:${kind.join('|')})$`, 'i'));
  const cleaned = globs.map((glob) => glob.replace(/^\.\//, ''));
  const names = join_(cleaned.filter((glob) => !glob.includes('/')).map(globSource));
  const relatives = join_(cleaned.filter((glob) => glob.includes('/') && !glob.startsWith('/')).map(globSource));
  const absolutes = join_(cleaned.filter((glob) => glob.startsWith('/')).map(globSource));
  return (name, relativePath, absolute) =>
    (names?.test(name) ?? false) ||
    (relativePath !== undefined && (relatives?.test(relativePath) ?? false)) ||
    (absolutes?.test(absolute) ?? false);
}

/** Whether `path` is a git config file that can name credentials or programs: `.git/config`, `config.worktree`, a submodule's or a worktree's. */
function isGitConfig(path: string): boolean {
  const parts = path.split('/');
  const name = parts.at(-1);
  if (name !== 'config' && name !== 'config.worktree') return false;
  const gitIndex = parts.lastIndexOf('.git');
  if (gitIndex === -1) return false;
  const inner = parts.slice(gitIndex + 1, -1);
  return inner.length === 0 || inner[0] === 'modules' || inner[0] === 'worktrees';
}

/**
 * The read view of a session: deny by default. Visible: the working directory, the system
 * directories of {@link SYSTEM_READ_ROOTS} (with {@link SYSTEM_SECRETS} masked), and the
 * profile's `read_paths`. Hidden even inside those: rho's home, the sessions directory, the
 * user's home (unless the working directory is in it). Inside the view, files named like secrets
 * ({@link DEFAULT_SECRET_FILES}, the profile's `secret_files`) are masked, and git config files
 * show without their credential and program-naming entries. The shell's sandbox mounts exactly
 * this view; the file tools ask {@link ReadView.decide}; `rho policy check --read` explains it.
 */
export function readView(options: ReadViewOptions): ReadView {
  const home = options.home ?? homedir();
  const workingDir = realOr(resolve(options.workingDir));
  const rhoHomePath = realOr(options.rhoHome ?? defaultRhoHome());
  const sessionDir = realOr(options.sessionDir ?? join(rhoHomePath, 'sessions'));
  const readPaths = (options.profile?.readPaths ?? []).map((path) =>
    realOr(resolve(workingDir, expandHome(path, home))),
  );
  const roots: ViewRoot[] = [
    { path: workingDir, rule: 'read.working-dir' },
    ...SYSTEM_READ_ROOTS.map((path) => ({ path, rule: 'read.system' as const })),
    ...readPaths.map((path) => ({ path, rule: 'read.read-paths' as const })),
  ];
  // The user's home and /root are hidden inside a visible directory (a working directory of /home),
  // unless the working directory is in them: the user works there.
  const hidden = [
    ...new Set(
      [rhoHomePath, sessionDir, realOr(home), '/root', ...(options.hide ?? []).map((path) => realOr(path))].filter(
        (path) => path !== '/' && !within(workingDir, path),
      ),
    ),
  ];
  // rho's home and the sessions hide even an enclosing working directory's copy of them: only the
  // working directory itself, when inside, stays.
  for (const path of [rhoHomePath, sessionDir]) {
    if (within(workingDir, path) && workingDir !== path && !hidden.includes(path)) hidden.push(path);
  }
  const profileSecrets = options.profile?.secretFiles;
  const secretFiles = [...DEFAULT_SECRET_FILES, ...(profileSecrets?.extra ?? [])];
  const secretAllow = [...(profileSecrets?.allow ?? []), ...DEFAULT_SECRET_ALLOW];
  const isSecret = matcher(secretFiles);
  const isAllowed = matcher(secretAllow);
  const systemSecret = matcher(SYSTEM_SECRETS);

  function secretName(path: string, name = basename(path)): boolean {
    const prefix = workingDir === '/' ? '/' : `${workingDir}/`;
    const relativePath = path.startsWith(prefix) ? path.slice(prefix.length) : undefined;
    return isSecret(name, relativePath, path) && !isAllowed(name, relativePath, path);
  }

  function hiddenBy(path: string): string | undefined {
    return hidden.find(
      (directory) =>
        within(path, directory) &&
        !roots.some((root) => root.path !== directory && within(root.path, directory) && within(path, root.path)),
    );
  }

  /** The secret-named file or directory `path` is or lies in, below the visible directory `root`. */
  function secretComponent(path: string, root: string): string | undefined {
    if (secretName(path)) return path;
    let parent = dirname(path);
    while (parent !== root && within(parent, root) && parent !== '/') {
      if (secretName(parent)) return parent;
      parent = dirname(parent);
    }
    return undefined;
  }

  function decide(input: string): ReadDecision {
    const path = posix.normalize(input);
    if (path === '/proc' || path.startsWith('/proc/')) {
      if (PROC_READABLE.has(path)) return { allowed: true, rule: 'read.system' };
      return {
        allowed: false,
        rule: 'read.proc',
        reason:
          `${input} is in /proc, which the file tools do not read: there it is rho's own process (its environment ` +
          'holds API keys and passwords) or another program (its command line, its open files). Only ' +
          `${[...PROC_READABLE].join(', ')} are read. To look at processes, use the bash tool (ps, or cat /proc/...): ` +
          'its sandbox has a /proc of its own.',
      };
    }
    const hiding = hiddenBy(path);
    if (hiding !== undefined) {
      return {
        allowed: false,
        rule: 'read.hidden',
        reason:
          `${input} is inside ${hiding}, which is hidden from every session (rho's home with its database ` +
          "passwords and other sessions' traces, or a user's home). Work in another directory, or copy what is needed into the working directory.",
      };
    }
    const root = roots
      .filter((candidate) => within(path, candidate.path))
      .sort((a, b) => b.path.length - a.path.length)[0];
    if (root === undefined) {
      return {
        allowed: false,
        rule: 'read.outside-view',
        reason:
          `${input} is outside what this session can see: the working directory ${workingDir}, the system ` +
          `directories (${SYSTEM_READ_ROOTS.join(', ')}) and the profile's read_paths` +
          `${readPaths.length > 0 ? ` (${readPaths.join(', ')})` : ''}. To read it, add it (or its directory) to ` +
          `read_paths in a profile of your own${options.profile?.name ? ` based on ${options.profile.name}` : ''}.`,
      };
    }
    if (systemSecret(basename(path), undefined, path) || SYSTEM_SECRETS.some((secret) => within(path, secret))) {
      return {
        allowed: false,
        rule: 'read.secret',
        reason: `${input} is a secret of the system (password hashes, sudo rules, host keys), masked in every session.`,
      };
    }
    const secret = secretComponent(path, root.path);
    if (secret !== undefined) {
      return {
        allowed: false,
        rule: 'read.secret',
        reason:
          `${secret === path ? basename(path) : `${input} is inside ${basename(secret)}, which`} is named like ` +
          `a file that holds secrets (${secretFiles.slice(0, 8).join(', ')}, ...), so ` +
          'it is masked: the shell sees it empty and the file tools do not read it. If it holds none, list it under ' +
          'secret_files.allow in a profile of your own.',
      };
    }
    if (isGitConfig(path)) return { allowed: true, rule: 'read.git-config', sanitized: 'git-config' };
    return { allowed: true, rule: root.rule };
  }

  let masks: ViewMask[] | undefined;
  return {
    workingDir,
    roots,
    hidden,
    secretFiles,
    secretAllow,
    hiddenBy,
    decide,
    masks: () =>
      (masks ??= computeMasks(
        options.scan === false ? roots.filter((root) => root.rule === 'read.system') : roots,
        hiddenBy,
        secretName,
      )),
  };
}

function computeMasks(
  roots: readonly ViewRoot[],
  hiddenBy: (path: string) => string | undefined,
  secretName: (path: string, name?: string) => boolean,
): ViewMask[] {
  const masks: ViewMask[] = [];
  for (const secret of SYSTEM_SECRETS) {
    if (secret.includes('*')) {
      const directory = dirname(secret);
      const pattern = globRegExp(basename(secret));
      let names: string[] = [];
      try {
        names = readdirSync(directory);
      } catch {
        // no such directory here
      }
      for (const name of names) if (pattern.test(name)) addMask(masks, join(directory, name));
    } else addMask(masks, secret);
  }
  let budget = SECRET_SCAN_MAX_ENTRIES;
  const scanned = new Set<string>();
  for (const root of roots) {
    if (root.rule === 'read.system' || scanned.has(root.path)) continue;
    scanned.add(root.path);
    const queue: { directory: string; inGit: boolean }[] = [{ directory: root.path, inGit: false }];
    while (queue.length > 0 && budget > 0) {
      const { directory, inGit } = queue.shift()!;
      const entries = listDirectory(directory);
      if (entries === undefined) continue;
      for (const entry of entries) {
        if (budget <= 0) break;
        budget -= 1;
        const path = join(directory, entry.name);
        // Hidden directories are directories: a file is hidden only with the directory it is in.
        if (entry.isDirectory() && hiddenBy(path) !== undefined) continue;
        if (inGit && !GIT_SCANNED.has(entry.name) && !/\/\.git\/(modules|worktrees)\//.test(`${path}/`)) continue;
        // A link is not masked (mounting over it would follow it); what it points to is decided on its own.
        if (entry.isSymbolicLink()) continue;
        if (entry.isDirectory()) {
          if (secretName(path, entry.name)) masks.push({ path, kind: 'empty-dir' });
          else queue.push({ directory: path, inGit: inGit || entry.name === '.git' });
        } else if (entry.isFile()) {
          if (secretName(path, entry.name)) masks.push({ path, kind: 'empty-file' });
          else if ((entry.name === 'config' || entry.name === 'config.worktree') && isGitConfig(path)) {
            const source = sanitizedGitConfigCopy(path);
            if (source !== undefined) masks.push({ path, kind: 'copy', source });
          }
        }
      }
    }
  }
  return masks;
}

/** One entry of a directory listing, as the scan needs it. */
interface ListedEntry {
  name: string;
  isDirectory(): boolean;
  isFile(): boolean;
  isSymbolicLink(): boolean;
}

/**
 * Listings of the directories scanned before, with the change time they had: a directory whose
 * modification and change times are unchanged has the same names (adding, removing or renaming an
 * entry changes them), so one `stat` replaces reading it again. A listing is trusted only when
 * the directory had not changed for {@link RACY_MS} when it was read: a change within the same
 * clock tick as the reading could otherwise go unseen (git's "racy" entries, the same answer).
 */
const listings = new Map<string, { mtimeMs: number; ctimeMs: number; trusted: boolean; entries: ListedEntry[] }>();
const RACY_MS = 2000;
const MAX_LISTINGS = 50_000;

function listDirectory(directory: string): readonly ListedEntry[] | undefined {
  let info;
  try {
    info = statSync(directory);
  } catch {
    listings.delete(directory);
    return undefined;
  }
  const cached = listings.get(directory);
  if (cached !== undefined && cached.trusted && cached.mtimeMs === info.mtimeMs && cached.ctimeMs === info.ctimeMs)
    return cached.entries;
  let entries: ListedEntry[];
  try {
    entries = readdirSync(directory, { withFileTypes: true });
  } catch {
    listings.delete(directory);
    return undefined;
  }
  if (listings.size >= MAX_LISTINGS) listings.clear();
  const newest = Math.max(info.mtimeMs, info.ctimeMs);
  listings.set(directory, {
    mtimeMs: info.mtimeMs,
    ctimeMs: info.ctimeMs,
    trusted: Date.now() - newest > RACY_MS,
    entries,
  });
  return entries;
}

function addMask(masks: ViewMask[], path: string): void {
  try {
    const info = lstatSync(path);
    if (info.isSymbolicLink()) return;
    masks.push({ path, kind: info.isDirectory() ? 'empty-dir' : 'empty-file' });
  } catch {
    // not on this machine
  }
}

/** Keys of a git config that name a credential (a token, a helper that prints one). */
const GIT_CREDENTIAL_KEYS =
  /^(extraheader|helper|password|token|accesstoken|cookiefile|sslkey|sslcert|sslkeypasswordprotected)$/i;
/**
 * Keys of a git config that name a program git runs: `filter.*.clean/smudge/process`,
 * `diff.*.textconv/command`, `diff.external`, `merge.*.driver`, `core.fsmonitor`, `core.pager`,
 * `core.hooksPath`, `core.sshCommand`, `core.editor`, `core.askPass`, `core.gitProxy`,
 * `credential.helper`, `sequence.editor`, `gpg.*program`, `pager.*`, `include(If).path`.
 */
const GIT_PROGRAM_KEY =
  /^(filter\..+\.(clean|smudge|process)|diff\..+\.(textconv|command)|diff\.external|merge\..+\.driver|core\.(fsmonitor|pager|hookspath|sshcommand|editor|askpass|gitproxy|alternaterefscommand)|credential(\..+)?\.helper|sequence\.editor|gpg(\..+)?\.program|pager\..+|include(if\..+)?\.path|uploadpack\.packobjectshook|remote\..+\.(uploadpack|receivepack)|interactive\.difffilter)$/i;

/** Whether a git config key (`section.sub.name`, as `git config --name-only` prints it) names a program. */
export function gitConfigKeyNamesProgram(key: string): boolean {
  return GIT_PROGRAM_KEY.test(key);
}

/**
 * A git config text without its credential entries (`http.*.extraheader`, `credential.*`,
 * passwords and tokens, user:password in URLs) and without the entries that name a program git
 * would run (see {@link gitConfigKeyNamesProgram}): what the sandbox shows in place of a
 * repository's `.git/config`, `config.worktree` and submodule configs.
 */
export function sanitizeGitConfig(text: string): string {
  const out: string[] = [];
  let section = '';
  let dropping = false;
  for (const line of text.split('\n')) {
    if (dropping) {
      // The continuation of a dropped multi-line value.
      dropping = /\\\s*$/.test(line);
      continue;
    }
    const header = /^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$/.exec(line);
    if (header !== null) {
      section = header[2] === undefined ? header[1]!.toLowerCase() : `${header[1]!.toLowerCase()}.${header[2]}`;
      out.push(line.replace(/^(\s*\[[^\]]*\]).*$/, '$1'));
      // A `[section] key = value` on one line: the entry after the header is judged like any other.
      if (header[3] !== undefined && header[3].trim() !== '' && !/^[#;]/.test(header[3].trim())) {
        const key = /^([A-Za-z][A-Za-z0-9-]*)/.exec(header[3].trim())?.[1] ?? '';
        if (!dropKey(section, key)) out.push(`\t${header[3].trim()}`.replace(/(\w+:\/\/)[^/@\s]+@/g, '$1'));
      }
      continue;
    }
    const entry = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(=|$)/.exec(line);
    if (entry !== null && dropKey(section, entry[1]!)) {
      dropping = /\\\s*$/.test(line);
      continue;
    }
    out.push(line.replace(/(\w+:\/\/)[^/@\s]+@/g, '$1'));
  }
  return out.join('\n');
}

function dropKey(section: string, key: string): boolean {
  const name = key.toLowerCase();
  if (GIT_CREDENTIAL_KEYS.test(name)) return true;
  if (section === 'credential' || section.startsWith('credential.')) return true;
  return GIT_PROGRAM_KEY.test(`${section}.${name}`);
}

/** Where sanitized copies are kept (outside every view: the host's temporary directory is never visible). */
let copies: string | undefined;

/**
 * The directory of this process's copies: a fresh private directory (`mkdtemp`, mode 0700) under
 * the host's temporary directory, never one that another user could have made in advance.
 */
function copiesDirectory(): string {
  if (copies !== undefined && existsSync(copies)) return copies;
  const created = mkdtempSync(join(tmpdir(), 'rho-view-'));
  chmodSync(created, 0o700);
  // Removed with the process (the sandboxes that bind these files die with it).
  process.once('exit', () => rmSync(created, { recursive: true, force: true }));
  return (copies = created);
}

/**
 * An empty read-only file to bind over a masked file (a device node such as /dev/null cannot be
 * opened in the sandbox's user namespace, which would turn a masked file into an error).
 */
export function emptyFile(): string {
  if (empty !== undefined && existsSync(empty)) return empty;
  const target = join(copiesDirectory(), 'empty');
  if (!existsSync(target)) writeFileSync(target, '', { mode: 0o444 });
  return (empty = target);
}

let empty: string | undefined;

/** A sanitized copy of a git config file (one per content), or undefined when it cannot be read. */
export function sanitizedGitConfigCopy(path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const clean = sanitizeGitConfig(text);
  const target = join(copiesDirectory(), `${createHash('sha256').update(clean).digest('hex').slice(0, 32)}.gitconfig`);
  if (!existsSync(target)) writeFileSync(target, clean, { mode: 0o444, flag: 'wx' });
  return target;
}
