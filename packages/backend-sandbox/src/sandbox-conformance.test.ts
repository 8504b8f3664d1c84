import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandboxWrapper } from '@rho/permissions';
import { runBackendConformance } from '@rho/tools-fs/testing';
import { describe, it } from 'vitest';
import { createSandboxBackend } from './sandbox-backend.js';

// The conformance suite of the file and shell tools (the one `local` defines) against the sandbox.
const wrapper = await sandboxWrapper();
if (wrapper.available) {
  runBackendConformance('sandbox', async () => {
    const workingDir = await realpath(await mkdtemp(join(tmpdir(), 'rho-conformance-sandbox-')));
    return {
      backend: await createSandboxBackend({ workingDir }),
      workingDir,
      cleanup: () => rm(workingDir, { recursive: true, force: true }),
    };
  });
} else {
  describe('execution backend conformance: sandbox', () => {
    // CI installs bubblewrap: there, a missing sandbox is a failure, not a skip.
    it.skipIf(process.env['CI'] !== 'true')('needs bubblewrap', () => {
      throw new Error(`bubblewrap is not available: ${wrapper.unavailableReason}`);
    });
  });
}
