// Bringing a sandbox's working directory back (issue 37) against the fake Daytona, whose sandbox
// commands run for real under bubblewrap: the agent's changes (new, changed, deleted, renamed,
// binary files, modes, new directories, links) arrive whole; what never travelled stays; too
// much, or a failed download, changes nothing.
import { spawnSync } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { sandboxWrapper } from '@rho/permissions';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDaytonaBackend, DaytonaBackendError, type DaytonaBackend } from './index.js';
import { parseListing } from './internal/sync.js';
import { startFakeDaytona, type FakeDaytona } from './testing/index.js';

const runnable = (await sandboxWrapper()).available || process.env['CI'] === 'true';

let fake: FakeDaytona;
let scratch: string;
const opened: DaytonaBackend[] = [];

beforeAll(async () => {
  if (!runnable) return;
  fake = await startFakeDaytona();
  scratch = await mkdtemp(join(tmpdir(), 'rho-daytona-sync-'));
}, 60_000);
afterEach(async () => {
  await Promise.all(opened.splice(0).map((backend) => backend.close()));
});
afterAll(async () => {
  if (!runnable) return;
  await fake?.close();
  await rm(scratch, { recursive: true, force: true });
  expect(fake.unknownRoutes).toEqual([]);
});

/** A local tree, uploaded into a new sandbox's working directory. */
async function uploaded(name: string): Promise<{ backend: DaytonaBackend; root: string }> {
  const root = join(scratch, name);
  await mkdir(join(root, 'src', 'deep'), { recursive: true });
  await mkdir(join(root, '.git'), { recursive: true });
  await writeFile(join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  await writeFile(join(root, 'keep.txt'), 'unchanged\n');
  await writeFile(join(root, 'edit.txt'), 'before\n');
  await writeFile(join(root, 'gone.txt'), 'deleted by the agent\n');
  await writeFile(join(root, 'old-name.txt'), 'renamed by the agent\n');
  await writeFile(join(root, 'src', 'deep', 'tool.sh'), '#!/bin/sh\necho tool\n');
  await chmod(join(root, 'src', 'deep', 'tool.sh'), 0o755);
  await writeFile(join(root, 'plain.sh'), '#!/bin/sh\n');
  await symlink('keep.txt', join(root, 'local-link'));
  const backend = await createDaytonaBackend({
    apiKey: fake.apiKey,
    apiUrl: fake.apiUrl,
    environment: {},
    workingDir: `/home/daytona/${name}`,
    uploads: [{ local: root, remote: `/home/daytona/${name}` }],
  });
  opened.push(backend);
  return { backend, root };
}

async function run(backend: DaytonaBackend, script: string): Promise<void> {
  const child = backend.spawn({ argv: ['sh', '-c', script], cwd: backend.workingDir });
  const [, stderr, exit] = await Promise.all([text(child.stdout!), text(child.stderr!), child.exited]);
  expect(exit.exitCode, stderr).toBe(0);
}

/** Every entry below `root` but .git: kind, mode and content or target. */
function tree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (directory: string, prefix: string) => {
    for (const name of readdirSync(directory).sort()) {
      if (name === '.git') continue;
      const path = join(directory, name);
      const key = prefix + name;
      const stats = lstatSync(path);
      if (stats.isSymbolicLink()) out[key] = `link -> ${readlinkSync(path)}`;
      else if (stats.isDirectory()) {
        out[`${key}/`] = 'dir';
        walk(path, `${key}/`);
      } else out[key] = `${(stats.mode & 0o777).toString(8)} ${readFileSync(path).toString('base64')}`;
    }
  };
  walk(root, '');
  return out;
}

