import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { processGroupMembers } from '@rho/core/testing';
import { builtinProfile, sandboxWrapper } from '@rho/permissions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBashTool } from './bash-tool.js';
import { restrictedShellGate } from './restricted-shell-gate.js';
import { call, contextFor, temporaryDirectory } from './test-support/harness.js';

// A bash call that is stopped (timeout, cancel) returns only once nothing it started is left:
// here the shell exits on SIGTERM at once, but its child ignores SIGTERM and would otherwise be
// re-parented to init and keep running (the SIGKILL timer used to be cleared when the shell's
// exit was seen).
const bash = createBashTool({ mode: 'unrestricted', killGraceSeconds: 0.5 });
let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory());
});
afterEach(async () => {
  await cleanup();
});

/** Running (not zombie) processes whose process group is `pgid`, from /proc. */
const groupMembers = (pgid: number): number[] => processGroupMembers(pgid) ?? [];

/** The shell writes its own pid (the group's id: it leads the group) and its child's, then waits. */
const command = (pidFile: string): string =>
  `(trap '' TERM; exec sleep 61.5) & echo "$$ $!" > ${pidFile}; echo started; wait`;

async function pids(pidFile: string): Promise<{ group: number; child: number }> {
  const [group, child] = (await readFile(pidFile, 'utf8')).trim().split(' ').map(Number);
  return { group: group!, child: child! };
}

describe('stopping bash kills every process it started', () => {
  it.skipIf(process.platform !== 'linux')(
    'after a timeout, even a child that ignores SIGTERM and outlives its parent',
    async () => {
      const pidFile = join(dir, 'pids');
      const result = await call(bash, { command: command(pidFile), timeout: 1 }, contextFor(dir));
      expect(result.metadata).toMatchObject({ timed_out: true, exit_code: -1 });
      const { group, child } = await pids(pidFile);
      expect(child).not.toBe(group);
      expect(groupMembers(group)).toEqual([]);
    },
  );

  it.skipIf(process.platform !== 'linux')(
    'after a cancellation, even a child that ignores SIGTERM and outlives its parent',
    async () => {
      const pidFile = join(dir, 'pids');
      const controller = new AbortController();
      const running = call(bash, { command: command(pidFile) }, contextFor(dir, controller.signal));
      // Cancel once both processes are there.
      const deadline = Date.now() + 20_000;
      while (
        !(await readFile(pidFile, 'utf8').then(
          (text) => text.trim().split(' ').length === 2,
          () => false,
        ))
      ) {
        if (Date.now() > deadline) throw new Error(`The command did not write both pids to ${pidFile}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const { group } = await pids(pidFile);
      expect(groupMembers(group).length).toBe(2);
      controller.abort();
      const result = await running;
      expect(result.metadata).toMatchObject({ cancelled: true, exit_code: -1 });
      expect(groupMembers(group)).toEqual([]);
    },
  );

  it.skipIf(process.platform !== 'linux')(
    'restricted: a sandboxed command, in a session of its own, dies with its sandbox on timeout',
    async (test) => {
      const wrapper = await sandboxWrapper();
      if (!wrapper.available) {
        if (process.env['CI'] === 'true')
          throw new Error(`CI must run the sandbox tests: ${wrapper.unavailableReason ?? ''}`);
        test.skip('bubblewrap is not available here');
      }
      // A server that accepts and never answers: curl waits until it is killed.
      const sockets: Socket[] = [];
      const server = createServer((socket) => {
        sockets.push(socket);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hang`;
      try {
        const restricted = createBashTool({
          mode: 'restricted',
          gate: restrictedShellGate(builtinProfile('readonly')!),
          killGraceSeconds: 0.5,
        });
        const running = call(restricted, { command: `curl -s ${url}`, timeout: 1 }, contextFor(dir));
        const result = await running;
        expect(result.metadata).toMatchObject({ timed_out: true });
        // curl ran in a new session inside the sandbox, so not in the group rho signalled; the
        // sandbox's PID namespace took it along.
        expect(processesNaming(url)).toEqual([]);
        expect(sockets.length).toBe(1);
      } finally {
        for (const socket of sockets) socket.destroy();
        server.close();
      }
    },
  );
});

/** Running (not zombie) processes whose command line contains `text`. */
function processesNaming(text: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z') continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes(text)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
