// Oracle and Vertica have no server on this machine: these tests run the real tool and driver
// code against fakes of the few oracledb / vertica-nodejs methods rho calls, checking the SQL
// sent, the transaction bookkeeping around it and the formatting of what comes back.
import { EventEmitter } from 'node:events';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Tool } from '@rho/core';
import { closeDbTools, createDbTools } from '../src/db-tools.js';
import type { DatabaseConfig } from '../src/database-config.js';
import { createOracleDriver } from '../src/internal/drivers/oracle-driver.js';
import type {
  OracleConnectionLike,
  OracleExecuteResult,
  OracleModuleLike,
} from '../src/internal/drivers/oracle-driver.js';
import { createVerticaDriver, verticaLiteral } from '../src/internal/drivers/vertica-driver.js';
import type { VerticaClientLike, VerticaModuleLike, VerticaQueryLike } from '../src/internal/drivers/vertica-driver.js';
import { call, profile, toolNamed } from './support/tool-call.js';

const opened: Tool[][] = [];
afterAll(async () => {
  for (const list of opened) await closeDbTools(list);
});

type Answer = { columns: string[]; rows: unknown[][] } | { affected: number } | Error;

/** Answers by the first matching pattern; records everything the driver does. */
class Script {
  log: string[] = [];
  constructor(private readonly answers: [RegExp, Answer][]) {}
  answer(sql: string): Answer {
    for (const [pattern, answer] of this.answers) if (pattern.test(sql)) return answer;
    return { affected: 0 };
  }
}

function fakeOracle(script: Script): {
  module: OracleModuleLike;
  connections: OracleConnectionLike[];
  attributes: unknown[];
} {
  const connections: OracleConnectionLike[] = [];
  const attributes: unknown[] = [];
  const module: OracleModuleLike = {
    OUT_FORMAT_ARRAY: 4001,
    async getConnection(given) {
      attributes.push(given);
      const connection: OracleConnectionLike = {
        callTimeout: 0,
        async execute(sql: string, binds: unknown[]): Promise<OracleExecuteResult> {
          script.log.push(
            binds.length > 0 ? `${sql.replace(/\s+/g, ' ')} ${JSON.stringify(binds)}` : sql.replace(/\s+/g, ' '),
          );
          const answer = script.answer(sql);
          if (answer instanceof Error) throw answer;
          if ('affected' in answer) return { rowsAffected: answer.affected };
          let position = 0;
          return {
            metaData: answer.columns.map((name) => ({ name })),
            rows: answer.rows,
            resultSet: {
              async getRows(count: number) {
                const batch = answer.rows.slice(position, position + count);
                position += batch.length;
                return batch;
              },
              async close() {
                script.log.push('resultSet.close');
              },
            },
          };
        },
        async rollback() {
          script.log.push('rollback');
        },
        async ping() {},
        async close() {
          script.log.push('close');
        },
      };
      connections.push(connection);
      return connection;
    },
  };
  return { module, connections, attributes };
}

const oracleConfig: DatabaseConfig = {
  alias: 'erp',
  type: 'oracle',
  dsn: 'db.example:1521/ORCLPDB1',
  user: 'reader',
  password: 'pw',
  statementTimeoutSeconds: 12,
};

function oracleTool(
  script: Script,
  profileName: 'readonly' | 'readonly-exports' | 'unrestricted' = 'readonly',
  skipSqlPolicy = false,
) {
  const fake = fakeOracle(script);
  const list = createDbTools(
    { profile: profile(profileName), databases: [oracleConfig] },
    { drivers: { oracle: createOracleDriver(async () => fake.module) }, skipSqlPolicy },
  );
  opened.push(list);
  return { tool: toolNamed(list, 'oracle'), fake };
}

const ALBUMS = Array.from({ length: 1234 }, (_, index) => [
  index + 1,
  `Album ${index + 1}`,
  index % 7 === 0 ? null : 'x',
]);

