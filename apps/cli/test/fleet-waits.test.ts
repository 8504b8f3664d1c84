// Issue 33: `rho ps` and `rho cancel` over the fleet waited as long as any lock on the fleet's
// tables was held (a migration elsewhere, a transaction left open), in silence. Every fleet
// connection now sets a lock and a statement timeout, and the command says what it waited for.
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema, fleetHome, freshSchema, probePostgres, SHARED_URL } from './support/fleet.js';
import { runRho } from './support/run-rho.js';

const probe = await probePostgres();
const schema = freshSchema();

afterAll(async () => {
  if (probe.available) await dropSchema(schema);
});

describe.skipIf(!probe.available)('fleet commands against a locked table', () => {
  it('rho ps and rho cancel fail after the lock timeout, saying a table was locked, instead of waiting forever', async () => {
    const operator = { RHO_HOME: fleetHome({ schema }) };
    expect((await runRho(['fleet', 'migrate'], { env: operator })).code).toBe(0);
    const sql = postgres(SHARED_URL, { max: 1, onnotice: () => undefined });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => {
      locked = resolve;
    });
    // Another transaction holds the registry locked (as an ALTER TABLE of a migration would).
    const holder = sql.begin(async (tx) => {
      await tx.unsafe(`lock table "${schema}".agent_registry in access exclusive mode`);
      locked();
      await released;
    });
    try {
      await lockTaken;
      const ps = await runRho(['ps'], { env: operator });
      expect(ps.code).toBe(1);
      expect(ps.stderr).toContain("The fleet's database kept a table locked longer than rho waits for a lock");
      expect(ps.stderr).toContain('lock timeout');
      const cancel = await runRho(['cancel', '0123456789abcdef'], { env: operator });
      expect(cancel.code).toBe(1);
      expect(cancel.stderr).toContain('kept a table locked');
    } finally {
      release();
      await holder;
      await sql.end({ timeout: 1 });
    }
    // Once the lock is gone the same command answers.
    const after = await runRho(['ps'], { env: operator });
    expect(after.code).toBe(0);
  });
});

describe('a flag without its value', () => {
  it('is bad input (exit 2) with the parser message, not "a bug in rho"', async () => {
    const outcome = await runRho(['ps', '--fleet']);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('Not enough arguments following: fleet');
    expect(outcome.stderr).not.toContain('bug in rho');
  });
});

describe('warnings with --json', () => {
  it('the "fleet does not answer" warning is a JSON line on stderr; stdout keeps only the records', async () => {
    const { startLoopbackServer } = await import('@rho/core/testing');
    // The model answers once the warning is out (or after 30 s), so the run cannot end before it.
    let warned!: () => void;
    const warning = new Promise<void>((resolve) => {
      warned = resolve;
      setTimeout(resolve, 30_000).unref();
    });
    const model = await startLoopbackServer({
      respond: async () => {
        await warning;
        return { type: 'response', text: 'done' };
      },
    });
    try {
      // Nothing listens on port 1: the fleet is down for this run.
      const home = fleetHome({ schema, url: 'postgres://postgres@127.0.0.1:1/postgres' });
      const outcome = await runRho(['--json', '--base-url', model.url, 'hello'], {
        env: { RHO_HOME: home },
        onSpawn: (child) => {
          let text = '';
          child.stderr?.on('data', (chunk: Buffer) => {
            text += chunk.toString();
            if (text.includes('does not answer')) warned();
          });
        },
      });
      expect(outcome.code).toBe(0);
      const warnings = outcome.stderr
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { type: string; message: string });
      expect(warnings.some((warning) => warning.type === 'warning' && /does not answer/.test(warning.message))).toBe(
        true,
      );
      for (const line of outcome.stdout.split('\n').filter((text) => text !== ''))
        expect((JSON.parse(line) as { type: string }).type).not.toBe('warning');
    } finally {
      await model.close();
    }
  });
});

describe('a signal while the fleet is down', () => {
  it('for a session not on this machine says the fleet did not answer and nothing was sent (exit 1)', async () => {
    const home = fleetHome({ schema, url: 'postgres://postgres@127.0.0.1:1/postgres' });
    const outcome = await runRho(['directive', '0123abcd', 'use the staging database'], { env: { RHO_HOME: home } });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('Looking for 0123abcd on this machine only.');
    expect(outcome.stderr).toContain(
      "Session 0123abcd is not on this machine, and the fleet's database, which may know it, does not answer: nothing was sent.",
    );
  });
});
