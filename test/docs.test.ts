/**
 * The documentation stays navigable and true:
 * - every relative link and `#anchor` in README.md, docs/**\/*.md and contributing/*.md reaches an
 *   existing file, and a heading of it (GitHub's anchor slugs);
 * - every `rho ...` line of their shell code blocks (```sh, ```bash, ```shell, ```console, or an
 *   unlabelled block that starts like a command line) goes through the real CLI's parser
 *   (`parseArguments` of apps/cli, the strict yargs parser `rho` runs, with no command's handler
 *   run), so a command or flag that no longer exists fails here, naming the file and the line;
 * - the README stays a front door: at most 420 lines.
 * The parser runs in a child process on the built CLI (the application is imported by nothing).
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The Markdown files the check covers, relative to the repository root. */
function documentationFiles(): string[] {
  const files = ['README.md'];
  const walk = (directory: string): void => {
    for (const name of readdirSync(join(root, directory)).sort()) {
      const path = join(directory, name);
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (name.endsWith('.md')) files.push(path);
    }
  };
  walk('docs');
  for (const name of readdirSync(join(root, 'contributing')).sort()) {
    if (name.endsWith('.md')) files.push(join('contributing', name));
  }
  return files;
}

interface Line {
  number: number;
  text: string;
}

interface Fence {
  lang: string;
  lines: Line[];
}

/** Splits Markdown into fenced code blocks and the prose lines outside them. */
function splitFences(markdown: string): { prose: Line[]; fences: Fence[] } {
  const prose: Line[] = [];
  const fences: Fence[] = [];
  let open: { marker: string; fence: Fence } | undefined;
  markdown.split('\n').forEach((text, index) => {
    const number = index + 1;
    // A backtick fence's info string has no backtick (CommonMark): "```` ```sql ```` block" is prose.
    const fence = /^ {0,3}(`{3,}(?=[^`]*$)|~{3,})\s*([\w+-]*)/.exec(text);
    if (open === undefined) {
      if (fence !== null) {
        open = { marker: fence[1]!, fence: { lang: fence[2]!.toLowerCase(), lines: [] } };
        fences.push(open.fence);
      } else prose.push({ number, text });
    } else if (fence !== null && fence[1]!.startsWith(open.marker) && fence[2] === '' && text.trim() === fence[1]) {
      open = undefined;
    } else open.fence.lines.push({ number, text });
  });
  return { prose, fences };
}

/** The text of a heading as GitHub renders it: code, emphasis, links and HTML reduced to their text. */
function headingText(raw: string): string {
  return raw
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '')
    .replace(/\*\*|__/g, '')
    .replace(/(^|\s)[*_]([^*_]+)[*_](?=\s|$)/g, '$1$2')
    .trim();
}

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
function slug(text: string): string {
  return headingText(text)
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of a Markdown file: its headings' slugs (repeats get -1, -2, ...) and explicit ids. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  const { prose } = splitFences(markdown);
  for (const { text } of prose) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (heading !== null) {
      const base = slug(heading[1]!);
      const seen = counts.get(base) ?? 0;
      counts.set(base, seen + 1);
      anchors.add(seen === 0 ? base : `${base}-${seen}`);
    }
    for (const match of text.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1]!);
  }
  return anchors;
}

