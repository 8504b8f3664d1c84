import { homedir } from 'node:os';
import { rhoHome } from '@rho/core';
import { LOCAL_FILES, type FileLookup } from './file-lookup.js';
import { basename, dirname, isAbsolute, join, parse, resolve, sep } from 'node:path';
import { databaseExportsEnabled } from './permission-profile.js';
import type { PermissionProfile } from './permission-profile.js';

/**
 * Directory names that are sensitive wherever they appear in a real path, in every write mode:
 * credentials, configuration read by programs the user runs later (`.config` holds autostart
 * entries, systemd user units, git's and fish's configuration; `.local` holds `.local/bin`, which
 * is on `PATH`), version-control internals (`.git/config` and `.git/hooks` run commands on the
 * user's next `git status` or commit) and editor workspaces that run commands when the folder is
 * opened (`.vscode/tasks.json`, `.idea` run configurations, `.devcontainer`), and interpreters'
 * start-up directories (`.ipython/profile_default/startup`, `.jupyter`, `.julia/config`).
 */
export const SENSITIVE_DIRECTORIES: readonly string[] = [
  '.ssh',
  '.aws',
  '.gnupg',
  '.config',
  '.kube',
  '.docker',
  '.azure',
  '.gcloud',
  '.password-store',
  '.git',
  '.hg',
  '.svn',
  '.vscode',
  '.idea',
  '.devcontainer',
  '.direnv',
  '.local',
  '.ipython',
  '.jupyter',
  '.julia',
];

/**
 * File names that are sensitive wherever they appear, in every write mode: shell and session
 * start-up files, per-user configuration of programs that can run commands (git, psql, sqlite3,
 * vim, curl, wget, readline macros, gdb, lldb), interpreters' start-up files (R's `.Rprofile`,
 * GHCi's `.ghci`, Erlang's `.erlang`, all read from the current directory too), direnv's
 * `.envrc`, and credentials.
 */
export const SENSITIVE_FILES: readonly string[] = [
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.bash_aliases',
  '.profile',
  '.zshrc',
  '.zshenv',
  '.zprofile',
  '.zlogin',
  '.zlogout',
  '.cshrc',
  '.tcshrc',
  '.login',
  '.logout',
  '.kshrc',
  '.mkshrc',
  '.pam_environment',
  '.inputrc',
  '.xprofile',
  '.xsession',
  '.xsessionrc',
  '.xinitrc',
  '.envrc',
  '.gitconfig',
  '.hgrc',
  '.psqlrc',
  '.sqliterc',
  '.my.cnf',
  '.mylogin.cnf',
  '.vimrc',
  '.exrc',
  '.nvimrc',
  '.gvimrc',
  '.emacs',
  '.tmux.conf',
  '.screenrc',
  '.curlrc',
  '.wgetrc',
  '.irbrc',
  '.pryrc',
  '.gemrc',
  '.rprofile',
  '.gdbinit',
  '.lldbinit',
  '.ghci',
  '.erlang',
  '.netrc',
  '.npmrc',
  '.pypirc',
  '.git-credentials',
  '.pgpass',
];

/**
 * Names that tools run on their own when someone works in the folder later: pytest imports every
 * `conftest.py` it finds, Python runs `sitecustomize.py`/`usercustomize.py` and `.pth` files on
 * start-up, `make` reads a `Makefile`, pnpm runs `.pnpmfile.cjs`, yarn runs the `yarnPath` of
 * `.yarnrc.yml`, husky runs `.husky/*`. Creating one is running code, so `create-only` writes and
 * `export_query` refuse them; `full` mode (which may rewrite any source file anyway) allows them.
 */
export const AUTO_EXECUTED_NAMES: readonly string[] = [
  'conftest.py',
  'sitecustomize.py',
  'usercustomize.py',
  'makefile',
  'gnumakefile',
  '.pnpmfile.cjs',
  '.yarnrc',
  '.yarnrc.yml',
  '.husky',
];

/** Extensions of files a program runs when it finds them (Python's `.pth` files in site directories). */
const AUTO_EXECUTED_EXTENSIONS: readonly string[] = ['.pth'];

/** Extensions `export_query` may create: the export is always a new file with one of them. */
export const EXPORT_EXTENSIONS: readonly string[] = ['.csv', '.tsv'];

