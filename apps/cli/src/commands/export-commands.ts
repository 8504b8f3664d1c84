import type { Argv } from 'yargs';
import type { Terminal } from '../terminal.js';
import type { TranscriptChanges } from '../transcript/transcript.js';

/** Arguments of `rho export`. */
export interface ExportArguments {
  session: string;
  output?: string;
  dir?: string;
  /** `atif` (default), `patch` (an isolated session's final diff alone), `md` or `html` (a readable transcript). */
  format?: string;
  /** `--fleet URL` (global): a session not on this machine is exported from the fleet's mirror. */
  fleet?: string;
}

/**
 * Registers `rho export ID|PREFIX|latest|DIR [-o FILE] [--dir SESSIONS_DIR]`: a session's trace as
 * an ATIF-v1.6 trajectory (Harbor's Agent Trajectory Interchange Format), its final diff, or a
 * readable transcript (Markdown or HTML), to stdout or to a new file. The runtime is loaded only when the command runs, so `rho --help` stays fast.
 */
export function registerExportCommands(
  parser: Argv,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
  setExit: (code: number) => void,
): Argv {
  return parser.command(
    'export <session>',
    'Export a session as an ATIF-v1.6 trajectory (JSON) for training and evaluation',
    (command) =>
      command
        .positional('session', {
          type: 'string',
          demandOption: true,
          describe: 'Session id, unique id prefix, "latest", or a session directory (also one of the Python rho-agent)',
        })
        .option('output', {
          alias: 'o',
          type: 'string',
          describe: 'Write the trajectory to this file instead of stdout (never overwrites)',
        })
        .option('dir', { alias: 'd', type: 'string', describe: 'Sessions directory (default: $RHO_HOME/sessions)' })
        .option('format', {
          type: 'string',
          choices: ['atif', 'patch', 'md', 'html'],
          default: 'atif',
          describe:
            "atif (the trajectory, with an isolated session's final diff in extra.final_diff), patch (that diff alone, for git apply), md or html (a readable transcript for a bug report or a pull request)",
        }),
    async (argv) => {
      setExit(await exportCommand(argv as unknown as ExportArguments, terminal, env));
    },
  );
}

