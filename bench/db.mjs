// bench/db: the cost of rho's database tools.
//
// 1. export_query of 1,000,000 rows to CSV through the postgres tool (PostgreSQL
//    generate_series; a generated SQLite table when PostgreSQL does not answer), sampling
//    resident memory: the growth must stay bounded (target <= 100 MB), whatever the row count.
// 2. `query` through the tool against the bare driver on the same query: the fixed cost per call
//    (tool p50 minus bare p50, policy, read-only transaction and reset included; target <= 0.3 ms)
//    on sub-millisecond queries, and the ratio on queries of 5 ms or more (target <= 1.05x). The
//    median of many calls, each made on its own, the way an agent makes them (seconds apart,
//    after other work): a pause follows every call, so that no call absorbs work another left
//    behind (the tool's rollback and session reset run after its result is returned, and would
//    otherwise land in the next call's time), and the variants take turns in a rotating order.
//    For PostgreSQL a ladder shows what each read-only layer costs, each step measured the
//    same way: the extended protocol (one statement per call), the read-only transaction with
//    its rollback and reset, the tool without its SQL policy, and the whole tool. MySQL/MariaDB
//    (when a server answers at 127.0.0.1:3306) and SQLite are compared with their bare drivers.
// 3. The function allowlist (issue 14): PostgreSQL's function catalog (pg_proc) is read once
//    per connection; its cost is shown against one bare `SELECT 1` round trip and against
//    opening the connection. Per query, the policy's judgement of every function call against
//    that catalog is shown against the bare driver running the same query.
//
// `node bench/db.mjs [--quick] [--only=postgres,mysql,sqlite] [--calls=N]`; --quick: 100,000 exported
// rows and 40 calls per variant (a smoke test); --calls: calls per variant.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { builtinProfile, checkSql } from '@rho/permissions';
import { closeDbTools, dbTools } from '@rho/tools-db';
// The ladder of layers measures two internals no public entry exposes: the bare driver and a
// test-only knob (skip the SQL policy).
import { createDbTools, postgresDriver } from '@rho/tools-db/internal';

const QUICK = process.argv.includes('--quick');
const onlyFlag = process.argv.find((arg) => arg.startsWith('--only='));
/** `--only=postgres,mysql,sqlite`: these databases' measurements only. */
const ONLY = new Set(onlyFlag ? onlyFlag.slice('--only='.length).split(',') : ['postgres', 'mysql', 'sqlite']);
const EXPORT_ROWS = QUICK ? 100_000 : 1_000_000;
const EXPORT_LABEL = QUICK ? '100k' : '1m';
const callsFlag = process.argv.find((arg) => arg.startsWith('--calls='));
const QUERY_RUNS = callsFlag ? Number(callsFlag.slice('--calls='.length)) : QUICK ? 40 : 300;
/** Target of the fixed cost per call over the bare driver, p50, for sub-millisecond queries. */
const FIXED_COST_TARGET_MS = 0.3;
/** Target ratio to the bare driver for queries of 5 ms or more. */
const HEAVY_RATIO_TARGET = 1.05;
const PAUSE_MS = 2;
const requireFromTools = createRequire(new URL('../packages/tools-db/package.json', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'rho-bench-db-'));
// readonly with database_exports on: the built-in readonly never lets export_query write a file.
const readonly = { ...builtinProfile('readonly'), name: 'readonly-exports', databaseExports: true };
const context = { signal: new AbortController().signal, sessionId: 'bench', workingDir: directory };

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

async function invoke(tool, args) {
  const result = await tool.handle({ callId: 'bench', toolName: tool.name, arguments: args }, context);
  if (!result.success) throw new Error(`${tool.name} ${args.operation} failed: ${result.content}`);
  return result;
}

async function postgresAvailable() {
  const postgres = requireFromTools('postgres');
  const sql = postgres({
    host: '127.0.0.1',
    port: 5432,
    username: 'postgres',
    database: 'postgres',
    max: 1,
    connect_timeout: 2,
    onnotice: () => {},
  });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 0 }).catch(() => {});
  }
}

async function measureExport(tool, sql) {
  globalThis.gc?.();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const started = performance.now();
  const result = await invoke(tool, { operation: 'export_query', sql, export_path: `export-${Date.now()}.csv` });
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  if (result.metadata.row_count !== EXPORT_ROWS) throw new Error(`exported ${result.metadata.row_count} rows`);
  const growthMb = (peak - baseline) / 1024 / 1024;
  const sizeMb = statSync(result.metadata.path).size / 1024 / 1024;
  return { growthMb, seconds, sizeMb };
}

