import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalBackend } from '@rho/core';
import { runBackendConformance } from './testing/backend-conformance.js';

// The reference run of the conformance suite: the local backend defines the behaviour every other
// backend (sandbox, daytona) must match.
runBackendConformance('local', async () => {
  const workingDir = await realpath(await mkdtemp(join(tmpdir(), 'rho-conformance-local-')));
  return {
    backend: createLocalBackend(),
    workingDir,
    cleanup: () => rm(workingDir, { recursive: true, force: true }),
  };
});
