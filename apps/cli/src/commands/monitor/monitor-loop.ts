import { createInterface } from 'node:readline';
import yargs from 'yargs';
import { SessionStore } from '@rho/core';
import { createDirectorySource } from '@rho/monitor';
import type { Argv } from 'yargs';
import type { MonitorConsole } from '../monitor-commands.js';
import type { MonitorIo } from './monitor-io.js';
import { didYouMean } from '../../did-you-mean.js';
import { psAction } from './monitor-actions.js';
import { splitWords } from './split-words.js';

/** `registerMonitorCommands`, passed in by it (so the two modules do not import each other). */
export type RegisterCommands = (
  parser: Argv,
  terminal: MonitorIo['terminal'],
  env: NodeJS.ProcessEnv,
  setExit: (code: number) => void,
  monitorConsole: MonitorConsole,
) => Argv;

/** Words the console completes (the commands, their aliases, and its own). */
const COMMANDS = [
  'ps',
  'watch',
  'cancel',
  'kill',
  'pause',
  'resume',
  'unpause',
  'directive',
  'approvals',
  'approve',
  'deny',
  'connect',
  'help',
  'quit',
] as const;

/**
 * `rho monitor [DIR]`: an interactive loop over the sessions in DIR. Each line is parsed by the
 * same yargs commands as `rho ps`, `rho watch`, `rho cancel`... (so options, quoting and messages
 * are the same), acting on DIR. Session ids complete with Tab. Ctrl+C while watching (or while a
 * coordinator runs) stops that, never an agent; Ctrl+C at the prompt, Ctrl+D or `quit` leaves.
 */
export async function monitorLoop(
  directory: string,
  io: MonitorIo,
  register: RegisterCommands,
  input: NodeJS.ReadableStream = process.stdin,
  fleet?: string,
): Promise<number> {
  // Before the line reader exists, so piped commands wait in the stream while the fleet answers.
  // `fleet`: the console's commands work on the fleet (a url), or never on one (''), whatever the environment says.
  const viaFleet = fleet !== undefined && fleet !== '';
  io.out(`rho monitor: ${viaFleet ? 'the fleet' : directory}\nType help for commands.\n\n`);
  if (!viaFleet) await psAction(createDirectorySource(directory), { json: false, limit: 50 }, io);
  else
    await runConsoleLine('ps', { directory, io, register, signal: new AbortController().signal, fleet }).catch(
      (error: unknown) => io.err(`${error instanceof Error ? error.message : String(error)}\n`),
    );
  const interactive = (input as { isTTY?: boolean }).isTTY === true;
  const readline = createInterface({
    input,
    output: io.terminal.stdout,
    terminal: interactive,
    completer: (line: string) => complete(line, directory),
  });
  let current: AbortController | undefined;
  // Piped input ends (and closes readline) while a command may still run; Node 24 throws on
  // prompting a closed interface.
  let closed = false;
  readline.on('close', () => {
    closed = true;
  });
  const prompt = () => {
    if (!closed) readline.prompt();
  };
  const interrupt = () => {
    if (current !== undefined) current.abort();
    else if (!closed) readline.close();
  };
  readline.on('SIGINT', interrupt);
  process.on('SIGINT', interrupt);
  readline.setPrompt('monitor> ');
  try {
    prompt();
    for await (const line of readline) {
      const command = line.trim();
      if (command === 'quit' || command === 'exit' || command === 'q') break;
      if (command !== '') {
        current = new AbortController();
        try {
          await runConsoleLine(command, {
            directory,
            io,
            register,
            signal: current.signal,
            ...(fleet === undefined ? {} : { fleet }),
          });
        } catch (error) {
          io.err(`${error instanceof Error ? error.message : String(error)}\n`);
        } finally {
          current = undefined;
        }
      }
      prompt();
    }
  } finally {
    process.off('SIGINT', interrupt);
    readline.close();
  }
  return 0;
}

/**
 * Runs one console line through the monitor's yargs commands. Errors (an unknown command, a
 * missing argument, a session not found) are thrown with their message; `help` prints the list.
 */
export async function runConsoleLine(
  line: string,
  context: { directory: string; io: MonitorIo; register: RegisterCommands; signal: AbortSignal; fleet?: string },
): Promise<void> {
  const { io } = context;
  const words = splitWords(line);
  if (words === undefined) throw new Error(`Invalid command syntax: ${line} (unbalanced quotes)`);
  const first = words[0] ?? '';
  if (first === 'help' || first === 'h' || first === '?') {
    const help = await consoleParser(context).getHelp();
    io.out(`${help.replace(/\n+$/, '')}\n  quit                          Leave the monitor (agents keep running)\n`);
    return;
  }
  if (!(COMMANDS as readonly string[]).includes(first)) {
    const suggestion = didYouMean(first, COMMANDS);
    throw new Error(
      `Unknown command: ${first}.${suggestion === undefined ? '' : ` Did you mean ${suggestion}?`} Type help for the commands.`,
    );
  }
  await consoleParser(context).parseAsync(words);
}

function consoleParser(context: {
  directory: string;
  io: MonitorIo;
  register: RegisterCommands;
  signal: AbortSignal;
  fleet?: string;
}): Argv {
  const { directory, io, register, signal, fleet } = context;
  const parser = yargs()
    .scriptName('')
    .usage("Commands (as in rho COMMAND; DIR defaults to this monitor's directory):")
    .help(false)
    .version(false)
    .strict()
    .exitProcess(false)
    .wrap(Math.min(100, (io.terminal.stdout as { columns?: number }).columns ?? 100))
    .fail((message, error) => {
      if (error !== undefined && error !== null) throw error;
      throw new Error(`${message} Type help for the commands.`);
    });
  register(parser, io.terminal, io.env, () => {}, {
    directory,
    signal: () => signal,
    ...(fleet === undefined ? {} : { fleet }),
  });
  return parser.demandCommand(1, 'Type a command.');
}

/** Tab completion: command names first, then session ids (and `all` where it is allowed). */
function complete(line: string, directory: string): [string[], string] {
  const words = line.split(/\s+/);
  const last = words.at(-1) ?? '';
  // A trailing space, so a unique completion leaves the cursor ready for the next word.
  if (words.length <= 1)
    return [COMMANDS.filter((command) => command.startsWith(last)).map((command) => `${command} `), last];
  const command = words[0];
  const acceptsMany = command === 'connect';
  const acceptsAll =
    command === 'cancel' || command === 'kill' || command === 'pause' || command === 'resume' || command === 'unpause';
  if (words.length > 2 && !acceptsMany) return [[], last];
  const candidates = [...(acceptsAll ? ['all', 'latest'] : ['latest']), ...new SessionStore(directory).ids()];
  return [candidates.filter((candidate) => candidate.startsWith(last)).map((candidate) => `${candidate} `), last];
}