const pause = () => new Promise((resolve) => setTimeout(resolve, PAUSE_MS));

/** A statement's text for each call: the same text, or a new one per call from `(call) => text`. */
function statementText(statement) {
  if (typeof statement === 'string') return () => statement;
  let call = 0;
  return () => statement((call += 1));
}

/**
 * Medians of `variants` (name -> call), each call made on its own after a pause, the variants
 * taking turns in a rotating order. The first variant is the baseline.
 */
async function measureCalls(variants) {
  const names = Object.keys(variants);
  const times = Object.fromEntries(names.map((name) => [name, []]));
  const cpu = Object.fromEntries(names.map((name) => [name, []]));
  for (let index = 0; index < 20; index += 1) {
    for (const name of names) await variants[name]();
  }
  for (let index = 0; index < QUERY_RUNS; index += 1) {
    for (let turn = 0; turn < names.length; turn += 1) {
      const name = names[(index + turn) % names.length];
      await pause();
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      await variants[name]();
      times[name].push(performance.now() - started);
      const used = process.cpuUsage(cpuBefore);
      cpu[name].push((used.user + used.system) / 1000);
    }
  }
  lastCpu = Object.fromEntries(names.map((name) => [name, median(cpu[name])]));
  return Object.fromEntries(names.map((name) => [name, median(times[name])]));
}

/** This process's CPU time per call (ms, medians) of the last measureCalls: less sensitive to a loaded machine than wall time. */
let lastCpu = {};

/**
 * One query's line: for a query the bare driver answers in under 5 ms, the fixed cost per call
 * (what the tool adds, in ms); for a heavier one, the ratio. The ladder shows each layer's
 * fixed cost over the bare driver.
 */
function report(label, medians, toolName, ladder = []) {
  const [baseName] = Object.keys(medians);
  const base = medians[baseName];
  const tool = medians[toolName];
  const fixed = tool - base;
  const verdict =
    base >= 5
      ? `ratio ${(tool / base).toFixed(3)}x vs bare driver ${base.toFixed(3)} ms (target <= ${HEAVY_RATIO_TARGET}x for queries of 5 ms or more); fixed cost ${fixed.toFixed(3)} ms`
      : `fixed cost ${fixed.toFixed(3)} ms p50 over the bare driver's ${base.toFixed(3)} ms (target <= ${FIXED_COST_TARGET_MS} ms; ratio ${(tool / base).toFixed(2)}x)`;
  console.log(`db.query.${label}: ${tool.toFixed(3)} ms median over ${QUERY_RUNS} calls: ${verdict}`);
  if (lastCpu[toolName] !== undefined && lastCpu[baseName] !== undefined)
    console.log(
      `  client CPU per call (this process, p50): tool ${lastCpu[toolName].toFixed(3)} ms, bare driver ${lastCpu[baseName].toFixed(3)} ms: ${(lastCpu[toolName] - lastCpu[baseName]).toFixed(3)} ms more`,
    );
  if (ladder.length > 0) {
    console.log(
      `  layers (fixed cost over the bare driver): ${ladder.map(([name, text]) => `${text} ${(medians[name] - base).toFixed(3)} ms`).join(', ')}`,
    );
  }
}

async function compareMysql() {
  const mysql = requireFromTools('mysql2');
  const server = { host: '127.0.0.1', port: 3306, user: 'root', password: '', database: 'test' };
  let bare;
  try {
    bare = mysql.createConnection({ ...server, connectTimeout: 2000 }).promise();
    await bare.query('SELECT 1');
  } catch {
    await bare?.end().catch(() => {});
    console.log('db: MySQL/MariaDB at 127.0.0.1:3306 does not answer: its measurements do not run');
    return;
  }
  const database = { alias: 'bench', type: 'mysql', ...server, statementTimeoutSeconds: 600 };
  const tools = dbTools({ profile: readonly, databases: [database], workingDir: directory });
  const [tool] = tools;
  for (const [label, statement] of [
    ['mysql_1_row', 'SELECT 1 AS one'],
    // A new statement text on every call (for the bare driver too): the policy's decision for a
    // text is remembered, so this is what a statement the model has not sent before costs.
    ['mysql_1_row_new_text', (call) => `SELECT ${call} AS one`],
    [
      'mysql_1000_rows',
      "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 1000) SELECT n, md5(n) AS hash, concat('row ', n) AS label FROM s",
    ],
    ['mysql_catalog_50_rows', 'SELECT table_name, table_type FROM information_schema.tables ORDER BY 1 LIMIT 50'],
    // Of 5 ms or more: a scan computing over 10,000 generated rows (a cross join: MariaDB stops a
    // recursive CTE at max_recursive_iterations, 1,000 by default, without an error).
    [
      'mysql_heavy_scan',
      'WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 1000) SELECT count(*) AS n, sum(length(md5(a.n * 1000 + b.n))) AS total FROM s AS a CROSS JOIN s AS b WHERE b.n <= 10',
    ],
  ]) {
    const text = statementText(statement);
    const medians = await measureCalls({
      bare: () => bare.query({ sql: text(), rowsAsArray: true }),
      tool: () => invoke(tool, { operation: 'query', sql: text(), row_limit: 100 }),
      // The policy alone, never remembered: the MySQL/MariaDB grammar's parse and the judgement.
      policy: () => checkSql(text(), 'mysql'),
    });
    report(label, medians, 'tool');
    console.log(
      `  the SQL policy alone, not remembered (parse with the MySQL/MariaDB grammar and judgement): ${medians.policy.toFixed(3)} ms p50`,
    );
  }
  await bare.end();
  await closeDbTools(tools);
}

