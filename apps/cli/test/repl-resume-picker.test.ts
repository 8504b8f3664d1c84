import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { bin, runRho } from './support/run-rho.js';
import { hasTmux, TmuxSession } from './support/tmux.js';

// The REPL's `/resume` picker in a real terminal: `/resume` alone lists the earlier sessions,
// Esc, Ctrl+C and Enter alone go back, a number resumes that session.

let server: LoopbackServer | undefined;
let terminal: TmuxSession | undefined;
afterEach(async () => {
  terminal?.kill();
  terminal = undefined;
  await server?.close();
  server = undefined;
});

interface Request {
  messages: { role: string; content: string }[];
}

/** The session whose first prompt (in meta.json) is `prompt`. */
function sessionOf(home: string, prompt: string): string {
  const id = readdirSync(join(home, 'sessions')).find(
    (name) =>
      (JSON.parse(readFileSync(join(home, 'sessions', name, 'meta.json'), 'utf8')) as { first_prompt?: string })
        .first_prompt === prompt,
  );
  if (id === undefined) throw new Error(`no session started with ${prompt}`);
  return id;
}

describe.runIf(hasTmux)('the /resume picker', () => {
  it('lists the two earlier sessions newest first, goes back on Esc, Ctrl+C and Enter, and resumes the one chosen', async () => {
    const home = mkdtempSync(join(tmpdir(), 'rho-picker-home-'));
    const work = mkdtempSync(join(tmpdir(), 'rho-picker-work-'));
    server = await startLoopbackServer({
      steps: [
        { type: 'response', text: 'Alpha is done.' },
        { type: 'response', text: 'Beta is done.' },
        { type: 'response', text: 'Going on with alpha.' },
      ],
    });
    for (const prompt of ['first task alpha', 'second task beta']) {
      const run = await runRho(['--base-url', server.url, '-p', prompt], { env: { RHO_HOME: home }, cwd: work });
      expect(run.code).toBe(0);
    }
    const alpha = sessionOf(home, 'first task alpha');
    const beta = sessionOf(home, 'second task beta');

    terminal = new TmuxSession(`node '${bin}' --base-url ${server.url}`, { RHO_HOME: home }, work, {
      columns: 100,
      rows: 40,
    });
    const banner = await terminal.waitFor(/Type a task/);
    const current = /session ([0-9a-f]{8})/.exec(banner)![1]!;

    terminal.type('/resume');
    terminal.keys('Enter');
    const listed = await terminal.waitFor(/Resume which\?\s*$/);
    const rows = listed.split('\n').filter((line) => /^ {2}\d+ {2}/.test(line));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(
      new RegExp(`^ {2}1 {2}${beta} +\\d+[smh] ago +completed +1 run +\\d+ tok +second task beta$`),
    );
    expect(rows[1]).toMatch(
      new RegExp(`^ {2}2 {2}${alpha} +\\d+[smh] ago +completed +1 run +\\d+ tok +first task alpha$`),
    );
    for (const row of rows) expect(row.length).toBeLessThan(100);
    // The REPL's own session is not offered.
    for (const row of rows) expect(row).not.toContain(current);

    // A number off the list asks again; Esc goes back with nothing changed.
    terminal.type('7');
    terminal.keys('Enter');
    await terminal.waitFor(/Choose a number from 1 to 2\.\nResume which\?\s*$/);
    terminal.keys('Escape');
    await terminal.waitFor(new RegExp(`Staying in session ${current}\\.\\n›\\s*$`));
    // Ctrl+C and Enter alone go back too.
    terminal.type('/resume');
    terminal.keys('Enter');
    await terminal.waitFor(/Choose a number[\s\S]*Resume which\?[\s\S]*Resume which\?\s*$/);
    terminal.keys('C-c');
    await terminal.waitFor(new RegExp(`(Staying in session ${current}\\.[\\s\\S]*){2}›\\s*$`));
    terminal.type('/resume');
    terminal.keys('Enter');
    await terminal.waitFor(/(Resume which\?[\s\S]*){3}Resume which\?\s*$/);
    terminal.keys('Enter');
    await terminal.waitFor(new RegExp(`(Staying in session ${current}\\.[\\s\\S]*){3}›\\s*$`));
    expect(terminal.screen()).not.toMatch(/Resumed session|Goodbye/);

    // Choosing 2 resumes alpha: its last turns are shown, and the next request carries its history.
    terminal.type('/resume');
    terminal.keys('Enter');
    await terminal.waitFor(/(Resume which\?[\s\S]*){4}Resume which\?\s*$/);
    terminal.type('2');
    terminal.keys('Enter');
    const resumed = await terminal.waitFor(new RegExp(`Resumed session ${alpha} \\(\\d+ messages`));
    expect(resumed).toMatch(/you › first task alpha\n {2}Alpha is done\./);
    terminal.type('go on');
    terminal.keys('Enter');
    await terminal.waitFor(/Going on with alpha\./);
    const last = server.requests.at(-1)!.body as Request;
    expect(last.messages.filter((message) => message.role !== 'system')).toEqual([
      { role: 'user', content: 'first task alpha' },
      expect.objectContaining({ role: 'assistant', content: 'Alpha is done.' }),
      { role: 'user', content: 'go on' },
    ]);
    terminal.keys('C-d');
    await terminal.waitFor(new RegExp(`Goodbye! Session saved: ${alpha}`));
  });

  it('says so when there is no other session', async () => {
    const home = mkdtempSync(join(tmpdir(), 'rho-picker-home-'));
    const work = mkdtempSync(join(tmpdir(), 'rho-picker-work-'));
    server = await startLoopbackServer({ steps: [] });
    terminal = new TmuxSession(`node '${bin}' --base-url ${server.url}`, { RHO_HOME: home }, work);
    await terminal.waitFor(/Type a task/);
    terminal.type('/resume');
    terminal.keys('Enter');
    await terminal.waitFor(/No other session to resume in this sessions directory\.\n›\s*$/);
    terminal.keys('C-d');
    await terminal.waitFor(/Goodbye!/);
  });
});
