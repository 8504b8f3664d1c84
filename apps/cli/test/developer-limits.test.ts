import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatMessage } from '@rho/core';
import { startLoopbackServer, type LoopbackServer } from '@rho/core/testing';
import { sandboxWrapper } from '@rho/permissions';
import { afterEach, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

// Issue 32, item 3: "every sandbox has limits". The developer profile's bash runs in the sandbox
// too (the read view); it now runs under the profile's limits as the restricted shell's lines do,
// and a limit reached is named in the result.
const bubblewrap = (await sandboxWrapper()).available;
if (!bubblewrap && process.env['CI'] === 'true') throw new Error('CI must run the sandbox limit tests');

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe.skipIf(!bubblewrap)('limits of the developer shell', () => {
  it('hold the processes of a developer bash command, and the result names the limit', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-dev-limits-')));
    const work = join(root, 'work');
    mkdirSync(work);
    writeFileSync(
      join(work, 'dev.yaml'),
      'profile: dev-few\nshell: unrestricted\nfile_write: full\napproval: none\nlimits:\n  pids: 8\n',
    );
    const marker = `rho-dev-pids-${process.pid}-${Date.now()}`;
    server = await startLoopbackServer({
      steps: [
        {
          type: 'response',
          toolCalls: [
            {
              name: 'bash',
              arguments: JSON.stringify({
                command: `for i in $(seq 1 30); do tail -f /dev/null ${marker} & done; sleep 3; kill $(jobs -p) 2>/dev/null; wait`,
                timeout: 20,
              }),
            },
          ],
        },
        { type: 'response', text: 'Done.' },
      ],
    });
    let most = 0;
    const sampler = setInterval(() => {
      const listing = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
      most = Math.max(
        most,
        listing.split('\n').filter((line) => line.startsWith('tail ') && line.includes(marker)).length,
      );
    }, 100);
    const outcome = await runRho(['--base-url', server.url, '--profile', join(work, 'dev.yaml'), 'Go.'], {
      env: { RHO_HOME: join(root, 'home') },
      cwd: work,
    }).finally(() => clearInterval(sampler));
    expect(outcome.code, outcome.stderr).toBe(0);
    const last = server.requests.at(-1)!.body as { messages: ChatMessage[] };
    const result = String(last.messages.find((message) => message.role === 'tool')?.content);
    expect(result).toContain('process limit reached (pids 8)');
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThan(8);
  });
});