/** Top-level system directories no agent writes into. */
export const SENSITIVE_SYSTEM_ROOTS: readonly string[] = [
  '/etc',
  '/usr',
  '/bin',
  '/sbin',
  '/boot',
  '/lib',
  '/lib32',
  '/lib64',
  '/proc',
  '/sys',
  '/dev',
];

/** Which tool the write is for: `write` (create or, in `full` mode, replace), `edit` (replace an existing file), or `export` (`export_query`). */
export type WriteKind = 'write' | 'edit' | 'export';

/** The decision on a write path. */
export type PathDecision =
  { allowed: true; realPath: string; rule: string } | { allowed: false; rule: string; reason: string };

/** Options of {@link checkWritePath}. */
export interface CheckWritePathOptions {
  profile: PermissionProfile;
  /** Relative paths resolve against it; writes are confined to it and the roots. */
  workingDir: string;
  /** More directories where writes are allowed (besides the profile's `writeRoots`). */
  roots?: string[];
  /** The home directory, for `~` (default: the user's). */
  home?: string;
  /** The tool that writes (default `write`). */
  writer?: WriteKind;
  /**
   * The file system the write lands on: this machine's by default; the backend's own for one that
   * is not local (a remote sandbox's working directory does not exist here). Every path is then
   * resolved there, links included.
   */
  files?: FileLookup;
  /**
   * Directories no write may reach (their real paths): rho's home and the sessions directory,
   * where a session's control files live (its trace, cancel, approval answers). Default: core's
   * `rhoHome()`. A directory that holds the working directory itself is not one (a project run
   * from inside rho's home writes its own files).
   */
  hidden?: readonly string[];
}

/**
 * Decides whether a file may be written at `path`, on the real path: `..`, `//`, `~`, trailing
 * slashes and symlinks are resolved before any rule is applied, so none of them gets around it.
 * This is the one write decision of rho: the `write` and `edit` tools, `export_query` and
 * `rho policy check --write` all call it, so they cannot disagree.
 *
 * Rules, in order: the profile allows this writer (`write`: `file_write` is not `off`; `edit`:
 * `file_write` is `full`; `export`: always, but only new `.csv`/`.tsv` files whose name does not
 * start with a dot); the path names a file; the real path lies inside the working directory or a
 * configured root (the profile's `file_write.roots`); no component below the root is a symbolic
 * link (and the file itself is not one); no component is a sensitive location (matched as whole
 * path components, case-insensitively, wherever they appear: `.ssh`, `.git`, `.vscode`,
 * `.bashrc`, `/etc`, ... but not `proj/bin/x`); a new file (`create-only` writes and exports) is
 * not a name that tools run on their own (`conftest.py`, `Makefile`, `*.pth`, ...); `create-only`
 * writes and exports need a file that does not exist yet, and `edit` one that does.
 *
 * The write itself must then go through `openWriteTarget`, which walks the decided real path
 * again without following any link and writes relative to the parent directory's handle, so a
 * link swapped in after this check cannot redirect it.
 */