describe.runIf(runnable)('syncWorkingDir', () => {
  it('uploads keep modes: an executable stays executable in the sandbox', async () => {
    const { backend } = await uploaded('modes');
    const host = fake.sandboxes.get(backend.sandboxId)!.sandbox.hostPath('/home/daytona/modes/src/deep/tool.sh');
    expect(statSync(host).mode & 0o777).toBe(0o755);
  });

  it('brings back what the agent changed, byte for byte, and nothing else', async () => {
    const { backend, root } = await uploaded('work');
    const before = tree(root);
    await run(
      backend,
      [
        'printf after > edit.txt',
        'rm gone.txt',
        'mv old-name.txt new-name.txt',
        'mkdir -p made/inner && printf "\\000\\001\\377" > made/inner/blob.bin',
        'chmod 755 plain.sh',
        'chmod 600 src/deep/tool.sh',
        'ln -s edit.txt made/link',
        // An old modification time does not hide a change (the status-change time counts).
        'printf sneaky > keep2.txt && touch -d 2001-01-01 keep2.txt',
        'echo committed > .git/HEAD',
      ].join(' && '),
    );
    const summary = await backend.syncWorkingDir(root);
    const after = tree(root);
    const expected: Record<string, string> = { ...before };
    delete expected['gone.txt'];
    delete expected['old-name.txt'];
    Object.assign(expected, {
      'edit.txt': `644 ${Buffer.from('after').toString('base64')}`,
      'new-name.txt': `644 ${Buffer.from('renamed by the agent\n').toString('base64')}`,
      'made/': 'dir',
      'made/inner/': 'dir',
      'made/inner/blob.bin': `644 ${Buffer.from([0, 1, 255]).toString('base64')}`,
      'made/link': 'link -> edit.txt',
      'plain.sh': `755 ${Buffer.from('#!/bin/sh\n').toString('base64')}`,
      'src/deep/tool.sh': `600 ${Buffer.from('#!/bin/sh\necho tool\n').toString('base64')}`,
      'keep2.txt': `644 ${Buffer.from('sneaky').toString('base64')}`,
    });
    expect(after).toEqual(expected);
    // The local link never travelled, and stays; .git is left alone.
    expect(after['local-link']).toBe('link -> keep.txt');
    expect(readFileSync(join(root, '.git', 'HEAD'), 'utf8')).toBe('ref: refs/heads/main\n');
    expect(summary).toMatchObject({ removed: 2, skipped: [] });
    // Only what changed came back (the untouched files were not downloaded again).
    expect(summary.written).toBeLessThanOrEqual(8);
    expect(summary.written).toBeGreaterThanOrEqual(7);

    // A second sync with nothing new changes nothing and downloads nothing.
    const again = await backend.syncWorkingDir(root);
    expect(again).toMatchObject({ written: 0, removed: 0, bytes: 0 });
    expect(tree(root)).toEqual(after);
  });

  it('a file that became a directory, and a directory that became a file', async () => {
    const { backend, root } = await uploaded('types');
    await run(backend, 'rm edit.txt && mkdir edit.txt && echo x > edit.txt/in && rm -r src && echo file > src');
    await backend.syncWorkingDir(root);
    expect(readFileSync(join(root, 'edit.txt', 'in'), 'utf8')).toBe('x\n');
    expect(readFileSync(join(root, 'src'), 'utf8')).toBe('file\n');
  });

  it('over its limits, or when a download fails, it throws and changes nothing', async () => {
    const { backend, root } = await uploaded('limits');
    await run(backend, 'for i in 1 2 3; do echo $i > n$i.txt; done');
    const before = tree(root);
    const error = await backend.syncWorkingDir(root, { maxFiles: 2 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DaytonaBackendError);
    expect((error as Error).message).toMatch(
      /3 files \(1 MB\) changed in \/home\/daytona\/limits.*nothing was brought back/,
    );
    await expect(backend.syncWorkingDir(root, { maxBytes: 4 })).rejects.toThrow(/more than rho brings back/);
    expect(tree(root)).toEqual(before);
    // A file the sandbox cannot read fails its download: nothing is brought back.
    const host = fake.sandboxes.get(backend.sandboxId)!.sandbox.hostPath('/home/daytona/limits/n2.txt');
    const unreadable = spawnSync('sh', ['-c', `chmod 000 '${host}'`]).status === 0 && process.getuid?.() !== 0;
    if (unreadable) {
      await expect(backend.syncWorkingDir(root)).rejects.toThrow(/Nothing was brought back/);
      expect(tree(root)).toEqual(before);
    }
    // Nothing of the staging folder is left beside the workspace.
    expect(readdirSync(scratch).filter((name) => name.includes('.sync-'))).toEqual([]);
  });

  it('reads find’s listing: names with spaces and newlines, link targets', () => {
    const listing = Buffer.from(
      'f 644 3 1700000000.5000000000 a b\nc\0\0l 777 4 1700000001.0000000000 link\0a b\nc\0d 755 4096 1700000002.0 dir\0\0',
    );
    expect([...parseListing(listing)]).toEqual([
      ['a b\nc', { kind: 'f', mode: 0o644, size: 3, ctime: 1700000000.5, target: '' }],
      ['link', { kind: 'l', mode: 0o777, size: 4, ctime: 1700000001, target: 'a b\nc' }],
      ['dir', { kind: 'd', mode: 0o755, size: 4096, ctime: 1700000002, target: '' }],
    ]);
  });
});
