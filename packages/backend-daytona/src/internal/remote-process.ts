import { randomBytes } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import type { BackendProcess, ProcessExit, SpawnOptions } from '@rho/core';
import { shellJoin, shellQuote } from './shell.js';
import type { SandboxConnection } from './sandbox-connection.js';

/** Bytes of standard input a remote process may be given (it is uploaded before the process starts). */
export const MAX_REMOTE_STDIN_BYTES = 64 * 1024 * 1024;

const SIGNAL_NUMBERS: Record<string, number> = { SIGTERM: 15, SIGKILL: 9 };

/**
 * Starts `options.argv` in the sandbox as the leader of a new process group, in a Daytona session
 * of its own, and returns at once. The command runs asynchronously (`runAsync`), so there is a
 * command id to wait on and a process group to kill:
 *
 * - the wrapper script records its pid (= the group id, thanks to `setsid`) in a file under
 *   `/tmp`, then `exec`s the program with the exact environment asked for;
 * - `kill()` signals the whole group remotely (`kill -SIG -- -PGID`), which reaches everything
 *   the command started, as the local backend does;
 * - the exit status is polled (`GET .../command/{id}`), then the logs are fetched once and handed
 *   to the `stdout`/`stderr` streams.
 *
 * Standard input from another process (a pipeline of the restricted shell) is read to its end,
 * uploaded to a file and redirected: remote pipeline stages run one after the other, not
 * concurrently (see the package README).
 */