export async function checkWritePath(path: string, options: CheckWritePathOptions): Promise<PathDecision> {
  const { profile } = options;
  const files = options.files ?? LOCAL_FILES;
  const writer = options.writer ?? 'write';
  if (writer === 'write' && profile.fileWrite === 'off') {
    return deny('file_write.off', `Writing files is not allowed by the '${profile.name}' profile.`);
  }
  if (writer === 'edit' && profile.fileWrite !== 'full') {
    return deny(
      'file_write.edit',
      `Editing files needs file_write mode full; the '${profile.name}' profile has ${profile.fileWrite}.`,
    );
  }
  if (writer === 'export' && !databaseExportsEnabled(profile)) {
    return deny(
      'database_exports.off',
      `export_query writes a file, which the '${profile.name}' profile does not allow: it has database_exports off${profile.databaseExports === undefined ? ' (the default when file_write is off)' : ''}. Show the rows with the query operation instead, or use a profile with database_exports: on.`,
    );
  }
  const createOnly = writer === 'export' || profile.fileWrite === 'create-only';
  if (typeof path !== 'string' || path.trim() === '') return deny('path.empty', 'No path provided.');
  if (path.includes('\0')) return deny('path.invalid', 'The path contains a NUL byte.');
  if (/[\\/]$/.test(path) || /[\\/]\.{1,2}$/.test(path) || path === '.' || path === '..') {
    return deny('path.directory', `${path} names a directory; give the path of a file.`);
  }
  if (writer === 'export') {
    const refusal = exportNameRefusal(basename(path));
    if (refusal !== undefined) return refusal;
  }
  const home = options.home ?? homedir();
  const expanded = path === '~' ? home : path.startsWith('~/') ? join(home, path.slice(2)) : path;
  const lexical = resolve(options.workingDir, expanded);

  const roots = await realRoots(files, [
    options.workingDir,
    ...profile.writeRoots.map((root) => resolve(options.workingDir, root)),
    ...(options.roots ?? []),
  ]);
  if (roots.length === 0) return deny('path.no_root', `The working directory ${options.workingDir} does not exist.`);

  // Resolve the deepest existing ancestor; components below it do not exist yet.
  let existing = lexical;
  const missing: string[] = [];
  while ((await files.kind(existing, false)) === undefined) {
    const parent = dirname(existing);
    if (parent === existing) break;
    missing.unshift(existing.slice(parent === sep ? 1 : parent.length + 1));
    existing = parent;
  }
  let realAncestor: string;
  try {
    realAncestor = await files.realpath(existing);
  } catch (error) {
    return deny('path.unresolvable', `Cannot resolve ${existing}: ${(error as Error).message}`);
  }
  const realPath = missing.length === 0 ? realAncestor : join(realAncestor, ...missing);

  // rho's own files are no session's to write, whatever the working directory holds: an agent
  // never answers its own approval, cancels or rewrites a trace through a file. A working
  // directory inside a hidden one (an isolated workspace, `$RHO_HOME/workspaces/<id>`) is the
  // session's own: writes below it are allowed, every other path of the hidden directory (other
  // sessions' workspaces, approvals, the sessions) still is not.
  const workingDirs = [resolve(options.workingDir), ...(await realRoots(files, [options.workingDir]))];
  const hidden = (options.hidden ?? [rhoHome()]).map((directory) => resolve(directory));
  const hiding = hidden.find(
    (directory) =>
      isInside(realPath, directory) &&
      !workingDirs.some((workingDir) => isInside(workingDir, directory) && isInside(realPath, workingDir)),
  );
  if (hiding !== undefined && files === LOCAL_FILES) {
    return deny(
      'path.hidden',
      `${path} resolves to ${realPath}, inside ${hiding}, which is hidden from every session (rho's home and its sessions); nothing was written.`,
    );
  }
  const root = roots.find((candidate) => isInside(realPath, candidate));
  if (root === undefined) {
    return deny(
      'path.outside_roots',
      `${path} resolves to ${realPath}, outside the working directory${roots.length > 1 ? ' and the allowed write roots' : ''} (${roots.join(', ')}). Write inside the working directory.`,
    );
  }
  // A symbolic link below the root could be swapped between this check and the write: refuse any.
  const link = await firstSymlinkBelow(files, lexical, existing, options.workingDir, roots);
  if (link !== undefined) {
    return deny('path.symlink', `${path} goes through the symbolic link ${link}; write to the real location instead.`);
  }
  // The components of a hidden directory that holds the working directory (rho's home, by default
  // `~/.config/rho`) are where rho keeps the session's workspace, not a place the agent chose.
  const holder = hidden.find((directory) => workingDirs.some((workingDir) => isInside(workingDir, directory)));
  const sensitive = sensitiveComponent(realPath, holder);
  if (sensitive !== undefined) {
    return deny('path.sensitive', `Cannot write to sensitive location: ${path} (${sensitive}).`);
  }
  if (createOnly) {
    const autoRun = autoExecutedComponent(realPath.slice(root.length));
    if (autoRun !== undefined) {
      return deny(
        'path.auto_executed',
        `Cannot create ${path}: ${autoRun} is run by tools on their own (pytest, Python, make, package managers), so creating it would run code. Choose another name.`,
      );
    }
  }
  const info = await files.kind(realPath, false);
  if (info === 'directory') return deny('path.directory', `${path} is a directory; give the path of a file.`);
  if (createOnly && info !== undefined) {
    return writer === 'export'
      ? deny(
          'export.exists',
          `File already exists: ${path}. export_query never overwrites a file; choose a new export_path.`,
        )
      : deny(
          'create_only.exists',
          `File already exists: ${path}. Use a different path or delete the existing file first.`,
        );
  }
  if (writer === 'edit' && info === undefined) return deny('edit.not_found', `File not found: ${path}`);
  if (info !== undefined && info !== 'file') return deny('path.not_a_file', `${path} is not a regular file.`);
  const rule =
    writer === 'export'
      ? 'export.new_file'
      : writer === 'edit'
        ? 'edit.inside_roots'
        : createOnly
          ? 'create_only.new_file'
          : 'full.inside_roots';
  return { allowed: true, realPath, rule };
}

