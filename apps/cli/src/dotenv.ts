import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Keys rho reads from a `.env` file in the current directory. */
const DOTENV_KEYS = new Set(['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_MODEL']);

/**
 * Reads `OPENAI_API_KEY`, `OPENAI_BASE_URL` and `OPENAI_MODEL` from `.env` in `directory`, like
 * the original. Variables already set in the environment win.
 */
export function loadDotenv(env: NodeJS.ProcessEnv, directory: string = process.cwd()): void {
  let text: string;
  try {
    text = readFileSync(join(directory, '.env'), 'utf8');
  } catch {
    return;
  }
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (match === null) continue;
    const key = match[1]!;
    if (!DOTENV_KEYS.has(key) || (env[key] !== undefined && env[key] !== '')) continue;
    let value = match[2]!.trim();
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'")))
      value = value.slice(1, -1);
    else value = value.replace(/\s+#.*$/, '');
    env[key] = value;
  }
}
