// The trace viewer in Debian's Chromium (playwright-core, never a browser download), over sessions
// recorded by the real rho CLI (test/fixtures/viewer-sessions, made by
// scripts/record-viewer-fixture.mjs): a readonly session with a SQL result, a refused command,
// commands that exit 0 and 1, an automatic compaction, a delegate child session and a directive on
// its resumed run; and a developer session that writes and edits a file. Screenshots go to
// artifacts/dashboard/ (gitignored; CI keeps them).
import { cpSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium, shots } from './chromium.js';
import { startDashboard } from '../src/dashboard-server.js';
import type { DashboardServer } from '../src/dashboard-server.js';
import { createFileSource } from '../src/file-source.js';
import { temporarySessions } from './support.js';

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = join(here, 'fixtures', 'viewer-sessions');

/** The recorded sessions: which is the parent, the child, the developer one. */
function sessions() {
  const ids = readdirSync(fixtures);
  const meta = (id: string) =>
    JSON.parse(readFileSync(join(fixtures, id, 'meta.json'), 'utf8')) as { parent_id?: string | null; profile: string };
  const child = ids.find((id) => typeof meta(id).parent_id === 'string')!;
  return {
    parent: meta(child).parent_id!,
    child,
    developer: ids.find((id) => meta(id).profile === 'developer')!,
  };
}

let browser: Browser;
let server: DashboardServer;
const { parent, child, developer } = sessions();

async function rows(page: Page): Promise<string[]> {
  return page.$$eval('[role="treeitem"]', (items) =>
    items.map((item) => {
      const level = Number(item.getAttribute('aria-level')) - 1;
      return `${'  '.repeat(level)}${item.querySelector('.tree-name')?.textContent ?? ''}`;
    }),
  );
}

async function choose(page: Page, name: string, nth = 0): Promise<void> {
  await page
    .locator('[role="treeitem"]', { has: page.locator(`.tree-name:text-is("${name}")`) })
    .nth(nth)
    .click();
}