export function spawnRemote(connection: SandboxConnection, options: SpawnOptions): BackendProcess {
  const id = randomBytes(8).toString('hex');
  const sessionId = `rho-${id}`;
  const pidFile = `/tmp/.rho-${id}.pid`;
  const stdinFile = `/tmp/.rho-${id}.stdin`;
  const stdoutMode = options.stdout ?? 'pipe';
  const stderrMode = options.stderr ?? 'pipe';
  const stdout = stdoutMode === 'pipe' ? new PassThrough() : null;
  const stderr = stderrMode === 'pipe' ? new PassThrough() : null;

  let resolveExit: (exit: ProcessExit) => void = () => {};
  const exited = new Promise<ProcessExit>((resolve) => {
    resolveExit = resolve;
  });
  let started = false;
  let finished = false;
  let groupGone = false;
  let killedWith: 'SIGTERM' | 'SIGKILL' | undefined;
  let pendingKill: 'SIGTERM' | 'SIGKILL' | undefined;
  let watching = false;

  // The group id is in the pid file once the wrapper ran; before that (or after a refusal) the
  // scripts print `wait`, and the caller looks again while the command has not finished.
  const groupScript = (action: string): string =>
    `pg=$(cat ${pidFile} 2>/dev/null); case "$pg" in ''|*[!0-9]*) echo wait; exit 0;; esac; ${action}`;

  const signalGroup = (signal: 'SIGTERM' | 'SIGKILL'): void => {
    const send = async (): Promise<void> => {
      while (!finished && !connection.closed) {
        const result = await connection.exec(
          groupScript(`kill -s ${signal.slice(3)} -- -"$pg" 2>/dev/null; echo sent`),
        );
        if (result.output.trim() !== 'wait') break;
        await connection.pause(50);
      }
      watchGroup();
    };
    connection.track(send().catch(() => undefined));
  };

  /** After a kill: looks whether the group is still there until it is gone, for `groupAlive()`. */
  const watchGroup = (): void => {
    if (watching || groupGone) return;
    watching = true;
    const look = async (): Promise<void> => {
      while (!groupGone && !connection.closed) {
        const result = await connection.exec(groupScript('kill -0 -- -"$pg" 2>/dev/null && echo alive || echo gone'));
        const answer = result.output.trim();
        if (answer === 'gone' || (answer === 'wait' && finished)) {
          groupGone = true;
          break;
        }
        await connection.pause(100);
      }
    };
    connection.track(look().catch(() => (groupGone = true)));
  };

  const finish = (exit: ProcessExit, output?: { stdout: string; stderr: string }): void => {
    if (finished) return;
    finished = true;
    if (output !== undefined) {
      if (stdout !== null) stdout.write(output.stdout);
      if (stderr !== null) stderr.write(output.stderr);
    }
    stdout?.end();
    stderr?.end();
    resolveExit(exit);
  };

  const run = async (): Promise<void> => {
    const [program] = options.argv;
    if (program === undefined) {
      finish(spawnFailure('EINVAL', 'Empty argv: nothing to run'));
      return;
    }
    let stdinRedirect = '< /dev/null';
    if (options.stdin !== undefined && options.stdin !== 'ignore') {
      const input = await readAll(options.stdin, MAX_REMOTE_STDIN_BYTES);
      await connection.sandbox.fs.uploadFile(input, stdinFile);
      stdinRedirect = `< ${stdinFile}`;
    }
    const environment =
      options.env === undefined ? '' : `env -i ${shellJoin(connection.environmentWords(options.env))} `;
    const redirects = [
      stdoutMode === 'ignore' ? '> /dev/null' : '',
      stderrMode === 'ignore' ? '2> /dev/null' : stderrMode === 'stdout' ? '2>&1' : '',
    ].join(' ');
    // Inside the new session: refuse a missing directory or program the way spawn(2) would
    // (recorded in the pid file, exit 127), else record the group id and become the program.
    const inner =
      `cd ${shellQuote(options.cwd)} 2>/dev/null || { echo ENOENT:cwd > ${pidFile}; exit 127; }; ` +
      `command -v ${shellQuote(program)} > /dev/null 2>&1 || { echo ENOENT:program > ${pidFile}; exit 127; }; ` +
      `echo $$ > ${pidFile}; exec ${environment}${shellJoin(options.argv)} ${stdinRedirect} ${redirects}`;
    // A shell reports a command killed by a signal on its stderr ("Terminated"), which would land
    // in the program's output: the program runs in the background of an intermediate shell whose
    // own stderr is /dev/null (the program's is the session's, passed as fd 3). The intermediate
    // shell is outside the new process group, so it survives a kill and exits with 128 + signal.
    const intermediate = `setsid --wait sh -c ${shellQuote(inner)} 2>&3 3>&- & wait $!`;
    const command = `sh -c ${shellQuote(intermediate)} 3>&2 2>/dev/null`;
    await connection.sandbox.process.createSession(sessionId);
    connection.sessions.add(sessionId);
    const response = await connection.sandbox.process.executeSessionCommand(sessionId, {
      command,
      runAsync: true,
    });
    started = true;
    if (pendingKill !== undefined) signalGroup(pendingKill);
    let pause = connection.pollIntervalMs;
    let exitCode: number | undefined;
    for (;;) {
      const status = await connection.sandbox.process.getSessionCommand(sessionId, response.cmdId);
      if (status.exitCode !== undefined && status.exitCode !== null) {
        exitCode = status.exitCode;
        break;
      }
      if (connection.closed) break;
      await connection.pause(pause);
      pause = Math.min(pause * 1.5, 1000);
    }
    const logs = await connection.sandbox.process.getSessionCommandLogs(sessionId, response.cmdId);
    let exit: ProcessExit;
    if (exitCode === undefined) {
      exit = { exitCode: null, signal: 'SIGKILL' };
    } else if (exitCode === 127) {
      const marker = (await connection.exec(`cat ${pidFile} 2>/dev/null`)).output.trim();
      exit = marker.startsWith('ENOENT:')
        ? spawnFailure(
            'ENOENT',
            marker === 'ENOENT:cwd'
              ? `spawn ${program}: working directory ${options.cwd} not found`
              : `spawn ${program} ENOENT`,
          )
        : { exitCode, signal: null };
    } else if (killedWith !== undefined && exitCode > 128) {
      // The group was signalled: report it as a signal, as the local backend does.
      const number = exitCode - 128;
      const signal = Object.entries(SIGNAL_NUMBERS).find(([, value]) => value === number)?.[0] ?? killedWith;
      exit = { exitCode: null, signal };
    } else {
      exit = { exitCode, signal: null };
    }
    finish(exit, { stdout: logs.stdout ?? '', stderr: logs.stderr ?? '' });
    // Cleaned up in the background: the result does not wait for it.
    connection.track(
      connection
        .exec(`rm -f ${pidFile} ${stdinFile}`)
        .then(() => connection.sandbox.process.deleteSession(sessionId))
        .then(() => connection.sessions.delete(sessionId)),
    );
  };

  run().catch((error: unknown) => {
    const failure: NodeJS.ErrnoException = Object.assign(
      new Error(`Daytona sandbox: ${error instanceof Error ? error.message : String(error)}`),
      { code: 'EIO' },
    );
    finish({ exitCode: null, signal: null, spawnError: failure });
  });

  return {
    pid: undefined,
    stdout: stdout as Readable | null,
    stderr: stderr as Readable | null,
    exited,
    kill(signal) {
      if (finished && groupGone) return;
      killedWith = signal;
      if (!started) {
        pendingKill = signal;
        return;
      }
      signalGroup(signal);
    },
    groupAlive: () => !(groupGone || (finished && killedWith === undefined)),
  };
}

function spawnFailure(code: string, message: string): ProcessExit {
  return { exitCode: null, signal: null, spawnError: Object.assign(new Error(message), { code }) };
}

async function readAll(stream: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    total += buffer.length;
    if (total > limit) {
      stream.destroy();
      throw new Error(`standard input larger than ${limit} bytes`);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks, total);
}
