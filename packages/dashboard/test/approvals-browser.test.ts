// Answering tool calls that wait for approval, in a real browser (Debian's Chromium driven by
// playwright-core, as in browser.test.ts: skipped without Chromium, except under CI=true), on real
// sessions: core's Agent and Session against a scripted model, approvals.unattended 'wait'.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readTrace } from '@rho/core';
import { createDirectorySource } from '@rho/monitor';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium, shots } from './chromium.js';
import { writeSampleSessions } from '../scripts/sample-sessions.mjs';
import { startDashboard } from '../src/dashboard-server.js';
import type { DashboardServer } from '../src/dashboard-server.js';
import { createFileSource } from '../src/file-source.js';
import { startApprovalRun, temporarySessions, waitFor } from './support.js';
import type { ApprovalRun } from './support.js';

let browser: Browser;
let server: DashboardServer;
let base: string;
const runs: ApprovalRun[] = [];
/** The dangerous call the first test leaves waiting, for the second (which starts one when run alone). */
let dangerous: ApprovalRun | undefined;

/** The approval_answered records of a session's trace, read through a directory source. */
async function answersOf(id: string): Promise<Record<string, unknown>[]> {
  const { records } = readTrace(await createDirectorySource(base).readTrace(id));
  return records.filter((record) => record.type === 'approval_answered');
}

async function waitingRun(commands: string[]): Promise<ApprovalRun> {
  const run = await startApprovalRun(base, `Tidy the build (${commands.join(', ')})`, commands);
  runs.push(run);
  return run;
}

const textOf = async (page: Page, selector: string) => (await page.textContent(selector)) ?? '';

describe.skipIf(!chromiumAvailable)('approvals in Chromium', () => {
  beforeAll(async () => {
    base = temporarySessions();
    writeSampleSessions(base, 5, { start: Date.now() - 5 * 3_600_000, spreadMs: 3_600_000 });
    server = await startDashboard({ source: createFileSource(base, { refreshMs: 200 }), statusIntervalMs: 200 });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    for (const run of runs) await run.server.close();
  });

  it('lists waiting calls in "Waiting for you" as they come, and approves one from its session page, confirmed', async () => {
    const clean = await waitingRun(['make clean']);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(server.url);
    const cleanItem = `[data-testid="waiting"] li[data-call="${clean.id}/call_1"]`;
    await page.waitForSelector(cleanItem, { timeout: 30_000 });
    expect(await textOf(page, cleanItem)).toContain('shell(make clean)');
    expect(await textOf(page, cleanItem)).toContain('the profile asks for approval of shell');
    // A call that starts waiting while the page is open shows up without a reload.
    const remove = await waitingRun(['rm -rf build']);
    dangerous = remove;
    const removeItem = `[data-testid="waiting"] li[data-call="${remove.id}/call_1"]`;
    await page.waitForSelector(removeItem, { timeout: 30_000 });
    expect(await textOf(page, removeItem)).toContain('dangerous');
    expect(await textOf(page, '[data-testid="waiting"] h2')).toBe('Waiting for you (2)');
    expect(await textOf(page, `tr[data-session="${clean.id}"]`)).toContain('waiting_approval');
    await page.screenshot({ path: join(shots, 'approvals-waiting.png'), fullPage: true });

    await page.click(`${cleanItem} a`);
    const card = '.approval[data-call="call_1"]';
    await page.waitForSelector(card);
    expect(await textOf(page, '[data-testid="session-status"]')).toBe('waiting_approval');
    expect(await textOf(page, `${card} .approval-args`)).toContain('"command": "make clean"');
    expect(await textOf(page, `${card} .approval-risk`)).toBe('risk: the profile asks for approval of shell');
    expect(await page.locator(`${card} select option`).allTextContents()).toEqual([
      'this call only',
      'always this exact call',
      'always this tool',
    ]);
    // Backing out of the confirmation sends nothing.
    await page.click(`${card} button:text-is("Approve")`);
    expect(await textOf(page, '.dialog p')).toBe(`Approve shell(make clean) in session ${clean.id} (this call only)?`);
    await page.click('button:text-is("Back")');
    expect(
      existsSync(join(clean.directory, 'approvals')) ? readdirSync(join(clean.directory, 'approvals')) : [],
    ).toEqual([]);
    await page.click(`${card} button:text-is("Approve")`);
    await page.screenshot({ path: join(shots, 'approvals-confirm.png'), fullPage: true });
    await page.click('button:text-is("Confirm approve")');
    await page.waitForFunction(
      () =>
        document.querySelector('[data-testid="approval-notice"]')?.textContent?.startsWith('Approved shell') ?? false,
    );
    expect((await clean.done).status).toBe('completed');
    expect(clean.ran).toEqual(['make clean']);
    expect(await answersOf(clean.id)).toEqual([
      expect.objectContaining({ tool_call_id: 'call_1', decision: 'approve', by: 'dashboard', source: 'dashboard' }),
    ]);
    expect(await createDirectorySource(base).pendingApprovals!(clean.id)).toEqual([]);
    // The page shows it answered: the trace's answer in the conversation, no card left, the run over.
    // The trace viewer's approval span says who answered.
    await page.waitForFunction(() =>
      [...document.querySelectorAll('[role="treeitem"].kind-approval .tree-summary')].some(
        (node) => node.textContent === 'approved by dashboard',
      ),
    );
    await page.waitForFunction(
      () => document.querySelector('[data-testid="session-status"]')?.textContent === 'completed',
    );
    expect(await page.locator(card).count()).toBe(0);
    await page.screenshot({ path: join(shots, 'approvals-answered.png'), fullPage: true });

    // Back on the list, only the other call waits.
    await page.goto(`${server.origin}/#/`);
    await page.waitForSelector(removeItem);
    await waitFor('the answered call gone from the list', async () => (await page.locator(cleanItem).count()) === 0);
    await context.close();
  }, 180_000);

  it('denies a dangerous call with a reason, offering no "always this tool" for it', async () => {
    const remove = dangerous ?? (await waitingRun(['rm -rf build']));
    await waitFor('the dangerous call waiting', async () => {
      const pending = await createDirectorySource(base).pendingApprovals!(remove.id);
      return pending.length === 1;
    });
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    await page.goto(server.url);
    await page.goto(`${server.origin}/#/session/${remove.id}`);
    const card = '.approval[data-call="call_1"]';
    await page.waitForSelector(card);
    expect(await textOf(page, card)).toContain('dangerous: rm -rf');
    expect(await page.locator(`${card} select option`).allTextContents()).toEqual([
      'this call only',
      'always this exact call',
    ]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
    await page.fill(`${card} input[aria-label="Reason for denying"]`, 'use make dist-clean');
    await page.click(`${card} button:text-is("Deny")`);
    expect(await textOf(page, '.dialog p')).toBe(
      `Deny shell(rm -rf build) in session ${remove.id}? The model reads: “use make dist-clean”`,
    );
    await page.click('button:text-is("Confirm deny")');
    await page.waitForFunction(() =>
      [...document.querySelectorAll('[role="treeitem"].kind-approval .tree-summary')].some(
        (node) => node.textContent === 'denied by dashboard: use make dist-clean',
      ),
    );
    expect((await remove.done).status).toBe('refused');
    expect(remove.ran).toEqual([]);
    expect(await answersOf(remove.id)).toEqual([
      expect.objectContaining({ decision: 'deny', reason: 'use make dist-clean', by: 'dashboard' }),
    ]);
    await page.screenshot({ path: join(shots, 'approvals-denied-phone.png'), fullPage: true });
    await context.close();
  }, 180_000);
});
