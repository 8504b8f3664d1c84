import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { builtinProfile } from './builtin-profiles.js';
import { checkWritePath } from './check-write-path.js';
import type { PermissionProfile } from './permission-profile.js';
import { openWriteTarget } from './write-target.js';

// Races between the write decision and the write: a link swapped into the decided path, at each
// moment it can be swapped, must never carry a write (or an edit's read) outside the decided place.

const full: PermissionProfile = builtinProfile('developer')!;
const createOnly: PermissionProfile = { ...builtinProfile('readonly')!, name: 'create-only', fileWrite: 'create-only' };
const methods = process.platform === 'linux' ? (['handle', 'checked-path'] as const) : (['checked-path'] as const);

let root: string;
let work: string;
let outside: string;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-race-')));
  work = join(root, 'work');
  outside = join(root, 'outside');
  mkdirSync(join(work, 'd', 'e'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, 'victim.txt'), 'original\n');
  writeFileSync(join(work, 'd', 'victim.txt'), 'inside\n');
});

async function decide(path: string, profile: PermissionProfile = full): Promise<string> {
  const decision = await checkWritePath(path, { profile, workingDir: work });
  if (!decision.allowed) throw new Error(decision.reason);
  return decision.realPath;
}

/** Replaces the directory `work/<name>` by a link to `outside`, keeping the real one as `<name>.moved`. */
function swapForLink(name: string): void {
  renameSync(join(work, name), join(work, `${name}.moved`));
  symlinkSync(outside, join(work, name));
}

const outsideUntouched = () => {
  expect(readdirSync(outside).sort()).toEqual(['victim.txt']);
  expect(readFileSync(join(outside, 'victim.txt'), 'utf8')).toBe('original\n');
};