async function screenshot(page: Page, name: string): Promise<void> {
  const path = join(shots, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  expect(statSync(path).size).toBeGreaterThan(5000);
}

describe.skipIf(!chromiumAvailable)('the trace viewer in Chromium', () => {
  beforeAll(async () => {
    const base = temporarySessions();
    cpSync(fixtures, base, { recursive: true });
    server = await startDashboard({ source: createFileSource(base, { refreshMs: 200 }), statusIntervalMs: 200 });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows the spans in order, and each detail rendered for its kind', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    const failures: string[] = [];
    page.on('pageerror', (error) => failures.push(error.message));
    await page.goto(server.url);
    await page.goto(`${server.origin}/#/session/${parent}`);
    await page.waitForSelector('[data-testid="trace"][data-ready="true"] [role="treeitem"]');
    expect(await rows(page)).toEqual([
      'Run 1',
      '  Turn 1',
      '    loopback-model',
      '    sqlite',
      '      Approval',
      '    bash',
      '      Approval',
      '    bash',
      '      Approval',
      '    bash',
      '      Approval',
      '  Compaction',
      '    loopback-model',
      '  Turn 2',
      '    loopback-model',
      '    delegate',
      '      Approval',
      `      Child session ${child}`,
      '  Turn 3',
      '    loopback-model',
      'Run 2',
      '  Directive',
      '  Turn 4',
      '    loopback-model',
      '    sqlite',
      '      Approval',
      '  Turn 5',
      '    loopback-model',
    ]);

    // The model call: its parameters, tokens and latency, the new input and the output with its calls.
    await choose(page, 'loopback-model');
    const model = page.locator('[data-testid="span-detail"][data-kind="llm"]');
    await model.locator('.message-assistant').waitFor();
    expect(await model.textContent()).toContain('3.5K in');
    expect(await model.textContent()).toContain('List the first five artists');
    expect(await model.locator('.message-call').count()).toBe(4);

    // The SQL result as a table; the policy's question and who approved it.
    await choose(page, 'sqlite');
    const sql = page.locator('[data-testid="span-detail"][data-kind="tool"]');
    await sql.locator('table.sql').waitFor();
    expect(await sql.locator('table.sql th').allTextContents()).toEqual(['ArtistId', 'Name']);
    expect(await sql.locator('table.sql tbody tr').count()).toBe(5);
    expect(await sql.locator('table.sql tbody tr').first().locator('td').allTextContents()).toEqual(['1', 'AC/DC']);
    expect(await sql.locator('[data-testid="policy"]').textContent()).toMatch(
      /requires approval for dangerous tools.*Approved by dana@review-host \(operator/,
    );

    // The refused command: not run, and why; it shows as refused in the tree.
    await choose(page, 'bash', 0);
    await page.locator('[data-testid="refused"]').waitFor();
    expect(await page.textContent('[data-testid="refused"]')).toBe(
      'Not run: denied by dana@review-host: Nothing is removed in this review.',
    );
    expect(await page.locator('[role="treeitem"].row-refused .tree-name:text-is("bash")').count()).toBe(1);

    // Commands that ran: the output with the exit code (0, then 1 with no output).
    await choose(page, 'bash', 1);
    await page.locator('[data-kind="command"]').waitFor();
    expect(await page.textContent('[data-testid="exit-code"]')).toMatch(/^exit 0/);
    expect(await page.textContent('.output-command')).toBe('2:Owner: Dana.\n');
    await choose(page, 'bash', 2);
    await page.waitForFunction(() =>
      document.querySelector('[data-testid="exit-code"]')?.textContent?.startsWith('exit 1'),
    );
    expect(await page.textContent('.output-command')).toBe('(no output)');

    // The compaction: tokens before and after, and the summary.
    await choose(page, 'Compaction');
    await page.waitForFunction(() =>
      document
        .querySelector('[data-testid="span-detail"][data-kind="compaction"]')
        ?.textContent?.includes('3.5K → 372'),
    );
    expect(await page.textContent('[data-testid="span-detail"] pre')).toContain('AC/DC and Accept lead the list');

    // The directive.
    await choose(page, 'Directive');
    await page.waitForFunction(
      () => document.querySelector('[data-testid="span-detail"] pre')?.textContent === 'Also count the albums.',
    );

    // The child session opens inside its parent: its own turns, its read with line numbers.
    await page.locator(`[role="treeitem"]:has(.tree-name:text-is("Child session ${child}")) .tree-toggle`).click();
    await page.locator('[role="treeitem"] .tree-name:text-is("read")').waitFor();
    await choose(page, 'read');
    const file = page.locator('[data-testid="span-detail"] [data-kind="file"]');
    await file.waitFor();
    expect(await file.locator('.line-number').allTextContents()).toEqual(['1', '2']);
    expect(await file.textContent()).toContain('The release is blocked on the invoice report.');
    expect(await page.textContent('[data-testid="span-detail"] .span-link')).toBe(`open in session ${child}`);
    await screenshot(page, 'trace-viewer');

    // The charts of the trace view: whole turns, no placeholder legend.
    for (const chart of ['tokens', 'context']) {
      expect(await page.getAttribute(`[data-chart="${chart}"]`, 'data-x-ticks')).toMatch(/^\d+(,\d+)*$/);
      expect(await page.textContent(`[data-legend="${chart}"]`)).not.toContain('--');
    }
    expect(await page.locator('.u-legend').count()).toBe(0);
    expect(failures).toEqual([]);
    await context.close();
  });

  it('opens the span a deep link names, and a write and an edit as coloured diffs', async () => {
    const trace = readFileSync(join(fixtures, parent, 'trace.jsonl'), 'utf8')
      .trim()
      .split('\n');
    const albums = trace.findIndex(
      (line) => line.includes('"type":"approval_requested"') && line.includes('call_albums'),
    );
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await page.goto(server.url);
    await page.goto(`${server.origin}/#/session/${parent}/span/tool-${albums}`);
    const detail = page.locator(`[data-testid="span-detail"][data-span="tool-${albums}"]`);
    await detail.locator('table.sql').waitFor();
    expect(await detail.locator('table.sql tbody td').allTextContents()).toEqual(['347']);
    expect(await page.getAttribute('[role="treeitem"][aria-selected="true"]', 'data-span')).toBe(`tool-${albums}`);
    // The link the detail pane gives is the one that opened it.
    expect(await detail.locator('.span-link').getAttribute('href')).toBe(`#/session/${parent}/span/tool-${albums}`);

    await page.goto(`${server.origin}/#/session/${developer}`);
    await page.waitForSelector('[data-testid="trace"][data-ready="true"] [role="treeitem"]');
    await choose(page, 'write');
    await page.locator('[data-kind="diff"] .diff-add').first().waitFor();
    expect(await page.locator('[data-kind="diff"] .diff-add').allTextContents()).toEqual([
      '+# Owners\n',
      '+\n',
      '+Release: Dana\n',
    ]);
    await choose(page, 'edit');
    await page.waitForFunction(() => document.querySelectorAll('[data-kind="diff"] .diff-del').length === 1);
    expect(await page.textContent('[data-kind="diff"] .diff-del')).toBe('-Release: Dana\n');
    expect(await page.textContent('[data-kind="diff"] .diff-add')).toBe('+Release: Dana (backup: Lee)\n');
    expect(await page.evaluate(() => getComputedStyle(document.querySelector('.diff-add')!).color)).not.toBe(
      await page.evaluate(() => getComputedStyle(document.querySelector('.diff-del')!).color),
    );
    await context.close();
  });

  it('finds a word from a tool result across sessions and opens its span', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await page.goto(server.url);
    await page.goto(`${server.origin}/#/search`);
    await page.fill('input[type="search"]', 'Aerosmith');
    await page.click('button:text-is("Search")');
    await page.waitForSelector('[data-testid="search-hits"] li');
    const hits = await page.locator('[data-testid="search-hits"] li').allTextContents();
    // The SQL result (a tool message) and the compaction summary and the answers that named it.
    expect(hits.some((hit) => hit.includes(parent) && hit.includes('message') && hit.includes('content'))).toBe(true);
    expect(await page.locator('[data-testid="search-hits"] mark').first().textContent()).toBe('Aerosmith');
    // A word only the child's read returned.
    await page.fill('input[type="search"]', 'invoice report');
    await page.click('button:text-is("Search")');
    await page.waitForFunction(
      (id) =>
        [...document.querySelectorAll('[data-testid="search-hits"] li')].some((hit) => hit.textContent?.includes(id)),
      child,
    );
    await page.locator(`[data-testid="search-hits"] li:has-text("${child}") a`).first().click();
    const detail = page.locator('[data-testid="span-detail"]');
    await detail.locator('[data-kind="file"], .message-text').first().waitFor();
    expect(await detail.textContent()).toContain('invoice report');
    expect(page.url()).toMatch(new RegExp(`#/session/${child}/span/`));
    await context.close();
  });

  it('fits a phone: the tree above the detail pane', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await page.goto(server.url);
    await page.goto(`${server.origin}/#/session/${parent}`);
    await page.waitForSelector('[data-testid="trace"][data-ready="true"] [role="treeitem"]');
    await choose(page, 'sqlite');
    await page.locator('table.sql').waitFor();
    const tree = (await page.locator('.trace-tree').boundingBox())!;
    const detail = (await page.locator('.trace-detail').boundingBox())!;
    expect(detail.y).toBeGreaterThanOrEqual(tree.y + tree.height - 1);
    expect(tree.width).toBeLessThanOrEqual(390);
    // Nothing wider than the screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(page, 'trace-viewer-phone');
    await context.close();
  });
});
