// The dashboard in a real browser: Debian's Chromium (/usr/bin/chromium) driven by playwright-core,
// which never downloads a browser. Skipped when Chromium is missing, except in CI (CI=true), where
// that is a failure. Screenshots go to artifacts/dashboard/ (gitignored; CI keeps them).
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium, shots } from './chromium.js';
import { writeSampleSessions } from '../scripts/sample-sessions.mjs';
import { startDashboard } from '../src/dashboard-server.js';
import type { DashboardServer } from '../src/dashboard-server.js';
import { createFileSource } from '../src/file-source.js';
import { startScriptedRun, temporarySessions, waitFor } from './support.js';
import type { ScriptedRun } from './support.js';

let browser: Browser;
let server: DashboardServer;
let run: ScriptedRun;

/** Counts the pixels of a chart's canvas close to a series colour (axes and grid are grey). */
async function seriesPixels(page: Page, chart: string, rgb: [number, number, number]): Promise<number> {
  return page.evaluate(
    ({ chart, rgb }) => {
      const canvas = document.querySelector<HTMLCanvasElement>(`[data-chart="${chart}"] canvas`);
      if (canvas === null) return -1;
      const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
      let count = 0;
      for (let index = 0; index < data.length; index += 4) {
        if (data[index + 3]! < 40) continue;
        const distance =
          Math.abs(data[index]! - rgb[0]) + Math.abs(data[index + 1]! - rgb[1]) + Math.abs(data[index + 2]! - rgb[2]);
        if (distance < 90) count += 1;
      }
      return count;
    },
    { chart, rgb },
  );
}

