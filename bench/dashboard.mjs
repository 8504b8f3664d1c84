// bench/dashboard: the web dashboard (`rho dashboard`, @rho/dashboard) in Debian's Chromium driven
// by playwright-core. Three figures, each a median over several rounds:
// - listing 10,000 sessions on the server: the first (cold) listing, which reads every meta.json
//   and every trace once, and a warm page query (filter, sort, page of 100);
// - time to first render: from navigation to the sessions page showing its first 100 rows out of
//   10,000 (target: under a second), once with the listing ready (as when the printed URL is
//   opened), once on a new server opened at once (cold); and a search to its rows;
// - event-to-screen latency: a record appended to a session's trace until the open session page
//   shows it (server-sent events from the trace follower), on the Conversation tab (an entry) and
//   in the trace viewer (a row of the span tree).
// The trace viewer opening a session of 100,000 records is bench/trace-viewer.mjs.
// Skipped (exit 0) when Chromium is not installed; RHO_CHROMIUM names another binary.
/* global document -- the functions given to waitForFunction run in the page */
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileSource, startDashboard } from '@rho/dashboard';
import { writeSampleSessions } from '../packages/dashboard/scripts/sample-sessions.mjs';

const SESSIONS = 10_000;
const ROUNDS = process.argv.includes('--quick') ? 3 : 7;
const EVENTS = process.argv.includes('--quick') ? 10 : 30;
const TARGET_MS = 1000;
const CHROMIUM = process.env.RHO_CHROMIUM ?? '/usr/bin/chromium';

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const percentile = (values, fraction) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * fraction))];

if (!existsSync(CHROMIUM)) {
  console.log(`dashboard: skipped, no Chromium at ${CHROMIUM} (install the Debian package chromium)`);
  process.exit(0);
}