/** Runs `rho export`; returns the exit code (0, or 2 with a message on stderr for bad input). */
export async function exportCommand(
  argv: ExportArguments,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const { existsSync } = await import('node:fs');
  const { isDiskFault, writeNewFileWhole } = await import('../output-file.js');
  const { join, resolve } = await import('node:path');
  const { EXIT } = await import('../exit-codes.js');
  const { SessionNotFoundError, SessionStore, SessionWriteError, TraceError, rhoHome } = await import('@rho/core');
  const { sessionToAtif, traceToAtif } = await import('@rho/core/atif');
  const { resolveSessionWithRhoAgent } = await import('@rho/core/internal');
  const fail = (message: string): number => {
    terminal.stderr.write(`rho: ${message}\n`);
    return EXIT.badInput;
  };

  const explicitDir = argv.dir !== undefined && argv.dir !== '';
  const sessionsDir = explicitDir ? resolve(argv.dir!) : join(rhoHome(env), 'sessions');
  const version = (await import('../cli-files.js')).cliVersion();
  let directory: string | undefined;
  let notFound: Error | undefined;
  try {
    const store = new SessionStore(sessionsDir);
    // Without --dir, sessions of the Python rho-agent (~/.config/rho-agent/sessions) are found too.
    directory = explicitDir ? store.resolve(argv.session) : resolveSessionWithRhoAgent(store, argv.session).directory;
  } catch (error) {
    // A session directory named without a path (`rho export my-session` from its parent) is still a directory.
    const local = resolve(argv.session);
    if (SessionNotFoundError.isInstance(error) && existsSync(join(local, 'trace.jsonl'))) directory = local;
    else if (SessionNotFoundError.isInstance(error)) notFound = error;
    else throw error;
  }

  // A trace written before rho redacted its records (or with other secrets) is redacted here.
  const { processSecretsRedactor } = await import('../known-secrets.js');
  const redact = await processSecretsRedactor(env, rhoHome(env));
  // What an isolated session changed in its workspace (@rho/workspace loads only for one).
  const workspace = directory === undefined ? undefined : await workspaceDiff(directory);
  const finalDiff = typeof workspace === 'string' ? undefined : workspace;
  let json: string;
  try {
    if (argv.format === 'patch') {
      if (finalDiff === undefined)
        return fail(
          typeof workspace === 'string'
            ? `No patch of session ${argv.session}: ${workspace}`
            : `Session ${argv.session} kept no record of the files it changed (no isolated workspace, no checkpoints), so no patch: run with --workspace isolated.`,
        );
      json = finalDiff.patch;
    } else if ((argv.format === 'md' || argv.format === 'html') && directory !== undefined) {
      const { readFileSync } = await import('node:fs');
      const { basename } = await import('node:path');
      const { readSessionMeta } = await import('@rho/core/internal');
      const { renderTranscript } = await import('../transcript/render-transcript.js');
      let trace: string;
      try {
        trace = readFileSync(join(directory, 'trace.jsonl'), 'utf8');
      } catch (error) {
        return fail(
          `No readable trace.jsonl in ${directory}: ${(error as Error).message}. Only sessions that ran a task can be exported.`,
        );
      }
      json = renderTranscript(trace, argv.format, {
        sessionId: basename(directory),
        meta: readSessionMeta(directory) ?? {},
        ...(finalDiff === undefined ? {} : { changes: finalDiff }),
        redact,
      });
    } else if (directory !== undefined) {
      // A session of this machine: its own trace is the source of truth; its final diff goes in
      // the root's `extra` (ATIF's custom metadata), which the schema leaves free.
      const trajectory = sessionToAtif(directory, { agentVersion: version });
      if (finalDiff !== undefined) trajectory.extra = { ...trajectory.extra, final_diff: finalDiff };
      json = `${JSON.stringify(redact(trajectory), null, 2)}\n`;
    } else {
      // Not here: with a fleet configured, from the records it mirrored (from any node).
      const { operatorFleetConfig } = await import('../fleet/operator-fleet.js');
      const config = explicitDir ? undefined : await operatorFleetConfig(argv.fleet, env);
      if (config === undefined) return fail(notFound!.message);
      const { openFleetSessionSource } = await import('@rho/fleet');
      const fleet = await openFleetSessionSource(config, { maxConnections: 2, connectTimeoutSeconds: 5 });
      try {
        let session;
        try {
          session = await fleet.resolve(argv.session);
        } catch (error) {
          // Several candidates is worth saying as is; none means the local message stands.
          if (SessionNotFoundError.isInstance(error) && error.candidates.length === 0) return fail(notFound!.message);
          throw error;
        }
        const trace = await fleet.readTrace(session.id);
        if (argv.format === 'md' || argv.format === 'html') {
          const { renderTranscript } = await import('../transcript/render-transcript.js');
          json = renderTranscript(trace, argv.format, {
            sessionId: session.id,
            meta: { id: session.id, ...(session.model === undefined ? {} : { model: session.model }) },
            redact,
          });
        } else {
          // The records the fleet mirrored, in sequence order: the trajectory its own node would export.
          const trajectory = traceToAtif(trace, {
            agentVersion: version,
            sessionId: session.id,
            ...(session.model === undefined ? {} : { model: session.model }),
          });
          json = `${JSON.stringify(redact(trajectory), null, 2)}\n`;
        }
      } finally {
        await fleet.close();
      }
    }
  } catch (error) {
    if (TraceError.isInstance(error)) return fail(error.message);
    throw error;
  }

  if (argv.output === undefined || argv.output === '' || argv.output === '-') {
    terminal.stdout.write(json);
    return EXIT.completed;
  }
  const target = resolve(argv.output);
  try {
    // Exclusive create: an existing file is never overwritten; a write that fails leaves no file.
    writeNewFileWhole(target, json);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST')
      return fail(`${target} already exists; choose another file or remove it first (export never overwrites).`);
    // A full disk is not a mistake in the command: it failed (exit 1), and nothing is left behind.
    if (isDiskFault(error)) {
      terminal.stderr.write(
        `rho: ${SessionWriteError.from(target, error, 'Nothing was written; free space and export again.').message}\n`,
      );
      return EXIT.failed;
    }
    return fail(
      `Cannot write ${target}: ${(error as Error).message}. Check that its directory exists and is writable.`,
    );
  }
  terminal.stderr.write(`Written to ${target}\n`);
  return EXIT.completed;
}

/**
 * The final diff of a session (an isolated workspace's, what it applied, or an in-place run's
 * since its first checkpoint: `rho diff`'s), or why there is none; undefined for a session that
 * kept no record of its files (@rho/workspace loads only for one that did).
 */
async function workspaceDiff(directory: string): Promise<(TranscriptChanges & { patch: string }) | string | undefined> {
  const { existsSync } = await import('node:fs');
  const { join } = await import('node:path');
  if (!existsSync(join(directory, 'workspace.json')) && !existsSync(join(directory, 'checkpoints.git')))
    return undefined;
  const { sessionDiff, workspaceSessionAt } = await import('./workspace-actions.js');
  const { WorkspaceUsageError } = await import('@rho/workspace');
  try {
    const diff = await sessionDiff(await workspaceSessionAt(directory));
    return { files: diff.files, stats: { ...diff.stats }, patch: diff.patch };
  } catch (error) {
    if (WorkspaceUsageError.isInstance(error)) return error.message;
    throw error;
  }
}
