// The Changes section and the sessions list's cell in Chromium (see browser.test.ts: Debian's
// Chromium driven by playwright-core; skipped without it, except in CI). The sessions are real:
// the library's worktrees of real git repositories, changed as an agent would.
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium, shots } from './chromium.js';
import { writeSampleSessions } from '../scripts/sample-sessions.mjs';
import { startDashboard } from '../src/dashboard-server.js';
import type { DashboardServer } from '../src/dashboard-server.js';
import { createFileSource } from '../src/file-source.js';
import { SessionStore } from '@rho/core';
import { updateSessionMeta } from '@rho/core/internal';
import { CheckpointStore } from '@rho/workspace';
import { temporarySessions } from './support.js';
import { finish, isolatedSession, repository, write } from './workspaces.js';

let browser: Browser;
let server: DashboardServer;
let id: string;
let inPlace: string;
let plain: string;

async function screenshot(page: Page, name: string): Promise<void> {
  const path = join(shots, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  expect(statSync(path).size).toBeGreaterThan(5000);
}

/** The computed background of the first element matching `selector`. */
function background(page: Page, selector: string): Promise<string> {
  return page.$eval(selector, (element) => getComputedStyle(element).backgroundColor);
}

describe.skipIf(!chromiumAvailable)('changes in Chromium', () => {
  beforeAll(async () => {
    const sessions = temporarySessions();
    writeSampleSessions(sessions, 5, { start: Date.now() - 5 * 3_600_000, spreadMs: 3_600_000 });
    const repo = repository({
      'src/app.ts': 'export function greet(name: string) {\n  return `hello ${name}`;\n}\n',
      'old.md': 'remove me\n',
      'logo.png': Buffer.from([137, 80, 78, 71, 0, 0, 0, 1]),
    });
    const session = await isolatedSession(sessions, repo);
    id = session.id;
    const { path } = session.record;
    write(path, 'src/app.ts', 'export function greet(name: string) {\n  return `hello, ${name}!`;\n}\n');
    write(path, 'src/app.test.ts', "import { greet } from './app';\ngreet('x');\n");
    rmSync(join(path, 'old.md'));
    write(path, 'logo.png', Buffer.from([137, 80, 78, 71, 0, 0, 0, 2, 0, 9]));
    await finish(session.directory, session.record);
    // An in-place run with checkpoints, and one without.
    const worked = repository({ 'notes.md': '# notes\n' });
    const run = new SessionStore(sessions).create({ model: 'gpt-4o-mini' });
    inPlace = run.id;
    updateSessionMeta(run.directory, { working_dir: worked, status: 'completed' });
    const store = CheckpointStore.open({ sessionDir: run.directory, workingDir: worked });
    await store.take(0);
    write(worked, 'notes.md', '# notes\n- checked the logs\n');
    await store.take(1);
    plain = new SessionStore(sessions).create({ model: 'gpt-4o-mini' }).id;
    server = await startDashboard({ source: createFileSource(sessions, { refreshMs: 200 }), statusIntervalMs: 200 });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows the stats, the files and the coloured diff, each file foldable, and the commands to decide', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(server.url);
    await page.goto(`${server.origin}/#/session/${id}`);
    await page.waitForSelector('[data-testid="changes-stats"]');
    expect(await page.textContent('[data-testid="changes-stats"]')).toBe('4 files changed, +3/-2');
    const section = (await page.textContent('[data-testid="changes"]'))!;
    expect(section).toContain(`branch rho/${id}`);
    expect(section).toContain('it does not apply, discard or undo them');
    expect(await page.locator('.decide code').allTextContents()).toEqual([
      `rho diff ${id}`,
      `rho apply ${id}`,
      `rho discard ${id}`,
    ]);
    expect(await page.locator('table.changed-files tr').allTextContents()).toEqual([
      'modifiedlogo.pngbinary',
      'deletedold.md+0-1',
      'addedsrc/app.test.ts+2-0',
      'modifiedsrc/app.ts+1-1',
    ]);
    // Added lines green, deleted red, hunk headers blue; the binary file named, its bytes not shown.
    const added = page.locator('pre.diff .diff-add', { hasText: '+  return `hello, ${name}!`;' });
    const deleted = page.locator('pre.diff .diff-del', { hasText: '-  return `hello ${name}`;' });
    await added.waitFor();
    expect(await added.evaluate((element) => getComputedStyle(element).backgroundColor)).toBe('rgb(220, 252, 231)');
    expect(await deleted.evaluate((element) => getComputedStyle(element).backgroundColor)).toBe('rgb(254, 226, 226)');
    expect(await background(page, 'pre.diff .diff-hunk')).toBe('rgb(224, 242, 254)');
    // A file header's "+++ b/..." is no added line.
    expect(await page.locator('pre.diff .diff-add', { hasText: '+++' }).count()).toBe(0);
    const binary = page.locator('details.diff-file', { hasText: 'logo.png' });
    expect(await binary.locator('summary').textContent()).toBe('logo.png binary');
    await screenshot(page, 'session-changes');
    // Folding a file hides its diff.
    const app = page.locator('details.diff-file', { has: page.locator('summary', { hasText: /^src\/app\.ts/ }) });
    expect(await app.locator('pre.diff').isVisible()).toBe(true);
    await app.locator('summary').click();
    expect(await app.locator('pre.diff').isVisible()).toBe(false);
    await context.close();
  }, 120_000);

  it("shows the sessions list's changes cell on a 390 px wide screen without breaking the layout", async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await phone.newPage();
    await page.goto(server.url);
    const cell = page.locator(`tr[data-session="${id}"] td.changes`);
    await cell.waitFor();
    expect(await cell.textContent()).toBe('4 files changed, +3/-2');
    // Compact on a phone: "changed" is left out, the cell stays one line.
    expect(await cell.innerText()).toBe('4 files, +3/-2');
    const height = (await cell.boundingBox())!.height;
    const row = (await page.locator(`tr[data-session]`).first().boundingBox())!.height;
    expect(height).toBeLessThanOrEqual(row + 1);
    await cell.scrollIntoViewIfNeeded();
    expect(await cell.isVisible()).toBe(true);
    // Sessions without changes have an empty cell.
    expect(await page.locator('td.changes').allTextContents()).toEqual(expect.arrayContaining(['']));
    // Nothing wider than the screen: the table scrolls in its own box, the page does not.
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
    await screenshot(page, 'sessions-changes-phone');
    // The session page's diff scrolls in its own box too.
    await page.goto(`${server.origin}/#/session/${id}`);
    await page.waitForSelector('pre.diff .diff-add');
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
    await screenshot(page, 'session-changes-phone');
    await phone.close();
  }, 120_000);

  it('shows an in-place run from its first checkpoint, offering rho undo, and says when a run kept no record', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(server.url);
    await page.goto(`${server.origin}/#/session/${inPlace}`);
    await page.waitForSelector('[data-testid="changes-stats"]');
    expect(await page.textContent('[data-testid="changes-stats"]')).toBe('1 file changed, +1/-0');
    expect(await page.textContent('.changes-summary')).toContain('from the checkpoint of turn 0 to that of turn 1');
    expect(await page.locator('.decide code').allTextContents()).toEqual([`rho undo ${inPlace}`]);
    const added = page.locator('pre.diff .diff-add', { hasText: '+- checked the logs' });
    expect(await added.evaluate((element) => getComputedStyle(element).backgroundColor)).toBe('rgb(220, 252, 231)');
    await page.goto(`${server.origin}/#/session/${plain}`);
    await page.waitForSelector('[data-testid="changes"] p.empty');
    expect(await page.textContent('[data-testid="changes"] p.empty')).toContain('ran in place without checkpoints');
    expect(await page.locator('[data-testid="changes"] .decide').count()).toBe(0);
    await context.close();
  }, 120_000);
});
