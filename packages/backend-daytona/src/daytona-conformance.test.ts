import { sandboxWrapper } from '@rho/permissions';
import { runBackendConformance } from '@rho/tools-fs/testing';
import { afterAll, expect } from 'vitest';
import { createDaytonaBackend } from './index.js';
import { startFakeDaytona, type FakeDaytona } from './testing/index.js';

// The file and shell tools' conformance suite (the one `local` and `sandbox` pass), run against
// the daytona backend: the real @daytonaio/sdk talking to the fake Daytona API, which runs the
// commands and file operations for real in a directory that plays the sandbox.
// The fake runs the sandbox's commands under bubblewrap: without it the suite is skipped, except
// in CI, where it must run.
const runnable = (await sandboxWrapper()).available || process.env['CI'] === 'true';
let fake: FakeDaytona | undefined;

if (runnable) {
  runBackendConformance(
    'daytona (SDK against the fake Daytona API)',
    async () => {
      fake = await startFakeDaytona();
      const backend = await createDaytonaBackend({ apiKey: fake.apiKey, apiUrl: fake.apiUrl, environment: {} });
      const workingDir = '/home/daytona/conformance';
      await backend.mkdir(workingDir, { recursive: true });
      return { backend, workingDir };
    },
    { testTimeoutMs: 120_000 },
  );

  afterAll(async () => {
    await fake?.close();
    // Every endpoint the SDK called is one the fake implements.
    expect(fake?.unknownRoutes).toEqual([]);
  });
}
