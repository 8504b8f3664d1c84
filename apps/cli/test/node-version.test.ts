// rho started on a Node older than its floor says so in one line and exits 2, before loading
// anything that would fail with a stack trace. Run for real with an older Node when the machine
// has one (RHO_TEST_OLD_NODE, or a system `node` below 22), skipped with the reason otherwise.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MIN_NODE, unsupportedNodeMessage } from '../src/node-version.js';

const bin = fileURLToPath(new URL('../dist/bin.js', import.meta.url));

/** A Node binary older than 22 on this machine, with its version, or undefined. */
function olderNode(): { path: string; version: string } | undefined {
  const candidates = [
    ...(process.env.RHO_TEST_OLD_NODE === undefined ? [] : [process.env.RHO_TEST_OLD_NODE]),
    '/usr/bin/node',
    '/usr/local/bin/node',
    ...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'node')),
  ];
  for (const path of new Set(candidates)) {
    if (!existsSync(path)) continue;
    const out = spawnSync(path, ['--version'], { encoding: 'utf8' });
    const major = Number(/^v(\d+)\./.exec(out.stdout ?? '')?.[1]);
    if (out.status === 0 && major < 22) return { path, version: out.stdout.trim() };
  }
  return undefined;
}

const old = olderNode();

describe('the Node version rho needs', () => {
  it('is the floor every package.json declares', () => {
    for (const manifest of ['../package.json', '../../../package.json', '../../../packages/core/package.json']) {
      const { engines } = JSON.parse(readFileSync(new URL(manifest, import.meta.url), 'utf8')) as {
        engines: { node: string };
      };
      expect(engines.node).toBe(`>=${MIN_NODE.major}.${MIN_NODE.minor}`);
    }
    expect(unsupportedNodeMessage('22.14.0', '/x/node')).toMatch(/needs Node\.js 22\.15 or newer.*22\.14\.0/);
    expect(unsupportedNodeMessage('20.19.0', '/x/node')).toMatch(/this is Node\.js 20\.19\.0 \(\/x\/node\)/);
    expect(unsupportedNodeMessage('22.15.0', '/x/node')).toBeUndefined();
    expect(unsupportedNodeMessage('24.0.0', '/x/node')).toBeUndefined();
  });

  it.skipIf(old === undefined)(
    `rho --version on ${old?.version ?? 'an older Node (skipped: none on this machine; set RHO_TEST_OLD_NODE to one)'} prints one line saying what to do and exits 2`,
    () => {
      for (const args of [['--version'], ['--help'], ['ps']]) {
        const run = spawnSync(old!.path, [bin, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH } });
        expect(run.status).toBe(2);
        expect(run.stdout).toBe('');
        const lines = run.stderr.trimEnd().split('\n');
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(
          new RegExp(
            `^rho: needs Node\\.js 22\\.15 or newer, and this is Node\\.js ${old!.version.slice(1)} .*Install Node\\.js 22 or 24`,
          ),
        );
      }
    },
  );
});
