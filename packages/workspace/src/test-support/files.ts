/** Real repositories and directories for the tests, and a hash of a tree that sees every byte and mode. */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const made: string[] = [];

/** A fresh directory (its real path), removed by {@link cleanUp}. */
export function tempDir(prefix = 'rho-ws-test-'): string {
  const directory = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  made.push(directory);
  return directory;
}

export function cleanUp(): void {
  for (const directory of made.splice(0)) rmSync(directory, { recursive: true, force: true });
}

const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('GIT_'))),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
};

/** `git <args>` in `cwd`, as a person would run it; its output. */
export function sh(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env, encoding: 'utf8' });
}

/** Writes `content` at `root/path`, making its folders. */
export function put(root: string, path: string, content: string | Buffer): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content);
}

/** A repository with `files` committed on `main`. */
export function repository(files: Record<string, string | Buffer>): string {
  const root = tempDir('rho-ws-repo-');
  sh(root, 'init', '-q', '-b', 'main');
  for (const [path, content] of Object.entries(files)) put(root, path, content);
  sh(root, 'add', '-A');
  sh(root, 'commit', '-q', '-m', 'initial');
  return root;
}

/**
 * A hash of every entry under `root` but `.git` and `skip`: its path, kind, executable bit, and
 * content (a link's target). Folders count, so an empty one left behind changes it.
 */
export function treeHash(root: string, skip: string[] = []): string {
  const hash = createHash('sha256');
  const walk = (relative: string) => {
    for (const name of readdirSync(join(root, relative)).sort()) {
      const path = relative === '' ? name : `${relative}/${name}`;
      if (name === '.git' || skip.includes(path)) continue;
      const stat = lstatSync(join(root, path));
      if (stat.isSymbolicLink()) hash.update(`L ${path} ${readlinkSync(join(root, path))}\n`);
      else if (stat.isDirectory()) {
        hash.update(`D ${path}\n`);
        walk(path);
      } else {
        hash.update(`F ${path} ${(stat.mode & 0o111) !== 0 ? 'x' : '-'} `);
        hash.update(readFileSync(join(root, path)));
        hash.update('\n');
      }
    }
  };
  walk('');
  return hash.digest('hex');
}

/** Bytes that are not text. */
export function binary(seed: number, size = 2048): Buffer {
  const bytes = Buffer.alloc(size);
  for (let index = 0; index < size; index += 1) bytes[index] = (index * 131 + seed * 17) % 256;
  return bytes;
}
