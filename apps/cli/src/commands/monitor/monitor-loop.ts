import { createInterface } from 'node:readline';

import { SessionStore } from '@rho/core';
import type { ControlKind } from './monitor-actions.js';
import { controlAction, directiveAction, psAction, watchAction } from './monitor-actions.js';
import { connectAction } from './connect-action.js';
import type { MonitorIo } from './monitor-io.js';

const COMMANDS = ['ps', 'watch', 'cancel', 'pause', 'resume', 'directive', 'connect', 'help', 'quit'] as const;

const HELP = `Commands:
  ps                            list sessions with their live status
  watch <prefix> [--follow]     show a session's events as they happen (Ctrl+C stops watching)
  cancel <prefix|all>           stop a running agent (or every running agent)
  pause <prefix|all>            hold an agent before its next model or tool call
  resume <prefix|all>           release a paused agent
  directive <prefix> <text>     send an instruction the agent reads before its next model call
  connect <prefix> <prefix>... [--task TEXT]
                                start a coordinator agent holding the context of these agents
  help                          this list
  quit                          leave the monitor (agents keep running)
`;

/**
 * `rho monitor [DIR]`: an interactive loop over the sessions in DIR. Session ids complete with
 * Tab. Ctrl+C while watching (or while a coordinator runs) stops that, never an agent; Ctrl+C at
 * the prompt, Ctrl+D or `quit` leaves.
 */
export async function monitorLoop(directory: string, io: MonitorIo, input: NodeJS.ReadableStream = process.stdin): Promise<number> {
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
  io.out(`rho monitor: ${directory}\nType help for commands.\n\n`);
  psAction(directory, { json: false, limit: 50 }, io);
  readline.setPrompt('monitor> ');
  try {
    prompt();
    for await (const line of readline) {
      const words = splitWords(line);
      if (words === undefined) {
        io.err(`Invalid command syntax: ${line} (unbalanced quotes)\n`);
        prompt();
        continue;
      }
      const [command, ...rest] = words;
      if (command === 'quit' || command === 'exit' || command === 'q') break;
      if (command !== undefined) {
        current = new AbortController();
        try {
          await run(command, rest, directory, io, current.signal);
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

async function run(command: string, args: string[], directory: string, io: MonitorIo, signal: AbortSignal): Promise<void> {
  switch (command) {
    case 'ps':
      psAction(directory, { json: false, limit: 50 }, io);
      return;
    case 'watch': {
      const follow = args.includes('--follow') || args.includes('-f');
      const prefix = args.find((arg) => !arg.startsWith('-'));
      if (prefix === undefined) throw new Error('Usage: watch <prefix> [--follow]');
      await watchAction(directory, prefix, { json: false, follow, fromStart: true, signal }, io);
      return;
    }
    case 'cancel':
    case 'pause':
    case 'resume': {
      const prefix = args[0];
      if (prefix === undefined) throw new Error(`Usage: ${command} <prefix|all>`);
      await controlAction(command as ControlKind, directory, { prefix, all: prefix === 'all' }, io);
      return;
    }
    case 'directive': {
      const [prefix, ...text] = args;
      if (prefix === undefined || text.length === 0) throw new Error('Usage: directive <prefix> <text>');
      await directiveAction(directory, prefix, text.join(' '), io);
      return;
    }
    case 'connect': {
      const taskIndex = args.indexOf('--task');
      const task = taskIndex === -1 ? undefined : args.slice(taskIndex + 1).join(' ');
      const prefixes = taskIndex === -1 ? args : args.slice(0, taskIndex);
      if (prefixes.length === 0) throw new Error('Usage: connect <prefix> <prefix>... [--task TEXT]');
      const code = await connectAction(directory, prefixes, { ...(task === undefined || task === '' ? {} : { task }), signal }, io);
      if (code !== 0) io.err(`The coordinator exited with code ${code}.\n`);
      return;
    }
    case 'help':
    case 'h':
    case '?':
      io.out(HELP);
      return;
    default:
      io.err(`Unknown command: ${command}. Type help for the list.\n`);
  }
}

/** Tab completion: command names first, then session ids (and `all` where it is allowed). */
function complete(line: string, directory: string): [string[], string] {
  const words = line.split(/\s+/);
  const last = words.at(-1) ?? '';
  // A trailing space, so a unique completion leaves the cursor ready for the next word.
  if (words.length <= 1) return [COMMANDS.filter((command) => command.startsWith(last)).map((command) => `${command} `), last];
  const command = words[0];
  const acceptsMany = command === 'connect';
  const acceptsAll = command === 'cancel' || command === 'pause' || command === 'resume';
  if (words.length > 2 && !acceptsMany) return [[], last];
  const candidates = [...(acceptsAll ? ['all'] : []), ...new SessionStore(directory).ids()];
  return [candidates.filter((candidate) => candidate.startsWith(last)).map((candidate) => `${candidate} `), last];
}

/** Splits a command line like a shell: whitespace separates, quotes group, backslash escapes. Undefined when a quote is left open. */
export function splitWords(line: string): string[] | undefined {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let index = 0; index < line.length; index += 1) {
    const char = line[index]!;
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      else if (char === '\\' && quote === '"' && index + 1 < line.length) word += line[++index];
      else word += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      inWord = true;
    } else if (char === '\\' && index + 1 < line.length) {
      word += line[++index];
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += char;
      inWord = true;
    }
  }
  if (quote !== undefined) return undefined;
  if (inWord) words.push(word);
  return words;
}