/** Why an `export_query` file name is refused, if it is. */
function exportNameRefusal(name: string): PathDecision | undefined {
  const lower = name.toLowerCase();
  const extension = EXPORT_EXTENSIONS.find((candidate) => lower.endsWith(candidate));
  if (extension === undefined) {
    return deny(
      'export.extension',
      `export_query creates only ${EXPORT_EXTENSIONS.join(' or ')} files; ${name} has another extension. Give an export_path ending in .csv or .tsv.`,
    );
  }
  if (name.startsWith('.') || lower === extension) {
    return deny(
      'export.hidden',
      `export_query does not create hidden files (${name}); give a name that does not start with a dot.`,
    );
  }
  return undefined;
}

function deny(rule: string, reason: string): PathDecision {
  return { allowed: false, rule, reason };
}

async function realRoots(files: FileLookup, candidates: string[]): Promise<string[]> {
  const result: string[] = [];
  for (const candidate of candidates) {
    try {
      const real = await files.realpath(candidate);
      if (!result.includes(real)) result.push(real);
    } catch {
      // A root that does not exist allows nothing.
    }
  }
  return result;
}

function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

/**
 * The first component of the lexical path, below the working directory or root it starts in,
 * that is a symbolic link (the file itself included).
 */
async function firstSymlinkBelow(
  files: FileLookup,
  lexical: string,
  deepestExisting: string,
  workingDir: string,
  realRootsList: string[],
): Promise<string | undefined> {
  const lexicalRoots = [resolve(workingDir), ...realRootsList];
  const base = lexicalRoots.filter((root) => isInside(lexical, root)).sort((a, b) => b.length - a.length)[0];
  // A path given outside every root lexically (absolute elsewhere, or through `..`) is checked
  // from the file system root: only its real location decided that it is inside.
  const start = base ?? parse(lexical).root;
  const relative =
    deepestExisting.length > start.length ? deepestExisting.slice(start.length).split(sep).filter(Boolean) : [];
  let current = start;
  for (const component of relative) {
    current = join(current, component);
    if ((await files.kind(current, false)) === 'symlink') return current;
  }
  return undefined;
}

function autoExecutedComponent(belowRoot: string): string | undefined {
  const components = belowRoot
    .split(sep)
    .filter(Boolean)
    .map((component) => component.toLowerCase());
  const named = components.find((component) => AUTO_EXECUTED_NAMES.includes(component));
  if (named !== undefined) return named;
  const file = components.at(-1);
  return file !== undefined && AUTO_EXECUTED_EXTENSIONS.some((extension) => file.endsWith(extension))
    ? file
    : undefined;
}

function sensitiveComponent(realPath: string, skipped?: string): string | undefined {
  const top = `/${realPath.split(sep).filter(Boolean)[0]?.toLowerCase() ?? ''}`;
  if (isAbsolute(realPath) && SENSITIVE_SYSTEM_ROOTS.includes(top)) return `${top} is a system directory`;
  const below = skipped !== undefined && isInside(realPath, skipped) ? realPath.slice(skipped.length) : realPath;
  const components = below
    .split(sep)
    .filter(Boolean)
    .map((component) => component.toLowerCase());
  const directory = components.slice(0, -1).find((component) => SENSITIVE_DIRECTORIES.includes(component));
  if (directory !== undefined) return `${directory} holds credentials or configuration`;
  const file = components.at(-1);
  if (file !== undefined && (SENSITIVE_FILES.includes(file) || SENSITIVE_DIRECTORIES.includes(file)))
    return `${file} is a sensitive file`;
  return undefined;
}