describe('oracle tool at the driver boundary', () => {
  it('connects with the dsn, sets the call timeout, and wraps each query in a read-only transaction that is rolled back', async () => {
    const script = new Script([
      [/session_privs/, { columns: ['PRIVILEGE'], rows: [['CREATE SESSION']] }],
      [/user_tables$/, { columns: ['COUNT(*)'], rows: [[0]] }],
      [/FROM album/i, { columns: ['ALBUMID', 'TITLE', 'NOTE'], rows: ALBUMS }],
    ]);
    const { tool, fake } = oracleTool(script);
    const result = await call(tool, {
      operation: 'query',
      sql: 'SELECT albumid, title, note FROM album;',
      row_limit: 3,
    });
    expect(result.success, result.content).toBe(true);
    expect(fake.attributes).toEqual([{ user: 'reader', password: 'pw', connectString: 'db.example:1521/ORCLPDB1' }]);
    expect(fake.connections[0]?.callTimeout).toBe(12_000);
    expect(script.log.slice(2)).toEqual([
      'SET TRANSACTION READ ONLY',
      'SELECT albumid, title, note FROM album',
      'resultSet.close',
      'rollback',
    ]);
    expect(result.content).toBe(
      [
        'ALBUMID | TITLE   | NOTE',
        '--------+---------+-----',
        '1       | Album 1 | NULL',
        '2       | Album 2 | x',
        '3       | Album 3 | x',
        '... (1231 more rows)',
      ].join('\n'),
    );
    expect(result.metadata).toMatchObject({ total_rows: 1234, row_count: 3 });
  });

  it('warns when the account has write privileges or owns tables', async () => {
    const script = new Script([
      [/session_privs/, { columns: ['PRIVILEGE'], rows: [['CREATE SESSION'], ['CREATE TABLE'], ['INSERT ANY TABLE']] }],
      [/user_tables$/, { columns: ['COUNT(*)'], rows: [[11]] }],
      [/./, { columns: ['X'], rows: [[1]] }],
    ]);
    const { tool } = oracleTool(script);
    const result = await call(tool, { operation: 'query', sql: 'SELECT 1 AS x FROM dual' });
    expect(result.metadata?.warning).toMatch(/CREATE TABLE, INSERT ANY TABLE; it owns 11 tables/);
  });

  it('lists tables with the pattern upper-cased, and describes columns, keys and indexes', async () => {
    const script = new Script([
      [/session_privs|user_tables$/, { columns: ['X'], rows: [] }],
      [
        /FROM user_tables WHERE/,
        {
          columns: ['TABLE_NAME', 'NUM_ROWS', 'LAST_ANALYZED'],
          rows: [
            ['INVOICE', '412', '2024-05-01'],
            ['INVOICELINE', '2240', null],
          ],
        },
      ],
      [
        /all_tab_columns/,
        {
          columns: ['C', 'T', 'N', 'D'],
          rows: [
            ['INVOICEID', 'NUMBER(10,0)', 'N', null],
            ['TOTAL', 'NUMBER(10,2)', 'Y', '0 '],
          ],
        },
      ],
      [/constraint_type = 'P'/, { columns: ['C'], rows: [['INVOICEID']] }],
      [
        /constraint_type = 'R'/,
        { columns: ['N', 'C', 'T', 'R'], rows: [['FK_INVOICECUSTOMERID', 'CUSTOMERID', 'CUSTOMER', 'CUSTOMERID']] },
      ],
      [/all_indexes/, { columns: ['N', 'U', 'C'], rows: [['PK_INVOICE', 'UNIQUE', 'INVOICEID']] }],
    ]);
    const { tool } = oracleTool(script);
    const tables = await call(tool, { operation: 'list_tables', table_pattern: 'invoice%' });
    expect(tables.content).toMatch(/^INVOICELINE\s+\| 2240\s+\| NULL$/m);
    expect(script.log).toContain(
      'SELECT table_name, num_rows, last_analyzed FROM user_tables WHERE table_name LIKE :1 ORDER BY table_name ["INVOICE%"]',
    );
    const described = await call(tool, { operation: 'describe', table_name: 'invoice', schema: 'chinook' });
    expect(described.content).toBe(
      [
        'Table: chinook.invoice',
        '',
        'Columns:',
        '-'.repeat(80),
        `  ${'INVOICEID'.padEnd(30)} ${'NUMBER(10,0)'.padEnd(20)} NOT NULL`,
        `  ${'TOTAL'.padEnd(30)} ${'NUMBER(10,2)'.padEnd(20)} NULL DEFAULT 0`,
        '',
        'Primary Key: (INVOICEID)',
        '',
        'Foreign Keys:',
        '  FK_INVOICECUSTOMERID: (CUSTOMERID) -> CUSTOMER(CUSTOMERID)',
        '',
        'Indexes:',
        '  PK_INVOICE (UNIQUE) on (INVOICEID)',
      ].join('\n'),
    );
    expect(script.log.some((line) => line.includes('all_tab_columns') && line.endsWith('["INVOICE","CHINOOK"]'))).toBe(
      true,
    );
  });

  it('turns a driver error into an unsuccessful result and still rolls back', async () => {
    const script = new Script([
      [/session_privs|user_tables$/, { columns: ['X'], rows: [] }],
      [/missing/, Object.assign(new Error('ORA-00942: table or view does not exist'), { code: 'ORA-00942' })],
    ]);
    const { tool } = oracleTool(script);
    const result = await call(tool, { operation: 'query', sql: 'SELECT * FROM missing' });
    expect(result).toMatchObject({ success: false, content: 'Oracle error: ORA-00942: table or view does not exist' });
    expect(script.log.at(-1)).toBe('rollback');
  });

  it('refuses writes through the SQL policy before anything reaches the driver', async () => {
    const script = new Script([[/./, { affected: 1 }]]);
    const { tool } = oracleTool(script);
    for (const sql of [
      'DELETE FROM invoice',
      "BEGIN EXECUTE IMMEDIATE 'DROP TABLE invoice'; END;",
      'SELECT * FROM invoice FOR UPDATE',
    ]) {
      const result = await call(tool, { operation: 'query', sql });
      expect(result.success, sql).toBe(false);
      expect(result.content).toMatch(/^Query blocked: /);
    }
    expect(script.log).toEqual([]);
  });

  it('keeps a PL/SQL terminator and runs writes without a read-only transaction in mutations mode', async () => {
    const script = new Script([[/./, { affected: 2 }]]);
    const { tool } = oracleTool(script, 'unrestricted');
    const result = await call(tool, {
      operation: 'query',
      sql: 'BEGIN UPDATE invoice SET total = 0 WHERE invoiceid < 3; END;',
    });
    expect(result).toMatchObject({ success: true, content: 'Query executed (no result set) (2 rows affected)' });
    expect(script.log).toEqual(['BEGIN UPDATE invoice SET total = 0 WHERE invoiceid < 3; END;']);
  });

  it('exports a result set to CSV in batches', async () => {
    const script = new Script([
      [/session_privs|user_tables$/, { columns: ['X'], rows: [] }],
      [/FROM album/i, { columns: ['ALBUMID', 'TITLE', 'NOTE'], rows: ALBUMS }],
    ]);
    const { tool } = oracleTool(script, 'readonly-exports');
    const directory = await mkdtemp(join(tmpdir(), 'rho-oracle-export-'));
    const result = await call(
      tool,
      { operation: 'export_query', sql: 'SELECT * FROM album', export_path: 'albums.csv' },
      directory,
    );
    expect(result.success, result.content).toBe(true);
    const lines = (await readFile(join(directory, 'albums.csv'), 'utf8')).split('\r\n');
    expect(lines).toHaveLength(1236);
    expect(lines.slice(0, 3)).toEqual(['ALBUMID,TITLE,NOTE', '1,Album 1,', '2,Album 2,x']);
  });
});

