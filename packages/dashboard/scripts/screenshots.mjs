// Takes the operator guide's screenshots of the dashboard (docs/screenshots/dashboard-*.png) from sample
// sessions, in Debian's Chromium: `node packages/dashboard/scripts/screenshots.mjs` after a build.
// Not part of the tests; run it again when the pages change.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { createFileSource, startDashboard } from '../dist/index.js';
import { writeSampleSessions } from './sample-sessions.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', '..', '..', 'docs', 'screenshots');
mkdirSync(out, { recursive: true });
const root = mkdtempSync(join(tmpdir(), 'rho-dashboard-shots-'));
const base = join(root, 'sessions');
const now = Date.now();
const ids = writeSampleSessions(base, 60, { start: now - 60 * 2_700_000, spreadMs: 2_700_000, turns: 4 });

// One longer session with a compaction and a directive, for the session page.
const rich = ids.at(-1);
let time = now - 60_000;
const ts = () => new Date(time).toISOString();
const prompt = 'Find out why the nightly build fails and propose a fix';
const lines = [
  { type: 'run_start', ts: ts(), prompt },
  { type: 'message', ts: ts(), role: 'user', content: prompt },
];
let context = 2000;
for (let turn = 0; turn < 14; turn += 1) {
  lines.push({ type: 'llm_start', ts: ts(), model: 'gpt-5-mini', context_size: context });
  time += 600 + ((turn * 337) % 1400);
  lines.push({
    type: 'llm_end',
    ts: ts(),
    model: 'gpt-5-mini',
    input_tokens: context,
    output_tokens: 80 + ((turn * 53) % 200),
    cache_read_tokens: 0,
    reasoning_tokens: 0,
    cost_usd: context * 0.25e-6,
    duration_ms: 600 + ((turn * 337) % 1400),
  });
  lines.push({
    type: 'message',
    ts: ts(),
    role: 'assistant',
    content: turn === 13 ? 'The lock file is stale; the fix is in build.sh.' : 'Checking the next file.',
    ...(turn === 13
      ? {}
      : {
          tool_calls: [
            {
              id: `c${turn}`,
              type: 'function',
              function: { name: turn % 3 === 0 ? 'bash' : 'read', arguments: '{"path":"build.sh"}' },
            },
          ],
        }),
  });
  if (turn === 13) break;
  lines.push({
    type: 'tool_start',
    ts: ts(),
    tool_call_id: `c${turn}`,
    tool_name: turn % 3 === 0 ? 'bash' : 'read',
    tool_args: { path: 'build.sh' },
  });
  time += turn % 3 === 0 ? 900 : 60;
  lines.push({
    type: 'tool_end',
    ts: ts(),
    tool_call_id: `c${turn}`,
    tool_name: turn % 3 === 0 ? 'bash' : 'read',
    success: turn !== 6,
    duration_ms: turn % 3 === 0 ? 900 : 60,
  });
  lines.push({
    type: 'message',
    ts: ts(),
    role: 'tool',
    tool_call_id: `c${turn}`,
    content: turn === 6 ? 'Error: exit code 1' : '#!/bin/sh\nset -e\nrm -f .lock',
  });
  context += 2600;
  if (turn === 4) {
    lines.push({ type: 'directive', ts: ts(), text: 'Look at the CI logs first' });
    lines.push({
      type: 'message',
      ts: ts(),
      role: 'user',
      content: '[Operator directive] Look at the CI logs first',
      directive: true,
    });
  }
  if (turn === 8) {
    lines.push({
      type: 'compact',
      ts: ts(),
      trigger: 'auto',
      tokens_before: context,
      tokens_after: 3000,
      summary: 'Summary so far.',
      kept: [],
    });
    context = 3000;
  }
  time += 100;
}
lines.push({ type: 'run_end', ts: ts(), status: 'completed' });
writeFileSync(join(base, rich, 'trace.jsonl'), `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
const meta = JSON.parse(readFileSync(join(base, rich, 'meta.json'), 'utf8'));
writeFileSync(
  join(base, rich, 'meta.json'),
  JSON.stringify({
    ...meta,
    model: 'gpt-5-mini',
    first_prompt: prompt,
    parent_id: null,
    started_at: new Date(now - 60_000).toISOString(),
    cost_usd: 0.0213,
  }),
);

const server = await startDashboard({ source: createFileSource(base) });
const browser = await chromium.launch({
  executablePath: process.env.RHO_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-background-networking'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 560 } });
  await page.goto(server.url);
  await page.waitForSelector('tbody tr');
  await page.screenshot({ path: join(out, 'dashboard-sessions.png') });
  await page.setViewportSize({ width: 1100, height: 1250 });
  await page.goto(`${server.origin}/#/session/${rich}`);
  await page.waitForSelector('[data-chart="context"] canvas');
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(out, 'dashboard-session.png'), fullPage: false });
  await page.setViewportSize({ width: 1100, height: 720 });
  await page.goto(`${server.origin}/#/costs`);
  await page.waitForSelector('[data-chart="cost-by-day"] canvas');
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(out, 'dashboard-costs.png') });
  await page.goto(`${server.origin}/#/tools`);
  await page.waitForSelector('text=Latency');
  await page.screenshot({ path: join(out, 'dashboard-tools.png') });
  const phone = await browser.newPage({ viewport: { width: 390, height: 760 }, isMobile: true });
  await phone.goto(server.url);
  await phone.goto(`${server.origin}/#/session/${rich}`);
  await phone.waitForSelector('[data-chart="tokens"] canvas');
  await phone.waitForTimeout(300);
  await phone.screenshot({ path: join(out, 'dashboard-phone.png') });
} finally {
  await browser.close();
  await server.close();
  rmSync(root, { recursive: true, force: true });
}
