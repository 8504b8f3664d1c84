import { describe, expect, it } from 'vitest';
import { probeMysql, probePostgres } from './support/servers.js';

// The integration suites skip locally when a server is down, but must fail under CI.
describe('database server gate', () => {
  it('fails when servers are required and one does not answer', async () => {
    await expect(probePostgres({ port: 1, required: true })).rejects.toThrow(
      /^CI requires PostgreSQL at 127\.0\.0\.1:1 does not answer/,
    );
    await expect(probeMysql({ port: 1, required: true })).rejects.toThrow(
      /^CI requires MariaDB at 127\.0\.0\.1:1 does not answer/,
    );
  });

  it('only skips, with the reason, when they are not required', async () => {
    const probe = await probePostgres({ port: 1, required: false });
    expect(probe.available).toBe(false);
    expect(probe.reason).toMatch(/start it/);
  });
});