/** Relative link targets of the prose (inline links, images and reference definitions), outside code spans. */
function linksOf(markdown: string): { line: number; target: string }[] {
  const links: { line: number; target: string }[] = [];
  for (const { number, text } of splitFences(markdown).prose) {
    const withoutCode = text.replace(/`+[^`]*`+/g, '');
    for (const match of withoutCode.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ line: number, target: match[1]! });
    }
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(withoutCode);
    if (definition !== null) links.push({ line: number, target: definition[1]! });
  }
  return links.filter(({ target }) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** What is wrong with each relative link of `file` (relative to the root), as `file:line: ...`. */
function brokenLinks(
  file: string,
  readText: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): string[] {
  const problems: string[] = [];
  const source = join(root, file);
  const anchors = new Map<string, Set<string>>();
  const anchorsAt = (path: string): Set<string> => {
    if (!anchors.has(path)) anchors.set(path, anchorsOf(readText(path)));
    return anchors.get(path)!;
  };
  for (const { line, target } of linksOf(readText(source))) {
    const [rawPath, anchor] = target.split('#', 2) as [string, string | undefined];
    const path = decodeURI(rawPath);
    const destination = path === '' ? source : resolve(dirname(source), path);
    if (!destination.startsWith(root)) {
      problems.push(`${file}:${line}: ${target} leaves the repository`);
      continue;
    }
    if (!existsSync(destination)) {
      problems.push(`${file}:${line}: ${target}: no file ${relative(root, destination)}`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (!destination.endsWith('.md')) {
      problems.push(`${file}:${line}: ${target}: an anchor into a file that is not Markdown`);
      continue;
    }
    if (!anchorsAt(destination).has(decodeURIComponent(anchor))) {
      problems.push(`${file}:${line}: ${target}: ${relative(root, destination)} has no heading #${anchor}`);
    }
  }
  return problems;
}

interface Word {
  text: string;
  quoted: boolean;
}

/**
 * Splits a shell line into simple commands (at `|`, `||`, `&&`, `;`, `&`) of words, as a shell
 * would quote them: '...' literal, "..." with backslash escapes, a backslash escaping one
 * character, `#` at the start of a word a comment. Redirections and their targets are dropped.
 */
function shellCommands(line: string): Word[][] {
  const commands: Word[][] = [[]];
  let word: Word | undefined;
  let redirect = false;
  const finish = (): void => {
    if (word === undefined) return;
    if (redirect) redirect = false;
    else if (/^\d*(>>?|<<?<?|>&|&>)\d*-?$/.test(word.text) && !word.quoted) redirect = true;
    else if (/^\d*(>>?|<|&>|>&)\S/.test(word.text) && !word.quoted) {
      /* a redirection with its target attached (2>&1, >out.txt) */
    } else commands.at(-1)!.push(word);
    word = undefined;
  };
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (char === "'") {
      const end = line.indexOf("'", i + 1);
      const stop = end === -1 ? line.length : end;
      word = { text: (word?.text ?? '') + line.slice(i + 1, stop), quoted: true };
      i = stop;
    } else if (char === '"') {
      word = { text: word?.text ?? '', quoted: true };
      for (i++; i < line.length && line[i] !== '"'; i++) {
        if (line[i] === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1]!)) i++;
        word.text += line[i];
      }
    } else if (char === '\\') {
      word = { text: (word?.text ?? '') + (line[i + 1] ?? ''), quoted: word?.quoted ?? false };
      i++;
    } else if (char === '#' && word === undefined) {
      break;
    } else if (/\s/.test(char)) {
      finish();
    } else if ('|&;'.includes(char) && !(char === '&' && (word?.text.endsWith('>') || line[i + 1] === '>'))) {
      finish();
      redirect = false;
      if (line[i + 1] === char) i++;
      commands.push([]);
    } else {
      word = { text: (word?.text ?? '') + char, quoted: word?.quoted ?? false };
    }
  }
  finish();
  return commands.filter((command) => command.length > 0);
}

/** A `rho` invocation found in a code block. */
interface RhoLine {
  file: string;
  line: number;
  text: string;
  args: Word[];
}

const SHELL_LANGS = new Set(['sh', 'bash', 'shell', 'console', 'zsh']);

