// bench/trace-viewer: opening one session of 100,000 trace records in the dashboard, the trace
// viewer (`#/session/<id>`: the span tree, GET /api/sessions/:id/spans, and a detail pane,
// GET /api/sessions/:id/records) against the session page as it was before it (the Conversation
// tab, `#/session/<id>/conversation`: every record streamed over GET /api/sessions/:id/events),
// in Debian's Chromium driven by playwright-core. Rounds interleave the two views (which goes
// first alternates), each open in a new browser context on a dashboard server started afresh
// (a new server and file source in a server process kept for the run, so no span index, no
// listing and no trace tally carry over; the OS file cache and V8's JIT stay warm, for both
// views alike). The server runs in a child process, so its CPU time is its own. Medians of:
// - first paint: navigation until the first frame showing a tree row (new) or a conversation
//   entry (old);
// - complete: until the frame showing `data-ready="true"`, the whole tree (new), or every record
//   received (`document.body.dataset.records`, old);
// - interaction: the same question of both pages, "show me a tool call from the middle of the
//   session". New: the tree scrolled to its middle (time until rows at the new position are
//   drawn), a turn there unfolded (until its calls are drawn), one of its tool calls clicked
//   (until the detail pane shows the call's records); the figure compared is the click. Old: the
//   "Show all N entries" button clicked (the page shows the last 300) until every entry is drawn,
//   then the middle entry scrolled into view and drawn;
// - the renderer's CPU (CDP Performance.getMetrics TaskDuration, ScriptDuration), the server
//   process's CPU (process.cpuUsage), the API's response bytes (CDP Network.dataReceived, bodies
//   as sent, without headers);
// and the trace viewer reopened on the same server (its span index kept, as within a minute of
// the first open). The load average is printed with every figure; nothing is asserted on time.
// Options: --quick (3 rounds instead of 7), --records=N (default 100000),
// --server-cpu-prof[=DIR] (the server process writes a V8 CPU profile there when the run ends).
// Skipped (exit 0) when Chromium is not installed; RHO_CHROMIUM names another binary.
/* global document, window, requestAnimationFrame, innerHeight -- the functions given to the page run there */
import { fork } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);
const option = (name) => process.argv.find((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
const value = (name) => option(name)?.split('=')[1];

if (process.argv[2] === '--serve') await serve(process.argv[3], process.argv[4]);
else await main();

/** The server process: starts and stops a dashboard over `base` when the bench says so. */
async function serve(base, id) {
  const { createFileSource, startDashboard } = await import('@rho/dashboard');
  let server;
  const answer = (message) => process.send(message);
  process.on('message', async (message) => {
    if (message.op === 'start') {
      const started = performance.now();
      const source = createFileSource(base);
      server = await startDashboard({ source });
      // Let the file source's first listing (and any background reading of traces it does, such
      // as its tally of tokens and costs) finish, so that it does not run during the open: wait for
      // the session's row, then for the process to be quiet (under 10% of a core for 200 ms).
      const deadline = Date.now() + 60_000;
      while ((await source.getSession(id)) === undefined && Date.now() < deadline)
        await new Promise((done) => setTimeout(done, 20));
      for (;;) {
        const before = process.cpuUsage();
        await new Promise((done) => setTimeout(done, 200));
        const used = process.cpuUsage(before);
        if ((used.user + used.system) / 1000 < 20 || Date.now() > deadline) break;
      }
      answer({
        op: 'started',
        origin: server.origin,
        port: server.port,
        token: server.token,
        settleMs: performance.now() - started,
      });
    } else if (message.op === 'stop') {
      await server?.close();
      server = undefined;
      answer({ op: 'stopped' });
    } else if (message.op === 'cpu') {
      const { user, system } = process.cpuUsage();
      answer({ op: 'cpu', ms: (user + system) / 1000 });
    } else if (message.op === 'heap') {
      globalThis.gc?.();
      answer({ op: 'heap', bytes: process.memoryUsage().heapUsed });
    } else if (message.op === 'exit') {
      await server?.close();
      process.exit(0);
    }
  });
  answer({ op: 'listening' });
}

async function main() {
  const QUICK = process.argv.includes('--quick');
  const ROUNDS = QUICK ? 3 : 7;
  const RECORDS = Number(value('records') ?? 100_000);
  const CHROMIUM = process.env.RHO_CHROMIUM ?? '/usr/bin/chromium';
  const TIMEOUT = 600_000;

  if (!existsSync(CHROMIUM)) {
    console.log(`trace-viewer: skipped, no Chromium at ${CHROMIUM} (install the Debian package chromium)`);
    return;
  }
  const median = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  };
  const load = () =>
    `load ${loadavg()
      .map((figure) => figure.toFixed(2))
      .join(' ')}`;
  const ms = (figure) => (figure >= 10_000 ? `${(figure / 1000).toFixed(1)} s` : `${Math.round(figure)} ms`);
  const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
  const ratio = (a, b) => (b > 0 ? (a / b).toFixed(3) : '-');

  const root = mkdtempSync(join(tmpdir(), 'rho-bench-trace-viewer-'));
  const profileDir =
    option('server-cpu-prof') === undefined ? undefined : resolve(value('server-cpu-prof') ?? join(root, 'cpu-prof'));
  const { chromium } = await import('playwright-core');
  const { writeLargeSession } = await import('../packages/dashboard/scripts/sample-sessions.mjs');
  let browser;
  let child;
  try {
    const base = join(root, 'sessions');
    const generated = performance.now();
    const session = writeLargeSession(base, { records: RECORDS });
    console.log(
      `session ${session.id}: ${session.records.toLocaleString('en')} records in ${session.runs} runs, trace ${mb(session.bytes)}, written in ${ms(performance.now() - generated)}`,
    );

    // The server process, and a little protocol to drive it.
    if (profileDir !== undefined) mkdirSync(profileDir, { recursive: true });
    child = fork(here, ['--serve', base, session.id], {
      execArgv: ['--expose-gc', ...(profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`])],
    });
    const replies = [];
    let waiter;
    child.on('message', (message) => {
      replies.push(message);
      waiter?.();
    });
    child.on('exit', () => waiter?.());
    const reply = async (op) => {
      for (;;) {
        const index = replies.findIndex((message) => message.op === op);
        if (index >= 0) return replies.splice(index, 1)[0];
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`the server process ended (${child.exitCode ?? child.signalCode})`);
        await new Promise((done) => (waiter = done));
      }
    };
    const ask = async (op, answer) => {
      child.send({ op });
      return reply(answer);
    };
    await reply('listening');
    const serverCpu = async () => (await ask('cpu', 'cpu')).ms;
    const serverHeap = async () => (await ask('heap', 'heap')).bytes;

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-background-networking'],
    });

    // Marks the frame in which each milestone is first true, in ms since navigation start: checked
    // in a requestAnimationFrame callback, and timed in a task posted from it, which runs once that
    // frame's style, layout and paint are done. Stops looking once every milestone is marked.
    const watch = ({ view, total }) => {
      const marks = {};
      window.__bench = { marks, done: false };
      const afterPaint = (callback) => {
        const channel = new MessageChannel();
        channel.port1.onmessage = () => callback(performance.now());
        channel.port2.postMessage(0);
      };
      // When the trace's events arrive (a listener of its own on the page's EventSource, which
      // reads nothing): the first and the last of each kind.
      const Native = window.EventSource;
      window.EventSource = class extends Native {
        constructor(...args) {
          super(...args);
          for (const name of ['session', 'spans', 'ready', 'records'])
            this.addEventListener(name, () => {
              marks[`${name}First`] ??= performance.now();
              marks[`${name}Last`] = performance.now();
            });
        }
      };
      const seen = new Set();
      const mark = (name, extra) => {
        if (seen.has(name)) return;
        seen.add(name);
        afterPaint((now) => {
          marks[name] = now;
          Object.assign(marks, extra?.());
          if (marks.firstPaint !== undefined && marks.complete !== undefined) window.__bench.done = true;
        });
      };
      const check = () => {
        if (document.querySelector('nav.tabs')) mark('shell');
        if (view === 'new') {
          const trace = document.querySelector('[data-testid="trace"]');
          if (trace?.querySelector('[role="treeitem"]')) mark('firstPaint');
          if (trace?.getAttribute('data-ready') === 'true')
            mark('complete', () => ({
              spans: Number(trace.getAttribute('data-spans')),
              rows: trace.querySelector('.trace-tree > div').offsetHeight / 28,
            }));
        } else {
          if (document.querySelector('[data-testid="conversation"] .entry')) mark('firstPaint');
          if (Number(document.body?.dataset.records) >= total) mark('complete');
        }
        if (!seen.has('firstPaint') || !seen.has('complete')) requestAnimationFrame(check);
      };
      requestAnimationFrame(check);
    };

    // window.__until(start, test): resolves with the time from `start` until the frame in which
    // `test()` holds has been drawn (as above). Given to page.evaluate as text, so it is defined there.
    const FRAME_HELPER = `window.__until = (start, test) => new Promise((done) => {
      const check = () => {
        if (!test()) return requestAnimationFrame(check);
        const channel = new MessageChannel();
        channel.port1.onmessage = () => done(performance.now() - start);
        channel.port2.postMessage(0);
      };
      requestAnimationFrame(check);
    });`;

    const metrics = async (cdp) => {
      const { metrics: list } = await cdp.send('Performance.getMetrics');
      const get = (name) => list.find((metric) => metric.name === name)?.value ?? 0;
      return { task: get('TaskDuration') * 1000, script: get('ScriptDuration') * 1000 };
    };

    /** Opens `view` of the session in a new context; returns its figures. */
    const open = async (view, server) => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      await context.addCookies([
        {
          name: `rho_dashboard_${server.port}`,
          value: server.token,
          url: server.origin,
          httpOnly: true,
          sameSite: 'Strict',
        },
      ]);
      await context.addInitScript(watch, { view, total: session.records });
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('Performance.enable');
      await cdp.send('Network.enable');
      const apiRequests = new Set();
      let bytes = 0;
      cdp.on('Network.requestWillBeSent', (event) => {
        if (new URL(event.request.url).pathname.startsWith('/api/')) apiRequests.add(event.requestId);
      });
      cdp.on('Network.dataReceived', (event) => {
        if (apiRequests.has(event.requestId)) bytes += event.dataLength;
      });
      const heapBefore = await serverHeap();
      const cpuBefore = await serverCpu();
      const before = await metrics(cdp);
      const path = view === 'new' ? `#/session/${session.id}` : `#/session/${session.id}/conversation`;
      await page.goto(`${server.origin}/${path}`);
      await page.waitForFunction(() => window.__bench.done, null, { timeout: TIMEOUT, polling: 100 });
      const marks = await page.evaluate(() => window.__bench.marks);
      const loaded = await metrics(cdp);
      const cpuLoaded = await serverCpu();
      const bytesLoaded = bytes;
      const heapLoaded = await serverHeap();
      const cpuInteraction = await serverCpu();
      await page.evaluate(FRAME_HELPER);
      const figures = {
        shell: marks.shell,
        connected: marks.sessionFirst,
        dataFirst: view === 'new' ? marks.spansFirst : marks.recordsFirst,
        dataLast: view === 'new' ? marks.readyFirst : marks.recordsLast,
        firstPaint: marks.firstPaint,
        complete: marks.complete,
        spans: marks.spans,
        rows: marks.rows,
        entries: marks.entries,
        rendererMs: loaded.task - before.task,
        scriptMs: loaded.script - before.script,
        serverMs: cpuLoaded - cpuBefore,
        bytes: bytesLoaded,
        heap: heapLoaded - heapBefore,
      };
      if (view === 'new') {
        // Scroll the tree to its middle: until rows at the new position are drawn.
        figures.scroll = await page.evaluate(() => {
          const tree = document.querySelector('.trace-tree');
          const start = performance.now();
          tree.scrollTop = Math.round((tree.scrollHeight - tree.clientHeight) / 2);
          return window.__until(start, () =>
            [...tree.querySelectorAll('[role="treeitem"]')].some(
              (row) => Math.abs(parseFloat(row.style.top) - tree.scrollTop) <= 28,
            ),
          );
        });
        // Unfold a turn in view that called tools (a tree of more than 1,500 spans starts with
        // its turns folded): until its calls are drawn under it.
        const turn = await page.evaluate(() => {
          const tree = document.querySelector('.trace-tree');
          const rows = [...tree.querySelectorAll('[role="treeitem"].kind-turn')].filter((row) => {
            const top = parseFloat(row.style.top);
            return top >= tree.scrollTop + 56 && top <= tree.scrollTop + tree.clientHeight - 200;
          });
          const row = rows.find((candidate) => candidate.querySelector('.tree-summary')?.textContent !== '') ?? rows[0];
          const top = parseFloat(row.style.top);
          const level = Number(row.getAttribute('aria-level'));
          const found = { time: undefined, id: row.dataset.span, top, level };
          if (row.getAttribute('aria-expanded') === 'true') return found;
          const start = performance.now();
          row.querySelector('.tree-toggle').click();
          return window
            .__until(start, () =>
              [...tree.querySelectorAll('[role="treeitem"]')].some(
                (other) =>
                  parseFloat(other.style.top) === top + 28 && Number(other.getAttribute('aria-level')) === level + 1,
              ),
            )
            .then((time) => ({ ...found, time }));
        });
        figures.unfold = turn.time;
        // Click one of its tool calls: until the detail pane shows the call's records.
        await page.waitForFunction(
          ({ top, level }) =>
            [...document.querySelectorAll('[role="treeitem"].kind-tool')].some(
              (row) => parseFloat(row.style.top) > top && Number(row.getAttribute('aria-level')) === level + 1,
            ),
          turn,
          { timeout: TIMEOUT },
        );
        const detail = await page.evaluate(({ top, level }) => {
          const tool = [...document.querySelectorAll('[role="treeitem"].kind-tool')].find(
            (row) => parseFloat(row.style.top) > top && Number(row.getAttribute('aria-level')) === level + 1,
          );
          const id = tool.dataset.span;
          const start = performance.now();
          tool.click();
          return window
            .__until(start, () => document.querySelector(`[data-testid="span-detail"][data-span="${id}"] h4`) !== null)
            .then((time) => ({ time, id }));
        }, turn);
        figures.detail = detail.time;
        figures.detailSpan = detail.id;
        figures.interaction = detail.time;
      } else {
        // "Show all N entries", then the middle entry scrolled into view.
        const shown = await page.evaluate(() => {
          const button = [...document.querySelectorAll('[data-testid="conversation"] button')].find((candidate) =>
            candidate.textContent.startsWith('Show all'),
          );
          // (A conversation of 300 entries or fewer is shown whole, without the button.)
          const count =
            button === undefined
              ? document.querySelectorAll('[data-testid="conversation"] .entry').length
              : Number(/Show all (\d+)/.exec(button.textContent)[1]);
          const start = performance.now();
          button?.click();
          return window
            .__until(start, () => document.querySelectorAll('[data-testid="conversation"] .entry').length === count)
            .then((time) => {
              const entry = document.querySelectorAll('[data-testid="conversation"] .entry')[Math.floor(count / 2)];
              const scrolled = performance.now();
              entry.scrollIntoView({ block: 'center' });
              return window
                .__until(scrolled, () => {
                  const box = entry.getBoundingClientRect();
                  return box.bottom > 0 && box.top < innerHeight;
                })
                .then((scroll) => ({ time, scroll, count }));
            });
        });
        figures.showAll = shown.time;
        figures.scroll = shown.scroll;
        figures.entriesAll = shown.count;
        figures.interaction = shown.time + shown.scroll;
      }
      const after = await metrics(cdp);
      figures.interactionRendererMs = after.task - loaded.task;
      figures.interactionServerMs = (await serverCpu()) - cpuInteraction;
      figures.interactionBytes = bytes - bytesLoaded;
      await context.close();
      return figures;
    };

    const rounds = { new: [], old: [], warm: [] };
    const loads = [];
    const settles = [];
    const start = async () => {
      const server = await ask('start', 'started');
      settles.push(server.settleMs);
      return server;
    };
    const show = (label, figures) =>
      console.log(
        `  ${label}: first paint ${ms(figures.firstPaint)}, complete ${ms(figures.complete)}, interaction ${ms(figures.interaction)}, ` +
          `renderer ${ms(figures.rendererMs)}, server ${ms(figures.serverMs)} CPU, ${mb(figures.bytes)} (${load()})`,
      );
    console.log(
      `${ROUNDS} rounds, new and old interleaved (the first alternates), each open in a new browser context on a server started afresh (${load()})`,
    );
    for (let round = 0; round < ROUNDS; round += 1) {
      loads.push(loadavg()[0]);
      console.log(`round ${round + 1}:`);
      for (const view of round % 2 === 0 ? ['new', 'old'] : ['old', 'new']) {
        let server = await start();
        const figures = await open(view, server);
        rounds[view].push(figures);
        show(view, figures);
        if (view === 'new') {
          // Opened again on the same server: its span index is kept.
          const warm = await open('new', server);
          rounds.warm.push(warm);
          show('new, reopened', warm);
        }
        await ask('stop', 'stopped');
        server = undefined;
      }
    }

    const pick = (list, key) => median(list.map((figures) => figures[key]));
    const [fresh, old, warm] = [rounds.new, rounds.old, rounds.warm];
    console.log(
      `\nmedians of ${ROUNDS} (load average over the rounds ${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)}; ` +
        `each server start waited ${ms(median(settles))} for its first listing and a quiet process):`,
    );
    const line = (label, key) =>
      console.log(
        `${label}: new ${ms(pick(fresh, key))}, old ${ms(pick(old, key))}, new/old ${ratio(pick(fresh, key), pick(old, key))} (${load()})`,
      );
    console.log(
      `tree: ${pick(fresh, 'spans').toLocaleString('en')} spans, ${Math.round(pick(fresh, 'rows')).toLocaleString('en')} rows (${pick(fresh, 'spans') > 1500 ? 'turns folded' : 'nothing folded'}); conversation: ${pick(old, 'entriesAll').toLocaleString('en')} entries`,
    );
    line('page shell (navigation to the session page drawn, before any trace data)', 'shell');
    line('  its event stream opened (the first event, `session`, received)', 'connected');
    line('  the first spans / records event received', 'dataFirst');
    line('first paint (navigation to the first tree row / conversation entry drawn)', 'firstPaint');
    line('  the last event received (`ready` / the last records)', 'dataLast');
    line('complete (navigation to the whole tree / every record received, drawn)', 'complete');
    console.log(
      `interaction: new, a tool call clicked in the middle of the tree until its detail is drawn ${ms(pick(fresh, 'detail'))} ` +
        `(before it: the tree scrolled to its middle ${ms(pick(fresh, 'scroll'))}, a turn unfolded ${fresh.every((figures) => figures.unfold !== undefined) ? ms(pick(fresh, 'unfold')) : '(not folded)'}); ` +
        `old, "Show all" clicked until every entry is drawn ${ms(pick(old, 'showAll'))} and the middle entry scrolled into view ${ms(pick(old, 'scroll'))}; ` +
        `new/old ${ratio(pick(fresh, 'interaction'), pick(old, 'interaction'))}, ` +
        `all three steps of new/old ${ratio(median(fresh.map((figures) => figures.scroll + (figures.unfold ?? 0) + figures.detail)), pick(old, 'interaction'))} (${load()})`,
    );
    console.log(
      `API bytes received until complete: new ${mb(pick(fresh, 'bytes'))}, old ${mb(pick(old, 'bytes'))}, new/old ${ratio(pick(fresh, 'bytes'), pick(old, 'bytes'))}; ` +
        `the interaction: new ${(pick(fresh, 'interactionBytes') / 1000).toFixed(1)} kB, old ${(pick(old, 'interactionBytes') / 1000).toFixed(1)} kB (${load()})`,
    );
    line('renderer CPU until complete (TaskDuration)', 'rendererMs');
    line('  of it JavaScript (ScriptDuration)', 'scriptMs');
    line('renderer CPU of the interaction', 'interactionRendererMs');
    line('server CPU until complete (process.cpuUsage)', 'serverMs');
    line('server CPU of the interaction', 'interactionServerMs');
    console.log(
      `server heap held after complete (after a GC, over the heap before the open): new ${mb(pick(fresh, 'heap'))} (the span index, kept for a minute), old ${mb(pick(old, 'heap'))} (${load()})`,
    );
    console.log(
      `new, reopened on the same server (span index kept): first paint ${ms(pick(warm, 'firstPaint'))}, complete ${ms(pick(warm, 'complete'))}, ` +
        `detail ${ms(pick(warm, 'detail'))}, server ${ms(pick(warm, 'serverMs'))} CPU (${load()})`,
    );
  } finally {
    await browser?.close();
    if (child !== undefined && child.exitCode === null) {
      const exited = new Promise((done) => child.once('exit', done));
      child.send({ op: 'exit' });
      await exited;
    }
    // The temporary directory goes, unless the CPU profile was written into it.
    if (profileDir === undefined || !profileDir.startsWith(root)) rmSync(root, { recursive: true, force: true });
    else rmSync(join(root, 'sessions'), { recursive: true, force: true });
    if (profileDir !== undefined) console.log(`server CPU profile in ${profileDir}`);
  }
}
