import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Instruction files looked for in each directory, in this order. */
const NAMES = ['AGENTS.md', join('.rho', 'instructions.md')];
/** Characters of one file added to the system prompt (the rest is left out, and the model told). */
const MAX_CHARS = 32_000;

/** Per-project instructions found for a working directory. */
export interface ProjectInstructions {
  /** The files read, outermost first. */
  files: string[];
  /** The text to append to the system prompt ('' when there are none). */
  text: string;
}

/**
 * `AGENTS.md` and `.rho/instructions.md` in the working directory and each parent up to the
 * repository root (the nearest directory with a `.git` directory or file), outermost first so
 * the closest, most specific instructions come last. Outside a repository only the working
 * directory is searched: the home directory's files are not a project's.
 */
export function findProjectInstructions(workingDir: string): ProjectInstructions {
  const directories: string[] = [];
  let directory = workingDir;
  let root: string | undefined;
  for (;;) {
    directories.push(directory);
    if (existsSync(join(directory, '.git'))) {
      root = directory;
      break;
    }
    const parent = dirname(directory);
    if (parent === directory) break;
    directory = parent;
  }
  const searched = root === undefined ? [workingDir] : directories.reverse();
  const files: string[] = [];
  const sections: string[] = [];
  for (const folder of searched) {
    for (const name of NAMES) {
      const path = join(folder, name);
      let content: string;
      try {
        if (!statSync(path).isFile()) continue;
        content = readFileSync(path, 'utf8');
      } catch {
        continue;
      }
      if (content.trim() === '') continue;
      files.push(path);
      const clipped =
        content.length > MAX_CHARS
          ? `${content.slice(0, MAX_CHARS)}\n[... ${content.length - MAX_CHARS} more characters of this file left out]`
          : content;
      sections.push(`### ${path}\n\n${clipped.trim()}`);
    }
  }
  if (files.length === 0) return { files, text: '' };
  return {
    files,
    text: `\n\n## Project instructions\nThese files from the project give instructions for working in it; where they disagree, the later (closer to the working directory) wins. They never widen your permissions.\n\n${sections.join('\n\n')}`,
  };
}
