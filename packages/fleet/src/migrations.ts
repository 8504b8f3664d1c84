import { ACTIVE_SESSION_STATUSES } from '@rho/core';

/**
 * The fleet schema's versioned migrations. Each runs once, in order, in the transaction of
 * `Fleet.migrate()`, which holds a transaction-scoped advisory lock so that two nodes migrating at
 * once take turns (the second finds nothing to do). The unqualified names resolve in the fleet
 * schema: the connection's `search_path` is set to it.
 */
export interface Migration {
  /** 1, 2, ...: recorded in `schema_migrations`. */
  version: number;
  /** What it does, recorded too. */
  description: string;
  /** The statements, in order. */
  statements: string[];
}

/** A live session whose heartbeat is older than this (ms, the connection's `rho_fleet.dead_after_ms`) is dead. */
const DEAD_AFTER = `coalesce(nullif(current_setting('rho_fleet.dead_after_ms', true), '')::bigint, 30000)`;

/**
 * The live status of an `agent_registry` row `r` as of schema version 1: its status, or `dead`
 * when its agent is gone (it said it was at work, and it is gone or its heartbeat is stale).
 * Migrations 1 and 3 embed it (`send_signal`, `answer_approval`, the first `sessions_by_status`);
 * like every migration's text it never changes once released.
 */
const LIVE_STATUS_SQL_V1 = `case when r.status in ('created', 'running', 'paused', 'waiting_approval')
    and (r.gone or r.heartbeat_at < now() - make_interval(secs => ${DEAD_AFTER} / 1000.0))
  then 'dead' else r.status end`;

/**
 * As of schema version 4: a session waiting for approval whose agent is gone is `parked` (an
 * answer and a resume go on at the waiting call, as `@rho/monitor`'s `parkedOrDead` says), any
 * other such session `dead`. Frozen as well: migration 4 embeds it.
 */
const LIVE_STATUS_SQL_V4 = `case when r.status in ('created', 'running', 'paused', 'waiting_approval')
    and (r.gone or r.heartbeat_at < now() - make_interval(secs => ${DEAD_AFTER} / 1000.0))
  then case when r.status = 'waiting_approval' then 'parked' else 'dead' end else r.status end`;

/**
 * The live status of an `agent_registry` row `r`, as every listing and count shows it: the
 * latest schema version's (the views of that version compute the same).
 */
export const LIVE_STATUS_SQL = LIVE_STATUS_SQL_V4;

/**
 * Statuses of a session whose agent is (supposed to be) at work: being set up, or core's active
 * ones. The SQL above spells them out (a migration's text is frozen); a test holds it to this list.
 */
export const LIVE_STATUSES = ['created', ...ACTIVE_SESSION_STATUSES] as const;

const LLM_END = `from trace_records t where t.type = 'llm_end' and coalesce(t.record->>'purpose', '') <> 'child_session'`;
const USAGE_COLUMNS = `count(*)::bigint as calls,
    coalesce(sum((t.record->>'input_tokens')::bigint), 0)::bigint as input_tokens,
    coalesce(sum((t.record->>'output_tokens')::bigint), 0)::bigint as output_tokens,
    round(coalesce(sum((t.record->>'cost_usd')::float8), 0)::numeric, 6)::float8 as cost_usd`;

