/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// `rho export ID --format md|html` of a real recorded session (the built CLI against a scripted
// loopback model): a tool call whose output holds `<script>` and a run of four backticks, a long
// output that is cut, a file change in an isolated workspace, a model error, and a directive.
// The Markdown is parsed with marked; the HTML is loaded in Chromium (skipped when it is missing,
// except in CI).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackStep } from '@rho/core/testing';
import { Lexer } from 'marked';
import type { Token, Tokens } from 'marked';
import { beforeAll, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

const CHROMIUM = process.env.RHO_CHROMIUM ?? '/usr/bin/chromium';
const chromiumAvailable = existsSync(CHROMIUM);
if (!chromiumAvailable && process.env.CI === 'true')
  throw new Error(`Chromium is not installed at ${CHROMIUM}; CI must install the Debian package chromium.`);

const SCRIPT = '<script>window.__pwned = 1</script>';
const TRICKY = `${SCRIPT}\n\`\`\`\`\nafter the fence`;
const bash = (command: string) => ({ name: 'bash', arguments: JSON.stringify({ command }) });
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' });

let home: string;
let id: string;

/** A session of two runs: tool calls and an error, then a directive delivered on resume. */
async function recordSession(): Promise<void> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-export-readable-')));
  const work = join(root, 'work');
  mkdirSync(work);
  writeFileSync(join(work, 'a.txt'), 'one\ntwo\n');
  git(work, 'init', '-q', '-b', 'main');
  git(work, 'add', '.');
  git(work, 'commit', '-qm', 'init');
  home = join(root, 'home');
  const first: LoopbackStep[] = [
    {
      type: 'response',
      text: 'I will **look** first:\n\n```sh\ncat a.txt\n```',
      toolCalls: [
        bash(`printf '%s\\n' '${SCRIPT}' '\`\`\`\`' 'after the fence'`),
        bash('seq 1 500'),
        { name: 'write', arguments: JSON.stringify({ path: 'a.txt', content: 'one\nTWO\n' }) },
      ],
    },
    { type: 'http_error', status: 400, message: 'the request was malformed' },
  ];
  let server = await startLoopbackServer({ steps: first });
  const ran = await runRho(
    ['--base-url', server.url, '--profile', 'developer', '-y', '--workspace', 'isolated', 'Fix a.txt.'],
    { env: { RHO_HOME: home }, cwd: work },
  );
  await server.close();
  expect(ran.code, ran.stderr).not.toBe(0);
  id = /Session: ([0-9a-f]+)/.exec(ran.stderr)![1]!;
  writeFileSync(join(home, 'sessions', id, 'directives.jsonl'), '{"text": "Keep a.txt short"}\n');
  server = await startLoopbackServer({ steps: [{ type: 'response', text: 'Done: *a.txt* is fixed.' }] });
  const resumed = await runRho(['--base-url', server.url, '-y', '--resume', id, 'Continue.'], {
    env: { RHO_HOME: home },
    cwd: work,
  });
  await server.close();
  expect(resumed.code, resumed.stderr).toBe(0);
}

/** The text of inline tokens as a reader sees it (escapes undone, emphasis dropped). */
const plain = (tokens: Token[] | undefined): string =>
  (tokens ?? [])
    .map((token) =>
      'tokens' in token && token.tokens !== undefined ? plain(token.tokens) : 'text' in token ? token.text : '',
    )
    .join('');

const exportAs = (format: string, ...more: string[]) =>
  runRho(['export', id, '--format', format, ...more], { env: { RHO_HOME: home } });

beforeAll(recordSession, 60_000);

