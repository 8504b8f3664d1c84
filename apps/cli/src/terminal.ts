/** Where the CLI writes, and whether it may use colour. */
export interface Terminal {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** Colour on stderr (progress) output. */
  color: boolean;
}

/** The process's terminal: colour only on a TTY and never with `NO_COLOR`. */
export function processTerminal(env: NodeJS.ProcessEnv = process.env): Terminal {
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    color: !noColor && process.stderr.isTTY === true && env.TERM !== 'dumb',
  };
}

const CODES = {
  dim: [2, 22],
  bold: [1, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
} as const;

/** Styling helpers that do nothing when colour is off. */
export function styles(color: boolean): Record<keyof typeof CODES, (text: string) => string> {
  const entries = Object.entries(CODES).map(([name, [open, close]]) => [
    name,
    (text: string) => (color ? `\u001b[${open}m${text}\u001b[${close}m` : text),
  ]);
  return Object.fromEntries(entries) as Record<keyof typeof CODES, (text: string) => string>;
}
