// The fenced code blocks of README.md and docs/ that CI runs (issue 36): every TypeScript or
// JavaScript block (examples/embed/test/doc-snippets.test.ts, unless `<!-- not run: why -->`
// stands right before it) and every shell block marked `<!-- run -->`
// (apps/cli/test/global-install.test.ts). Types: index.d.ts.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const FENCE = /^```(ts|typescript|js|javascript|mjs)\s*$/;
const NOT_RUN = /^<!--\s*not run:\s*(.*?)\s*-->$/;
const SHELL_FENCE = /^```(bash|sh|shell)\s*$/;
const RUN = /^<!--\s*run\s*-->$/;

/** README.md first, then docs/**.md by path: the order a reader follows them. */
function documentationFiles(root) {
  return ['README.md', ...markdownUnder(root, 'docs')];
}

function markdownUnder(root, directory) {
  return readdirSync(join(root, directory))
    .sort()
    .flatMap((name) => {
      const path = join(directory, name);
      if (statSync(join(root, path)).isDirectory()) return markdownUnder(root, path);
      return name.endsWith('.md') ? [path] : [];
    });
}

/** The fenced blocks whose opening line matches `fence`, with the last non-blank line before each. */
function fencedBlocks(file, text, fence) {
  const lines = text.split('\n');
  const found = [];
  for (let index = 0; index < lines.length; index += 1) {
    const opening = fence.exec(lines[index]);
    if (opening === null) {
      // Any other fence is skipped whole, so a fence inside it is not taken for a block.
      if (lines[index].startsWith('```')) {
        const end = lines.findIndex((line, at) => at > index && line.startsWith('```'));
        if (end !== -1) index = end;
      }
      continue;
    }
    const end = lines.findIndex((line, at) => at > index && line.startsWith('```'));
    if (end === -1) throw new Error(`${file}:${index + 1}: a code block that never closes`);
    let before = index - 1;
    while (before >= 0 && lines[before].trim() === '') before -= 1;
    found.push({
      line: index + 1,
      info: opening[1],
      code: `${lines.slice(index + 1, end).join('\n')}\n`,
      before: before >= 0 ? lines[before].trim() : undefined,
    });
    index = end;
  }
  return found;
}

/** Every TypeScript/JavaScript block of README.md and docs/**.md, in reading order. */
export function documentationSnippets(root) {
  return documentationFiles(root).flatMap((file) =>
    fencedBlocks(file, readFileSync(join(root, file), 'utf8'), FENCE).map(({ line, info, code, before }) => {
      const skip = before === undefined ? null : NOT_RUN.exec(before);
      return {
        file,
        line,
        language: info === 'ts' || info === 'typescript' ? 'ts' : 'js',
        code,
        run: skip === null,
        ...(skip === null ? {} : { reason: skip[1] }),
      };
    }),
  );
}

/** Every shell block (```bash, ```sh) marked `<!-- run -->` right before it, in reading order. */
export function runnableShellBlocks(root) {
  return documentationFiles(root).flatMap((file) =>
    fencedBlocks(file, readFileSync(join(root, file), 'utf8'), SHELL_FENCE)
      .filter((block) => block.before !== undefined && RUN.test(block.before))
      .map(({ line, code }) => ({ file, line, code })),
  );
}