/** The catalog read (once per connection) and the allowlist's per-query judgement, as ratios. */
async function measureCatalog(database) {
  const opens = [];
  const reads = [];
  const roundTrips = [];
  let context;
  for (let index = 0; index < 15; index += 1) {
    let started = performance.now();
    const connection = await postgresDriver.connect(database, { readonly: true });
    opens.push(performance.now() - started);
    started = performance.now();
    context = await connection.serverContext();
    reads.push(performance.now() - started);
    const sink = { columns() {}, rows() {} };
    started = performance.now();
    await connection.run('SELECT 1', sink, { readonly: false });
    roundTrips.push(performance.now() - started);
    await connection.close();
  }
  const read = median(reads);
  console.log(
    `db.catalog_read.postgres: ${read.toFixed(2)} ms once per connection (${context.functions.byName.size} function names; ratio ${(read / median(roundTrips)).toFixed(1)}x vs one SELECT 1 round trip of ${median(roundTrips).toFixed(2)} ms, ${(read / median(opens)).toFixed(2)}x vs opening the connection ${median(opens).toFixed(2)} ms)`,
  );
  const postgres = requireFromTools('postgres');
  const bareSql = postgres({
    host: '127.0.0.1',
    port: 5432,
    username: 'postgres',
    database: 'postgres',
    max: 1,
    onnotice: () => {},
  });
  // Six function calls to judge, each against the catalog.
  const query =
    "SELECT n, md5(n::text) AS hash, upper('row ' || n) AS label, length(md5(n::text)), round(n / 3.0, 2), coalesce(nullif(n, 0), 1) FROM generate_series(1, 100) AS n";
  const medians = await measureCalls({
    bare: () => bareSql.unsafe(query),
    policy: () => checkSql(query, 'postgres', context),
  });
  console.log(
    `db.allowlist_per_query.postgres: ${(medians.policy * 1000).toFixed(0)} us for the policy with the live catalog (6 function calls) (ratio ${(medians.policy / medians.bare).toFixed(2)}x of the bare driver's ${medians.bare.toFixed(3)} ms for the same query)`,
  );
  await bareSql.end();
}