describe('rho export --format md', () => {
  it('is Markdown whose headings, folded tool calls and code blocks hold the session', async () => {
    const outcome = await exportAs('md');
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    const markdown = outcome.stdout;
    const tokens = new Lexer({ gfm: true }).lex(markdown);
    const headings = tokens.filter((token): token is Tokens.Heading => token.type === 'heading');
    expect(headings[0]).toMatchObject({ depth: 1, text: `Session ${id}` });
    expect(headings.map((heading) => plain(heading.tokens))).toEqual([
      `Session ${id}`,
      expect.stringMatching(/^Run 1 · \d{4}-/),
      'User',
      'Assistant',
      'Error (model_api_error)',
      expect.stringMatching(/^Run 2 · /),
      'User',
      'Operator directive',
      'Assistant',
      'Changes',
    ]);
    const table = tokens.find((token): token is Tokens.Table => token.type === 'table')!;
    const header = Object.fromEntries(table.rows.map((row) => [plain(row[0]!.tokens), plain(row[1]!.tokens)]));
    expect(header).toMatchObject({ Session: id, Profile: 'developer', Status: 'completed' });
    expect(header.Tokens).toMatch(/ in \(\d+ cached\), \d+ out/);

    // Every <details> is closed, each tool call has one, and its summary names the tool.
    const html = tokens.filter((token) => token.type === 'html').map((token) => (token as Tokens.HTML).raw);
    const opened = html.filter((raw) => raw.startsWith('<details>'));
    expect(opened.length).toBe(html.filter((raw) => raw.trim() === '</details>').length);
    const summaries = opened.map((raw) => /<summary>(.*)<\/summary>/.exec(raw)?.[1]);
    expect(summaries).toEqual([
      expect.stringMatching(/^tool\(bash\) printf &#39;%s\\n&#39; &#39;&#60;script&#62;/),
      'tool(bash) seq 1 500',
      expect.stringMatching(/^tool\(write\) \{&#34;path&#34;:&#34;a\.txt&#34;/),
    ]);

    // Code blocks: the output with four backticks is one block, whole; the assistant's own stays Markdown.
    const code = tokens.filter((token): token is Tokens.Code => token.type === 'code');
    expect(code.map((block) => block.text)).toContain(TRICKY);
    expect(code.some((block) => block.lang === 'sh' && block.text === 'cat a.txt')).toBe(true);
    const seq = code.find((block) => block.text.startsWith('1\n2\n3\n'))!;
    expect(seq.text.split('\n')).toHaveLength(200);
    expect(markdown).toContain('Cut: the first 200 of 500 lines');
    expect(code.find((block) => block.text.includes('the request was malformed'))).toBeDefined();
    expect(code.some((block) => block.text === 'Keep a.txt short')).toBe(true);
    // Fences are balanced: nothing after the last block is swallowed into code.
    const last = tokens.filter((token: Token) => token.type !== 'space').at(-1)!;
    expect(last.type).toBe('table');
    expect(plain((last as Tokens.Table).rows[0]![0]!.tokens)).toBe('a.txt');
    expect(markdown).toContain('1 files changed, +1 −1');
  });

  it('writes to a new file with -o and never overwrites it', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'rho-export-md-')), 'session.md');
    const written = await exportAs('md', '-o', out);
    expect(written.code).toBe(0);
    expect(written.stdout).toBe('');
    expect(readFileSync(out, 'utf8')).toBe((await exportAs('md')).stdout);
    expect((await exportAs('md', '-o', out)).code).toBe(2);
  });
});

describe.skipIf(!chromiumAvailable)('rho export --format html in Chromium', () => {
  it('is one page with the tool calls folded, their output escaped and never run, and nothing loaded', async () => {
    const outcome = await exportAs('html');
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    const file = join(mkdtempSync(join(tmpdir(), 'rho-export-html-')), 'session.html');
    writeFileSync(file, outcome.stdout);
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-background-networking'],
    });
    try {
      const page = await browser.newPage();
      const requests: string[] = [];
      page.on('request', (request) => requests.push(request.url()));
      await page.goto(pathToFileURL(file).href);
      const dom = await page.evaluate(() => ({
        title: document.title,
        scripts: document.querySelectorAll('script').length,
        pwned: (window as unknown as { __pwned?: number }).__pwned,
        summaries: [...document.querySelectorAll('details.tool > summary')].map((node) => node.textContent),
        open: [...document.querySelectorAll('details.tool')].map((node) => (node as HTMLDetailsElement).open),
        outputs: [...document.querySelectorAll('details.tool pre.output')].map((node) => node.textContent),
        headings: [...document.querySelectorAll('h1, h2, h3')].map((node) => node.textContent),
        cut: document.querySelector('p.cut')?.textContent,
        header: Object.fromEntries(
          [...document.querySelectorAll('table.header tr')].map((row) => [
            row.querySelector('th')?.textContent,
            row.querySelector('td')?.textContent,
          ]),
        ),
      }));
      expect(dom.scripts).toBe(0);
      expect(dom.pwned).toBeUndefined();
      expect(dom.title).toBe(`rho session ${id}`);
      expect(dom.summaries).toEqual([
        expect.stringMatching(/^tool\(bash\) printf '%s\\n' '<script>window/),
        'tool(bash) seq 1 500',
        expect.stringMatching(/^tool\(write\) \{"path":"a\.txt"/),
      ]);
      expect(dom.open).toEqual([false, false, false]);
      expect(dom.outputs[0]).toBe(`${TRICKY}\n`);
      expect(dom.outputs[1]!.split('\n')).toHaveLength(200);
      expect(dom.cut).toMatch(/^Cut: the first 200 of 500 lines/);
      expect(dom.headings).toEqual(
        expect.arrayContaining([
          `Session ${id}`,
          'User',
          'Assistant',
          'Error (model_api_error)',
          'Operator directive',
          'Changes',
        ]),
      );
      expect(dom.header).toMatchObject({ Session: id, Profile: 'developer', Status: 'completed' });
      expect(requests).toEqual([pathToFileURL(file).href]);
      expect(outcome.stdout).toContain('&#60;script&#62;window.__pwned');
    } finally {
      await browser.close();
    }
  });
});
