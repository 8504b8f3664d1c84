import { describe, expect, it } from 'vitest';
import type { DatabaseConfig } from '../database-config.js';
import { AliasConnection } from './connection-cache.js';
import type { DialectDriver, DriverConnection, RowSink, RunOptions, RunOutcome } from './driver.js';

const lost = (): Error =>
  Object.assign(new Error('Connection lost: The server closed the connection.'), { code: 'PROTOCOL_CONNECTION_LOST' });

/** A driver whose connections run `script` in turn: each entry is one run's behaviour. */
function fakeDriver(script: ((sink: RowSink) => Promise<RunOutcome>)[], options: { isBroken?: () => boolean } = {}) {
  const stats = { connects: 0, runs: 0, pings: 0, closes: 0 };
  const connection = (): DriverConnection => ({
    run: async (_sql: string, sink: RowSink, _options: RunOptions) => {
      const step = script[stats.runs];
      stats.runs += 1;
      if (step === undefined) throw new Error('unexpected run');
      return step(sink);
    },
    ping: async () => {
      stats.pings += 1;
    },
    writeAccess: async () => undefined,
    close: async () => {
      stats.closes += 1;
    },
    ...(options.isBroken === undefined ? {} : { isBroken: options.isBroken }),
  });
  const driver: DialectDriver = {
    type: 'mysql',
    label: 'MySQL',
    connect: async () => {
      stats.connects += 1;
      return connection();
    },
    listTables: () => ({ sql: '', params: [] }),
    describeColumns: () => ({ sql: '', params: [] }),
    describePrimaryKey: () => ({ sql: '', params: [] }),
    describeForeignKeys: () => ({ sql: '', params: [] }),
    describeIndexes: () => ({ sql: '', params: [] }),
  };
  return { driver, stats };
}

const config: DatabaseConfig = { alias: 'fake', type: 'mysql', statementTimeoutSeconds: 5 };
const sink = (): RowSink & { rowsSeen: unknown[][] } => ({
  rowsSeen: [],
  columns() {},
  rows(batch) {
    this.rowsSeen.push(...batch);
  },
});
const ok = async (target: RowSink): Promise<RunOutcome> => {
  await target.columns(['n']);
  await target.rows([[1]]);
  return { hasResultSet: true };
};

describe('AliasConnection.run', () => {
  it('runs a read-only statement once more on a fresh connection when the connection was lost before any row', async () => {
    const { driver, stats } = fakeDriver([() => Promise.reject(lost()), ok]);
    const alias = new AliasConnection(config, driver, true, async () => {});
    const target = sink();
    await expect(alias.run('SELECT 1', target, { readonly: true })).resolves.toEqual({ hasResultSet: true });
    expect(target.rowsSeen).toEqual([[1]]);
    expect(stats).toMatchObject({ connects: 2, runs: 2, closes: 1 });
  });

  it('never sends a write twice', async () => {
    const { driver, stats } = fakeDriver([() => Promise.reject(lost()), ok]);
    const alias = new AliasConnection(config, driver, false, async () => {});
    await expect(alias.run('DELETE FROM t', sink(), { readonly: false })).rejects.toThrow(/Connection lost/);
    expect(stats.runs).toBe(1);
  });

  it('does not run again once rows reached the sink, after a cancel, or for an error of the statement itself', async () => {
    const partial = async (target: RowSink): Promise<RunOutcome> => {
      await target.columns(['n']);
      throw lost();
    };
    const first = fakeDriver([partial, ok]);
    await expect(
      new AliasConnection(config, first.driver, true, async () => {}).run('SELECT 1', sink(), { readonly: true }),
    ).rejects.toThrow(/Connection lost/);
    expect(first.stats.runs).toBe(1);

    const controller = new AbortController();
    controller.abort();
    const second = fakeDriver([() => Promise.reject(lost()), ok]);
    await expect(
      new AliasConnection(config, second.driver, true, async () => {}).run('SELECT 1', sink(), {
        readonly: true,
        signal: controller.signal,
      }),
    ).rejects.toThrow(/Connection lost/);
    expect(second.stats.runs).toBe(1);

    const third = fakeDriver([() => Promise.reject(new Error("Table 'x' doesn't exist")), ok]);
    await expect(
      new AliasConnection(config, third.driver, true, async () => {}).run('SELECT 1', sink(), { readonly: true }),
    ).rejects.toThrow(/doesn't exist/);
    expect(third.stats.runs).toBe(1);
  });

  it('reconnects without a ping when the driver knows the connection is broken, and never pings one that can tell', async () => {
    let broken = false;
    const { driver, stats } = fakeDriver([ok, ok, ok], { isBroken: () => broken });
    const alias = new AliasConnection(config, driver, true, async () => {});
    await alias.run('SELECT 1', sink(), { readonly: true });
    await alias.run('SELECT 1', sink(), { readonly: true });
    expect(stats).toMatchObject({ connects: 1, pings: 0 });
    broken = true;
    await alias.run('SELECT 1', sink(), { readonly: true });
    expect(stats).toMatchObject({ connects: 2, pings: 0, closes: 1 });
  });
});
