// bench/writes: the cost of a write decided once and used once (issue 14). Per write, in the same
// run: the old route (a path-based atomic replace by the local backend, which resolves the path
// again), the new use alone (openWriteTarget: `/` and every directory opened link-free, then the
// replace relative to the held parent), and the whole tool path (checkWritePath + openWriteTarget).
// Printed as ratios against the old route; a write is a few system calls either way.
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalBackend } from '@rho/core';
import { builtinProfile, checkWritePath, openWriteTarget } from '@rho/permissions';

const ROUNDS = 7;
const WRITES = 200;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-bench-writes-')));
const work = join(root, 'work');
const deep = join(work, 'a', 'b', 'c', 'd');
mkdirSync(deep, { recursive: true });
const target = join(deep, 'file.txt');
const data = Buffer.from('x'.repeat(4096));
const backend = createLocalBackend();
const profile = builtinProfile('developer');

const fresh = join(deep, 'fresh.txt');
const { unlink } = await import('node:fs/promises');
const cases = {
  'old: backend.createExclusive(path) + unlink': async () => {
    await backend.createExclusive(fresh, data);
    await unlink(fresh);
  },
  'new: openWriteTarget + createExclusive + remove': async () => {
    const handle = await openWriteTarget(fresh);
    try {
      await handle.createExclusive(data);
      await handle.remove();
    } finally {
      handle.close();
    }
  },
  'old: backend.writeFileAtomic(path)': async () => backend.writeFileAtomic(target, data),
  'new: openWriteTarget + replace': async () => {
    const handle = await openWriteTarget(target);
    try {
      await handle.replace(data);
    } finally {
      handle.close();
    }
  },
  'new: checkWritePath + openWriteTarget + replace': async () => {
    const decision = await checkWritePath('a/b/c/d/file.txt', { profile, workingDir: work });
    if (!decision.allowed) throw new Error(decision.reason);
    const handle = await openWriteTarget(decision.realPath);
    try {
      await handle.replace(data);
    } finally {
      handle.close();
    }
  },
};

const results = {};
for (let round = 0; round < ROUNDS; round += 1) {
  for (const [name, write] of Object.entries(cases)) {
    const started = performance.now();
    for (let index = 0; index < WRITES; index += 1) await write();
    (results[name] ??= []).push((performance.now() - started) / WRITES);
  }
}
rmSync(root, { recursive: true, force: true });
console.log(`median per write of 4 KB, ${WRITES} writes x ${ROUNDS} rounds, 5 directories deep below ${tmpdir()}`);
console.log(
  '(create: no fsync, so the walk shows; replace: both fsync the temporary file, which dominates and varies)',
);
for (const [name, values] of Object.entries(results)) {
  const baseline = median(
    results[
      name.includes('create') ? 'old: backend.createExclusive(path) + unlink' : 'old: backend.writeFileAtomic(path)'
    ],
  );
  const value = median(values);
  console.log(`  ${name.padEnd(50)} ${(value * 1000).toFixed(0).padStart(6)} µs   x${(value / baseline).toFixed(2)}`);
}
