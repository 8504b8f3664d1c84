// bench/fencing: what the fencing of issue 33 costs, measured in one run against the statements it
// replaced (kept here verbatim), on the local PostgreSQL (or RHO_BENCH_FLEET_URL):
// - the fleet's poll of every attached session (one statement a tick per process): the old
//   unfenced heartbeat `UPDATE ... RETURNING` against the fenced one (a CTE that touches only rows
//   still holding this process's run token, then reads the flags and tokens);
// - a session's registration: the old upsert against the fenced one (taken over only when not
//   live, or this process's own);
// - the queue: the lease check a queued task's session makes before every model and tool call (a
//   `statSync` of the lease file), and the worker's touch of that file after each heartbeat (the
//   heartbeat is pg-boss's own statement, fenced by the attempt's retry count within it).
// Rounds interleave old and new; medians, the ratio, CPU time and the load average are printed.
// No thresholds. `--quick`: fewer rounds.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectFleet } from '@rho/fleet';
import postgres from 'postgres';

const quick = process.argv.includes('--quick');
const SESSIONS = 200;
const ROUNDS = quick ? 60 : 300;
const url = process.env.RHO_BENCH_FLEET_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const load = () => loadavg()[0].toFixed(2);

const probe = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
try {
  await probe`select 1`;
} catch (error) {
  console.log(`skipped: PostgreSQL at ${url.replace(/:[^:@/]*@/, ':***@')} does not answer (${error.message})`);
  process.exit(0);
} finally {
  await probe.end({ timeout: 0 });
}

const schema = `rho_fence_bench_${randomBytes(4).toString('hex')}`;
const fleet = await connectFleet({ url, schema, heartbeatIntervalMs: 5_000, deadAfterMs: 30_000, source: 'flag' });
await fleet.migrate();
await fleet.close();
const sql = postgres(url, {
  max: 1,
  onnotice: () => {},
  connection: { search_path: schema, 'rho_fleet.dead_after_ms': '30000' },
});
const LIVE = `case when r.status in ('created', 'running', 'paused', 'waiting_approval')
    and (r.gone or r.heartbeat_at < now() - make_interval(secs => current_setting('rho_fleet.dead_after_ms')::int / 1000.0))
  then 'dead' else r.status end`;
try {
  const ids = Array.from({ length: SESSIONS }, () => randomUUID());
  const tokens = ids.map(() => randomUUID());
  await sql`insert into agent_registry (session_id, host, pid, status, run_token)
    select u.id, 'bench', 1, 'running', u.token from unnest(${ids}::text[], ${tokens}::text[]) as u(id, token)`;

  const polls = {
    old: () => sql`update agent_registry set heartbeat_at = now() where session_id in ${sql(ids)}
      returning session_id, cancel_requested, pause_requested, signal_seq`,
    fenced: () => sql`with beat as (
        update agent_registry r set heartbeat_at = now()
        from unnest(${ids}::text[], ${tokens}::text[]) as u(session_id, token)
        where r.session_id = u.session_id and r.run_token = u.token
        returning r.session_id)
      select session_id, cancel_requested, pause_requested, signal_seq, run_token from agent_registry
      where session_id in ${sql(ids)}`,
  };
  const id = ids[0];
  const token = tokens[0];
  const registers = {
    old: () => sql`insert into agent_registry (session_id, host, pid, status, labels, started_at)
      values (${id}, 'bench', 1, 'running', '{}'::jsonb, now())
      on conflict (session_id) do update set host = excluded.host, pid = excluded.pid, status = excluded.status,
        labels = agent_registry.labels || excluded.labels, heartbeat_at = now(), updated_at = now(), gone = false,
        cancel_requested = false
      returning records, input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd`,
    fenced: () => sql`insert into agent_registry as r (session_id, host, pid, status, labels, started_at, run_token)
      values (${id}, 'bench', 1, 'running', '{}'::jsonb, now(), ${token})
      on conflict (session_id) do update set host = excluded.host, pid = excluded.pid, status = excluded.status,
        labels = r.labels || excluded.labels, heartbeat_at = now(), updated_at = now(), gone = false,
        cancel_requested = false, run_token = excluded.run_token
      where r.run_token is not distinct from excluded.run_token
        or (r.host = excluded.host and r.pid is not distinct from excluded.pid)
        or (${sql.unsafe(LIVE)}) not in ('created', 'running', 'paused', 'waiting_approval')
      returning records, input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd, unpriced_calls`,
  };

  async function compare(name, pair) {
    const times = { old: [], fenced: [] };
    const cpu = { old: 0, fenced: 0 };
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const key of round % 2 === 0 ? ['old', 'fenced'] : ['fenced', 'old']) {
        const before = process.cpuUsage();
        const started = performance.now();
        await pair[key]();
        times[key].push(performance.now() - started);
        const used = process.cpuUsage(before);
        cpu[key] += (used.user + used.system) / 1000;
      }
    }
    const old = median(times.old);
    const fenced = median(times.fenced);
    console.log(
      `${name}: unfenced ${old.toFixed(3)} ms, fenced ${fenced.toFixed(3)} ms (x${(fenced / old).toFixed(2)}); ` +
        `client CPU ${(cpu.old / ROUNDS).toFixed(3)} vs ${(cpu.fenced / ROUNDS).toFixed(3)} ms; load ${load()}`,
    );
  }
  await compare(`fleet poll of ${SESSIONS} attached sessions`, polls);
  await compare('session registration', registers);

  // The lease check of a queued task's session, per model or tool call.
  const directory = mkdtempSync(join(tmpdir(), 'rho-bench-lease-'));
  const file = join(directory, 'lease');
  writeFileSync(file, '');
  const CHECKS = 100_000;
  const started = performance.now();
  let fresh = 0;
  for (let index = 0; index < CHECKS; index += 1) if (Date.now() - statSync(file).mtimeMs < 60_000) fresh += 1;
  const perCheck = ((performance.now() - started) * 1000) / CHECKS;
  console.log(
    `lease check per model or tool call: ${perCheck.toFixed(2)} µs (a statSync; ${fresh === CHECKS ? 'all fresh' : 'stale!'}), against the 5-15 ms of a turn; load ${load()}`,
  );
  // The worker's side: the lease file touched after each confirmed heartbeat (a third of a lease).
  const TOUCHES = 20_000;
  const touchStarted = performance.now();
  for (let index = 0; index < TOUCHES; index += 1) {
    const now = new Date();
    writeFileSync(file, '');
    utimesSync(file, now, now);
  }
  const perTouch = ((performance.now() - touchStarted) * 1000) / TOUCHES;
  console.log(
    `lease file touch per worker heartbeat: ${perTouch.toFixed(2)} µs (the heartbeat itself is a pg-boss touch, fenced to the attempt by its retry count in the same statement); load ${load()}`,
  );
  rmSync(directory, { recursive: true, force: true });
} finally {
  await sql.unsafe(`drop schema if exists "${schema}" cascade`);
  await sql.end({ timeout: 1 });
}