describe.each(methods)('openWriteTarget (%s)', (method) => {
  it('proves the old race: replacing by path after the check writes through the swapped link', async () => {
    // What full-mode write did before: decide on the path, then resolve it again to write.
    const realPath = await decide('d/victim.txt');
    swapForLink('d');
    writeFileSync(realPath, 'agent data\n');
    expect(readFileSync(join(outside, 'victim.txt'), 'utf8')).toBe('agent data\n');
  });

  it('refuses when the parent became a link between the decision and the use', async () => {
    const realPath = await decide('d/victim.txt');
    swapForLink('d');
    await expect(openWriteTarget(realPath, { method })).rejects.toMatchObject({ code: 'ECHANGED' });
    outsideUntouched();
  });

  it('refuses when a grandparent became a link between the decision and the use', async () => {
    const realPath = await decide('d/e/new.txt');
    renameSync(join(work, 'd'), join(work, 'd.moved'));
    mkdirSync(join(outside, 'e'));
    symlinkSync(outside, join(work, 'd'));
    await expect(openWriteTarget(realPath, { method, createParents: true })).rejects.toMatchObject({
      code: 'ECHANGED',
    });
    expect(readdirSync(join(outside, 'e'))).toEqual([]);
  });

  it('refuses when a directory it was to create was planted as a link', async () => {
    const realPath = await decide('fresh/deeper/new.txt', createOnly);
    symlinkSync(outside, join(work, 'fresh'));
    await expect(openWriteTarget(realPath, { method, createParents: true })).rejects.toMatchObject({
      code: 'ECHANGED',
    });
    outsideUntouched();
  });

  it('refuses to replace a file that became a link, and leaves both files as they were', async () => {
    const realPath = await decide('d/victim.txt');
    rmSync(join(work, 'd', 'victim.txt'));
    symlinkSync(join(outside, 'victim.txt'), join(work, 'd', 'victim.txt'));
    const target = await openWriteTarget(realPath, { method });
    try {
      await expect(target.replace(Buffer.from('agent data\n'))).rejects.toMatchObject({ code: 'ECHANGED' });
      await expect(target.read(1024)).rejects.toMatchObject({ code: method === 'handle' ? 'ECHANGED' : 'ELOOP' });
    } finally {
      target.close();
    }
    outsideUntouched();
  });

  it('never creates through a link planted at the name (create-only)', async () => {
    const realPath = await decide('d/planted.txt', createOnly);
    symlinkSync(join(outside, 'victim.txt'), join(work, 'd', 'planted.txt'));
    const target = await openWriteTarget(realPath, { method });
    try {
      await expect(target.createExclusive(Buffer.from('x'))).rejects.toMatchObject({ code: 'EEXIST' });
      await expect(target.openExclusive()).rejects.toMatchObject({ code: 'EEXIST' });
    } finally {
      target.close();
    }
    outsideUntouched();
  });

  it('never replaces a directory swapped in at the name', async () => {
    const realPath = await decide('d/victim.txt');
    rmSync(join(work, 'd', 'victim.txt'));
    mkdirSync(join(work, 'd', 'victim.txt'));
    const target = await openWriteTarget(realPath, { method });
    try {
      await expect(target.replace(Buffer.from('x'))).rejects.toMatchObject({
        code: expect.stringMatching(/^(EISDIR|ENOTEMPTY|EEXIST)$/),
      });
    } finally {
      target.close();
    }
    expect(statSync(join(work, 'd', 'victim.txt')).isDirectory()).toBe(true);
    expect(readdirSync(join(work, 'd')).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('replacing a hard link to an outside file replaces the name, never the outside content', async () => {
    rmSync(join(work, 'd', 'victim.txt'));
    linkSync(join(outside, 'victim.txt'), join(work, 'd', 'victim.txt'));
    const target = await openWriteTarget(await decide('d/victim.txt'), { method });
    try {
      await target.replace(Buffer.from('agent data\n'));
    } finally {
      target.close();
    }
    expect(readFileSync(join(work, 'd', 'victim.txt'), 'utf8')).toBe('agent data\n');
    outsideUntouched();
  });

  it('replaces atomically, keeping the permission bits, and reads what it replaces', async () => {
    chmodSync(join(work, 'd', 'victim.txt'), 0o750);
    const target = await openWriteTarget(await decide('d/victim.txt'), { method });
    try {
      expect(Buffer.from(await target.read(1024)).toString()).toBe('inside\n');
      await expect(target.read(3)).rejects.toMatchObject({ code: 'EFBIG' });
      await target.replace(Buffer.from('new\n'));
    } finally {
      target.close();
    }
    expect(readFileSync(join(work, 'd', 'victim.txt'), 'utf8')).toBe('new\n');
    expect(statSync(join(work, 'd', 'victim.txt')).mode & 0o777).toBe(0o750);
    expect(readdirSync(join(work, 'd')).sort()).toEqual(['e', 'victim.txt']);
  });
});

describe('openWriteTarget: a swap after the parent is held', () => {
  if (process.platform === 'linux') {
    it('handle: replace and create land in the directory that was decided, never behind the new link', async () => {
      const realPath = await decide('d/victim.txt');
      const target = await openWriteTarget(realPath, { method: 'handle', onParentOpened: () => swapForLink('d') });
      try {
        await target.replace(Buffer.from('agent data\n'));
      } finally {
        target.close();
      }
      outsideUntouched();
      // The write went to the directory the decision named (now renamed by the attacker).
      expect(readFileSync(join(work, 'd.moved', 'victim.txt'), 'utf8')).toBe('agent data\n');

      const created = await openWriteTarget(await decide('d.moved/e/new.txt', createOnly), {
        method: 'handle',
        onParentOpened: () => {
          renameSync(join(work, 'd.moved', 'e'), join(work, 'e.moved'));
          symlinkSync(outside, join(work, 'd.moved', 'e'));
        },
      });
      try {
        await created.createExclusive(Buffer.from('x'));
      } finally {
        created.close();
      }
      outsideUntouched();
      expect(readFileSync(join(work, 'e.moved', 'new.txt'), 'utf8')).toBe('x');
    });
  }

  it('checked-path: the swap is detected and nothing is written', async () => {
    const realPath = await decide('d/victim.txt');
    const target = await openWriteTarget(realPath, { method: 'checked-path', onParentOpened: () => swapForLink('d') });
    try {
      await expect(target.replace(Buffer.from('agent data\n'))).rejects.toMatchObject({ code: 'ECHANGED' });
      await expect(target.createExclusive(Buffer.from('x'))).rejects.toMatchObject({ code: 'ECHANGED' });
    } finally {
      target.close();
    }
    outsideUntouched();
  });
});

describe('openWriteTarget against a second process flipping a link', () => {
  it('never writes outside while another process swaps the parent for a link in a tight loop', async () => {
    const flipper = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs');
         const [dir, moved, out] = process.argv.slice(1);
         process.stdout.write('ready\\n');
         for (;;) {
           try { fs.renameSync(dir, moved); fs.symlinkSync(out, dir); } catch {}
           try { fs.unlinkSync(dir); fs.renameSync(moved, dir); } catch {}
         }`,
        join(work, 'd'),
        join(work, 'd.flip'),
        outside,
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    try {
      await new Promise<void>((resolve) => flipper.stdout.once('data', () => resolve()));
      let written = 0;
      let refused = 0;
      for (let attempt = 0; attempt < 300; attempt += 1) {
        try {
          const target = await openWriteTarget(join(work, 'd', 'victim.txt'));
          try {
            await target.replace(Buffer.from(`agent ${attempt}\n`));
            written += 1;
          } finally {
            target.close();
          }
        } catch (error) {
          // Refused (the path changed) or the directory was momentarily away: never written elsewhere.
          expect((error as NodeJS.ErrnoException).code).toMatch(/^(ECHANGED|ENOENT)$/);
          refused += 1;
        }
      }
      expect(written + refused).toBe(300);
    } finally {
      flipper.kill();
      await new Promise((resolve) => flipper.once('exit', resolve));
    }
    outsideUntouched();
    expect(existsSync(join(outside, 'victim.txt'))).toBe(true);
  });
});
