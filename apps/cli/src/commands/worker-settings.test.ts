import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@rho/core';
import { readConfigFile } from '@rho/core/internal';
import { describe, expect, it } from 'vitest';
import { workerSettings } from './worker-settings.js';

describe('the worker: settings of $RHO_HOME/config.yaml', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'rho-worker-settings-')), 'config.yaml');
  const read = (lines: string[]) => {
    writeFileSync(path, `${lines.join('\n')}\n`);
    const source = readConfigFile(path)!;
    return () => workerSettings((source.value as { worker: unknown }).worker, source);
  };

  it('reads the allowlist', () => {
    expect(read(['worker:', '  allow_profiles: [readonly, developer]', '  allow_dirs:', '    - /srv/work'])()).toEqual({
      profiles: ['readonly', 'developer'],
      dirs: ['/srv/work'],
    });
    expect(workerSettings(undefined, path)).toEqual({});
    expect(workerSettings({ allow_endpoints: null }, path)).toEqual({});
  });

  it('names the file, the key and its line of a wrong value, list items too', () => {
    const error = (() => {
      try {
        read(['fleet: {url: "postgres://db/rho"}', 'worker:', '  allow_dirs:', '    - /srv/work', '    - ""'])();
      } catch (caught) {
        return caught as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(error.message).toBe(`${path}:5: 'worker.allow_dirs[1]' must be a non-empty string (got "").`);
    expect(error).toMatchObject({ file: path, field: 'worker.allow_dirs[1]', line: 5 });
    expect(read(['worker:', '  allow_profile: [readonly]'])).toThrow(
      `${path}:2: 'worker.allow_profile' is an unknown key (worker knows allow_profiles, allow_dirs, allow_endpoints).`,
    );
    expect(read(['worker:', '  allow_endpoints: http://127.0.0.1:8000/v1'])).toThrow(
      `${path}:2: 'worker.allow_endpoints' must be a list of non-empty strings (got "http://127.0.0.1:8000/v1").`,
    );
    expect(read(['worker: [readonly]'])).toThrow(
      `${path}:1: 'worker' must be a mapping such as {allow_profiles: [readonly], allow_dirs: [/srv/work]} (got ["readonly"]).`,
    );
    // Without the document (the user config as loaded today): the file, the key, no line.
    expect(() => workerSettings({ allow_dirs: 'x' }, path)).toThrow(
      `${path}: 'worker.allow_dirs' must be a list of non-empty strings (got "x").`,
    );
  });
});