const root = mkdtempSync(join(tmpdir(), 'rho-bench-dashboard-'));
const { chromium } = await import('playwright-core');
let browser;
let server;
try {
  const base = join(root, 'sessions');
  const ids = writeSampleSessions(base, SESSIONS, { turns: 4, start: Date.now() - SESSIONS * 60_000 });

  // Server side: the cold listing (every meta.json, every trace once), then warm queries.
  const coldTimes = [];
  for (let round = 0; round < Math.min(3, ROUNDS); round += 1) {
    const source = createFileSource(base);
    const started = performance.now();
    await source.listSessions({ limit: 100 });
    coldTimes.push(performance.now() - started);
    await source.close();
  }
  // The defaults a user gets: active sessions re-read every second, the directory every 5 s.
  const source = createFileSource(base);
  await source.listSessions({ limit: 100 });
  const warmTimes = [];
  for (let round = 0; round < ROUNDS * 3; round += 1) {
    const started = performance.now();
    await source.listSessions({ limit: 100, search: 'migration', sort: 'tokens', offset: 200 });
    warmTimes.push(performance.now() - started);
  }
  console.log(
    `server: first listing of ${SESSIONS} sessions ${Math.round(median(coldTimes))} ms (every meta.json; traces are read after, in the background); ` +
      `a page query (search, sort by tokens, page 3) ${median(warmTimes).toFixed(1)} ms`,
  );

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-background-networking'],
  });
  // Cold: a new server, the page opened at once (the listing is not ready yet).
  const coldServer = await startDashboard({ source: createFileSource(base) });
  const coldContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const coldPage = await coldContext.newPage();
  const coldStarted = performance.now();
  await coldPage.goto(coldServer.url);
  await coldPage.waitForFunction((count) => document.querySelectorAll('tbody tr').length === count, 100);
  const coldRender = performance.now() - coldStarted;
  await coldContext.close();
  await coldServer.close();

  server = await startDashboard({ source });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // Log in once (the cookie), so each round times the page itself.
  const login = await context.newPage();
  await login.goto(server.url);
  await login.close();

  const renderTimes = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const page = await context.newPage();
    const started = performance.now();
    await page.goto(`${server.origin}/`);
    await page.waitForFunction((count) => document.querySelectorAll('tbody tr').length === count, 100);
    renderTimes.push(performance.now() - started);
    const counted = await page.textContent('[data-testid="session-count"]');
    if (!counted.includes(`of ${SESSIONS} sessions`)) throw new Error(`unexpected count: ${counted}`);
    await page.close();
  }
  const page = await context.newPage();
  await page.goto(`${server.origin}/`);
  await page.waitForSelector('tbody tr');
  const sortTimes = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const query = `(#${round * 7 + 11}`;
    const started = performance.now();
    await page.fill('input[type="search"]', query);
    await page.waitForFunction(
      (text) => [...document.querySelectorAll('tbody tr')].every((row) => row.textContent.includes(text)),
      query,
    );
    sortTimes.push(performance.now() - started);
  }
  await page.close();
  const render = median(renderTimes);
  console.log(
    `browser: sessions page with ${SESSIONS} sessions rendered in ${Math.round(render)} ms (median of ${ROUNDS}, target < ${TARGET_MS} ms); ` +
      `a search to its rows ${Math.round(median(sortTimes))} ms (200 ms of it is the typing debounce)`,
  );
  console.log(
    `browser, cold: a new server's page opened at once ${Math.round(coldRender)} ms (includes the first listing)`,
  );
  if (render > TARGET_MS) process.exitCode = 1;

  // Event to screen: append a record to a session's trace; time until its page shows it. The
  // Conversation tab (every record streamed to the page): an assistant message as an entry.
  const id = ids[0];
  const tracePath = join(base, id, 'trace.jsonl');
  const live = await context.newPage();
  await live.goto(`${server.origin}/#/session/${id}/conversation`);
  await live.waitForSelector('[data-testid="conversation"] .entry-assistant');
  const latencies = [];
  for (let event = 0; event < EVENTS; event += 1) {
    const marker = `bench marker ${event} ${Math.random().toString(36).slice(2)}`;
    const seen = live.waitForFunction(
      (text) => {
        const found = [...document.querySelectorAll('.entry-text')].some((node) => node.textContent === text);
        return found ? Date.now() : false;
      },
      marker,
      { polling: 'raf' },
    );
    const written = Date.now();
    appendFileSync(
      tracePath,
      `${JSON.stringify({ type: 'message', ts: new Date().toISOString(), role: 'assistant', content: marker })}\n`,
    );
    latencies.push((await (await seen).jsonValue()) - written);
  }
  await live.close();
  console.log(
    `event to screen, conversation: median ${Math.round(median(latencies))} ms, p95 ${Math.round(percentile(latencies, 0.95))} ms over ${EVENTS} records appended to a trace`,
  );
  // The trace viewer (the session page's default): a directive, as a new row of the span tree
  // (the tree scrolled to its end first, where the row appears).
  const tree = await context.newPage();
  await tree.goto(`${server.origin}/#/session/${id}`);
  await tree.waitForSelector('[data-testid="trace"][data-ready="true"] [role="treeitem"]');
  const treeLatencies = [];
  for (let event = 0; event < EVENTS; event += 1) {
    const index = readFileSync(tracePath, 'utf8').split('\n').length - 1;
    await tree.evaluate(() => {
      const scroller = document.querySelector('.trace-tree');
      scroller.scrollTop = scroller.scrollHeight;
    });
    const seen = tree.waitForFunction(
      (span) => (document.querySelector(`[role="treeitem"][data-span="${span}"]`) ? Date.now() : false),
      `directive-${index}`,
      { polling: 'raf' },
    );
    const written = Date.now();
    appendFileSync(
      tracePath,
      `${JSON.stringify({ type: 'directive', ts: new Date().toISOString(), text: `bench directive ${event}` })}\n`,
    );
    treeLatencies.push((await (await seen).jsonValue()) - written);
  }
  await tree.close();
  console.log(
    `event to screen, trace viewer: median ${Math.round(median(treeLatencies))} ms, p95 ${Math.round(percentile(treeLatencies, 0.95))} ms over ${EVENTS} records appended to a trace (a new row of the tree)`,
  );
} finally {
  await browser?.close();
  await server?.close();
  rmSync(root, { recursive: true, force: true });
}
