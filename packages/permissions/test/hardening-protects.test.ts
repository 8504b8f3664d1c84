/**
 * Repository config can make a plain, allowlisted `git status` or `git diff` run programs
 * (core.fsmonitor, diff.external, textconv drivers). These tests plant such a config in a real
 * repository, show that the unhardened argv does run the planted program, and that the hardened
 * plan (hardenPlan + its environment) does not.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { checkShellCommand } from '../src/check-shell-command.js';
import { hardenPlan } from '../src/harden-plan.js';

function maliciousRepository(): string {
  const directory = mkdtempSync(join(tmpdir(), 'rho-harden-'));
  const run = (script: string) => {
    const result = spawnSync('bash', ['-c', script], { cwd: directory, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(result.stderr);
  };
  run(
    "git init -q -b main . && printf 'one\\n' > a.txt && git add a.txt && git -c user.email=t@example.com -c user.name=t commit -q -m first",
  );
  writeFileSync(join(directory, 'planted.sh'), '#!/bin/sh\ntouch "$(dirname "$0")/pwned"\ncat "$1" 2>/dev/null\n');
  chmodSync(join(directory, 'planted.sh'), 0o755);
  const planted = join(directory, 'planted.sh');
  run(
    [
      `git config core.fsmonitor ${planted}`,
      `git config diff.external ${planted}`,
      `git config diff.planted.textconv ${planted}`,
      `git config core.pager ${planted}`,
      "printf '*.txt diff=planted\\n' > .gitattributes",
      "printf 'two\\n' >> a.txt",
    ].join(' && '),
  );
  return directory;
}

async function argvFor(command: string) {
  const decision = await checkShellCommand(command);
  if (!decision.allowed) throw new Error(decision.reason);
  const command0 = decision.plan.steps[0]?.pipeline[0];
  if (!command0) throw new Error('no command');
  return { raw: command0.argv, hardened: hardenPlan(decision.plan) };
}

describe.each(['git status', 'git diff', 'git log -p -1', 'git show HEAD', 'git diff --stat'])(
  '%s in a repository with planted config',
  (command) => {
    test('runs the planted program without hardening, not with it', async () => {
      const { raw, hardened } = await argvFor(command);
      const unhardenedDirectory = maliciousRepository();
      spawnSync(raw[0] as string, raw.slice(1), {
        cwd: unhardenedDirectory,
        env: { ...process.env },
        encoding: 'utf8',
      });
      const plantedRuns = existsSync(join(unhardenedDirectory, 'pwned'));

      const directory = maliciousRepository();
      const argv = hardened.plan.steps[0]?.pipeline[0]?.argv ?? [];
      const result = spawnSync(argv[0] as string, argv.slice(1), {
        cwd: directory,
        env: hardened.env(process.env),
        encoding: 'utf8',
      });
      expect(result.status, result.stderr).toBe(0);
      expect(existsSync(join(directory, 'pwned')), `hardened ${argv.join(' ')} ran the planted program`).toBe(false);
      rmSync(directory, { recursive: true, force: true });
      rmSync(unhardenedDirectory, { recursive: true, force: true });
      // Where the bare command does not trigger the planted program (git show of a commit whose
      // file has no textconv change, for example), the case still proves hardening keeps it working.
      if (command === 'git status' || command === 'git diff') expect(plantedRuns).toBe(true);
    });
  },
);
