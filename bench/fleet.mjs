// bench/fleet: a fleet of 1,000 lightweight simulated sessions on PostgreSQL (the local server at
// 127.0.0.1:5432, or RHO_BENCH_FLEET_URL), spread over 4 simulated nodes (one connection pool
// each), every session sending a trace record about every 2 s and a heartbeat every 5 s. Measured
// while that load runs, with the file-based figures beside them:
// - listing: the query `rho ps` uses across the fleet, against the monitor's listing of 1,000
//   session directories (target: under 1 s);
// - cancel delivery: operator's send to the agent seeing it, p50 and p99 (target p99 under
//   200 ms), against FileOperatorChannel -> FileControlChannel polled at the session's default
//   200 ms;
// - mirroring: throughput of one session's burst (records/s), and the lag from a record's
//   observation to an operator's follower receiving it, against appending to trace.jsonl.
// Prints figures and ratios; no thresholds. `--quick`: 200 sessions.
import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileOperatorChannel } from '@rho/core';
import { FileControlChannel } from '@rho/core/internal';
import { connectFleet } from '@rho/fleet';
import { listSessions as listDirectories } from '@rho/monitor';
import postgres from 'postgres';

const quick = process.argv.includes('--quick');
const SESSIONS = quick ? 200 : 1_000;
const NODES = 4;
const RECORD_EVERY_MS = 2_000;
const CANCELS = quick ? 50 : 200;
const BURST = quick ? 10_000 : 50_000;
const LAG_SAMPLES = quick ? 30 : 100;
const url = process.env.RHO_BENCH_FLEET_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const median = (values) => percentile(values, 50);
const ms = (value) => `${value.toFixed(1)} ms`;
const sleep = (milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds));
const record = (type, fields = {}) => ({ type, ts: new Date().toISOString(), ...fields });

const probe = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
try {
  await probe`select 1`;
} catch (error) {
  console.log(`skipped: PostgreSQL at ${url.replace(/:[^:@/]*@/, ':***@')} does not answer (${error.message})`);
  process.exit(0);
} finally {
  await probe.end({ timeout: 0 });
}