async function screenshot(page: Page, name: string): Promise<void> {
  const path = join(shots, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  expect(statSync(path).size).toBeGreaterThan(5000);
}

describe.skipIf(!chromiumAvailable)('dashboard in Chromium', () => {
  beforeAll(async () => {
    const base = temporarySessions();
    writeSampleSessions(base, 30, { start: Date.now() - 30 * 3_600_000, spreadMs: 3_600_000 });
    // A live run that keeps calling its tool (a little slowly) until it is cancelled.
    run = await startScriptedRun(
      base,
      'Watch the logs until told to stop',
      () => ({
        type: 'response',
        text: 'Looking again.',
        toolCalls: [{ name: 'look', arguments: '{"what":"logs"}' }],
        delayMs: 40,
      }),
      { profile: 'developer' },
    );
    server = await startDashboard({ source: createFileSource(base, { refreshMs: 200 }), statusIntervalMs: 200 });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await run?.server.close();
  });

  it('shows the page of a route opened before its first effects ran', async () => {
    // Preact runs effects after the next frame, or after 35 ms without one. Hold that back, set
    // the hash in the window between the first render and the route listener, then let the
    // effects run: the page must follow the hash all the same.
    const context = await browser.newContext();
    await context.addInitScript(() => {
      const held: (() => void)[] = [];
      let holding = true;
      const later = window.setTimeout.bind(window);
      const laterFrame = window.requestAnimationFrame.bind(window);
      (window as unknown as { runHeldEffects: () => void }).runHeldEffects = () => {
        holding = false;
        held.splice(0).forEach((run) => run());
      };
      window.requestAnimationFrame = (callback) => (holding ? 0 : laterFrame(callback));
      window.setTimeout = ((callback: () => void, delay?: number, ...rest: unknown[]) => {
        if (holding && delay === 35) {
          held.push(callback);
          return 0;
        }
        return later(callback, delay, ...rest);
      }) as typeof window.setTimeout;
    });
    const page = await context.newPage();
    await page.goto(server.url);
    await page.evaluate(() => {
      location.hash = '#/costs';
    });
    await page.evaluate(() => (window as unknown as { runHeldEffects: () => void }).runHeldEffects());
    await page.waitForSelector('h1:text-is("Costs")', { timeout: 5_000 });
    await context.close();
  });

  it('refuses a browser without the token', async () => {
    const page = await browser.newPage();
    const response = await page.goto(`${server.origin}/`);
    expect(response!.status()).toBe(401);
    expect(await page.textContent('body')).toContain('needs its access token');
    const api = await page.goto(`${server.origin}/api/sessions`);
    expect(api!.status()).toBe(401);
    await page.close();
  });

  it('lists sessions with children under parents, searches, and follows a live run, pausing and cancelling it', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    // Everything the page loads comes from the dashboard itself: no CDN, so it works offline.
    const elsewhere: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(`${server.origin}/`)) elsewhere.push(request.url());
    });
    await page.goto(server.url);
    expect(new URL(page.url()).search).toBe('');
    await page.waitForSelector(`tr[data-session="${run.id}"]`);
    expect(await page.textContent('[data-testid="session-count"]')).toContain('31 of 31 sessions');
    expect(await page.textContent(`tr[data-session="${run.id}"]`)).toContain('running');
    expect(await page.locator('td.mono', { hasText: '└' }).count()).toBeGreaterThan(0);
    await screenshot(page, 'sessions');
    await page.fill('input[type="search"]', '(#7)');
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1);
    expect(await page.textContent('tbody')).toContain('(#7)');
    await page.fill('input[type="search"]', '');
    await page.waitForSelector(`tr[data-session="${run.id}"]`);

    await page.click(`tr[data-session="${run.id}"] a`);
    // The trace viewer first: the live run's spans grow while it streams.
    await page.waitForSelector('[data-testid="trace"] [role="treeitem"] .tree-name:text-is("look")');
    const spansBefore = Number(await page.getAttribute('[data-testid="trace"]', 'data-spans'));
    await page.waitForFunction(
      (count) => Number(document.querySelector('[data-testid="trace"]')?.getAttribute('data-spans')) > count + 3,
      spansBefore,
    );
    await page.click('nav.tabs a:text-is("Conversation")');
    await page.waitForSelector('[data-testid="conversation"] .entry-assistant');
    // Live: the page keeps receiving records while the run streams, without reloading.
    const before = Number(await page.evaluate(() => document.body.dataset.records));
    await page.waitForFunction((count) => Number(document.body.dataset.records) > count + 5, before);
    await page.waitForSelector('.span-tool');
    expect(await page.textContent('[data-testid="session-status"]')).toBe('running');
    await waitFor('the token chart drawn', async () => (await seriesPixels(page, 'tokens', [37, 99, 235])) > 50);
    await waitFor('the context chart drawn', async () => (await seriesPixels(page, 'context', [220, 38, 38])) > 20);
    // "live" while the page follows a running session; its cost so far, as rho ps has it.
    expect(await page.textContent('[data-testid="connection"]')).toBe('live');
    await page.waitForFunction(() =>
      [...document.querySelectorAll('dl.facts div')].some(
        (fact) =>
          fact.querySelector('dt')?.textContent === 'Cost' && /^\$\d/.test(fact.querySelector('dd')?.textContent ?? ''),
      ),
    );
    // Turns are whole numbers on the axis, and no placeholder legend (`turn: -- input: --`).
    for (const chart of ['tokens', 'context']) {
      expect(await page.getAttribute(`[data-chart="${chart}"]`, 'data-x-ticks')).toMatch(/^\d+(,\d+)*$/);
      expect(await page.textContent(`[data-legend="${chart}"]`)).not.toContain('--');
    }
    expect(await page.locator('.u-legend').count()).toBe(0);
    // Values on hover only.
    expect(await page.locator('[data-legend="tokens"] b').count()).toBe(0);
    // Over the middle of the plot (scrolled into view first).
    await page.locator('[data-chart="tokens"] .u-over').hover();
    await page.waitForFunction(() => document.querySelectorAll('[data-legend="tokens"] b').length === 2);
    expect(await page.textContent('[data-legend="tokens"]')).toMatch(/turn \d+/);

    // Pause, confirmed: the agent receives it and says so in its trace (and so on the page).
    await page.click('button:text-is("Pause")');
    await page.click('button:text-is("Confirm pause")');
    await page.waitForFunction(
      () => document.querySelector('[data-testid="session-status"]')?.textContent === 'paused',
    );
    await screenshot(page, 'session-paused');
    await page.click('button:text-is("Resume")');
    await page.click('button:text-is("Confirm resume")');
    await page.waitForFunction(
      () => document.querySelector('[data-testid="session-status"]')?.textContent === 'running',
    );
    // A directive, confirmed, reaches the model as an operator message.
    await page.fill('input[aria-label="Directive"]', 'Also check the disk');
    await page.click('button:text-is("Send")');
    await page.click('button:text-is("Confirm directive")');
    await page.waitForSelector('.entry-directive');
    // Back out of a cancel: nothing is sent.
    await page.click('button:text-is("Cancel")');
    await page.click('button:text-is("Back")');
    expect(await page.textContent('[data-testid="session-status"]')).toBe('running');
    await page.click('button:text-is("Cancel")');
    await page.click('button:text-is("Confirm cancel")');
    expect((await run.done).status).toBe('cancelled');
    await page.waitForFunction(
      () => document.querySelector('[data-testid="session-status"]')?.textContent === 'cancelled',
    );
    await page.waitForFunction(() =>
      [...document.querySelectorAll('.entry-run')].some((node) => node.textContent?.includes('Run ended: cancelled')),
    );
    // Finished: nothing says "live" any more, and the controls are disabled and look it.
    expect(await page.locator('[data-testid="connection"]').count()).toBe(0);
    expect(await page.isDisabled('button:text-is("Pause")')).toBe(true);
    expect(await page.evaluate(() => getComputedStyle(document.querySelector('button.danger')!).cursor)).toBe(
      'not-allowed',
    );
    await screenshot(page, 'session');
    expect(elsewhere).toEqual([]);
    await context.close();
  }, 180_000);

  it('draws the costs chart and the tools page, and lays the session page out on a phone', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${server.url}`);
    await page.goto(`${server.origin}/#/costs`);
    await page.waitForSelector('[data-chart="cost-by-day"] canvas');
    await waitFor('the cost chart drawn', async () => (await seriesPixels(page, 'cost-by-day', [37, 99, 235])) > 50);
    // Days under whole bars only (`Dec 3`), none past the data (the axis once ran to 2029).
    const days = (await page.getAttribute('[data-chart="cost-by-day"]', 'data-x-ticks'))!.split(',');
    expect(days.length).toBeGreaterThan(0);
    expect(days.length).toBeLessThanOrEqual(3);
    for (const day of days) expect(day).toMatch(/^[A-Z][a-z]{2} \d{1,2}( \d{4})?$/);
    expect(await page.textContent('main')).toContain('claude-sonnet-4');
    await screenshot(page, 'costs');
    await page.goto(`${server.origin}/#/tools`);
    await page.waitForSelector('text=Latency');
    expect(await page.textContent('main')).toContain('look');
    // p50 and p95 per model too.
    const models = (await page.textContent('[data-testid="latency-model"]'))!;
    expect(models).toContain('gpt-4o-mini');
    expect(models).toContain('p95');
    await screenshot(page, 'tools');
    await context.close();

    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const small = await phone.newPage();
    await small.goto(server.url);
    // The sessions list as cards: nothing cut off, no sideways scrolling.
    await small.waitForSelector(`tr[data-session="${run.id}"]`);
    expect(await small.evaluate(() => getComputedStyle(document.querySelector('tbody tr')!).display)).toBe('grid');
    expect(await small.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
    expect(await small.isVisible(`tr[data-session="${run.id}"] td.prompt`)).toBe(true);
    await screenshot(small, 'sessions-phone');
    await small.goto(`${server.origin}/#/session/${run.id}/conversation`);
    await small.waitForSelector('[data-testid="conversation"] .entry-assistant');
    await waitFor('the phone token chart', async () => (await seriesPixels(small, 'tokens', [37, 99, 235])) > 20);
    // Nothing wider than the screen: no sideways scrolling.
    expect(await small.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
    await screenshot(small, 'session-phone');
    await phone.close();
  }, 120_000);
});