async function main() {
  let failed = false;
  if (!ONLY.has('postgres')) {
    // not asked for
  } else if (await postgresAvailable()) {
    const database = {
      alias: 'bench',
      type: 'postgres',
      host: '127.0.0.1',
      port: 5432,
      user: 'postgres',
      password: '',
      database: 'postgres',
      statementTimeoutSeconds: 600,
    };
    const tools = dbTools({ profile: readonly, databases: [database], workingDir: directory });
    const [tool] = tools;
    await invoke(tool, { operation: 'query', sql: 'SELECT 1' });
    const exported = await measureExport(
      tool,
      `SELECT n, md5(n::text) AS hash, n * 0.5 AS half, now() AS at FROM generate_series(1, ${EXPORT_ROWS}) AS n`,
    );
    console.log(
      `db.export_${EXPORT_LABEL}_rows.postgres.rss_growth: ${exported.growthMb.toFixed(1)} MB (ratio ${(exported.growthMb / 100).toFixed(2)}x vs the 100 MB budget, target <= 100 MB; ${exported.sizeMb.toFixed(0)} MB of CSV in ${exported.seconds.toFixed(1)} s)`,
    );
    if (exported.growthMb > 100) failed = true;
    const postgres = requireFromTools('postgres');
    const server = {
      host: '127.0.0.1',
      port: 5432,
      username: 'postgres',
      database: 'postgres',
      max: 1,
      onnotice: () => {},
    };
    const bareSql = postgres(server);
    // The bare driver doing by hand what the tool's read-only layers do, for the ladder.
    const layered = postgres({ ...server, prepare: false, connection: { default_transaction_read_only: 'on' } });
    const extended = { simple: false };
    let reset = Promise.resolve();
    const [unchecked] = createDbTools(
      { profile: readonly, databases: [database], workingDir: directory },
      { skipSqlPolicy: true },
    );
    const ladder = [
      ['extended', 'extended protocol'],
      ['transaction', '+ read-only transaction and reset'],
      ['unchecked', '+ tool without the SQL policy'],
      ['tool', '+ SQL policy = the tool'],
    ];
    for (const [label, statement] of [
      ['postgres_1_row', 'SELECT 1 AS one'],
      // A new statement text on every call, as for MySQL below.
      ['postgres_1_row_new_text', (call) => `SELECT ${call} AS one`],
      ['postgres_1000_rows', "SELECT n, md5(n::text) AS hash, 'row ' || n AS label FROM generate_series(1, 1000) AS n"],
      ['postgres_catalog_50_rows', 'SELECT table_name, table_type FROM information_schema.tables ORDER BY 1 LIMIT 50'],
      // Of 5 ms or more: a scan computing over 5,000 generated rows.
      [
        'postgres_heavy_scan',
        'SELECT count(*) AS n, sum(length(md5(n::text))) AS total FROM generate_series(1, 5000) AS n',
      ],
    ]) {
      const text = statementText(statement);
      const args = () => ({ operation: 'query', sql: text(), row_limit: 100 });
      const medians = await measureCalls({
        bare: () => bareSql.unsafe(text()),
        extended: () => layered.unsafe(text(), [], extended).values(),
        // As the tool does: the rollback and reset run after the rows are back, and the next
        // statement waits for them.
        transaction: async () => {
          await reset;
          const begin = layered.unsafe('BEGIN READ ONLY').execute();
          const rows = await layered.unsafe(text(), [], extended).values();
          await begin;
          reset = Promise.all([layered.unsafe('ROLLBACK').execute(), layered.unsafe('DISCARD ALL').execute()]);
          return rows;
        },
        unchecked: () => invoke(unchecked, args()),
        tool: () => invoke(tool, args()),
      });
      report(label, medians, 'tool', ladder);
    }
    await bareSql.end();
    await layered.end();
    await closeDbTools([unchecked]);
    await closeDbTools(tools);
    await measureCatalog(database);
  } else {
    console.log('db: PostgreSQL at 127.0.0.1:5432 does not answer: only the SQLite measurements run');
  }

  if (ONLY.has('mysql')) await compareMysql();
  if (!ONLY.has('sqlite')) {
    rmSync(directory, { recursive: true, force: true });
    if (failed) process.exitCode = 1;
    return;
  }

  const Database = requireFromTools('better-sqlite3');
  const path = join(directory, 'bench.sqlite');
  const writer = new Database(path);
  writer.exec(`CREATE TABLE item (n INTEGER PRIMARY KEY, hash TEXT, half REAL, label TEXT);
    WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${EXPORT_ROWS})
    INSERT INTO item SELECT n, hex(randomblob(16)), n * 0.5, 'row ' || n FROM s;`);
  writer.close();
  const sqliteTools = dbTools({
    profile: readonly,
    databases: [{ alias: 'bench', type: 'sqlite', path, statementTimeoutSeconds: 600 }],
    workingDir: directory,
  });
  const [sqliteTool] = sqliteTools;
  await invoke(sqliteTool, { operation: 'query', sql: 'SELECT 1' });
  const exported = await measureExport(sqliteTool, 'SELECT n, hash, half, label FROM item');
  console.log(
    `db.export_${EXPORT_LABEL}_rows.sqlite.rss_growth: ${exported.growthMb.toFixed(1)} MB (ratio ${(exported.growthMb / 100).toFixed(2)}x vs the 100 MB budget, target <= 100 MB; ${exported.sizeMb.toFixed(0)} MB of CSV in ${exported.seconds.toFixed(1)} s)`,
  );
  if (exported.growthMb > 100) failed = true;
  const bare = new Database(path, { readonly: true });
  const query = 'SELECT n, hash, label FROM item WHERE n % 1000 = 0';
  const statement = bare.prepare(query);
  const medians = await measureCalls({
    bare: async () => statement.all(),
    tool: () => invoke(sqliteTool, { operation: 'query', sql: query, row_limit: 100 }),
  });
  report('sqlite_1000_rows_scan', medians, 'tool');
  bare.close();
  await closeDbTools(sqliteTools);
  rmSync(directory, { recursive: true, force: true });
  if (failed) process.exitCode = 1;
}

await main();