const schema = `rho_fleet_bench_${randomBytes(4).toString('hex')}`;
const config = { url, schema, heartbeatIntervalMs: 5_000, deadAfterMs: 30_000, source: 'flag' };
const root = mkdtempSync(join(tmpdir(), 'rho-bench-fleet-'));
const nodes = [];
let operators;
let load;
try {
  operators = await connectFleet(config);
  await operators.migrate();
  for (let index = 0; index < NODES; index += 1) nodes.push(await connectFleet(config, { maxConnections: 4 }));

  // Register the sessions (each node's share), as many agents starting.
  let started = performance.now();
  const attachments = [];
  for (let index = 0; index < SESSIONS; index += 1) {
    const node = nodes[index % NODES];
    attachments.push(
      node.attachSession(
        {
          id: randomUUID(),
          host: `node-${index % NODES}`,
          pid: 100_000 + index,
          cwd: '/srv/work',
          model: index % 3 === 0 ? 'gpt-5-mini' : 'qwen3-coder',
          profile: index % 2 === 0 ? 'readonly' : 'developer',
          labels: { team: `team-${index % 5}` },
          firstPrompt: `Task number ${index}: look at the logs and say what went wrong`,
        },
        { bufferLimit: 1_000 },
      ),
    );
    if (attachments.length % 50 === 0) await Promise.all(attachments.slice(-50));
  }
  const sessions = await Promise.all(attachments);
  const registerMs = performance.now() - started;
  console.log(`registered ${SESSIONS} sessions on ${NODES} nodes in ${(registerMs / 1000).toFixed(1)} s`);

  // The steady load: a record per session about every 2 s, spread evenly.
  let sent = 0;
  let stopLoad = false;
  load = (async () => {
    const tick = 50;
    const perTick = Math.max(1, Math.round((SESSIONS * tick) / RECORD_EVERY_MS));
    let next = 0;
    while (!stopLoad) {
      for (let count = 0; count < perTick; count += 1) {
        const session = sessions[next % SESSIONS];
        next += 1;
        session.mirror.observe(
          next % 4 === 0
            ? record('llm_end', {
                model: 'gpt-5-mini',
                input_tokens: 1200,
                output_tokens: 80,
                cache_read_tokens: 0,
                reasoning_tokens: 0,
                cost_usd: 0.0004,
                duration_ms: 800 + (next % 400),
              })
            : record('tool_end', {
                tool_call_id: `c${next}`,
                tool_name: 'read',
                success: next % 10 !== 0,
                duration_ms: 5,
              }),
        );
        sent += 1;
      }
      await sleep(tick);
    }
  })();
  await sleep(3_000);

  // 1. Listing across the fleet (the query `rho ps` uses), and the file-based listing.
  const listTimes = [];
  let listed = 0;
  for (let round = 0; round < 7; round += 1) {
    started = performance.now();
    listed = (await operators.listSessions({ limit: SESSIONS })).length;
    listTimes.push(performance.now() - started);
  }
  const directory = join(root, 'sessions');
  mkdirSync(directory);
  for (let index = 0; index < SESSIONS; index += 1) {
    const session = join(directory, index.toString(16).padStart(8, '0'));
    mkdirSync(session);
    const at = new Date(Date.now() - index * 60_000).toISOString();
    writeFileSync(
      join(session, 'meta.json'),
      JSON.stringify({
        id: index.toString(16).padStart(8, '0'),
        status: index % 10 === 0 ? 'running' : 'completed',
        model: 'gpt-5-mini',
        profile: 'readonly',
        started_at: at,
        updated_at: at,
        heartbeat_at: at,
        pid: process.pid,
        hostname: hostname(),
        first_prompt: `Task number ${index}`,
      }),
    );
    writeFileSync(join(session, 'trace.jsonl'), `${JSON.stringify(record('run_start', { prompt: 'x' }))}\n`);
  }
  const fileListTimes = [];
  for (let round = 0; round < 7; round += 1) {
    started = performance.now();
    listDirectories(directory, { limit: SESSIONS });
    fileListTimes.push(performance.now() - started);
  }
  console.log(
    `list ${listed} sessions: fleet median ${ms(median(listTimes))} (max ${ms(Math.max(...listTimes))}), ` +
      `file directories median ${ms(median(fileListTimes))}; fleet/file ${(median(listTimes) / median(fileListTimes)).toFixed(2)}x`,
  );

  // 2. Cancel delivery: from the operator's send to the agent's channel seeing it.
  const delays = [];
  const calls = [];
  for (let index = 0; index < CANCELS; index += 1) {
    const session = sessions[(index * 7) % SESSIONS];
    const seen = new Promise((resolve) => {
      session.control.onChange = (state) => {
        if (state.cancel) resolve(performance.now());
      };
    });
    const sentAt = performance.now();
    await operators.operator(session.control.sessionId).requestCancel();
    calls.push(performance.now() - sentAt);
    delays.push((await seen) - sentAt);
    session.control.onChange = undefined;
    await session.control.clearCancel();
    await sleep(10);
  }
  // The file channel: the session polls isCancelRequested every 200 ms (its default); the
  // operator's send falls at a random moment of the agent's poll cycle.
  const fileDelays = [];
  for (let index = 0; index < Math.min(CANCELS, 50); index += 1) {
    const place = join(directory, index.toString(16).padStart(8, '0'));
    const agent = new FileControlChannel(place);
    const operator = new FileOperatorChannel(place);
    let resolveSeen;
    const seen = new Promise((resolve) => (resolveSeen = resolve));
    const timer = setInterval(async () => {
      if (await agent.isCancelRequested()) resolveSeen(performance.now());
    }, 200);
    await sleep(Math.random() * 200);
    const sentAt = performance.now();
    await operator.requestCancel();
    fileDelays.push((await seen) - sentAt);
    clearInterval(timer);
    await agent.clearCancel();
  }
  console.log(
    `cancel delivery (${delays.length} sends under load): fleet p50 ${ms(percentile(delays, 50))} p99 ${ms(percentile(delays, 99))} ` +
      `(target p99 < 200 ms; the operator's call alone p50 ${ms(percentile(calls, 50))} p99 ${ms(percentile(calls, 99))}); file channel polled at 200 ms p50 ${ms(percentile(fileDelays, 50))} p99 ${ms(percentile(fileDelays, 99))}; ` +
      `p50 file/fleet ${(percentile(fileDelays, 50) / percentile(delays, 50)).toFixed(1)}x`,
  );

  // 3. Mirroring: lag from observation to a follower on another connection, under the load.
  const lags = [];
  let lost = 0;
  for (let index = 0; index < LAG_SAMPLES; index += 1) {
    const session = sessions[(index * 13) % SESSIONS];
    const id = session.control.sessionId;
    const after = (await operators.resolveSession(id)).records;
    const controller = new AbortController();
    // A sample that never arrives is reported, not waited for forever.
    const giveUp = setTimeout(() => controller.abort(), 30_000);
    const marker = `marker-${index}`;
    const arrived = (async () => {
      for await (const item of operators.followRecords(id, {
        afterSeq: after,
        signal: controller.signal,
        untilFinished: false,
      })) {
        if (item.record.marker === marker) return performance.now();
      }
      return Number.NaN;
    })();
    await sleep(20);
    const observedAt = performance.now();
    session.mirror.observe(record('error', { content: 'bench', marker }));
    const lag = (await arrived) - observedAt;
    if (Number.isNaN(lag)) lost += 1;
    else lags.push(lag);
    clearTimeout(giveUp);
    controller.abort();
  }
  const sentBeforeBurst = sent;
  stopLoad = true;
  await load;
  const steady = sessions.reduce((sum, session) => sum + session.mirror.stats().mirrored, 0);

  // Throughput: one session's burst, observed as fast as possible, until all is in the database.
  const burst = await nodes[0].attachSession({ id: randomUUID(), host: 'node-0' }, { bufferLimit: BURST + 1 });
  started = performance.now();
  for (let index = 0; index < BURST; index += 1)
    burst.mirror.observe(record('message', { role: 'assistant', content: `step ${index} of a long run` }));
  const observeMs = performance.now() - started;
  await burst.mirror.flush(600_000);
  const burstMs = performance.now() - started;
  // The local trace for comparison: one write(2) per record on trace.jsonl, as the session's sink does.
  const fd = openSync(join(root, 'burst.jsonl'), 'a');
  started = performance.now();
  for (let index = 0; index < BURST; index += 1)
    writeSync(
      fd,
      `${JSON.stringify(record('message', { role: 'assistant', content: `step ${index} of a long run` }))}\n`,
    );
  const fileRate = BURST / ((performance.now() - started) / 1000);
  closeSync(fd);
  console.log(
    `mirroring: ${sentBeforeBurst} records sent by ${SESSIONS} sessions under load (${(SESSIONS / (RECORD_EVERY_MS / 1000)).toFixed(0)} records/s nominal), ${steady} mirrored; ` +
      `follower lag p50 ${ms(percentile(lags, 50))} p99 ${ms(percentile(lags, 99))}${lost > 0 ? ` (${lost} markers not seen in 30 s)` : ''}`,
  );
  console.log(
    `mirror burst: ${BURST} records of one session in ${(burstMs / 1000).toFixed(2)} s = ${Math.round(BURST / (burstMs / 1000))} records/s ` +
      `(observe() took ${ms(observeMs)} in all: ${((observeMs * 1000) / BURST).toFixed(2)} µs a record, the agent's cost)` +
      `; trace.jsonl appends ${Math.round(fileRate)} records/s (file/fleet ${(fileRate / (BURST / (burstMs / 1000))).toFixed(1)}x)`,
  );
  await burst.close();
  const views = await operators.stats('tool_calls');
  console.log(`telemetry: tool_calls view over ${steady + BURST} records: ${JSON.stringify(views[0])}`);
} finally {
  await Promise.all(nodes.map((node) => node.close()));
  await operators?.close();
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop schema if exists "${schema}" cascade`).catch(() => {});
  await admin.end({ timeout: 1 });
  rmSync(root, { recursive: true, force: true });
}
