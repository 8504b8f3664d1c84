import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** A fenced TypeScript or JavaScript block of the documentation. */
export interface Snippet {
  /** Relative to the repository root. */
  file: string;
  /** The line of the opening fence (1-based). */
  line: number;
  language: 'ts' | 'js';
  code: string;
  /** False when `<!-- not run: why -->` stands right before the fence. */
  run: boolean;
  reason?: string;
}

const FENCE = /^```(ts|typescript|js|javascript|mjs)\s*$/;
const NOT_RUN = /^<!--\s*not run:\s*(.*?)\s*-->$/;

/** Every TypeScript/JavaScript block of README.md and docs/**.md, in file order. */
export function documentationSnippets(root: string): Snippet[] {
  const files = ['README.md', ...markdownUnder(root, 'docs')];
  return files.flatMap((file) => snippetsOf(file, readFileSync(join(root, file), 'utf8')));
}

function markdownUnder(root: string, directory: string): string[] {
  return readdirSync(join(root, directory))
    .sort()
    .flatMap((name) => {
      const path = join(directory, name);
      if (statSync(join(root, path)).isDirectory()) return markdownUnder(root, path);
      return name.endsWith('.md') ? [path] : [];
    });
}

function snippetsOf(file: string, text: string): Snippet[] {
  const lines = text.split('\n');
  const found: Snippet[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const fence = FENCE.exec(lines[index]!);
    if (fence === null) continue;
    const end = lines.findIndex((line, at) => at > index && line.startsWith('```'));
    if (end === -1) throw new Error(`${file}:${index + 1}: a code block that never closes`);
    let before = index - 1;
    while (before >= 0 && lines[before]!.trim() === '') before -= 1;
    const skip = before >= 0 ? NOT_RUN.exec(lines[before]!.trim()) : null;
    found.push({
      file,
      line: index + 1,
      language: fence[1] === 'ts' || fence[1] === 'typescript' ? 'ts' : 'js',
      code: `${lines.slice(index + 1, end).join('\n')}\n`,
      run: skip === null,
      ...(skip === null ? {} : { reason: skip[1]! }),
    });
    index = end;
  }
  return found;
}