/** The `rho ...` invocations of the shell code blocks of `markdown`. */
function rhoLines(file: string, markdown: string): RhoLine[] {
  const found: RhoLine[] = [];
  for (const fence of splitFences(markdown).fences) {
    const first = fence.lines.find(({ text }) => text.trim() !== '')?.text.trim() ?? '';
    const unlabelledShell = fence.lang === '' && /^(\$ |rho\b|pnpm\b)/.test(first);
    if (!SHELL_LANGS.has(fence.lang) && !unlabelledShell) continue;
    // In a console transcript (or a block of `$ ` lines) only the prompted lines are commands.
    const prompted = fence.lang === 'console' || first.startsWith('$ ');
    for (let i = 0; i < fence.lines.length; i++) {
      const start = fence.lines[i]!;
      let text = start.text.trim();
      if (prompted && !text.startsWith('$ ')) continue;
      if (text.startsWith('$ ')) text = text.slice(2);
      // A line ending in a backslash continues on the next one.
      while (/(^|[^\\])\\$/.test(text) && i + 1 < fence.lines.length) {
        text = `${text.slice(0, -1)} ${fence.lines[++i]!.text.trim()}`;
      }
      if (text.startsWith('#')) continue;
      for (const command of shellCommands(text)) {
        const words = command.slice();
        while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!.text) && !words[0]!.quoted) words.shift();
        if (words[0]?.text === 'pnpm' && words[1]?.text === 'rho') words.shift();
        if (words[0]?.text !== 'rho' || words[0].quoted) continue;
        found.push({ file, line: start.number, text: start.text.trim(), args: words.slice(1) });
      }
    }
  }
  return found;
}

interface ParseResult {
  commands?: string[];
  error?: string;
}

/** Runs every argument list through `parseArguments` of the built CLI, in one child process. */
async function parseWithCli(argLists: string[][]): Promise<ParseResult[]> {
  const main = join(root, 'apps/cli/dist/main.js');
  if (!existsSync(main)) throw new Error(`${relative(root, main)} is missing: run \`pnpm build\` first`);
  const script = `const { parseArguments } = await import(${JSON.stringify(pathToFileURL(main).href)});
let input = '';
for await (const chunk of process.stdin) input += chunk;
const results = [];
for (const args of JSON.parse(input)) {
  try {
    const parsed = await parseArguments(args);
    results.push({ commands: parsed === undefined ? [] : parsed.commands });
  } catch (error) {
    results.push({ error: error instanceof Error ? error.name + ': ' + error.message : String(error) });
  }
}
process.stdout.write(JSON.stringify(results));`;
  return new Promise((resolvePromise, reject) => {
    const child = execFile(
      process.execPath,
      ['--input-type=module', '-e', script],
      { cwd: root, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`${error.message}\n${stderr}`));
        else resolvePromise(JSON.parse(stdout) as ParseResult[]);
      },
    );
    child.stdin!.end(JSON.stringify(argLists));
  });
}

/** What is wrong with each `rho` line, as `file:line: ...`. */
async function staleCommands(lines: RhoLine[]): Promise<string[]> {
  const results = await parseWithCli(lines.map((line) => line.args.map((word) => word.text)));
  const problems: string[] = [];
  lines.forEach((line, index) => {
    const result = results[index]!;
    const where = `${line.file}:${line.line}: ${line.text}`;
    if (result.error !== undefined) {
      problems.push(`${where}\n    ${result.error.split('\n')[0]}`);
      return;
    }
    // A bare word that the parser took as a task's first word was meant as a command (`rho stats`).
    const first = line.args.find((word) => !word.text.startsWith('-'));
    if (
      result.commands!.length === 0 &&
      first !== undefined &&
      first === line.args[0] &&
      !first.quoted &&
      /^[a-z][a-z0-9-]*$/.test(first.text)
    ) {
      problems.push(`${where}\n    '${first.text}' is not a command of rho (the line would run it as a task)`);
    }
  });
  return problems;
}

