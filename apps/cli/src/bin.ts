#!/usr/bin/env node
// The entry point stays tiny: `rho --version` and a bare `rho --help` answer without loading
// yargs, the agent runtime or any tool package, so they start about as fast as Node itself.
import { readFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { unsupportedNodeMessage } from './node-version.js';

// First of all, before anything that an older Node would fail on with a less helpful message.
const unsupported = unsupportedNodeMessage(process.versions.node, process.execPath);
if (unsupported !== undefined) {
  process.stderr.write(`${unsupported}\n`);
  process.exit(2);
}

/** Widths `dist/help-<width>.txt` is rendered at (scripts/render-help.mjs), widest last. */
const HELP_WIDTHS = [40, 60, 80, 100];

const args = process.argv.slice(2);
const only = args.length === 1 ? args[0] : undefined;
let cachedHelp: string | undefined;
if ((only === '--help' || only === '-h') && process.env.RHO_RENDER_HELP !== '1') {
  // Not a terminal: the widest (what yargs would use). A terminal: the widest that fits.
  const columns = process.stdout.columns ?? 100;
  const width = [...HELP_WIDTHS].reverse().find((candidate) => candidate <= columns) ?? HELP_WIDTHS[0]!;
  try {
    cachedHelp = readFileSync(new URL(`./help-${width}.txt`, import.meta.url), 'utf8');
  } catch {
    // Not rendered (a development build): let yargs render it.
  }
}
if (only === '--version' || only === '-V') {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  process.stdout.write(`${manifest.version}\n`);
} else if (cachedHelp !== undefined) {
  process.stdout.write(cachedHelp);
} else {
  // `rho monitor | head`: a reader that goes away is not an error of rho's.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  // `rho ... > FILE` on a disk that fills up: the output is incomplete, and rho says so.
  const { guardFileStdout, stdoutFault } = await import('./output-file.js');
  guardFileStdout();
  // Node keeps V8's compiled code of the modules it loads in a cache on disk (in the system's
  // temporary directory, or NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it off): a run
  // loads some 440 modules, and their compilation is about a tenth of its start-up. A failure to
  // write it is not rho's concern.
  try {
    nodeModule.enableCompileCache();
  } catch {
    // No cache: the same start as without it.
  }
  const { main } = await import('./main.js');
  // Nothing left that could settle the command (a package tool's promise that never settles, say):
  // Node would exit 13 without a word, leaving the session marked running. Say so, and fail.
  let finished = false;
  process.on('beforeExit', () => {
    if (finished) return;
    process.stderr.write(
      'rho: stopped: nothing is left that could finish the command (a tool that returned a promise that never settles, for example one of a tool package). A session keeps what was recorded: rho ps lists it, and rho --resume ID continues it.\n',
    );
    process.exit(1);
  });
  let code = await main(args);
  finished = true;
  const fault = stdoutFault();
  if (fault !== undefined) {
    const { SessionWriteError } = await import('@rho/core');
    const where = fault.path === undefined ? 'the standard output' : `the standard output (${fault.path})`;
    process.stderr.write(
      `rho: ${SessionWriteError.from(where, fault.error, 'What rho printed there is incomplete; free space and run the command again.').message}\n`,
    );
    const { EXIT } = await import('./exit-code-map.js');
    if (code === EXIT.completed) code = EXIT.failed;
  }
  process.exitCode = code;
  // Everything is closed by now; should a stray handle keep the event loop alive, still exit
  // (after stdout had time to drain).
  setTimeout(() => process.exit(code), 2000).unref();
}