class FakeVerticaQuery extends EventEmitter implements VerticaQueryLike {
  readonly text: string;
  constructor(config: { text: string }) {
    super();
    this.text = config.text;
  }
}

function fakeVertica(script: Script): { module: VerticaModuleLike; configs: Record<string, unknown>[] } {
  const configs: Record<string, unknown>[] = [];
  class Client implements VerticaClientLike {
    constructor(config: Record<string, unknown>) {
      configs.push(config);
    }
    async connect(): Promise<void> {}
    async end(): Promise<void> {
      script.log.push('end');
    }
    query(text: string): Promise<{ rows: unknown[][]; fields?: { name: string }[] }>;
    query(query: VerticaQueryLike): VerticaQueryLike;
    query(
      input: string | VerticaQueryLike,
    ): Promise<{ rows: unknown[][]; fields?: { name: string }[] }> | VerticaQueryLike {
      if (typeof input === 'string') {
        script.log.push(input.replace(/\s+/g, ' '));
        const answer = script.answer(input);
        if (answer instanceof Error) return Promise.reject(answer);
        return Promise.resolve(
          'rows' in answer ? { rows: answer.rows, fields: answer.columns.map((name) => ({ name })) } : { rows: [] },
        );
      }
      const query = input as FakeVerticaQuery;
      script.log.push(query.text.replace(/\s+/g, ' '));
      const answer = script.answer(query.text);
      setImmediate(() => {
        if (answer instanceof Error) {
          query.emit('error', answer);
          return;
        }
        if ('affected' in answer) {
          query.emit('end', { command: 'INSERT', rowCount: answer.affected });
          return;
        }
        const result = { fields: answer.columns.map((name) => ({ name })) };
        for (const row of answer.rows) query.emit('row', row, result);
        query.emit('end', { ...result, rowCount: answer.rows.length });
      });
      return query;
    }
  }
  return { module: { Client, Query: FakeVerticaQuery }, configs };
}