describe('the documentation', () => {
  const files = documentationFiles();

  it('covers the README, docs/ and contributing/', () => {
    expect(files).toEqual(
      expect.arrayContaining(['README.md', join('docs', 'README.md'), join('contributing', 'decisions.md')]),
    );
  });

  it('has no dead relative link or anchor', () => {
    expect(files.flatMap((file) => brokenLinks(file)).join('\n')).toBe('');
  });

  it("has no rho line with a command or flag the CLI's parser refuses", async () => {
    const lines = files.flatMap((file) => rhoLines(file, readFileSync(join(root, file), 'utf8')));
    // The extraction finds the documentation's examples (not a vacuous pass).
    expect(lines.length).toBeGreaterThan(60);
    expect((await staleCommands(lines)).join('\n')).toBe('');
  });

  it('keeps the README a front door of at most 420 lines', () => {
    const lines = readFileSync(join(root, 'README.md'), 'utf8').trimEnd().split('\n').length;
    expect(lines).toBeLessThanOrEqual(420);
  });
});

describe('the checks themselves', () => {
  it('slugs headings as GitHub does', () => {
    expect(slug('Where tools run: backends')).toBe('where-tools-run-backends');
    expect(slug('Using `@rho/core` in your own app')).toBe('using-rhocore-in-your-own-app');
    expect(slug('A task queue: work on many machines (`rho submit`, `rho worker`)')).toBe(
      'a-task-queue-work-on-many-machines-rho-submit-rho-worker',
    );
    expect(slug('The daytona backend: tools in a Daytona cloud sandbox')).toBe(
      'the-daytona-backend-tools-in-a-daytona-cloud-sandbox',
    );
    expect([
      ...anchorsOf('# A\n## Notes\n```\n# not a heading\n```\n## Notes\n```` ```sql ```` is prose\n## B\n'),
    ]).toEqual(['a', 'notes', 'notes-1', 'b']);
  });

  it('finds a dead link and a missing anchor', () => {
    const text = (path: string): string =>
      path.endsWith('README.md')
        ? '# rho\n[ok](docs/permissions.md) [gone](docs/nowhere.md) [bad](#no-such-heading) `[code](x.md)`\n'
        : readFileSync(path, 'utf8');
    const problems = brokenLinks('README.md', text);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^README\.md:2: docs\/nowhere\.md: no file/);
    expect(problems[1]).toMatch(/^README\.md:2: #no-such-heading: README\.md has no heading/);
  });

  it('reads rho lines as a shell would', () => {
    const markdown = [
      '```bash',
      '# rho --not-checked',
      'rho ps --json   # a comment',
      '$ rho watch 3f2a',
      "cat tasks.jsonl | RHO_HOME=/tmp/x rho submit --file - --label 'a b' > ids.txt 2>&1",
      'rho eval sql --dataset chinook \\',
      '  --limit 5',
      'echo rho; pnpm rho "Summarise README.md"',
      '```',
      '```yaml',
      'rho: not a command',
      '```',
      '```',
      'rho ps',
      '```',
      '```text',
      'rho eval sql: chinook with gpt-4o-mini (output, not a command)',
      '```',
      '```console',
      '$ rho --version',
      'rho 0.1.0',
      '```',
    ].join('\n');
    const found = rhoLines('x.md', markdown).map((line) => [line.line, line.args.map((word) => word.text)]);
    expect(found).toEqual([
      [3, ['ps', '--json']],
      [4, ['watch', '3f2a']],
      [5, ['submit', '--file', '-', '--label', 'a b']],
      [6, ['eval', 'sql', '--dataset', 'chinook', '--limit', '5']],
      [8, ['Summarise README.md']],
      [14, ['ps']],
      [20, ['--version']],
    ]);
  });

  it('fails a removed flag, an unknown subcommand and a command word taken as a task', async () => {
    const lines = rhoLines(
      'x.md',
      [
        '```sh',
        'rho ps --json',
        'rho ps --bogus-flag',
        'rho fleet no-such-command',
        'rho no-such-command',
        'rho "a task"',
        '```',
      ].join('\n'),
    );
    const problems = await staleCommands(lines);
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(/^x\.md:3: rho ps --bogus-flag\n.*Unknown arguments?: bogus-flag/);
    expect(problems[1]).toMatch(/^x\.md:4: .*\n.*Unknown argument: no-such-command/);
    expect(problems[2]).toMatch(/^x\.md:5: [^]*'no-such-command' is not a command of rho/);
  });
});