/** Every migration, oldest first. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'registry, signal queue, trace records, telemetry views',
    statements: [
      `create table agent_registry (
        session_id text primary key,
        parent_id text,
        host text not null,
        pid integer,
        cwd text,
        model text,
        profile text,
        status text not null,
        labels jsonb not null default '{}'::jsonb,
        first_prompt text,
        started_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        heartbeat_at timestamptz not null default now(),
        gone boolean not null default false,
        input_tokens bigint not null default 0,
        output_tokens bigint not null default 0,
        cached_tokens bigint not null default 0,
        reasoning_tokens bigint not null default 0,
        cost_usd double precision not null default 0,
        records bigint not null default 0,
        cancel_requested boolean not null default false,
        pause_requested boolean not null default false,
        signal_seq bigint not null default 0,
        owner_role name not null default current_user
      )`,
      `create index agent_registry_started on agent_registry (started_at desc)`,
      `create index agent_registry_host on agent_registry (host, status)`,
      `create index agent_registry_owner on agent_registry (owner_role)`,
      `create index agent_registry_labels on agent_registry using gin (labels)`,
      `create table signal_queue (
        session_id text not null references agent_registry (session_id) on delete cascade,
        seq bigint not null,
        kind text not null check (kind in ('cancel', 'pause', 'resume', 'directive')),
        payload jsonb,
        sent_by name not null default current_user,
        sent_at timestamptz not null default now(),
        acked_at timestamptz,
        primary key (session_id, seq)
      )`,
      `create table trace_records (
        session_id text not null,
        seq bigint not null,
        type text not null,
        ts timestamptz,
        record jsonb not null,
        primary key (session_id, seq)
      )`,
      `create index trace_records_type on trace_records (type, ts)`,
      // An operator's signal in one round trip: lock the row, refuse a session that is not live,
      // count a request that changes nothing as unchanged, else set the flag, append the signal
      // with the session's next number and notify the agent (delivered at commit).
      `create function send_signal(p_session text, p_kind text, p_payload jsonb, p_channel text)
        returns table (outcome text, live_status text, seq bigint)
        language plpgsql set search_path from current as $fn$
      declare
        r agent_registry%rowtype;
        v_live text;
        v_seq bigint;
      begin
        select * into r from agent_registry a where a.session_id = p_session for update;
        if not found then
          return query select 'not_found'::text, null::text, null::bigint;
          return;
        end if;
        v_live := ${LIVE_STATUS_SQL_V1};
        if v_live not in ('created', 'running', 'paused', 'waiting_approval') then
          return query select 'refused'::text, v_live, null::bigint;
          return;
        end if;
        if (p_kind = 'cancel' and r.cancel_requested) or (p_kind = 'pause' and r.pause_requested)
            or (p_kind = 'resume' and not r.pause_requested) then
          return query select 'unchanged'::text, v_live, null::bigint;
          return;
        end if;
        update agent_registry a set signal_seq = a.signal_seq + 1, updated_at = now(),
            cancel_requested = a.cancel_requested or p_kind = 'cancel',
            pause_requested = case p_kind when 'pause' then true when 'resume' then false else a.pause_requested end
          where a.session_id = p_session returning a.signal_seq into v_seq;
        insert into signal_queue (session_id, seq, kind, payload) values (p_session, v_seq, p_kind, p_payload);
        perform pg_notify(p_channel, p_session || ' ' || p_kind || ' ' || v_seq);
        return query select 'requested'::text, v_live, v_seq;
      end
      $fn$`,
      `create view sessions_by_status as
        select ${LIVE_STATUS_SQL_V1} as status, count(*)::bigint as sessions,
          round(sum(r.cost_usd)::numeric, 6)::float8 as cost_usd
        from agent_registry r group by 1 order by 2 desc`,
      `create view cost_by_model as
        select coalesce(t.record->>'model', '?') as model, ${USAGE_COLUMNS}
        ${LLM_END} group by 1 order by cost_usd desc, calls desc`,
      `create view cost_by_profile as
        select coalesce(r.profile, '-') as profile, count(distinct t.session_id)::bigint as sessions, ${USAGE_COLUMNS}
        ${LLM_END.replace('from trace_records t', 'from trace_records t join agent_registry r using (session_id)')}
        group by 1 order by cost_usd desc, calls desc`,
      `create view cost_by_label as
        select l.key as label, l.value as value, count(distinct t.session_id)::bigint as sessions, ${USAGE_COLUMNS}
        ${LLM_END.replace(
          'from trace_records t',
          'from trace_records t join agent_registry r using (session_id) cross join lateral jsonb_each_text(r.labels) l',
        )}
        group by 1, 2 order by cost_usd desc, calls desc`,
      `create view cost_by_day as
        select to_char(date_trunc('day', t.ts at time zone 'UTC'), 'YYYY-MM-DD') as day,
          count(distinct t.session_id)::bigint as sessions, ${USAGE_COLUMNS}
        ${LLM_END} group by 1 order by 1 desc`,
      `create view tool_calls as
        select t.record->>'tool_name' as tool,
          count(*) filter (where t.type = 'tool_end')::bigint as calls,
          count(*) filter (where t.type = 'tool_end' and (t.record->>'success')::boolean is false)::bigint as failures,
          round(coalesce((count(*) filter (where t.type = 'tool_end' and (t.record->>'success')::boolean is false))::numeric
            / nullif(count(*) filter (where t.type = 'tool_end'), 0), 0), 4)::float8 as failure_rate,
          count(*) filter (where t.type = 'tool_blocked')::bigint as blocked,
          round((percentile_cont(0.5) within group (order by (t.record->>'duration_ms')::float8))::numeric, 1)::float8 as p50_ms
        from trace_records t where t.type in ('tool_end', 'tool_blocked')
        group by 1 order by calls desc, tool`,
      `create view model_latency as
        select coalesce(t.record->>'model', '?') as model, count(*)::bigint as calls,
          round((percentile_cont(0.5) within group (order by (t.record->>'duration_ms')::float8))::numeric, 1)::float8 as p50_ms,
          round((percentile_cont(0.9) within group (order by (t.record->>'duration_ms')::float8))::numeric, 1)::float8 as p90_ms,
          round((percentile_cont(0.99) within group (order by (t.record->>'duration_ms')::float8))::numeric, 1)::float8 as p99_ms,
          round(max((t.record->>'duration_ms')::float8)::numeric, 1)::float8 as max_ms
        ${LLM_END} group by 1 order by calls desc`,
    ],
  },
  {
    version: 2,
    description: 'one writer per session (the run token of the process that owns a row); unpriced model calls',
    statements: [
      // Set by each process that registers a session; a live row owned by another token is not
      // taken over, and heartbeats, status updates and mirrored records of a process that lost its
      // row (its token no longer matches) change nothing.
      `alter table agent_registry add column run_token text`,
      // Model calls no price is known for: a session with only those costs "unknown", not $0.
      `alter table agent_registry add column unpriced_calls bigint not null default 0`,
    ],
  },
  {
    version: 3,
    description: 'answers to tool calls that wait for approval, exactly once per call',
    statements: [
      // The first answer recorded for a call wins (the primary key): an operator's (answer_approval)
      // or the agent's timeout; every later one is told which won.
      `create table approval_answers (
        session_id text not null references agent_registry (session_id) on delete cascade,
        tool_call_id text not null,
        decision text not null check (decision in ('approve', 'deny')),
        scope text not null default 'once' check (scope in ('once', 'call', 'tool')),
        reason text,
        answered_by text,
        source text not null default 'operator',
        answered_at timestamptz not null default now(),
        recorded_by name not null default current_user,
        primary key (session_id, tool_call_id)
      )`,
      // An operator's answer in one round trip: refuse a session that is not live, record the
      // answer unless one is there, notify the agent (delivered at commit), else return the winner.
      `create function answer_approval(p_session text, p_call text, p_answer jsonb, p_channel text)
        returns table (outcome text, live_status text, answer jsonb)
        language plpgsql set search_path from current as $fn$
      declare
        r agent_registry%rowtype;
        v_live text;
        v_answer jsonb;
      begin
        select * into r from agent_registry a where a.session_id = p_session;
        if not found then
          return query select 'not_found'::text, null::text, null::jsonb;
          return;
        end if;
        v_live := ${LIVE_STATUS_SQL_V1};
        if v_live not in ('created', 'running', 'paused', 'waiting_approval') then
          return query select 'refused'::text, v_live, null::jsonb;
          return;
        end if;
        insert into approval_answers as x (session_id, tool_call_id, decision, scope, reason, answered_by, source, answered_at)
          values (p_session, p_call, p_answer->>'decision', coalesce(p_answer->>'scope', 'once'), p_answer->>'reason',
            p_answer->>'by', coalesce(p_answer->>'source', 'operator'),
            coalesce((p_answer->>'at')::timestamptz, now()))
          on conflict do nothing
          returning jsonb_build_object('decision', x.decision, 'scope', x.scope, 'reason', x.reason,
            'by', x.answered_by, 'source', x.source, 'at', x.answered_at) into v_answer;
        if v_answer is not null then
          perform pg_notify(p_channel, p_session || ' approval 0');
          return query select 'answered'::text, v_live, v_answer;
          return;
        end if;
        return query select 'already_answered'::text, v_live, jsonb_build_object('decision', x.decision,
            'scope', x.scope, 'reason', x.reason, 'by', x.answered_by, 'source', x.source, 'at', x.answered_at)
          from approval_answers x where x.session_id = p_session and x.tool_call_id = p_call;
      end
      $fn$`,
    ],
  },
  {
    version: 4,
    description: "sessions_by_status: a session waiting for approval whose agent is gone is 'parked', not 'dead'",
    statements: [
      // The same columns, so the view is replaced in place and keeps its grants.
      `create or replace view sessions_by_status as
        select ${LIVE_STATUS_SQL_V4} as status, count(*)::bigint as sessions,
          round(sum(r.cost_usd)::numeric, 6)::float8 as cost_usd
        from agent_registry r group by 1 order by 2 desc`,
    ],
  },
];

/** The schema version this package works with. */
export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