const verticaConfig: DatabaseConfig = {
  alias: 'dw',
  type: 'vertica',
  host: 'vertica.example',
  database: 'analytics',
  user: 'reader',
  password: 'pw',
  statementTimeoutSeconds: 45,
};

function verticaTool(script: Script, profileName: 'readonly' | 'unrestricted' = 'readonly') {
  const fake = fakeVertica(script);
  const list = createDbTools(
    { profile: profile(profileName), databases: [verticaConfig] },
    { drivers: { vertica: createVerticaDriver(async () => fake.module) } },
  );
  opened.push(list);
  return { tool: toolNamed(list, 'vertica'), fake };
}

describe('vertica tool at the driver boundary', () => {
  it('opens a read-only session with a runtime cap and wraps each query in a rolled-back read-only transaction', async () => {
    const script = new Script([
      [/is_super_user/, { columns: ['S', 'N'], rows: [[false, 0]] }],
      [
        /FROM sales/,
        {
          columns: ['region', 'revenue'],
          rows: [
            ['EMEA', '12.50'],
            ['APAC', null],
          ],
        },
      ],
    ]);
    const { tool, fake } = verticaTool(script);
    const result = await call(tool, { operation: 'query', sql: 'SELECT region, revenue FROM sales' });
    expect(result.success, result.content).toBe(true);
    expect(fake.configs[0]).toMatchObject({
      host: 'vertica.example',
      port: 5433,
      database: 'analytics',
      user: 'reader',
    });
    expect(script.log[0]).toBe("SET SESSION RUNTIMECAP '45 SECONDS'");
    expect(script.log[1]).toBe('SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY');
    // log[2]: the account check; log[3]: the user functions the SQL policy judges calls with.
    expect(script.log[3]).toMatch(/FROM v_catalog\.user_functions/);
    expect(script.log.slice(4)).toEqual([
      'START TRANSACTION READ ONLY',
      'SELECT region, revenue FROM sales',
      'ROLLBACK',
      'SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY',
    ]);
    expect(result.content).toBe(['region | revenue', '-------+--------', 'EMEA   | 12.50', 'APAC   | NULL'].join('\n'));
    expect(result.metadata?.warning).toBeUndefined();
  });

  it('inlines catalog parameters as escaped literals', async () => {
    expect(verticaLiteral("o'brien")).toBe("'o''brien'");
    const script = new Script([
      [/is_super_user/, { columns: ['S', 'N'], rows: [[true, 3]] }],
      [
        /v_catalog.tables/,
        { columns: ['table_schema', 'table_name', 'table_type'], rows: [['public', "o'brien", 'TABLE']] },
      ],
    ]);
    const { tool } = verticaTool(script);
    const result = await call(tool, { operation: 'list_tables', table_pattern: "o'b%" });
    expect(result.content).toMatch(/public\s+\| o'brien\s+\| TABLE/);
    expect(result.metadata?.warning).toMatch(/superuser; it has INSERT, UPDATE, DELETE or CREATE grants/);
    expect(script.log.find((line) => line.includes('v_catalog.tables'))).toContain("table_name ILIKE 'o''b%'");
  });

  it('describes projections in place of indexes', async () => {
    const script = new Script([
      [/is_super_user/, { columns: ['S', 'N'], rows: [[false, 0]] }],
      [
        /v_catalog.columns/,
        {
          columns: ['c', 't', 'n', 'd'],
          rows: [
            ['id', 'int', 'NO', null],
            ['region', 'varchar(20)', 'YES', null],
          ],
        },
      ],
      [/primary_keys/, { columns: ['c'], rows: [['id']] }],
      [/foreign_keys/, { columns: ['n', 'c', 't', 'r'], rows: [] }],
      [/projections/, { columns: ['n', 'k', 'c'], rows: [['sales_super', 'SUPER', null]] }],
    ]);
    const { tool } = verticaTool(script);
    const result = await call(tool, { operation: 'describe', table_name: 'sales' });
    expect(result.content).toContain('Primary Key: (id)');
    expect(result.content).toContain('  sales_super (SUPER)');
    expect(result.content).not.toContain('Foreign Keys:');
  });

  it('refuses a call of a VOLATILE user-defined function (v_catalog.user_functions, read once per connection)', async () => {
    const script = new Script([
      [/is_super_user/, { columns: ['S', 'N'], rows: [[false, 0]] }],
      [
        /user_functions/,
        {
          columns: ['schema_name', 'function_name', 'volatility'],
          rows: [
            ['public', 'Risky', 'VOLATILE'],
            ['public', 'tidy', 'STABLE'],
          ],
        },
      ],
      [/FROM sales/, { columns: ['x'], rows: [[1]] }],
    ]);
    const { tool } = verticaTool(script);
    const refused = await call(tool, { operation: 'query', sql: 'SELECT risky(region) FROM sales' });
    expect(refused.content).toMatch(
      /^Query blocked: Refused: risky\(\) may not be called: it is a user-defined VOLATILE function/,
    );
    const allowed = await call(tool, { operation: 'query', sql: 'SELECT tidy(region) FROM sales' });
    expect(allowed.success, allowed.content).toBe(true);
    expect(script.log.filter((line) => line.includes('user_functions'))).toHaveLength(1);
    expect(script.log.some((line) => line.includes('risky('))).toBe(false);
  });

  it('refuses writes through the SQL policy and reports driver errors', async () => {
    const script = new Script([
      [/is_super_user/, { columns: ['S', 'N'], rows: [[false, 0]] }],
      [/nosuch/, new Error('Relation "nosuch" does not exist')],
    ]);
    const { tool } = verticaTool(script);
    const blocked = await call(tool, { operation: 'query', sql: 'INSERT INTO sales VALUES (1)' });
    expect(blocked.content).toMatch(/^Query blocked: /);
    const failed = await call(tool, { operation: 'query', sql: 'SELECT * FROM nosuch' });
    expect(failed).toMatchObject({ success: false, content: 'Vertica error: Relation "nosuch" does not exist' });
    // Rolled back, session reset, then the health check every failure triggers before reuse.
    expect(script.log.slice(-3)).toEqual([
      'ROLLBACK',
      'SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY',
      'SELECT 1',
    ]);
    expect(script.log.some((line) => line.startsWith('INSERT'))).toBe(false);
  });
});
