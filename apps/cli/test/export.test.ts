import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, defineTool } from '@rho/core';
import { validateAtifTrajectory } from '@rho/core/atif';
import type { AtifTrajectory } from '@rho/core/atif';
import { createScriptedModelClient, pythonTracesDir } from '@rho/core/testing';
import { describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = pythonTracesDir;
const cliVersion = (JSON.parse(readFileSync(join(here, '..', 'package.json'), 'utf8')) as { version: string }).version;

function parseValid(json: string): AtifTrajectory {
  const value: unknown = JSON.parse(json);
  expect(validateAtifTrajectory(value)).toEqual([]);
  return value as AtifTrajectory;
}

/** A rho home with one session made by a real (scripted) run. */
async function homeWithSession(): Promise<{ home: string; id: string }> {
  const home = mkdtempSync(join(tmpdir(), 'rho-export-'));
  const directory = join(home, 'sessions', 'abc12345');
  mkdirSync(directory, { recursive: true });
  const client = createScriptedModelClient({
    model: 'gpt-4o-mini',
    steps: [
      {
        text: 'Checking.',
        toolCalls: [{ id: 'call_1', name: 'shout', arguments: { text: 'ünïcode' } }],
        usage: { inputTokens: 500, outputTokens: 20, cachedTokens: 100 },
      },
      { text: 'It said ÜNÏCODE.', usage: { inputTokens: 600, outputTokens: 8 } },
    ],
  });
  const shout = defineTool({
    name: 'shout',
    description: 'Upper-cases text.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    async handle({ arguments: { text } }) {
      return { content: text.toUpperCase(), success: true };
    },
  });
  const session = new Agent({ model: 'gpt-4o-mini', tools: [shout], client }).createSession({
    id: 'abc12345',
    directory,
  });
  await session.run('shout ünïcode');
  client.assertDone();
  return { home, id: 'abc12345' };
}

describe('rho export (built binary)', () => {
  it('exports a rho session by id, prefix and latest to stdout as valid ATIF-v1.6', async () => {
    const { home, id } = await homeWithSession();
    const byId = await runRho(['export', id], { env: { RHO_HOME: home } });
    expect(byId.stderr).toBe('');
    expect(byId.code).toBe(0);
    const trajectory = parseValid(byId.stdout);
    expect(byId.stdout.endsWith('}\n')).toBe(true);
    expect(byId.stdout).toContain('ÜNÏCODE');
    expect(trajectory).toMatchObject({
      schema_version: 'ATIF-v1.6',
      session_id: id,
      agent: { name: 'rho', version: cliVersion, model_name: 'gpt-4o-mini' },
    });
    expect(trajectory.steps.map((step) => step.source)).toEqual(['user', 'agent', 'agent']);
    expect(trajectory.steps[1]).toMatchObject({
      message: 'Checking.',
      tool_calls: [{ tool_call_id: 'call_1', function_name: 'shout', arguments: { text: 'ünïcode' } }],
      observation: { results: [{ source_call_id: 'call_1', content: 'ÜNÏCODE' }] },
      metrics: { prompt_tokens: 500, cached_tokens: 100 },
    });
    expect(trajectory.final_metrics).toMatchObject({
      total_prompt_tokens: 1100,
      total_completion_tokens: 28,
      total_cached_tokens: 100,
      total_steps: 3,
    });

    const byPrefix = await runRho(['export', 'abc'], { env: { RHO_HOME: home } });
    expect(byPrefix.code).toBe(0);
    expect(JSON.parse(byPrefix.stdout)).toEqual(trajectory);
    const latest = await runRho(['export', 'latest', '--dir', join(home, 'sessions')], {
      env: { RHO_HOME: join(home, 'elsewhere') },
    });
    expect(latest.code).toBe(0);
    expect(JSON.parse(latest.stdout)).toEqual(trajectory);
  });

  it('exports every session of the Python original by its directory path', async () => {
    const names = readdirSync(fixtures).filter((name) => existsSync(join(fixtures, name, 'trace.jsonl')));
    expect(names.length).toBeGreaterThanOrEqual(15);
    for (const name of names) {
      const outcome = await runRho(['export', join(fixtures, name)], {
        env: { RHO_HOME: mkdtempSync(join(tmpdir(), 'rho-empty-')) },
      });
      expect(outcome.stderr, name).toBe('');
      expect(outcome.code, name).toBe(0);
      const trajectory = parseValid(outcome.stdout);
      expect(trajectory.session_id).toBe(name);
      expect(trajectory.agent.model_name).toBe('gpt-5-mini');
      expect(trajectory.final_metrics?.total_steps).toBe(trajectory.steps.length);
    }
  });

  it('exports a session directory named relative to the current directory', async () => {
    const work = mkdtempSync(join(tmpdir(), 'rho-export-cwd-'));
    cpSync(join(fixtures, 'a-readonly-text'), join(work, 'a-readonly-text'), { recursive: true });
    const outcome = await runRho(['export', 'a-readonly-text'], { cwd: work, env: { RHO_HOME: join(work, 'home') } });
    expect(outcome.code).toBe(0);
    expect(parseValid(outcome.stdout).session_id).toBe('a-readonly-text');
  });

  it('writes to a new file with -o and refuses to overwrite an existing one', async () => {
    const { home, id } = await homeWithSession();
    const out = join(mkdtempSync(join(tmpdir(), 'rho-export-out-')), 'trajectory.json');
    const written = await runRho(['export', id, '-o', out], { env: { RHO_HOME: home } });
    expect(written.code).toBe(0);
    expect(written.stdout).toBe('');
    expect(written.stderr).toContain(`Written to ${out}`);
    parseValid(readFileSync(out, 'utf8'));

    writeFileSync(out, 'keep me');
    const again = await runRho(['export', id, '--output', out], { env: { RHO_HOME: home } });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exists/);
    expect(readFileSync(out, 'utf8')).toBe('keep me');
  });

  it('exits 2 with a clear message for unknown sessions, ambiguous prefixes and sessions without a trace', async () => {
    const { home } = await homeWithSession();
    const unknown = await runRho(['export', 'zzz'], { env: { RHO_HOME: home } });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Session not found: zzz/);
    expect(unknown.stdout).toBe('');

    mkdirSync(join(home, 'sessions', 'abc99999'));
    writeFileSync(
      join(home, 'sessions', 'abc99999', 'meta.json'),
      JSON.stringify({ id: 'abc99999', status: 'created', started_at: '2020-01-01T00:00:00Z' }),
    );
    const old = new Date('2020-01-01T00:00:00Z');
    utimesSync(join(home, 'sessions', 'abc99999'), old, old);
    const ambiguous = await runRho(['export', 'abc'], { env: { RHO_HOME: home } });
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toMatch(/Ambiguous prefix 'abc'/);
    const empty = await runRho(['export', 'abc99999'], { env: { RHO_HOME: home } });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/No readable trace\.jsonl/);

    const noSessions = await runRho(['export', 'latest'], {
      env: { RHO_HOME: mkdtempSync(join(tmpdir(), 'rho-none-')) },
    });
    expect(noSessions.code).toBe(2);
    expect(noSessions.stderr).toMatch(/No sessions/);
    const notADirectory = await runRho(['export', './no/such/dir'], { env: { RHO_HOME: home } });
    expect(notADirectory.code).toBe(2);
    expect(notADirectory.stderr).toMatch(/not a session directory/);
  });
});
