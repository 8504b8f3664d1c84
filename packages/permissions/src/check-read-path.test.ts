import { describe, expect, it } from 'vitest';
import { checkReadPath } from './check-read-path.js';

describe('checkReadPath', () => {
  it('refuses /proc by default, with the rule and what to do instead', () => {
    for (const path of [
      '/proc',
      '/proc/',
      '/proc/self/environ',
      '/proc/1/cmdline',
      '/proc/12/fd/3',
      '/proc/sys/kernel/hostname',
      '/proc/cpuinfo/../self/environ',
    ]) {
      const decision = checkReadPath(path);
      expect(decision.allowed, path).toBe(false);
      if (!decision.allowed) {
        expect(decision.rule).toBe('read.proc');
        expect(decision.reason).toMatch(/use the bash tool/);
      }
    }
  });

  it('reads the machine-wide files of /proc and everything outside it', () => {
    for (const path of [
      '/proc/cpuinfo',
      '/proc/meminfo',
      '/proc/loadavg',
      '/etc/hostname',
      '/home/me/proc/self/environ',
      '/procfs/x',
    ])
      expect(checkReadPath(path).allowed, path).toBe(true);
  });
});
